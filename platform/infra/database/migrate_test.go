package database_test

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func migrate(t *testing.T, url, direction string) string {
	t.Helper()
	var out bytes.Buffer
	if err := database.Migrate(t.Context(), url, direction, &out); err != nil {
		t.Fatalf("Migrate %s: %v\noutput:\n%s", direction, err, out.String())
	}
	return out.String()
}

func latestVersion(t *testing.T) int64 {
	t.Helper()
	v, err := database.LatestVersion()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// migrationFiles lists the embedded migrations in order, via goose.
func migrationFiles(t *testing.T, url string) []string {
	t.Helper()
	db, err := database.OpenSQLForTest(url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := database.NewProviderForTest(db)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, s := range p.ListSources() {
		files = append(files, s.Path)
	}
	return files
}

func publicTables(t *testing.T, url string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(),
		"SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'goose_db_version'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMigrateUpDownUpRoundTrip(t *testing.T) {
	url := pgtest.NewEmptyDatabase(t)
	files := migrationFiles(t, url)

	out := migrate(t, url, database.DirectionUp)
	for _, f := range files {
		if !strings.Contains(out, "OK") || !strings.Contains(out, f) {
			t.Errorf("up output does not report %s:\n%s", f, out)
		}
	}
	if n := publicTables(t, url); n == 0 {
		t.Fatal("no tables after migrating up")
	}

	for i := len(files) - 1; i >= 0; i-- {
		if out := migrate(t, url, database.DirectionDown); !strings.Contains(out, files[i]) {
			t.Errorf("down #%d output does not name %s:\n%s", len(files)-i, files[i], out)
		}
	}
	if n := publicTables(t, url); n != 0 {
		t.Errorf("%d tables left after rolling every migration back", n)
	}
	if out := migrate(t, url, database.DirectionDown); !strings.Contains(out, "no applied migration") {
		t.Errorf("down with nothing applied:\n%s", out)
	}

	migrate(t, url, database.DirectionUp)
	if out := migrate(t, url, database.DirectionUp); !strings.Contains(out, "no pending migrations") {
		t.Errorf("second up should have nothing to do:\n%s", out)
	}
}

func TestMigrateStatusListsEachMigration(t *testing.T) {
	url := pgtest.NewEmptyDatabase(t)
	files := migrationFiles(t, url)

	before := migrate(t, url, database.DirectionStatus)
	migrate(t, url, database.DirectionUp)
	after := migrate(t, url, database.DirectionStatus)

	for _, f := range files {
		if !lineWith(before, f, "pending") {
			t.Errorf("status before up has no pending line for %s:\n%s", f, before)
		}
		if !lineWith(after, f, "applied", "UTC") {
			t.Errorf("status after up has no applied line for %s:\n%s", f, after)
		}
	}
}

func lineWith(text string, words ...string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all {
			return true
		}
	}
	return false
}

func TestMigrateRejectsUnknownDirection(t *testing.T) {
	err := database.Migrate(t.Context(), "postgres://127.0.0.1:1/x", "sideways", &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "sideways") {
		t.Fatalf("Migrate sideways: %v", err)
	}
}

func TestConcurrentMigrateUpAppliesEachMigrationOnce(t *testing.T) {
	url := pgtest.NewEmptyDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = database.MigrateUp(t.Context(), url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("MigrateUp #%d: %v", i, err)
		}
	}

	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows, distinct int
	var maxVersion int64
	if err := conn.QueryRow(t.Context(),
		"SELECT count(*), count(DISTINCT version_id), max(version_id) FROM goose_db_version WHERE version_id > 0").
		Scan(&rows, &distinct, &maxVersion); err != nil {
		t.Fatal(err)
	}
	if rows != distinct || maxVersion != latestVersion(t) {
		t.Errorf("goose_db_version has %d rows for %d versions up to %d; want each version once up to %d",
			rows, distinct, maxVersion, latestVersion(t))
	}
}

