package database_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

func init() {
	migrationFixtures = append(migrationFixtures, migrationFixture{version: 13, seed: seedSitesBeforeV14, check: checkSitesIdentityV14})
}

// seedSitesBeforeV14 stores, before 00014, two Acumatica tenants at one
// origin, an Acumatica site without a tenant and a Frappe site: 00014 must
// give each the identity key its connector computes.
func seedSitesBeforeV14(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `
INSERT INTO sites (id, slug, kind, base_url, display_name, settings) VALUES
 ('0b7f1c3e-1414-4a5b-8c9d-000000000001', 'v14-acu-a', 'acumatica', 'https://acu14.test', 'A', '{"tenant":"Company A","endpoint_name":"Default"}'),
 ('0b7f1c3e-1414-4a5b-8c9d-000000000002', 'v14-acu-b', 'acumatica', 'https://acu14.test', 'B', '{"tenant":"Company B"}'),
 ('0b7f1c3e-1414-4a5b-8c9d-000000000003', 'v14-acu-none', 'acumatica', 'https://acu14-single.test', 'C', '{}'),
 ('0b7f1c3e-1414-4a5b-8c9d-000000000004', 'v14-frappe', 'frappe', 'https://frappe14.test', 'F', '{"default_company":"X"}')`,
		pgx.QueryExecModeSimpleProtocol)
	return err
}

// checkSitesIdentityV14: the rows are intact at every step, with the
// backfilled identity keys from 00014 on.
func checkSitesIdentityV14(ctx context.Context, conn *pgx.Conn) error {
	var hasColumn bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = 'sites' AND column_name = 'identity_key')`).Scan(&hasColumn); err != nil {
		return err
	}
	key := `''`
	if hasColumn {
		key = `identity_key`
	}
	rows, err := conn.Query(ctx, `SELECT slug || '|' || base_url || '|' || `+key+` FROM sites WHERE slug LIKE 'v14-%' ORDER BY slug`)
	if err != nil {
		return err
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	want := []string{"v14-acu-a|https://acu14.test|Company A", "v14-acu-b|https://acu14.test|Company B", "v14-acu-none|https://acu14-single.test|", "v14-frappe|https://frappe14.test|"}
	if !hasColumn {
		want = []string{"v14-acu-a|https://acu14.test|", "v14-acu-b|https://acu14.test|", "v14-acu-none|https://acu14-single.test|", "v14-frappe|https://frappe14.test|"}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		return fmt.Errorf("sites = %q, want %q", got, want)
	}
	return nil
}
