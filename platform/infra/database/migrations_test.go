package database_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// migrationFixture is data written right after migration `version` is
// applied, and checked after every later step, up and down, to prove that
// no migration loses or corrupts it. A migration that reshapes the data must
// update the checks of earlier fixtures to the new shape; that edit is the
// review point for the data transformation.
type migrationFixture struct {
	version int64
	seed    func(ctx context.Context, conn *pgx.Conn) error
	check   func(ctx context.Context, conn *pgx.Conn) error
}

// migrationFixtures has one entry per migration that creates or changes
// tables holding data.
var migrationFixtures = []migrationFixture{
	{version: 1, seed: seedV1, check: checkV1},
	{version: 2, seed: seedV2, check: checkV2},
}

// TestMigrationsStepByStep walks the embedded migrations one at a time. At
// each step it applies the migration, rolls it back and applies it again,
// and requires that
//   - the rollback restores exactly the previous schema,
//   - re-applying gives exactly the same schema as the first time,
//   - every fixture seeded so far is intact after each of those moves.
//
// Finally everything is rolled back to an empty schema and applied again.
// New migrations are covered without touching this test.
func TestMigrationsStepByStep(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewEmptyDatabase(t)
	db, err := database.OpenSQLForTest(url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := database.NewProviderForTest(db)
	if err != nil {
		t.Fatal(err)
	}
	sources := p.ListSources()
	checkFixturesNameMigrations(t, sources)

	// Let goose create its own table first, so that snapshots compare only
	// the migrations' objects.
	if _, err := p.GetDBVersion(ctx); err != nil {
		t.Fatal(err)
	}
	empty := schemaSnapshot(t, url)
	previous := empty
	for _, src := range sources {
		name := src.Path
		if _, err := p.UpByOne(ctx); err != nil {
			t.Fatalf("up %s: %v", name, err)
		}
		applied := schemaSnapshot(t, url)

		if _, err := p.Down(ctx); err != nil {
			t.Fatalf("down %s: %v", name, err)
		}
		if got := schemaSnapshot(t, url); got != previous {
			t.Errorf("down %s does not restore the previous schema:\n%s", name, diff(previous, got))
		}
		runChecks(t, url, src.Version-1, "after down "+name)

		if _, err := p.UpByOne(ctx); err != nil {
			t.Fatalf("up %s again after its down: %v", name, err)
		}
		if got := schemaSnapshot(t, url); got != applied {
			t.Errorf("re-applying %s gives a different schema:\n%s", name, diff(applied, got))
		}
		runChecks(t, url, src.Version-1, "after re-applying "+name)
		seed(t, url, src.Version)
		runChecks(t, url, src.Version, "after "+name)
		previous = applied
	}

	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("roll every migration back: %v", err)
	}
	if got := schemaSnapshot(t, url); got != empty {
		t.Errorf("rolling every migration back leaves objects behind:\n%s", diff(empty, got))
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("apply every migration after a full rollback: %v", err)
	}
	if got := schemaSnapshot(t, url); got != previous {
		t.Errorf("a full rollback and re-apply gives a different schema:\n%s", diff(previous, got))
	}
}

func checkFixturesNameMigrations(t *testing.T, sources []*goose.Source) {
	t.Helper()
	known := map[int64]bool{}
	for _, s := range sources {
		known[s.Version] = true
	}
	for _, f := range migrationFixtures {
		if !known[f.version] {
			t.Errorf("fixture for version %d, which is not an embedded migration", f.version)
		}
	}
}

func withConn(t *testing.T, url string, fn func(conn *pgx.Conn) error) error {
	t.Helper()
	// A fresh connection each time: pgx caches statement descriptions,
	// which a migration can invalidate.
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	return fn(conn)
}

func seed(t *testing.T, url string, version int64) {
	t.Helper()
	for _, f := range migrationFixtures {
		if f.version != version {
			continue
		}
		if err := withConn(t, url, func(conn *pgx.Conn) error { return f.seed(t.Context(), conn) }); err != nil {
			t.Fatalf("seed the version %d fixture: %v", version, err)
		}
	}
}

func runChecks(t *testing.T, url string, upTo int64, when string) {
	t.Helper()
	for _, f := range migrationFixtures {
		if f.version > upTo {
			continue
		}
		if err := withConn(t, url, func(conn *pgx.Conn) error { return f.check(t.Context(), conn) }); err != nil {
			t.Errorf("version %d fixture %s: %v", f.version, when, err)
		}
	}
}