func TestMigrateWaitsForTheMigrationLock(t *testing.T) {
	url := pgtest.NewEmptyDatabase(t)
	holder, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.Background())
	if _, err := holder.Exec(t.Context(), "SELECT pg_advisory_lock($1)", database.MigrationLockKeyForTest); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() { done <- database.MigrateUp(t.Context(), url) }()

	// Wait until MigrateUp is blocked on the lock, then check it did nothing.
	for waiting := 0; waiting == 0; {
		select {
		case err := <-done:
			t.Fatalf("MigrateUp finished while another session held the lock: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if err := holder.QueryRow(t.Context(),
			`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	var versionTable bool
	if err := holder.QueryRow(t.Context(), "SELECT to_regclass('goose_db_version') IS NOT NULL").Scan(&versionTable); err != nil {
		t.Fatal(err)
	}
	if versionTable {
		t.Error("goose_db_version was created while another session held the migration lock")
	}

	if _, err := holder.Exec(t.Context(), "SELECT pg_advisory_unlock($1)", database.MigrationLockKeyForTest); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("MigrateUp after the lock was released: %v", err)
	}
}

func TestCheckReady(t *testing.T) {
	url := pgtest.NewEmptyDatabase(t)
	pool, err := database.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	if err := database.CheckReady(t.Context(), pool); !errors.Is(err, database.ErrSchemaBehind) {
		t.Errorf("CheckReady before migrating = %v, want ErrSchemaBehind", err)
	}
	if err := database.MigrateUp(t.Context(), url); err != nil {
		t.Fatal(err)
	}
	if err := database.CheckReady(t.Context(), pool); err != nil {
		t.Errorf("CheckReady after migrating = %v, want nil", err)
	}

	migrate(t, url, database.DirectionDown)
	err = database.CheckReady(t.Context(), pool)
	if !errors.Is(err, database.ErrSchemaBehind) {
		t.Errorf("CheckReady one migration behind = %v, want ErrSchemaBehind", err)
	}
	t.Logf("behind: %v", err)
	migrate(t, url, database.DirectionUp)

	if _, err := pool.Exec(t.Context(), "INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)",
		latestVersion(t)+1); err != nil {
		t.Fatal(err)
	}
	if err := database.CheckReady(t.Context(), pool); !errors.Is(err, database.ErrSchemaAhead) {
		t.Errorf("CheckReady with a newer schema = %v, want ErrSchemaAhead", err)
	}

	pool.Close()
	if err := database.CheckReady(t.Context(), pool); !errors.Is(err, database.ErrUnavailable) {
		t.Errorf("CheckReady on a closed pool = %v, want ErrUnavailable", err)
	}
}

// withParam returns url with the query parameter name=value added.
func withParam(t *testing.T, raw, name, value string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// TestMigrateAcceptsPoolSettingsInTheURL: docs/deploy.md has the operator
// size the pool with pool_max_conns in DATABASE_URL. Migrating with that
// URL must not hand the pool's settings to the server, which refuses an
// unknown parameter and so every replica's start.
func TestMigrateAcceptsPoolSettingsInTheURL(t *testing.T) {
	dbURL := withParam(t, pgtest.NewEmptyDatabase(t), "pool_max_conns", "3")
	if err := database.MigrateUp(t.Context(), dbURL); err != nil {
		t.Fatalf("MigrateUp with pool_max_conns in the URL: %v", err)
	}
	pool, err := database.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if got := pool.Config().MaxConns; got != 3 {
		t.Errorf("pool of %d connections, want the URL's 3", got)
	}
	if err := database.CheckReady(t.Context(), pool); err != nil {
		t.Errorf("CheckReady after migrating: %v", err)
	}
}

// TestSiteIdentityIgnoresCaseMigrationNamesTheClashes: migration 00041
// makes a site's identity key (Acumatica's tenant) unique without regard
// to case. A database that already holds one tenant registered twice,
// spelt in two cases, cannot get the index: the migration stops, naming
// the sites, and changes nothing; with one of them gone it applies.
func TestSiteIdentityIgnoresCaseMigrationNamesTheClashes(t *testing.T) {
	url := pgtest.NewDatabase(t)
	pool, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Close(context.Background()) })
	// Back to 00040, however many migrations came after 00041.
	for {
		var version int64
		if err := pool.QueryRow(t.Context(), `SELECT max(version_id) FROM goose_db_version`).Scan(&version); err != nil {
			t.Fatal(err)
		}
		if version <= 40 {
			break
		}
		migrate(t, url, database.DirectionDown)
	}
	if _, err := pool.Exec(t.Context(), `
INSERT INTO sites (id, slug, kind, base_url, display_name, settings, identity_key) VALUES
 ('0b7f1c3e-4242-4a5b-8c9d-000000000001', 'acme-demo', 'acumatica', 'https://acu.test/ERP', 'A', '{"tenant":"Demo"}', 'Demo'),
 ('0b7f1c3e-4242-4a5b-8c9d-000000000002', 'acme-again', 'acumatica', 'https://acu.test/erp', 'B', '{"tenant":"DEMO"}', 'DEMO'),
 ('0b7f1c3e-4242-4a5b-8c9d-000000000003', 'acme-north', 'acumatica', 'https://acu.test/ERP', 'C', '{"tenant":"North"}', 'North')`); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = database.Migrate(t.Context(), url, database.DirectionUp, &out)
	if err == nil || !strings.Contains(err.Error(), "acme-again, acme-demo") || strings.Contains(err.Error(), "acme-north") {
		t.Fatalf("migrate up over one tenant spelt twice: %v\n%s", err, out.String())
	}
	if _, err := pool.Exec(t.Context(), `DELETE FROM sites WHERE slug = 'acme-again'`); err != nil {
		t.Fatal(err)
	}
	migrate(t, url, database.DirectionUp)
	_, err = pool.Exec(t.Context(), `INSERT INTO sites (id, slug, kind, base_url, display_name, settings, identity_key)
		VALUES ('0b7f1c3e-4242-4a5b-8c9d-000000000004', 'acme-later', 'acumatica', 'https://acu.test/ERP', 'D', '{"tenant":"demo"}', 'demo')`)
	if err == nil || !strings.Contains(err.Error(), "sites_base_url_identity_key") {
		t.Fatalf("a later site for tenant demo beside Demo: %v", err)
	}
}
