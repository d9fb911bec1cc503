-- +goose Up

-- The limiter writes call_leases and call_windows on every tool call. They
-- hold only short-lived counters, so they need neither crash safety nor the
-- foreign keys to sites:
--   - UNLOGGED: no WAL, so a limiter transaction commits without waiting
--     for a WAL flush (it touches no logged table). After a Postgres crash
--     or fail-over the tables start empty: in-flight leases and the current
--     minute's counts are forgotten once, which only loosens the limits for
--     at most one minute and one call budget.
--   - no foreign keys: each insert otherwise checks and share-locks the
--     site's row, a logged write (and so a WAL flush) per call. Rows of a
--     deleted site are left to the limiter's janitor, which deletes expired
--     leases and past windows anyway.
ALTER TABLE call_leases DROP CONSTRAINT call_leases_site_id_fkey;
ALTER TABLE call_windows DROP CONSTRAINT call_windows_site_id_fkey;
ALTER TABLE call_leases SET UNLOGGED;
ALTER TABLE call_windows SET UNLOGGED;

-- +goose Down
ALTER TABLE call_windows SET LOGGED;
ALTER TABLE call_leases SET LOGGED;
DELETE FROM call_windows w WHERE NOT EXISTS (SELECT 1 FROM sites s WHERE s.id = w.site_id);
DELETE FROM call_leases l WHERE NOT EXISTS (SELECT 1 FROM sites s WHERE s.id = l.site_id);
ALTER TABLE call_windows ADD CONSTRAINT call_windows_site_id_fkey
    FOREIGN KEY (site_id) REFERENCES sites (id) ON DELETE CASCADE;
ALTER TABLE call_leases ADD CONSTRAINT call_leases_site_id_fkey
    FOREIGN KEY (site_id) REFERENCES sites (id) ON DELETE CASCADE;
