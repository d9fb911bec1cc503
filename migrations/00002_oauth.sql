-- +goose Up

-- erpgate's own OAuth 2.1 authorization server (authserver). MCP clients get
-- tokens here; each user signs in to their own ERP, whose tokens are kept,
-- encrypted, per (site, ERP user).

-- Server-wide secrets, sealed with the deployment keyring like every other
-- stored secret. "token_hmac" is the HMAC key that signs every access token,
-- refresh token and authorization code, shared by all replicas.
CREATE TABLE oauth_secrets (
    name       text        PRIMARY KEY,
    key_id     text        NOT NULL,
    ciphertext bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- MCP clients registered with dynamic client registration (RFC 7591). Only
-- the SHA-256 of a client secret is kept; public clients have none.
CREATE TABLE oauth_clients (
    id                         text        PRIMARY KEY,
    secret_hash                bytea,
    name                       text        NOT NULL DEFAULT '',
    redirect_uris              text[]      NOT NULL,
    grant_types                text[]      NOT NULL,
    response_types             text[]      NOT NULL,
    scope                      text        NOT NULL,
    token_endpoint_auth_method text        NOT NULL,
    metadata                   jsonb       NOT NULL DEFAULT '{}'::jsonb,
    created_at                 timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT oauth_clients_auth_method_check
        CHECK (token_endpoint_auth_method IN ('none', 'client_secret_basic', 'client_secret_post')),
    CONSTRAINT oauth_clients_secret_check
        CHECK ((token_endpoint_auth_method = 'none') = (secret_hash IS NULL)),
    CONSTRAINT oauth_clients_redirect_uris_check CHECK (cardinality(redirect_uris) > 0)
);

-- Client ID Metadata Documents fetched for URL client ids, kept as long as
-- their HTTP cache headers allow. A cache only: any replica may refetch.
CREATE TABLE oauth_cimd_cache (
    url        text        PRIMARY KEY,
    document   jsonb       NOT NULL,
    fetched_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);

-- Authorization codes, PKCE sessions, access tokens and refresh tokens, as
-- fosite stores them. A token is found by the SHA-256 of its HMAC signature;
-- neither the token nor the signature is stored. request_id groups every
-- token of one grant: refresh-token rotation keeps it, so it is also the
-- refresh-token family. site_id and subject repeat the session's site and
-- ERP user so that all of a user's grants on a site can be revoked at once.
CREATE TABLE oauth_tokens (
    kind                  text        NOT NULL,
    signature_hash        bytea       NOT NULL,
    request_id            text        NOT NULL,
    client_id             text        NOT NULL,
    site_id               uuid        REFERENCES sites (id) ON DELETE CASCADE,
    subject               text        NOT NULL DEFAULT '',
    requested_at          timestamptz NOT NULL,
    expires_at            timestamptz,
    requested_scopes      text[]      NOT NULL DEFAULT '{}',
    granted_scopes        text[]      NOT NULL DEFAULT '{}',
    requested_audience    text[]      NOT NULL DEFAULT '{}',
    granted_audience      text[]      NOT NULL DEFAULT '{}',
    form                  text        NOT NULL DEFAULT '',
    session               jsonb       NOT NULL,
    active                boolean     NOT NULL DEFAULT true,
    -- refresh tokens: when it was rotated; codes: when it was redeemed.
    used_at               timestamptz,
    -- refresh tokens: the access token issued together with it.
    access_signature_hash bytea,
    created_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, signature_hash),
    CONSTRAINT oauth_tokens_kind_check CHECK (kind IN ('code', 'pkce', 'access', 'refresh')),
    CONSTRAINT oauth_tokens_signature_len CHECK (octet_length(signature_hash) = 32)
);
CREATE INDEX oauth_tokens_request_idx ON oauth_tokens (request_id);
CREATE INDEX oauth_tokens_subject_idx ON oauth_tokens (site_id, subject);
CREATE INDEX oauth_tokens_expires_idx ON oauth_tokens (expires_at);

-- A user's consent to let one MCP client use erpgate as them on one site.
CREATE TABLE oauth_consents (
    site_id    uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    erp_user   text        NOT NULL,
    client_id  text        NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, erp_user, client_id)
);

-- One sign-in in progress: the MCP client's authorization request while the
-- user signs in to the ERP and consents. id_hash is the SHA-256 of the flow
-- id, which is also the OAuth state sent to the ERP; browser_hash binds the
-- flow to the browser that started it (a cookie, which also keys the forms'
-- CSRF tokens). Each stage moves forward once:
-- choose_site -> erp -> consent -> done.
-- The upstream PKCE verifier and, until consent, the user's ERP tokens are
-- sealed with the keyring.
CREATE TABLE oauth_signin_flows (
    id_hash             bytea       PRIMARY KEY,
    browser_hash        bytea       NOT NULL,
    stage               text        NOT NULL,
    authorize_query     text        NOT NULL,
    client_id           text        NOT NULL,
    resource            text        NOT NULL,
    site_id             uuid        REFERENCES sites (id) ON DELETE CASCADE,
    key_id              text,
    verifier_ciphertext bytea,
    erp_user            text        NOT NULL DEFAULT '',
    erp_user_name       text        NOT NULL DEFAULT '',
    access_ciphertext   bytea,
    refresh_ciphertext  bytea,
    token_expires_at    timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    expires_at          timestamptz NOT NULL,
    CONSTRAINT oauth_signin_flows_stage_check CHECK (stage IN ('choose_site', 'erp', 'consent', 'done'))
);
CREATE INDEX oauth_signin_flows_expires_idx ON oauth_signin_flows (expires_at);

-- Each user's ERP tokens for one site, sealed with the keyring (key_id) and
-- bound by additional data to (site, ERP user, field). Refreshed under a row
-- lock so that concurrent calls on any number of replicas refresh once.
CREATE TABLE upstream_tokens (
    site_id            uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    erp_user           text        NOT NULL,
    display_name       text        NOT NULL DEFAULT '',
    key_id             text        NOT NULL,
    access_ciphertext  bytea       NOT NULL,
    refresh_ciphertext bytea,
    expires_at         timestamptz NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, erp_user)
);
CREATE INDEX upstream_tokens_key_id_idx ON upstream_tokens (key_id);

-- Sign-in audit: sign_in, consent, login_denied (with a reason) and
-- grants_revoked (the ERP refused the user's refresh token). Never tokens,
-- passwords or e-mail addresses beyond the ERP user id.
CREATE TABLE auth_events (
    id          bigserial   PRIMARY KEY,
    occurred_at timestamptz NOT NULL DEFAULT now(),
    site_id     uuid        REFERENCES sites (id) ON DELETE SET NULL,
    event       text        NOT NULL,
    erp_user    text        NOT NULL DEFAULT '',
    client_id   text        NOT NULL DEFAULT '',
    reason      text        NOT NULL DEFAULT '',
    CONSTRAINT auth_events_event_check CHECK (event IN ('sign_in', 'consent', 'login_denied', 'grants_revoked'))
);
CREATE INDEX auth_events_site_time_idx ON auth_events (site_id, occurred_at DESC);

-- +goose Down
DROP TABLE auth_events;
DROP TABLE upstream_tokens;
DROP TABLE oauth_signin_flows;
DROP TABLE oauth_consents;
DROP TABLE oauth_tokens;
DROP TABLE oauth_cimd_cache;
DROP TABLE oauth_clients;
DROP TABLE oauth_secrets;
