-- +goose NO TRANSACTION
-- +goose Up

-- The usage and audit viewer (issue 17).
--
-- usage_events gains who called: erp_user is the ERP user an OAuth call ran
-- as ('' for a service token), client_id the MCP client (the OAuth client
-- id, or the service token's id). They are stored for the operator's
-- viewer, as auth_events already store the ERP user; the log line does not
-- carry them. Adding a column with a constant default changes only the
-- catalogue, in a short transaction that waits at most 5 s for its lock.
--
-- The viewer pages newest first by (occurred_at, id) (keyset paging, never
-- OFFSET). Each filter it offers has an index that starts with the filter's
-- column and ends with that order, so that a page is the first rows of one
-- index range whatever the filters; the rarer values (an ERP user, a
-- client, an error code, a failed call) have partial indexes. The older
-- time indexes are replaced by the ones ending in id.
--
-- Not CONCURRENTLY, for the reason 00011 gives (a second replica starting
-- at the same time would wait for this one forever); IF NOT EXISTS lets a
-- failed run be run again.
-- +goose StatementBegin
DO $$
BEGIN
    PERFORM set_config('lock_timeout', '5s', true);
    ALTER TABLE usage_events ADD COLUMN IF NOT EXISTS erp_user text NOT NULL DEFAULT '';
    ALTER TABLE usage_events ADD COLUMN IF NOT EXISTS client_id text NOT NULL DEFAULT '';
END $$;
-- +goose StatementEnd

CREATE INDEX IF NOT EXISTS usage_events_time_id_idx ON usage_events (occurred_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS usage_events_site_time_id_idx ON usage_events (site_id, occurred_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS usage_events_tool_time_idx ON usage_events (tool, occurred_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS usage_events_user_time_idx ON usage_events (erp_user, occurred_at DESC, id DESC) WHERE erp_user <> '';
CREATE INDEX IF NOT EXISTS usage_events_client_time_idx ON usage_events (client_id, occurred_at DESC, id DESC) WHERE client_id <> '';
CREATE INDEX IF NOT EXISTS usage_events_code_time_idx ON usage_events (error_code, occurred_at DESC, id DESC) WHERE error_code <> '';
CREATE INDEX IF NOT EXISTS usage_events_failed_time_idx ON usage_events (occurred_at DESC, id DESC) WHERE outcome <> 'success';
DROP INDEX IF EXISTS usage_events_time_idx;
DROP INDEX IF EXISTS usage_events_site_time_idx;

CREATE INDEX IF NOT EXISTS auth_events_time_id_idx ON auth_events (occurred_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS auth_events_site_time_id_idx ON auth_events (site_id, occurred_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS auth_events_user_time_idx ON auth_events (erp_user, occurred_at DESC, id DESC) WHERE erp_user <> '';
DROP INDEX IF EXISTS auth_events_site_time_idx;

CREATE INDEX IF NOT EXISTS admin_events_time_id_idx ON admin_events (occurred_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS admin_events_site_time_id_idx ON admin_events (site_id, occurred_at DESC, id DESC);
DROP INDEX IF EXISTS admin_events_site_time_idx;

-- +goose Down
CREATE INDEX IF NOT EXISTS admin_events_site_time_idx ON admin_events (site_id, occurred_at DESC);
DROP INDEX IF EXISTS admin_events_site_time_id_idx;
DROP INDEX IF EXISTS admin_events_time_id_idx;
CREATE INDEX IF NOT EXISTS auth_events_site_time_idx ON auth_events (site_id, occurred_at DESC);
DROP INDEX IF EXISTS auth_events_user_time_idx;
DROP INDEX IF EXISTS auth_events_site_time_id_idx;
DROP INDEX IF EXISTS auth_events_time_id_idx;
CREATE INDEX IF NOT EXISTS usage_events_site_time_idx ON usage_events (site_id, occurred_at DESC);
CREATE INDEX IF NOT EXISTS usage_events_time_idx ON usage_events (occurred_at DESC);
DROP INDEX IF EXISTS usage_events_failed_time_idx;
DROP INDEX IF EXISTS usage_events_code_time_idx;
DROP INDEX IF EXISTS usage_events_client_time_idx;
DROP INDEX IF EXISTS usage_events_user_time_idx;
DROP INDEX IF EXISTS usage_events_tool_time_idx;
DROP INDEX IF EXISTS usage_events_site_time_id_idx;
DROP INDEX IF EXISTS usage_events_time_id_idx;
-- +goose StatementBegin
DO $$
BEGIN
    PERFORM set_config('lock_timeout', '5s', true);
    ALTER TABLE usage_events DROP COLUMN IF EXISTS client_id;
    ALTER TABLE usage_events DROP COLUMN IF EXISTS erp_user;
END $$;
-- +goose StatementEnd
