-- +goose Up

-- Client names without control characters and without the Unicode controls
-- that change the direction of text. /register now keeps names that way;
-- a name stored before could still carry a right-to-left override, which
-- the approval and owner pages show as stored, turning the text after it
-- around. The characters are those authserver's plainName drops: C0, DEL,
-- C1, U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069; the
-- name is then trimmed.
UPDATE oauth_clients
   SET name = regexp_replace(
                regexp_replace(name, '[\u0001-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]', '', 'g'),
                '^\s+|\s+$', '', 'g')
 WHERE name ~ '[\u0001-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]';

-- +goose Down
-- The controls are not restored: nothing relied on them.
SELECT 1;
