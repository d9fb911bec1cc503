-- +goose Up

-- Writes waiting for a person's approval (platform/store/approval): a write
-- tool's call is proposed (the ERP's preview of the change), the approver
-- (an ERP user of the site) approves or rejects it on erpgate's page, and
-- the call's retry claims the approved action (approved -> executing, one
-- conditional UPDATE, so it runs at most once) and stores the outcome.
-- The key (site, auth type, principal, tool, argument digest) binds the
-- approval to exactly one call; reported marks an outcome the caller has
-- been told, after which the same call proposes afresh. Rows are swept a
-- day after they expire.
CREATE TABLE pending_actions (
    id            uuid        PRIMARY KEY,
    site_id       uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    site_slug     text        NOT NULL,
    kind          text        NOT NULL,
    auth_type     text        NOT NULL,
    principal     text        NOT NULL,
    tool          text        NOT NULL,
    args_digest   bytea       NOT NULL,
    client_id     text        NOT NULL DEFAULT '',
    approver      text        NOT NULL,
    preview       jsonb       NOT NULL,
    status        text        NOT NULL,
    reported      boolean     NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    decided_at    timestamptz,
    decided_by    text        NOT NULL DEFAULT '',
    executed_at   timestamptz,
    result        jsonb,
    error_code    text        NOT NULL DEFAULT '',
    error_message text        NOT NULL DEFAULT '',
    CONSTRAINT pending_actions_status_check
        CHECK (status IN ('proposed', 'approved', 'rejected', 'executing', 'executed', 'failed')),
    CONSTRAINT pending_actions_auth_type_check CHECK (auth_type IN ('oauth', 'service_token')),
    CONSTRAINT pending_actions_digest_check CHECK (length(args_digest) = 32),
    CONSTRAINT pending_actions_approver_check CHECK (approver <> '')
);
CREATE INDEX pending_actions_key_idx
    ON pending_actions (site_id, auth_type, principal, tool, args_digest, created_at DESC);
CREATE INDEX pending_actions_expires_idx ON pending_actions (expires_at);

-- +goose Down
DROP TABLE pending_actions;
