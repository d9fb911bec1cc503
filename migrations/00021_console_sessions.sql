-- +goose Up

-- Operator console sessions. The session cookie is a signed, expiring
-- value naming a session here by its id; every console request checks
-- that the session is still open, so that signing out (ended_at) ends the
-- cookie on every replica, even a copy of it. Only the id's SHA-256 is
-- kept; ref is its short public name in audit events.
CREATE TABLE console_sessions (
    id_hash    bytea       PRIMARY KEY,
    ref        text        NOT NULL UNIQUE,
    source     text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    ended_at   timestamptz
);
CREATE INDEX console_sessions_expires_idx ON console_sessions (expires_at);

-- +goose Down
DROP TABLE console_sessions;
