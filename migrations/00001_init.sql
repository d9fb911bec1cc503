-- +goose Up

-- A site is one registered ERP instance and the unit of tenancy. Every other
-- tenant-scoped table carries site_id and every query filters by it.
CREATE TABLE sites (
    id           uuid        PRIMARY KEY,
    slug         text        NOT NULL,
    kind         text        NOT NULL,
    base_url     text        NOT NULL,
    display_name text        NOT NULL,
    settings     jsonb       NOT NULL DEFAULT '{}'::jsonb,
    status       text        NOT NULL DEFAULT 'active',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT sites_slug_key UNIQUE (slug),
    CONSTRAINT sites_slug_check CHECK (slug ~ '^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$'),
    CONSTRAINT sites_status_check CHECK (status IN ('active', 'disabled')),
    CONSTRAINT sites_settings_check CHECK (jsonb_typeof(settings) = 'object')
);

-- One ERP origin may host several Acumatica tenants, but never two sites of
-- the same tenant: the generic /mcp endpoint matches a typed URL to one site.
CREATE UNIQUE INDEX sites_base_url_tenant_key
    ON sites (base_url, (coalesce(settings ->> 'tenant', '')));

-- A connection says how erpgate authenticates to a site: at most one OAuth
-- client (users sign in as themselves) and one fixed API credential (bots).
CREATE TABLE connections (
    id                uuid        PRIMARY KEY,
    site_id           uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    type              text        NOT NULL,
    verified_identity text        NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT connections_type_check CHECK (type IN ('api_token', 'oauth')),
    CONSTRAINT connections_site_type_key UNIQUE (site_id, type),
    -- lets credentials reference (site_id, id) so a credential row cannot
    -- point at another site's connection.
    CONSTRAINT connections_site_id_id_key UNIQUE (site_id, id)
);

-- Each secret field of a connection, sealed with AES-256-GCM. key_id names the
-- key that sealed it; the additional data binds the ciphertext to its site,
-- connection type and field, so a row copied elsewhere fails to open.
CREATE TABLE credentials (
    site_id       uuid        NOT NULL,
    connection_id uuid        NOT NULL,
    field         text        NOT NULL,
    key_id        text        NOT NULL,
    ciphertext    bytea       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connection_id, field),
    FOREIGN KEY (site_id, connection_id) REFERENCES connections (site_id, id) ON DELETE CASCADE
);
CREATE INDEX credentials_key_id_idx ON credentials (key_id);

-- Service tokens for /service/mcp. Only the SHA-256 of the token is stored;
-- prefix is the first characters, kept for display.
CREATE TABLE service_tokens (
    id           uuid        PRIMARY KEY,
    site_id      uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    name         text        NOT NULL DEFAULT '',
    token_hash   bytea       NOT NULL,
    prefix       text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked      boolean     NOT NULL DEFAULT false,
    revoked_at   timestamptz,
    CONSTRAINT service_tokens_hash_key UNIQUE (token_hash),
    CONSTRAINT service_tokens_hash_len CHECK (octet_length(token_hash) = 32)
);
CREATE INDEX service_tokens_site_idx ON service_tokens (site_id, created_at);

-- One row per terminal MCP reply. Never arguments, results, credentials,
-- e-mail addresses or error text.
CREATE TABLE usage_events (
    id          bigserial   PRIMARY KEY,
    occurred_at timestamptz NOT NULL,
    site_id     uuid        REFERENCES sites (id) ON DELETE SET NULL,
    site_slug   text        NOT NULL,
    auth_type   text        NOT NULL,
    request_id  text        NOT NULL,
    method      text        NOT NULL,
    tool        text        NOT NULL DEFAULT '',
    outcome     text        NOT NULL,
    error_code  text        NOT NULL DEFAULT '',
    duration_ms integer     NOT NULL,
    CONSTRAINT usage_events_outcome_check CHECK (outcome IN ('success', 'error', 'cancelled')),
    CONSTRAINT usage_events_auth_type_check CHECK (auth_type IN ('oauth', 'service_token'))
);
CREATE INDEX usage_events_site_time_idx ON usage_events (site_id, occurred_at DESC);
CREATE INDEX usage_events_time_idx ON usage_events (occurred_at DESC);

-- +goose Down
DROP TABLE usage_events;
DROP TABLE service_tokens;
DROP TABLE credentials;
DROP TABLE connections;
DROP TABLE sites;
