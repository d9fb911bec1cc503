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
-- client, an error code, a failed call) have partial indexes, which also
-- carry what a chart of them counts (INCLUDE), so that a chart of one
-- client's month is an index-only scan rather than a heap read per event.
-- The older time indexes are replaced by the ones ending in id.
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
CREATE INDEX IF NOT EXISTS usage_events_user_time_idx ON usage_events (erp_user, occurred_at DESC, id DESC) INCLUDE (site_id, method, tool, outcome, duration_ms, erp_ms) WHERE erp_user <> '';
CREATE INDEX IF NOT EXISTS usage_events_client_time_idx ON usage_events (client_id, occurred_at DESC, id DESC) INCLUDE (site_id, method, tool, outcome, duration_ms, erp_ms) WHERE client_id <> '';
CREATE INDEX IF NOT EXISTS usage_events_code_time_idx ON usage_events (error_code, occurred_at DESC, id DESC) INCLUDE (site_id, method, tool, outcome, duration_ms, erp_ms) WHERE error_code <> '';
CREATE INDEX IF NOT EXISTS usage_events_failed_time_idx ON usage_events (occurred_at DESC, id DESC) INCLUDE (site_id, method, tool, outcome, duration_ms, erp_ms) WHERE outcome <> 'success';
DROP INDEX IF EXISTS usage_events_time_idx;
DROP INDEX IF EXISTS usage_events_site_time_idx;

