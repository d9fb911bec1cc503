package ratelimit

import (
	"context"
	"strings"
	"testing"

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
