-- +goose Up

-- Owner-page and approval-page sessions that were signed out. The
-- session cookie is a signed, expiring value; nothing is stored while it
-- is in use. Signing out records the SHA-256 of the cookie here until it
-- would have expired, and every page request with a session checks it,
-- so that a copy of the cookie stops working on every replica at once.
-- Rows past their expiry (with an hour's margin for clocks) are deleted.
CREATE TABLE ended_page_sessions (
    cookie_hash bytea       PRIMARY KEY,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX ended_page_sessions_expires_idx ON ended_page_sessions (expires_at);

-- +goose Down
DROP TABLE ended_page_sessions;
