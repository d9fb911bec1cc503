-- +goose NO TRANSACTION
-- +goose Up

-- Refusals of visitors erpgate knows nothing of (a registration's start
-- or proof refused before anyone was identified, a wrong admin token at the
-- console's sign-in, an owner's sign-in the ERP did not complete) were one
-- admin_events row each, kept for ever: many source addresses, each within
-- its own limit, could grow the table without bound. They are now counted
-- in one row per action, site, kind of refusal and minute (UTC) for the
-- whole deployment: summary_key names that row, the unique index makes
-- every replica add to the same one (INSERT … ON CONFLICT), and repeats
-- counts the refusals it stands for (1 for every other row). Refusals of
-- an identified person, and everything that changed something, stay one
-- row each.
--
-- The same for sign-ins refused before anyone signed in (login_denied
-- without an ERP user: the ERP's callback brought back an error, opened in
-- another browser, at another site's redirect URI, or with a used code):
-- anyone may start a sign-in to a site and end it so. One row per site,
-- event, reason and minute counts them.
--
-- Safe on large tables, as 00011: the columns are added in short
-- statements that change only the catalogue (a constant default is not
-- written into old rows) and wait at most 5 s for their lock, so that
-- they never queue the audit's readers behind a long transaction; each
-- index is then built in its own statement, which blocks only writes to
-- its table while it reads it (about 0.4 s a million rows), never reads.
-- Not CONCURRENTLY, for the reason 00011 gives. Every step may run again
-- after a failure.
-- +goose StatementBegin
DO $$
BEGIN
    PERFORM set_config('lock_timeout', '5s', true);
    ALTER TABLE admin_events ADD COLUMN IF NOT EXISTS repeats integer NOT NULL DEFAULT 1;
    ALTER TABLE admin_events ADD COLUMN IF NOT EXISTS summary_key text;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
DO $$
BEGIN
    PERFORM set_config('lock_timeout', '5s', true);
    ALTER TABLE auth_events ADD COLUMN IF NOT EXISTS repeats integer NOT NULL DEFAULT 1;
    ALTER TABLE auth_events ADD COLUMN IF NOT EXISTS summary_key text;
END $$;
-- +goose StatementEnd
CREATE UNIQUE INDEX IF NOT EXISTS admin_events_summary_key_idx ON admin_events (summary_key) WHERE summary_key IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS auth_events_summary_key_idx ON auth_events (summary_key) WHERE summary_key IS NOT NULL;

-- +goose Down
DROP INDEX IF EXISTS auth_events_summary_key_idx;
DROP INDEX IF EXISTS admin_events_summary_key_idx;
ALTER TABLE auth_events DROP COLUMN IF EXISTS summary_key;
ALTER TABLE auth_events DROP COLUMN IF EXISTS repeats;
ALTER TABLE admin_events DROP COLUMN IF EXISTS summary_key;
ALTER TABLE admin_events DROP COLUMN IF EXISTS repeats;
