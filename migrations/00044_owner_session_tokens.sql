-- +goose Up

-- The ERP access token an owner signed in with on a site's owner page,
-- kept for the life of that owner session so that every change the owner
-- makes first asks the ERP again, as them, whether they still administer
-- it (connector.AdminProof). Keyed by the SHA-256 of the session cookie
-- and scoped by the site; the token is sealed with AES-256-GCM under
-- key_id, its additional data binding it to the site and the session.
-- A row goes at sign-out, when the session is ended for a refusal, with
-- its site, and once past expires_at (the session's expiry; swept every
-- minute with an hour's margin for clocks).
CREATE TABLE owner_session_tokens (
    session_hash bytea       PRIMARY KEY,
    site_id      uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    erp_user     text        NOT NULL,
    key_id       text        NOT NULL,
    token        bytea       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX owner_session_tokens_site_idx ON owner_session_tokens (site_id);
CREATE INDEX owner_session_tokens_expires_idx ON owner_session_tokens (expires_at);

-- +goose Down
DROP TABLE owner_session_tokens;
