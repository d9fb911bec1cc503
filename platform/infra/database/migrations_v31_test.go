package database_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

func init() {
	migrationFixtures = append(migrationFixtures, migrationFixture{version: 30, seed: seedDisabledSitesBeforeV31, check: checkDisabledByV31})
}

// seedDisabledSitesBeforeV31 stores, before 00031, an active site and three
// disabled ones: the last status change of one was its owner's (after an
// operator's), of another the operator's (after its owner's), and the third
// has no event. 00031 must record the owner as having disabled only the
// first.
func seedDisabledSitesBeforeV31(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `
INSERT INTO sites (id, slug, kind, base_url, display_name, status) VALUES
 ('0b7f1c3e-3131-4a5b-8c9d-000000000001', 'v31-owner', 'frappe', 'https://owner31.test', 'O', 'disabled'),
 ('0b7f1c3e-3131-4a5b-8c9d-000000000002', 'v31-operator', 'frappe', 'https://operator31.test', 'P', 'disabled'),
 ('0b7f1c3e-3131-4a5b-8c9d-000000000003', 'v31-silent', 'frappe', 'https://silent31.test', 'S', 'disabled'),
 ('0b7f1c3e-3131-4a5b-8c9d-000000000004', 'v31-active', 'frappe', 'https://active31.test', 'A', 'active');
INSERT INTO admin_events (occurred_at, site_id, site_slug, actor_kind, actor, action, outcome, details) VALUES
 ('2026-11-01T10:00:00Z', '0b7f1c3e-3131-4a5b-8c9d-000000000001', 'v31-owner', 'operator', 'admin_token', 'update_site', 'success', '{"status":{"old":"active","new":"disabled"}}'),
 ('2026-11-01T11:00:00Z', '0b7f1c3e-3131-4a5b-8c9d-000000000001', 'v31-owner', 'operator', 'admin_token', 'update_site', 'success', '{"status":{"old":"disabled","new":"active"}}'),
 ('2026-11-01T12:00:00Z', '0b7f1c3e-3131-4a5b-8c9d-000000000001', 'v31-owner', 'erp_admin', 'it@owner31.test', 'update_site', 'success', '{"status":{"old":"active","new":"disabled"}}'),
 ('2026-11-01T13:00:00Z', '0b7f1c3e-3131-4a5b-8c9d-000000000001', 'v31-owner', 'operator', 'admin_token', 'update_site', 'success', '{"display_name":{"old":"Owner","new":"O"}}'),
 ('2026-11-01T10:00:00Z', '0b7f1c3e-3131-4a5b-8c9d-000000000002', 'v31-operator', 'erp_admin', 'it@operator31.test', 'update_site', 'success', '{"status":{"old":"active","new":"disabled"}}'),
 ('2026-11-01T11:00:00Z', '0b7f1c3e-3131-4a5b-8c9d-000000000002', 'v31-operator', 'operator', 'admin_token', 'update_site', 'success', '{"status":{"old":"disabled","new":"disabled"}}'),
 ('2026-11-01T12:00:00Z', '0b7f1c3e-3131-4a5b-8c9d-000000000002', 'v31-operator', 'erp_admin', 'it@operator31.test', 'update_site', 'refused', '{}')`,
		pgx.QueryExecModeSimpleProtocol)
	return err
}

// checkDisabledByV31: the rows are intact at every step, and from 00031 on
// each disabled site says who disabled it.
func checkDisabledByV31(ctx context.Context, conn *pgx.Conn) error {
	var hasColumn bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = 'sites' AND column_name = 'disabled_by')`).Scan(&hasColumn); err != nil {
		return err
	}
	by := `'-'`
	if hasColumn {
		by = `coalesce(disabled_by, '')`
	}
	rows, err := conn.Query(ctx, `SELECT slug || '|' || status || '|' || `+by+` FROM sites WHERE slug LIKE 'v31-%' ORDER BY slug`)
	if err != nil {
		return err
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	want := []string{"v31-active|active|", "v31-operator|disabled|operator", "v31-owner|disabled|owner", "v31-silent|disabled|operator"}
	if !hasColumn {
		want = []string{"v31-active|active|-", "v31-operator|disabled|-", "v31-owner|disabled|-", "v31-silent|disabled|-"}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		return fmt.Errorf("sites = %q, want %q", got, want)
	}
	return nil
}
