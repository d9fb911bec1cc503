package ratelimit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestSitesOwnConcurrencyCeiling: a site's own ceiling (SetSiteCeilings)
// replaces the deployment's for it alone: with it at 1, its second call
// at once is refused, said as the site's ceiling, while another site
// keeps the deployment's.
func TestSitesOwnConcurrencyCeiling(t *testing.T) {
	pool := pgtest.NewPool(t)
	small, big := newSite(t, pool), newSite(t, pool)
	l := New(pool, generous(), nil)
	l.SetSiteCeilings(map[uuid.UUID]SiteCeiling{uuid.MustParse(small): {Concurrency: 1}})
	ctx := context.Background()
	held, err := l.Acquire(ctx, small, "user:a")
	if err != nil {
		t.Fatal(err)
	}
	defer held()
	_, err = l.Acquire(ctx, small, "user:b")
	if !rateLimited(err) || !strings.Contains(err.Error(), "this ERP site already has 1 call in flight, the most erpgate sends it at once") {
		t.Fatalf("small's second call at once under its own ceiling of 1: %v", err)
	}
	for i := range 3 {
		rel, err := l.Acquire(ctx, big, "user:"+string(rune('a'+i)))
		if err != nil {
			t.Fatalf("big's call %d, under the deployment's ceiling: %v", i+1, err)
		}
		defer rel()
	}
	// Without its own ceiling, small has the deployment's again.
	l.SetSiteCeilings(nil)
	rel, err := l.Acquire(ctx, small, "user:b")
	if err != nil {
		t.Fatalf("small's second call once its own ceiling is gone: %v", err)
	}
	rel()
}

// TestSitesOwnPerMinuteCeilingHoldsFromItsNextCall: a replica that
// reserved calls of the minute ahead for a site (a caller calling back to
// back) gives them back when the site gets a ceiling of its own, so the
// site is held to the new number from its next call on, not once the
// reservation made under the deployment's is used up.
func TestSitesOwnPerMinuteCeilingHoldsFromItsNextCall(t *testing.T) {
	url := pgtest.NewDatabase(t)
	l, pool := replica(t, url, warmLimits())
	ctx := context.Background()
	for attempt := 0; attempt < 2; attempt++ {
		start := dbMinute(t, pool)
		site := newSite(t, pool)
		caller := "user:" + uuid.NewString()
		for i := range 5 {
			rel, err := l.Acquire(ctx, site, caller)
			if err != nil {
				t.Fatalf("call %d: %v", i+1, err)
			}
			rel()
		}
		l.mu.Lock()
		reserved := l.sites[uuid.MustParse(site)].budget.left
		l.mu.Unlock()
		if reserved < 10 {
			t.Fatalf("the site's reservation after 5 back-to-back calls: %d, want the deployment's chunk", reserved)
		}
		l.SetSiteCeilings(map[uuid.UUID]SiteCeiling{uuid.MustParse(site): {PerMinute: 8}})
		if err := l.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		served := 5
		for range 20 {
			rel, err := l.Acquire(ctx, site, caller)
			if err != nil {
				if !rateLimited(err) {
					t.Fatal(err)
				}
				break
			}
			rel()
			served++
		}
		if !dbMinute(t, pool).Equal(start) {
			continue // the minute turned: once more in one minute
		}
		if served != 8 {
			t.Errorf("calls served in the minute the site's own ceiling went to 8: %d", served)
		}
		return
	}
}

// TestACeilingLoweredWhileATopUpIsUnderWayHoldsFromTheNextCall: a
// reservation the replica asked for under the site's old numbers, whose
// answer comes back after the operator lowered the site's own per-minute
// ceiling, is given back too, not kept for the site's next calls: the
// site is held to the new number from its next call on, as it is when
// no top-up is under way.
func TestACeilingLoweredWhileATopUpIsUnderWayHoldsFromTheNextCall(t *testing.T) {
	pool := pgtest.NewPool(t)
	lim := generous()
	// Long enough that nothing here counts as idle.
	lim.Linger, lim.WarmFor = 30*time.Second, 20*time.Second
	l := New(pool, lim, nil)
	ctx := context.Background()
	for attempt := 0; attempt < 2; attempt++ {
		start := dbMinute(t, pool)
		site := newSite(t, pool)
		id := callerID{uuid.MustParse(site), "user:" + uuid.NewString()}
		for i := range 5 {
			rel, err := l.Acquire(ctx, site, id.caller)
			if err != nil {
				t.Fatalf("call %d: %v", i+1, err)
			}
			rel()
		}
		// A top-up of the site's reservation, as a back-to-back call
		// starts it, held up at the site's row.
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM call_limits WHERE site_id = $1 AND caller_key = '' FOR UPDATE`, id.site); err != nil {
			t.Fatal(err)
		}
		l.mu.Lock()
		l.sites[id.site].toppingUp = true
		l.mu.Unlock()
		l.topUpsRunning.Add(1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			l.topUp(id, 0, reserveChunk(lim.SitePerMinute))
		}()
		for waiting := 0; waiting == 0; {
			select {
			case <-done:
				t.Fatal("the top-up did not wait for the site's row")
			default:
			}
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%erpgate_call_reserve%'`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
		}
		// The operator lowers the site's ceiling while it waits.
		l.SetSiteCeilings(map[uuid.UUID]SiteCeiling{id.site: {PerMinute: 8}})
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		l.topUpsRunning.Wait()
		if err := l.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		served := 5
		for range 100 {
			rel, err := l.Acquire(ctx, site, id.caller)
			if err != nil {
				if !rateLimited(err) {
					t.Fatal(err)
				}
				break
			}
			rel()
			served++
		}
		if !dbMinute(t, pool).Equal(start) {
			continue // the minute turned: once more in one minute
		}
		// At most 8: a call may be refused while the replica's own
		// top-up of one call, counted already, is still under way.
		if served > 8 {
			t.Errorf("calls served in the minute the site's own ceiling went to 8 while a top-up was under way: %d", served)
		}
		return
	}
}
