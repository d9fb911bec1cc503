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
		got, err := s.Ended(ctx, cookie, "owner\x00site-1\x00ana@example.com", 1)
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

// Signing out everywhere ends the person's sessions that began before it
// (a lower mark), for every store on the database; not those that began
// after, nor another person's, nor the person's on another scope, until
// Purge finds the record expired over an hour ago.
func TestEndEverywhereEndsThePersonsEarlierSessions(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	a, b := New(pool), New(pool)
	mark := func() int64 {
		t.Helper()
		m, err := b.Mark(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	const ana, bob, anaElsewhere = "owner\x00site-1\x00ana@example.com", "owner\x00site-1\x00bob@example.com", "owner\x00site-2\x00ana@example.com"
	first, second, bobs, elsewhere := mark(), mark(), mark(), mark()
	if !(first < second && second < bobs && bobs < elsewhere) {
		t.Fatalf("marks not taken in order: %d, %d, %d, %d", first, second, bobs, elsewhere)
	}
	var dbNow time.Time
	if err := pool.QueryRow(ctx, `SELECT now()`).Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	if err := a.EndEverywhere(ctx, ana, dbNow.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	after := mark()
	for name, c := range map[string]struct {
		person string
		mark   int64
		want   bool
	}{
		"ana's first session":            {ana, first, true},
		"ana's second session":           {ana, second, true},
		"a session from before marks":    {ana, 0, true},
		"ana's session begun after":      {ana, after, false},
		"bob's session":                  {bob, bobs, false},
		"ana's session on another scope": {anaElsewhere, elsewhere, false},
	} {
		got, err := b.Ended(ctx, "cookie-"+name, c.person, c.mark)
		if err != nil || got != c.want {
			t.Errorf("%s: ended %v (%v), want %v", name, got, err, c.want)
		}
	}
	// Again, with an earlier expiry: nothing comes back to life.
	if err := b.EndEverywhere(ctx, ana, dbNow.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Ended(ctx, "cookie", ana, after); err != nil || !got {
		t.Errorf("the session begun between two ends: ended %v (%v)", got, err)
	}
	if err := a.EndEverywhere(ctx, bob, dbNow.Add(-61*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if n, err := a.Purge(ctx); err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v; want 1 row", n, err)
	}
	if got, err := a.Ended(ctx, "cookie", ana, second); err != nil || !got {
		t.Errorf("after Purge, ana's session: ended %v (%v)", got, err)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM page_sessions_ended_everywhere`).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("%d rows after Purge (%v), want 1", rows, err)
	}
}
