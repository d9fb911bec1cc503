package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
)

const (
	// createTimeout bounds cloning a database, template build excluded.
	createTimeout = time.Minute
	// dropTimeout bounds dropping a test's database at cleanup.
	dropTimeout = time.Minute
	// maxNameFromTest is how much of the test name goes into a database name
	// (PostgreSQL truncates identifiers at 63 bytes).
	maxNameFromTest = 30
)

// NewDatabase returns the URL of a new database with every migration
// applied, cloned from the template. It is dropped (WITH (FORCE), so open
// connections do not block it) when the test ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	s := mustServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), templateTimeout+createTimeout)
	defer cancel()
	template, err := s.ensureTemplate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s.createDatabase(ctx, t, template)
}

// NewSharedDatabase is NewDatabase for a package without Main, such as a
// connector's, whose end-to-end test starts the gateway through the kit
// (platform/connector/connectortest/e2e): it uses only the server that
// TEST_DATABASE_URL names, which outlives the test binary, so nothing is
// left to clean up at exit. Without that variable it returns ok false and
// the caller provides its own database.
func NewSharedDatabase(t testing.TB) (url string, ok bool) {
	t.Helper()
	if os.Getenv(EnvDatabaseURL) == "" {
		return "", false
	}
	s, err := connectServer()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), templateTimeout+createTimeout)
	defer cancel()
	template, err := s.ensureTemplate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s.createDatabase(ctx, t, template), true
}

// NewEmptyDatabase returns the URL of a new database with no migration
// applied, for tests of the migrations themselves. It is dropped when the
// test ends.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	s := mustServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), createTimeout)
	defer cancel()
	return s.createDatabase(ctx, t, "template0")
}

// NewPool returns a pool (database.Open defaults) on a NewDatabase, closed
// when the test ends, before the database is dropped.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	url := NewDatabase(t)
	pool, err := database.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("pgtest: open pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// NewPoolOf is NewPool with at most conns connections, for tests of what
// happens when a pool runs short.
func NewPoolOf(t testing.TB, conns int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(NewDatabase(t))
	if err != nil {
		t.Fatalf("pgtest: pool config: %v", err)
	}
	cfg.MaxConns = conns
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatalf("pgtest: open pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// ServerURL returns the admin URL of the server in use, for tests that
// create roles or databases, or otherwise manage the server themselves.
func ServerURL(t testing.TB) string {
	t.Helper()
	return mustServer(t).url
}

func mustServer(t testing.TB) *server {
	t.Helper()
	s, err := getServer()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// createDatabase clones template into a database named after the test and
// registers its removal.
func (s *server) createDatabase(ctx context.Context, t testing.TB, template string) string {
	t.Helper()
	name := databaseName(t.Name())
	if _, err := s.admin.Exec(ctx, "CREATE DATABASE "+quoteIdent(name)+" TEMPLATE "+quoteIdent(template)); err != nil {
		t.Fatalf("pgtest: create database %s from %s: %v", name, template, err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
		defer cancel()
		if _, err := s.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(name)+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u, err := databaseURL(s.url, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// databaseName makes a unique, readable database name from a test name.
func databaseName(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
		if b.Len() >= maxNameFromTest {
			break
		}
	}
	suffix := make([]byte, 5)
	_, _ = rand.Read(suffix) // crypto/rand.Read never fails
	return "t_" + strings.TrimSuffix(b.String(), "_") + "_" + hex.EncodeToString(suffix)
}

// databaseURL returns serverURL pointing at database name instead.
func databaseURL(serverURL, name string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("pgtest: %s must be a postgres:// URL", EnvDatabaseURL)
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}

// quoteIdent quotes a database name for SQL.
func quoteIdent(name string) string {
	return pgx.Identifier{name}.Sanitize()
}
