-- +goose Up

-- When a registered client last received a token (code exchange or
-- refresh), so that the janitor can remove clients nobody uses: open
-- registration must not fill oauth_clients (issue 14). NULL until the
-- first token. Clients registered before this column count as used now,
-- so that none in use is removed before it next refreshes.
ALTER TABLE oauth_clients ADD COLUMN last_used_at timestamptz;
UPDATE oauth_clients SET last_used_at = now();
CREATE INDEX oauth_clients_unused_idx ON oauth_clients ((coalesce(last_used_at, created_at)));

-- The janitor also removes expired Client ID Metadata Documents.
CREATE INDEX oauth_cimd_cache_expires_idx ON oauth_cimd_cache (expires_at);

-- +goose Down
DROP INDEX oauth_cimd_cache_expires_idx;
DROP INDEX oauth_clients_unused_idx;
ALTER TABLE oauth_clients DROP COLUMN last_used_at;