// schemaSnapshot describes every object of the public schema, one per line
// in a stable order, so two schemas compare as strings.
func schemaSnapshot(t *testing.T, url string) string {
	t.Helper()
	var lines []string
	err := withConn(t, url, func(conn *pgx.Conn) error {
		rows, err := conn.Query(t.Context(), schemaSnapshotQuery)
		if err != nil {
			return err
		}
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatalf("snapshot the schema: %v", err)
	}
	return strings.Join(lines, "\n")
}

const schemaSnapshotQuery = `
SELECT 'relation ' || c.relname || ' kind=' || c.relkind::text
  FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace
UNION ALL
SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type
       || ' null=' || is_nullable || ' default=' || coalesce(column_default, '')
  FROM information_schema.columns WHERE table_schema = 'public'
UNION ALL
SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
  FROM pg_constraint WHERE connamespace = 'public'::regnamespace
UNION ALL
SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
UNION ALL
SELECT 'function ' || p.oid::regprocedure::text || ' ' || md5(p.prosrc)
  FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
UNION ALL
SELECT 'trigger ' || tgrelid::regclass::text || ' ' || pg_get_triggerdef(oid)
  FROM pg_trigger WHERE NOT tgisinternal
UNION ALL
SELECT 'type ' || typname || ' ' || typtype::text
  FROM pg_type WHERE typnamespace = 'public'::regnamespace AND typtype IN ('c', 'd', 'e', 'r')
UNION ALL
SELECT 'extension ' || extname FROM pg_extension WHERE extname <> 'plpgsql'
ORDER BY 1`

// diff lists the lines only in want and only in got.
func diff(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for line := range strings.SplitSeq(s, "\n") {
			m[line] = true
		}
		return m
	}
	wantSet, gotSet := in(want), in(got)
	var b strings.Builder
	for line := range strings.SplitSeq(want, "\n") {
		if !gotSet[line] {
			fmt.Fprintf(&b, "- %s\n", line)
		}
	}
	for line := range strings.SplitSeq(got, "\n") {
		if !wantSet[line] {
			fmt.Fprintf(&b, "+ %s\n", line)
		}
	}
	return b.String()
}

// Version 1 fixture: one site with an OAuth connection, a sealed credential,
// a service token and a usage event.
const (
	v1SiteID       = "0b7f1c3e-1111-4a5b-8c9d-000000000001"
	v1ConnectionID = "0b7f1c3e-2222-4a5b-8c9d-000000000002"
	v1TokenID      = "0b7f1c3e-3333-4a5b-8c9d-000000000003"
)

func seedV1(ctx context.Context, conn *pgx.Conn) error {
	// The simple protocol allows several statements in one Exec.
	_, err := conn.Exec(ctx, seedV1SQL, pgx.QueryExecModeSimpleProtocol, v1SiteID, v1ConnectionID, v1TokenID)
	return err
}

const seedV1SQL = `
INSERT INTO sites (id, slug, kind, base_url, display_name, settings)
     VALUES ($1, 'fixture-acme', 'acumatica', 'https://erp.acme.test', 'Acme Fixture',
             '{"tenant": "Company", "endpoint": "Default"}');
INSERT INTO connections (id, site_id, type, verified_identity)
     VALUES ($2, $1, 'oauth', 'admin@acme.test');
INSERT INTO credentials (site_id, connection_id, field, key_id, ciphertext)
     VALUES ($1, $2, 'client_secret', 'k1', '\xdeadbeef');
INSERT INTO service_tokens (id, site_id, name, token_hash, prefix)
     VALUES ($3, $1, 'bot', sha256('fixture-token'), 'egs_fixt');
INSERT INTO usage_events (occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, duration_ms)
     VALUES ('2026-01-02T03:04:05Z', $1, 'fixture-acme', 'oauth', 'req-1', 'tools/call', 'list_invoices', 'success', 42);`

func checkV1(ctx context.Context, conn *pgx.Conn) error {
	var got []string
	for _, q := range []string{
		`SELECT slug || '|' || kind || '|' || base_url || '|' || display_name || '|' || status || '|' || (settings->>'tenant') FROM sites WHERE id = '` + v1SiteID + `'`,
		`SELECT type || '|' || verified_identity || '|' || site_id FROM connections WHERE id = '` + v1ConnectionID + `'`,
		`SELECT field || '|' || key_id || '|' || encode(ciphertext, 'hex') FROM credentials WHERE connection_id = '` + v1ConnectionID + `'`,
		`SELECT name || '|' || prefix || '|' || (token_hash = sha256('fixture-token')) || '|' || revoked FROM service_tokens WHERE id = '` + v1TokenID + `'`,
		`SELECT site_slug || '|' || tool || '|' || outcome || '|' || duration_ms FROM usage_events WHERE request_id = 'req-1'`,
	} {
		var line string
		if err := conn.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&line); err != nil {
			if database.IsNoRows(err) {
				return fmt.Errorf("row missing: %s", q)
			}
			return err
		}
		got = append(got, line)
	}
	want := []string{
		"fixture-acme|acumatica|https://erp.acme.test|Acme Fixture|active|Company",
		"oauth|admin@acme.test|" + v1SiteID,
		"client_secret|k1|deadbeef",
		"bot|egs_fixt|true|false",
		"fixture-acme|list_invoices|success|42",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		return fmt.Errorf("fixture rows changed:\n got %q\nwant %q", got, want)
	}
	return nil
}
