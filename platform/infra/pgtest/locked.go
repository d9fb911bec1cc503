package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// WhileLocked runs fn while another transaction holds the row locks that
// lock (a SELECT ... FOR UPDATE, with args) takes, as a replica's request
// would, and releases them once fn has ended or some session of the
// database waits for a lock (fn, blocked on one of them). It returns fn's
// error. It shows whether fn passes over rows that are locked for a moment
// or waits for them.
func WhileLocked(t testing.TB, pool *pgxpool.Pool, lock string, args []any, fn func() error) error {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, lock, args...); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- fn() }()
	for {
		select {
		case err := <-done:
			if cerr := tx.Commit(ctx); cerr != nil {
				t.Fatal(cerr)
			}
			return err
		default:
		}
		var waiting bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			return <-done
		}
		time.Sleep(5 * time.Millisecond)
	}
}
