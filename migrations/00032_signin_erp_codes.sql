-- +goose Up

-- The SHA-256 of each code an ERP sent back to a sign-in. Two sites still on
-- the shared redirect URI cannot tell whose ERP sent a code, so one site's
-- ERP can be handed a code another's issued; a code is therefore taken by
-- one sign-in only, and one brought back to another sign-in is refused.
-- Kept a day (longer than an ERP's code lives), swept as sign-ins start.
CREATE TABLE oauth_erp_codes (
    code_hash bytea       PRIMARY KEY,
    seen_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_erp_codes_seen_idx ON oauth_erp_codes (seen_at);

-- +goose Down
DROP TABLE oauth_erp_codes;
