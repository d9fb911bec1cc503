package database_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/freeport"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func TestConstraintViolationsNameTheConstraint(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := t.Context()
	insertSite := `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES (gen_random_uuid(), $1, 'frappe', $2, 'X')`
	if _, err := pool.Exec(ctx, insertSite, "acme", "https://a.test"); err != nil {
		t.Fatal(err)
	}

	_, err := pool.Exec(ctx, insertSite, "acme", "https://b.test")
	if c, ok := database.IsUniqueViolation(err); !ok || c != "sites_slug_key" {
		t.Errorf("duplicate slug: IsUniqueViolation = %q, %v (err %v)", c, ok, err)
	}
	if _, ok := database.IsForeignKeyViolation(err); ok {
		t.Error("a unique violation was reported as a foreign-key violation")
	}

	_, err = pool.Exec(ctx, `INSERT INTO connections (id, site_id, type) VALUES (gen_random_uuid(), gen_random_uuid(), 'oauth')`)
	if c, ok := database.IsForeignKeyViolation(err); !ok || c != "connections_site_id_fkey" {
		t.Errorf("unknown site: IsForeignKeyViolation = %q, %v (err %v)", c, ok, err)
	}

	_, err = pool.Exec(ctx, insertSite, "Not A Slug", "https://c.test")
	if c, ok := database.IsCheckViolation(err); !ok || c != "sites_slug_check" {
		t.Errorf("bad slug: IsCheckViolation = %q, %v (err %v)", c, ok, err)
	}

	var id string
	err = pool.QueryRow(ctx, "SELECT id FROM sites WHERE slug = 'nobody'").Scan(&id)
	if !database.IsNoRows(err) {
		t.Errorf("IsNoRows(%v) = false", err)
	}
	if database.IsNoRows(fmt.Errorf("wrapped: %w", errors.New("other"))) {
		t.Error("IsNoRows is true for an unrelated error")
	}
	for _, err := range []error{nil, errors.New("x")} {
		if _, ok := database.IsUniqueViolation(err); ok {
			t.Errorf("IsUniqueViolation(%v) = true", err)
		}
	}
}

// closedPortURL returns a URL on a loopback port nobody listens on.
func closedPortURL(t *testing.T) string {
	return "postgres://u:p@" + freeport.Refusing(t) + "/db?sslmode=disable"
}

func TestConnectionFailuresAreUnavailable(t *testing.T) {
	_, err := database.Open(t.Context(), closedPortURL(t))
	if !errors.Is(err, database.ErrUnavailable) {
		t.Errorf("Open on a closed port = %v, want ErrUnavailable", err)
	}
	var connectErr *pgconn.ConnectError
	if !errors.As(err, &connectErr) {
		t.Errorf("the original pgconn error is no longer in the chain: %v", err)
	}

	// A backend killed by the administrator (as in a fail-over).
	pool := pgtest.NewPool(t)
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// pool.Close waits for every acquired connection, so release it on
	// every path, and before the explicit Close below.
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(conn.Release) }
	defer release()
	var pid int
	if err := conn.QueryRow(t.Context(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(t.Context(), pgtest.ServerURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(t.Context(), "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(t.Context(), "SELECT 1")
	release()
	if err == nil {
		t.Fatal("query on a terminated backend succeeded")
	}
	if classified := database.Classify(err); !errors.Is(classified, database.ErrUnavailable) || !database.IsUnavailable(err) {
		t.Errorf("query on a terminated backend: Classify = %v, want ErrUnavailable", classified)
	}

	pool.Close()
	_, err = pool.Exec(t.Context(), "SELECT 1")
	if !database.IsUnavailable(err) {
		t.Errorf("query on a closed pool: %v, want unavailable", err)
	}
}

func TestClassify(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"nil", nil, false},
		{"caller cancelled", ctx.Err(), false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"statement timeout", &pgconn.PgError{Code: "57014"}, false},
		{"server shutting down", &pgconn.PgError{Code: "57P01"}, true},
		{"server starting", &pgconn.PgError{Code: "57P03"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"connection exception class", &pgconn.PgError{Code: "08006"}, true},
		{"connection dropped", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"dial refused", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := database.Classify(tt.err)
			if errors.Is(got, database.ErrUnavailable) != tt.unavailable {
				t.Errorf("Classify(%v) = %v; unavailable want %v", tt.err, got, tt.unavailable)
			}
			if tt.err != nil && !errors.Is(got, tt.err) {
				t.Errorf("Classify(%v) dropped the original error", tt.err)
			}
			if again := database.Classify(got); again != got { //nolint:errorlint // the very same error value is the point
				t.Errorf("classifying twice changed the error: %v -> %v", got, again)
			}
		})
	}
}