CREATE INDEX IF NOT EXISTS auth_events_time_id_idx ON auth_events (occurred_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS auth_events_site_time_id_idx ON auth_events (site_id, occurred_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS auth_events_user_time_idx ON auth_events (erp_user, occurred_at DESC, id DESC) WHERE erp_user <> '';
DROP INDEX IF EXISTS auth_events_site_time_idx;

CREATE INDEX IF NOT EXISTS admin_events_time_id_idx ON admin_events (occurred_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS admin_events_site_time_id_idx ON admin_events (site_id, occurred_at DESC, id DESC);
DROP INDEX IF EXISTS admin_events_site_time_idx;

-- Chart data (issue 17): one row per hour, site, client and tool,
-- counting the tool calls, the failed ones, and the calls with an ERP time
-- in latency slots, for the ERP's part (e0..e28) and erpgate's part
-- (g0..g28: the whole call minus the ERP's part). A slot holds the calls
-- of at most its bound and more than the bound before it, the bounds in
-- milliseconds being 0, 1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150,
-- 200, 300, 500, 700, 1000, 1500, 2000, 3000, 5000, 7000, 10000, 20000, 30000, 60000, and then everything longer
-- (platform/store/activity's LatencyBounds, which a test holds equal to
-- erpgate_latency_slot). A percentile is read as the bound of the slot it
-- falls in: at most 50% more than the true value.
--
-- Each call is counted three times: under its site (client_id ''), under
-- the sentinel site id ffffffff-ffff-ffff-ffff-ffffffffffff (not a
-- version-4 UUID, so never a site's) for every site together (client_id
-- ''; events stored without a site count here too), and under the sentinel
-- with its MCP client, for a client's charts across sites. A chart reads at
-- most one row per hour and tool, whatever the number of events: a month
-- of a deployment is some thousands of rows rather than millions. Counts
-- are integer columns so that Postgres sums them natively, in bigint (an
-- hour of one tool holds far fewer than 2^31 calls).
--
-- The slot columns are e0..e28 and g0..g28; erpgate_usage_rollup_sql
-- writes their lists.
CREATE OR REPLACE FUNCTION erpgate_latency_slot(ms integer) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN width_bucket(greatest(ms, 0), '{1,2,3,4,6,8,11,16,21,31,51,71,101,151,201,301,501,701,1001,1501,2001,3001,5001,7001,10001,20001,30001,60001}'::integer[]);

CREATE TABLE IF NOT EXISTS usage_rollup (
    site_id   uuid        NOT NULL,
    client_id text        NOT NULL DEFAULT '',
    bucket    timestamptz NOT NULL,
    tool      text        NOT NULL,
    calls     integer     NOT NULL DEFAULT 0,
    errors    integer     NOT NULL DEFAULT 0,
    e0 integer NOT NULL DEFAULT 0,
    e1 integer NOT NULL DEFAULT 0,
    e2 integer NOT NULL DEFAULT 0,
    e3 integer NOT NULL DEFAULT 0,
    e4 integer NOT NULL DEFAULT 0,
    e5 integer NOT NULL DEFAULT 0,
    e6 integer NOT NULL DEFAULT 0,
    e7 integer NOT NULL DEFAULT 0,
    e8 integer NOT NULL DEFAULT 0,
    e9 integer NOT NULL DEFAULT 0,
    e10 integer NOT NULL DEFAULT 0,
    e11 integer NOT NULL DEFAULT 0,
    e12 integer NOT NULL DEFAULT 0,
    e13 integer NOT NULL DEFAULT 0,
    e14 integer NOT NULL DEFAULT 0,
    e15 integer NOT NULL DEFAULT 0,
    e16 integer NOT NULL DEFAULT 0,
    e17 integer NOT NULL DEFAULT 0,
    e18 integer NOT NULL DEFAULT 0,
    e19 integer NOT NULL DEFAULT 0,
    e20 integer NOT NULL DEFAULT 0,
    e21 integer NOT NULL DEFAULT 0,
    e22 integer NOT NULL DEFAULT 0,
    e23 integer NOT NULL DEFAULT 0,
    e24 integer NOT NULL DEFAULT 0,
    e25 integer NOT NULL DEFAULT 0,
    e26 integer NOT NULL DEFAULT 0,
    e27 integer NOT NULL DEFAULT 0,
    e28 integer NOT NULL DEFAULT 0,
    g0 integer NOT NULL DEFAULT 0,
    g1 integer NOT NULL DEFAULT 0,
    g2 integer NOT NULL DEFAULT 0,
    g3 integer NOT NULL DEFAULT 0,
    g4 integer NOT NULL DEFAULT 0,
    g5 integer NOT NULL DEFAULT 0,
    g6 integer NOT NULL DEFAULT 0,
    g7 integer NOT NULL DEFAULT 0,
    g8 integer NOT NULL DEFAULT 0,
    g9 integer NOT NULL DEFAULT 0,
    g10 integer NOT NULL DEFAULT 0,
    g11 integer NOT NULL DEFAULT 0,
    g12 integer NOT NULL DEFAULT 0,
    g13 integer NOT NULL DEFAULT 0,
    g14 integer NOT NULL DEFAULT 0,
    g15 integer NOT NULL DEFAULT 0,
    g16 integer NOT NULL DEFAULT 0,
    g17 integer NOT NULL DEFAULT 0,
    g18 integer NOT NULL DEFAULT 0,
    g19 integer NOT NULL DEFAULT 0,
    g20 integer NOT NULL DEFAULT 0,
    g21 integer NOT NULL DEFAULT 0,
    g22 integer NOT NULL DEFAULT 0,
    g23 integer NOT NULL DEFAULT 0,
    g24 integer NOT NULL DEFAULT 0,
    g25 integer NOT NULL DEFAULT 0,
    g26 integer NOT NULL DEFAULT 0,
    g27 integer NOT NULL DEFAULT 0,
    g28 integer NOT NULL DEFAULT 0,
    PRIMARY KEY (site_id, client_id, bucket, tool)
);

-- erpgate_usage_rollup_sql is the statement that adds the tool calls of
-- src, a FROM item (RollUp's one hour of usage_events), to the rollup: the
-- three groupings, in key order.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION erpgate_usage_rollup_sql(src text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    cols text;
    counts text;
    updates text;
    branch text;
    every_site constant text := quote_literal('ffffffff-ffff-ffff-ffff-ffffffffffff') || '::uuid';
BEGIN
    SELECT string_agg(k || i, ', ' ORDER BY k, i),
           string_agg(format('count(*) FILTER (WHERE %ss = %s)', k, i), ', ' ORDER BY k, i),
           string_agg(format('%1$s%2$s = r.%1$s%2$s + excluded.%1$s%2$s', k, i), ', ' ORDER BY k, i)
      INTO cols, counts, updates
      FROM unnest(ARRAY['e', 'g']) k, generate_series(0, 28) i;
    branch := 'SELECT date_trunc(''hour'', occurred_at, ''UTC''), %s, %s, tool, count(*), count(*) FILTER (WHERE outcome = ''error''), '
        || counts || ' FROM (SELECT occurred_at, site_id, client_id, tool, outcome, erpgate_latency_slot(erp_ms) AS es,'
        || ' erpgate_latency_slot(duration_ms - erp_ms) AS gs FROM ' || src
        || ' WHERE method = ''tools/call''%s) e GROUP BY 1, 2, 3, 4';
    RETURN 'INSERT INTO usage_rollup AS r (bucket, site_id, client_id, tool, calls, errors, ' || cols || ') SELECT * FROM ('
        || format(branch, 'site_id', quote_literal(''), ' AND site_id IS NOT NULL')
        || ' UNION ALL ' || format(branch, every_site, quote_literal(''), '')
        || ' UNION ALL ' || format(branch, every_site, 'client_id', ' AND client_id <> ' || quote_literal(''))
        || ') added_rows ORDER BY 2, 3, 1, 4 ON CONFLICT (site_id, client_id, bucket, tool) DO UPDATE SET'
        || ' calls = r.calls + excluded.calls, errors = r.errors + excluded.errors, ' || updates;
END $$;
-- +goose StatementEnd

-- The rollup holds closed hours only. A replica's janitor
-- (platform/store/activity's RollUp, under an advisory lock, so one replica at a
-- time) adds each hour's calls once the hour has been over for a grace
-- period longer than a usage batch waits to be written, and moves
-- rolled_until on; a chart reads the hours before rolled_until here and
-- the later ones from the events. Counting on every insert instead (a
-- trigger) cost each call about 290 µs of database time, one wide-row
-- upsert per site, tool and hour of every batch.
CREATE TABLE IF NOT EXISTS usage_rollup_mark (
    singleton    boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    rolled_until timestamptz NOT NULL
);
INSERT INTO usage_rollup_mark (rolled_until)
SELECT coalesce(date_trunc('hour', min(occurred_at), 'UTC'), '2000-01-01 00:00:00+00') FROM usage_events
ON CONFLICT DO NOTHING;

-- +goose Down
DROP TABLE IF EXISTS usage_rollup_mark;
DROP FUNCTION IF EXISTS erpgate_usage_rollup_sql(text);
DROP TABLE IF EXISTS usage_rollup;
DROP FUNCTION IF EXISTS erpgate_latency_slot(integer);
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
