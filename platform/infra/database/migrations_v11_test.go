package database_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

func init() {
	migrationFixtures = append(migrationFixtures, migrationFixture{version: 11, seed: seedV11, check: checkV11})
}

const (
	v11SiteID  = "0b7f1c3e-1111-4a5b-8c9d-000000000011"
	v11EventID = "0197a1b2-c3d4-7e5f-8a9b-000000000011"
)

// seedV11 stores an event with its id and then deletes the event's site:
// from 00011 on, the event keeps the site's id and slug.
func seedV11(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `
INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, 'fixture-gone', 'frappe', 'https://gone.test', 'Gone');
INSERT INTO usage_events (event_id, occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, duration_ms, erp_ms)
     VALUES ($2, '2026-02-03T04:05:06Z', $1, 'fixture-gone', 'service_token', 'req-11', 'tools/call', 'list_items', 'success', 9, 4);
DELETE FROM sites WHERE id = $1;`, pgx.QueryExecModeSimpleProtocol, v11SiteID, v11EventID)
	return err
}

func checkV11(ctx context.Context, conn *pgx.Conn) error {
	var line string
	var unique bool
	if err := conn.QueryRow(ctx, `
SELECT event_id || '|' || site_id || '|' || site_slug || '|' || erp_ms,
       (SELECT i.indisunique AND i.indisvalid FROM pg_index i WHERE i.indexrelid = 'usage_events_event_id_idx'::regclass)
  FROM usage_events WHERE request_id = 'req-11'`).Scan(&line, &unique); err != nil {
		return err
	}
	if want := v11EventID + "|" + v11SiteID + "|fixture-gone|4"; line != want || !unique {
		return fmt.Errorf("event of a deleted site = %q (unique event_id index valid: %v), want %q", line, unique, want)
	}
	return nil
}
