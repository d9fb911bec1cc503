-- +goose Up

-- A change on a site owner's page that must be proven at the ERP before it
-- is saved: a new OAuth client secret (a sign-in with it must succeed) or
-- settings that move the site to another tenant (the owner must prove they
-- administer that one). The row lives from the form to the ERP's callback,
-- at most expires_at; the secret is sealed like a credential
-- (AES-256-GCM under key_id), and the row goes with its site.
CREATE TABLE owner_changes (
    id            uuid        PRIMARY KEY,
    site_id       uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    erp_user      text        NOT NULL,
    settings      jsonb,
    secret_key_id text,
    secret        bytea,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    CONSTRAINT owner_changes_secret_check CHECK ((secret IS NULL) = (secret_key_id IS NULL))
);
CREATE INDEX owner_changes_site_idx ON owner_changes (site_id, expires_at);

-- +goose Down
DROP TABLE owner_changes;
