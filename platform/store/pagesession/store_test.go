package pagesession

import (
	"context"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A session is ended once End recorded it, for every store on the
// database, until Purge finds it expired over an hour ago.
func TestEndedSessionIsEndedUntilPurged(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	a, b := New(pool), New(pool)
	ended := func(s *Store, cookie string) bool {
		t.Helper()
		got, err := s.Ended(ctx, cookie)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if ended(b, "cookie-1") {
		t.Fatal("a session nobody ended is ended")
	}
	var dbNow time.Time
	if err := pool.QueryRow(ctx, `SELECT now()`).Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	if err := a.End(ctx, "cookie-1", dbNow.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := a.End(ctx, "cookie-1", dbNow.Add(30*time.Minute)); err != nil {
		t.Errorf("ending twice: %v", err)
	}
	if err := a.End(ctx, "cookie-old", dbNow.Add(-61*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := a.End(ctx, "cookie-recent", dbNow.Add(-59*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if !ended(b, "cookie-1") || ended(b, "cookie-2") || !ended(b, "cookie-old") {
		t.Error("after End: the ended sessions are not the ones ended")
	}
	if n, err := b.Purge(ctx); err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v; want 1 row", n, err)
	}
	if !ended(a, "cookie-1") || !ended(a, "cookie-recent") || ended(a, "cookie-old") {
		t.Error("Purge deleted other rows than those expired over an hour ago")
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM ended_page_sessions`).Scan(&rows); err != nil || rows != 2 {
		t.Errorf("%d rows after Purge (%v), want 2", rows, err)
	}
}
