package leases_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/store/leases"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestALeaseIsHeldUntilItIsGivenBackOrRunsOut: a second holder waits
// while the first holds the lease; a lease that ran out (its holder died)
// is taken over, and its old holder's result is refused; one that is
// forgotten is lost too.
func TestALeaseIsHeldUntilItIsGivenBackOrRunsOut(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	site := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, 'lease', 'frappe', 'https://lease.example', 'L')`, site); err != nil {
		t.Fatal(err)
	}
	first, err := leases.Take(ctx, pool, site, "work")
	if err != nil {
		t.Fatal(err)
	}
	// Held: a second holder waits, here until its time runs out.
	wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = leases.Take(wctx, pool, site, "work")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second Take while the lease is held: %v", err)
	}
	// Another key of the site is another lease.
	other, err := leases.Take(ctx, pool, site, "other work")
	if err != nil {
		t.Fatal(err)
	}
	other.Drop(ctx, pool)
	// Run out: taken over, and the first holder's result refused.
	if _, err := pool.Exec(ctx, `UPDATE work_leases SET until = now() - interval '1 second' WHERE key = 'work'`); err != nil {
		t.Fatal(err)
	}
	second, err := leases.Take(ctx, pool, site, "work")
	if err != nil {
		t.Fatal(err)
	}
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return first.End(ctx, tx) }); !errors.Is(err, leases.ErrLost) {
		t.Errorf("End of a lease that ran out and was taken over: %v", err)
	}
	// Forgotten: lost.
	if err := leases.Forget(ctx, pool, site, "work"); err != nil {
		t.Fatal(err)
	}
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return second.End(ctx, tx) }); !errors.Is(err, leases.ErrLost) {
		t.Errorf("End of a forgotten lease: %v", err)
	}
	// Given back: the next Take does not wait.
	third, err := leases.Take(ctx, pool, site, "work")
	if err != nil {
		t.Fatal(err)
	}
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return third.End(ctx, tx) }); err != nil {
		t.Errorf("End of a held lease: %v", err)
	}
	if n := countLeases(t, pool); n != 0 {
		t.Errorf("%d leases left", n)
	}
}

func countLeases(t *testing.T, pool interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM work_leases`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
