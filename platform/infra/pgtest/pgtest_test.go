package pgtest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func count(t *testing.T, conn *pgx.Conn, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(t.Context(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func TestDatabasesAreIndependentAndMigrated(t *testing.T) {
	started := time.Now()
	first := connect(t, pgtest.NewDatabase(t))
	t.Logf("first NewDatabase (template build or reuse + clone): %v", time.Since(started))
	started = time.Now()
	second := connect(t, pgtest.NewDatabase(t))
	t.Logf("second NewDatabase (clone only): %v", time.Since(started))

	if _, err := first.Exec(t.Context(),
		`INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES (gen_random_uuid(), 'acme', 'frappe', 'https://erp.acme.test', 'Acme')`); err != nil {
		t.Fatalf("insert into first: %v", err)
	}
	if n := count(t, first, "SELECT count(*) FROM sites"); n != 1 {
		t.Errorf("first database has %d sites, want 1", n)
	}
	if n := count(t, second, "SELECT count(*) FROM sites"); n != 0 {
		t.Errorf("second database sees %d sites written to the first", n)
	}
	var firstName, secondName string
	first.QueryRow(t.Context(), "SELECT current_database()").Scan(&firstName)
	second.QueryRow(t.Context(), "SELECT current_database()").Scan(&secondName)
	if firstName == secondName {
		t.Errorf("both databases are %s", firstName)
	}
}

func TestTemplateIsReusedAndNeverConnected(t *testing.T) {
	pgtest.NewDatabase(t)
	pgtest.NewDatabase(t)
	admin := connect(t, pgtest.ServerURL(t))

	rows, err := admin.Query(t.Context(),
		`SELECT datname, datistemplate, datallowconn FROM pg_database WHERE datname LIKE 'erpgate\_tpl\_%'`)
	if err != nil {
		t.Fatal(err)
	}
	type template struct {
		name              string
		isTemplate, allow bool
	}
	templates, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (template, error) {
		var tpl template
		err := r.Scan(&tpl.name, &tpl.isTemplate, &tpl.allow)
		return tpl, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(templates) != 1 {
		t.Fatalf("templates on the server: %+v, want exactly one for this migration set", templates)
	}
	if !templates[0].isTemplate || templates[0].allow {
		t.Errorf("template %+v: want IS_TEMPLATE true and ALLOW_CONNECTIONS false", templates[0])
	}
	if n := count(t, admin, "SELECT count(*) FROM pg_stat_activity WHERE datname = $1", templates[0].name); n != 0 {
		t.Errorf("%d connections to the template remain open", n)
	}
}

func TestDatabaseIsDroppedWhenTestEnds(t *testing.T) {
	var name string
	t.Run("uses a database", func(t *testing.T) {
		conn := connect(t, pgtest.NewDatabase(t))
		if err := conn.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		// Left open on purpose: the drop must not wait for it.
	})
	admin := connect(t, pgtest.ServerURL(t))
	if n := count(t, admin, "SELECT count(*) FROM pg_database WHERE datname = $1", name); n != 0 {
		t.Errorf("database %s still exists after its test ended", name)
	}
}

func TestParallelTestsGetTheirOwnDatabases(t *testing.T) {
	for i := range 4 {
		t.Run(fmt.Sprintf("worker %d", i), func(t *testing.T) {
			t.Parallel()
			pool := pgtest.NewPool(t)
			if err := database.CheckReady(t.Context(), pool); err != nil {
				t.Fatalf("CheckReady on a NewPool database: %v", err)
			}
			if _, err := pool.Exec(t.Context(),
				`INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES (gen_random_uuid(), 'same-slug', 'frappe', 'https://erp.test', 'X')`); err != nil {
				t.Fatalf("insert the same unique slug in every database: %v", err)
			}
		})
	}
}

func TestNewEmptyDatabaseHasNoMigrations(t *testing.T) {
	conn := connect(t, pgtest.NewEmptyDatabase(t))
	if n := count(t, conn, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"); n != 0 {
		t.Errorf("empty database has %d tables", n)
	}
}

func TestServerURLIsAnAdminURL(t *testing.T) {
	conn := connect(t, pgtest.ServerURL(t))
	var canCreate bool
	if err := conn.QueryRow(t.Context(), "SELECT rolsuper OR rolcreatedb FROM pg_roles WHERE rolname = current_user").Scan(&canCreate); err != nil {
		t.Fatal(err)
	}
	if !canCreate {
		t.Error("ServerURL's role can neither create databases nor is superuser")
	}
	if !strings.HasPrefix(pgtest.ServerURL(t), "postgres") {
		t.Error("ServerURL is not a postgres URL")
	}
}

// TestSharedDatabaseOnlyOnTheSharedServer: NewSharedDatabase, for packages
// without Main, gives a fresh migrated database only on the server
// TEST_DATABASE_URL names (which outlives the test binary), and nothing
// without it, so it never starts a cluster that nobody would remove.
func TestSharedDatabaseOnlyOnTheSharedServer(t *testing.T) {
	server := pgtest.ServerURL(t)
	t.Setenv(pgtest.EnvDatabaseURL, "")
	if url, ok := pgtest.NewSharedDatabase(t); ok || url != "" {
		t.Errorf("without %s: %q, %v; want no database", pgtest.EnvDatabaseURL, url, ok)
	}
	t.Setenv(pgtest.EnvDatabaseURL, server)
	url, ok := pgtest.NewSharedDatabase(t)
	if !ok {
		t.Fatalf("with %s: no database", pgtest.EnvDatabaseURL)
	}
	if n := count(t, connect(t, url), "SELECT count(*) FROM sites"); n != 0 {
		t.Errorf("the shared database has %d sites, want a fresh one", n)
	}
}
