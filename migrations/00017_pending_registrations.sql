-- +goose Up

-- Self-service registrations in progress (web/register). Nothing here is
-- active: a row becomes a site only once its registrant's ERP sign-in
-- proved them the ERP's administrator (stage registered, site_id set, the
-- client secret then kept only in the site's connection). Rows are bound
-- to the browser that started them (browser_hash) and expire: an expired
-- row is refused on read and swept when new ones are made. The candidate
-- client secret is encrypted under key_id.
CREATE TABLE pending_registrations (
    id                uuid        PRIMARY KEY,
    browser_hash      bytea       NOT NULL,
    stage             text        NOT NULL,
    kind              text        NOT NULL,
    display_name      text        NOT NULL,
    base_url          text        NOT NULL,
    settings          jsonb       NOT NULL,
    identity_key      text        NOT NULL DEFAULT '',
    client_id         text        NOT NULL DEFAULT '',
    key_id            text,
    secret_ciphertext bytea,
    site_id           uuid        REFERENCES sites (id) ON DELETE CASCADE,
    erp_user          text        NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL DEFAULT now(),
    expires_at        timestamptz NOT NULL,
    CONSTRAINT pending_registrations_stage_check CHECK (stage IN ('client', 'registered'))
);
CREATE INDEX pending_registrations_expires_idx ON pending_registrations (expires_at);

-- +goose Down
DROP TABLE pending_registrations;
