-- +goose Up

-- What connectors learn about a site's ERP (its OpenAPI document, inquiry
-- metadata), cached for every replica. Only derived schema data, never
-- records or anything user-specific. Rows past expires_at are misses and
-- are purged when the site writes again.
CREATE TABLE site_cache (
    site_id    uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    key        text        NOT NULL,
    value      bytea       NOT NULL,
    stored_at  timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (site_id, key),
    CONSTRAINT site_cache_key_check CHECK (key <> '')
);
CREATE INDEX site_cache_expires_idx ON site_cache (site_id, expires_at);

-- A site's schema-knowledge index: entities, fields and inquiries, searched
-- with full-text ranking. keywords (identifiers split into words) weigh
-- most, then title, then body. Replaced as a whole when rebuilt.
CREATE TABLE schema_index (
    site_id  uuid  NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    kind     text  NOT NULL,
    name     text  NOT NULL,
    title    text  NOT NULL DEFAULT '',
    keywords text  NOT NULL DEFAULT '',
    body     text  NOT NULL DEFAULT '',
    data     jsonb,
    search   tsvector GENERATED ALWAYS AS (
                 setweight(to_tsvector('english', keywords), 'A') ||
                 setweight(to_tsvector('english', title), 'B') ||
                 setweight(to_tsvector('english', body), 'C')) STORED,
    PRIMARY KEY (site_id, kind, name),
    CONSTRAINT schema_index_kind_check CHECK (kind <> ''),
    CONSTRAINT schema_index_name_check CHECK (name <> '')
);
CREATE INDEX schema_index_search_idx ON schema_index USING gin (search);
CREATE INDEX schema_index_name_idx ON schema_index (site_id, kind, lower(name) text_pattern_ops);

-- One row per site with an index: what it describes and until when it is
-- current.
CREATE TABLE schema_index_builds (
    site_id    uuid        PRIMARY KEY REFERENCES sites (id) ON DELETE CASCADE,
    version    text        NOT NULL,
    documents  integer     NOT NULL,
    built_at   timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);

-- Short-lived ERP tokens of service connections that have no long-lived key
-- (Acumatica: an OAuth client plus a dedicated API user). Sealed with the
-- keyring (key_id) and bound by additional data to (site, ERP user, field).
-- access_hash (SHA-256 of the access token) lets a replica that saw the ERP
-- refuse a token expire exactly that token. Renewed under a per-(site, user)
-- advisory lock, because the ERP rotates refresh tokens on every use.
CREATE TABLE service_connection_tokens (
    site_id            uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    erp_user           text        NOT NULL,
    key_id             text        NOT NULL,
    access_ciphertext  bytea       NOT NULL,
    access_hash        bytea       NOT NULL,
    refresh_ciphertext bytea,
    expires_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, erp_user),
    CONSTRAINT service_connection_tokens_hash_len CHECK (octet_length(access_hash) = 32)
);
CREATE INDEX service_connection_tokens_key_id_idx ON service_connection_tokens (key_id);

-- +goose Down
DROP TABLE service_connection_tokens;
DROP TABLE schema_index_builds;
DROP TABLE schema_index;
DROP TABLE site_cache;
