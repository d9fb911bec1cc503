package ratelimit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/invalidate"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func newSite(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	id := uuid.New()
	_, err := pool.Exec(context.Background(),
		`INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, $2, 'frappe', $3, 'Test')`,
		id, "s"+id.String()[:8], "https://"+id.String()[:8]+".example")
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}

// liveLeasesSQL counts the leases on callers' rows (each is also on its
// site's row).
const liveLeasesSQL = `SELECT coalesce(sum(cardinality(leases)), 0) FROM call_limits WHERE caller_key <> ''`

// dbMinute is the database's current minute, the limiter's window.
func dbMinute(t *testing.T, pool *pgxpool.Pool) time.Time {
	t.Helper()
	var m time.Time
	if err := pool.QueryRow(context.Background(), `SELECT date_trunc('minute', now())`).Scan(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// queued is how many entries wait to be given back.
func (l *Limiter) queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}

func rateLimited(err error) bool {
	var te *toolerr.Error
	return errors.As(err, &te) && te.Code == toolerr.RateLimited && te.RetryAfter >= time.Second
}

func generous() Limits {
	return Limits{UserConcurrency: 3, UserPerMinute: 1000, SiteConcurrency: 100, SitePerMinute: 10000}
}

func TestUserConcurrency(t *testing.T) {
	pool := pgtest.NewPool(t)
	site := newSite(t, pool)
	l := New(pool, generous(), nil)
	ctx := context.Background()
	var releases []func()
	for i := 0; i < 3; i++ {
		rel, err := l.Acquire(ctx, site, "user:a")
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		releases = append(releases, rel)
	}
	if _, err := l.Acquire(ctx, site, "user:a"); !rateLimited(err) {
		t.Fatalf("4th concurrent call: %v", err)
	}
	if rel, err := l.Acquire(ctx, site, "user:b"); err != nil {
		t.Fatalf("another user is limited too: %v", err)
	} else {
		rel()
	}
	releases[0]()
	rel, err := l.Acquire(ctx, site, "user:a")
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	rel()
	for _, r := range releases[1:] {
		r()
	}
}

func TestSiteCeiling(t *testing.T) {
	pool := pgtest.NewPool(t)
	site := newSite(t, pool)
	lim := generous()
	lim.SiteConcurrency = 2
	l := New(pool, lim, nil)
	ctx := context.Background()
	r1, err := l.Acquire(ctx, site, "user:a")
	if err != nil {
		t.Fatal(err)
	}
	defer r1()
	r2, err := l.Acquire(ctx, site, "user:b")
	if err != nil {
		t.Fatal(err)
	}
	defer r2()
	if _, err := l.Acquire(ctx, site, "user:c"); !rateLimited(err) {
		t.Fatalf("site ceiling not enforced: %v", err)
	}
	other := newSite(t, pool)
	r3, err := l.Acquire(ctx, other, "user:c")
	if err != nil {
		t.Fatalf("another site is limited too: %v", err)
	}
	r3()
}

func TestPerMinute(t *testing.T) {
	pool := pgtest.NewPool(t)
	site := newSite(t, pool)
	lim := generous()
	lim.UserPerMinute = 5
	l := New(pool, lim, nil)
	ctx := context.Background()
	minute := func() time.Time { return dbMinute(t, pool) }
	// The window is the database's current minute; if the sequence
	// straddles a minute boundary, run it again in the new minute.
	for attempt := 0; attempt < 2; attempt++ {
		start := minute()
		user := "user:" + uuid.NewString()
		for i := 0; i < 5; i++ {
			rel, err := l.Acquire(ctx, site, user)
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			rel()
		}
		_, err := l.Acquire(ctx, site, user)
		if minute() != start {
			continue
		}
		if !rateLimited(err) {
			t.Fatalf("6th call in a minute: %v", err)
		}
		return
	}
	t.Fatal("could not run the sequence within one minute")
}

// TestLimitsHoldAcrossReplicas drives one caller from two limiters with
// separate pools (two replicas) and checks that no more than 3 calls are
// ever in flight.
func TestLimitsHoldAcrossReplicas(t *testing.T) {
	for _, warm := range []bool{false, true} {
		t.Run(fmt.Sprint("warm slots ", warm), func(t *testing.T) {
			lim := generous()
			if warm {
				lim = warmLimits()
			}
			url := pgtest.NewDatabase(t)
			a, pool := replica(t, url, lim)
			b, _ := replica(t, url, lim)
			limitsHoldAcrossReplicas(t, []*Limiter{a, b}, newSite(t, pool))
		})
	}
}

func limitsHoldAcrossReplicas(t *testing.T, replicas []*Limiter, site string) {
	var inFlight, peak, ok, limited atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 60; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rel, err := replicas[i%2].Acquire(context.Background(), site, "user:shared")
			if err != nil {
				if !rateLimited(err) {
					t.Errorf("unexpected error: %v", err)
				}
				limited.Add(1)
				return
			}
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond)
			inFlight.Add(-1)
			ok.Add(1)
			rel()
		}(i)
	}
	wg.Wait()
	if peak.Load() > 3 {
		t.Errorf("peak in flight = %d, limit 3", peak.Load())
	}
	if ok.Load() < 3 || limited.Load() == 0 || ok.Load()+limited.Load() != 60 {
		t.Errorf("ok=%d limited=%d", ok.Load(), limited.Load())
	}
}

// TestFailedReleaseDoesNotHoldTheSlot: a release that fails (the database
// was unreachable as the call ended) is retried, at the latest with the
// replica's next acquisition, so after an outage a caller is not refused
// until its leaked leases expire.
func TestFailedReleaseDoesNotHoldTheSlot(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	good, err := database.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(good.Close)
	broken, err := database.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	broken.Close()
	site := newSite(t, good)
	lim := generous()
	lim.UserConcurrency = 1
	l := New(good, lim, nil)
	rel, err := l.Acquire(ctx, site, "user:a")
	if err != nil {
		t.Fatal(err)
	}
	l.pool = broken
	rel()
	if err := l.Flush(ctx); err == nil { // the database is "down"
		t.Fatal("flushing releases succeeded without a database")
	}
	l.pool = good
	if l.queued() != 1 {
		t.Fatal("the failed release was not kept for a retry")
	}
	rel, err = l.Acquire(ctx, site, "user:a")
	if err != nil {
		t.Fatalf("the caller's only slot is still held by the lease whose release failed: %v", err)
	}
	rel()
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := good.QueryRow(ctx, liveLeasesSQL).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d leases left (%v)", left, err)
	}
	if n := l.queued(); n != 0 {
		t.Errorf("%d leases still waiting for a retry", n)
	}
}

// TestReleaseDoesNotWaitForTheDatabase: a finished call's release only
// queues its lease; the janitor deletes it, and until then it still counts
// (the limit can only get stricter, never looser).
func TestReleaseDoesNotWaitForTheDatabase(t *testing.T) {
	pool := pgtest.NewPool(t)
	site := newSite(t, pool)
	lim := generous()
	lim.UserConcurrency = 1
	l := New(pool, lim, nil)
	ctx := context.Background()
	rel, err := l.Acquire(ctx, site, "user:a")
	if err != nil {
		t.Fatal(err)
	}
	rel()
	var leases int
	if err := pool.QueryRow(ctx, liveLeasesSQL).Scan(&leases); err != nil || leases != 1 {
		t.Fatalf("leases after a queued release = %d (%v), want 1", leases, err)
	}
	janitor, stop := context.WithCancel(ctx)
	defer stop()
	go l.Janitor(janitor, time.Minute)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := pool.QueryRow(ctx, liveLeasesSQL).Scan(&leases); err != nil {
			t.Fatal(err)
		}
		if leases == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the janitor did not delete the released lease")
		}
		time.Sleep(5 * time.Millisecond)
	}
	rel, err = l.Acquire(ctx, site, "user:a")
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	rel()
}

// TestCrashedReplicaLeasesExpire: a replica that dies with calls in flight
// never releases their leases; any replica's janitor removes them once
// they are older than the lease TTL, and not before.
func TestCrashedReplicaLeasesExpire(t *testing.T) {
	pool := pgtest.NewPool(t)
	site := newSite(t, pool)
	lim := generous()
	lim.UserConcurrency = 1
	lim.LeaseTTL = time.Minute
	crashed := New(pool, lim, nil)
	ctx := context.Background()
	if _, err := crashed.Acquire(ctx, site, "user:a"); err != nil { // never released
		t.Fatal(err)
	}
	survivor := New(pool, lim, nil)
	if _, err := survivor.Acquire(ctx, site, "user:a"); !rateLimited(err) {
		t.Fatalf("the crashed replica's call does not count: %v", err)
	}
	if err := survivor.purge(ctx, time.Now().Add(lim.LeaseTTL/2)); err != nil {
		t.Fatal(err)
	}
	if _, err := survivor.Acquire(ctx, site, "user:a"); !rateLimited(err) {
		t.Fatalf("a lease younger than the TTL was removed: %v", err)
	}
	if err := survivor.purge(ctx, time.Now().Add(lim.LeaseTTL+time.Second)); err != nil {
		t.Fatal(err)
	}
	rel, err := survivor.Acquire(ctx, site, "user:a")
	if err != nil {
		t.Fatalf("the expired lease still counts: %v", err)
	}
	rel()
}

// TestIdleRowsAreDeleted: rows of callers with no call in flight and none
// for two minutes are deleted; rows with a call in flight are kept.
func TestIdleRowsAreDeleted(t *testing.T) {
	pool := pgtest.NewPool(t)
	site := newSite(t, pool)
	lim := generous()
	lim.LeaseTTL = 10 * time.Minute // user:busy's call is still in flight three minutes on
	l := New(pool, lim, nil)
	ctx := context.Background()
	rel, err := l.Acquire(ctx, site, "user:done")
	if err != nil {
		t.Fatal(err)
	}
	rel()
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	busy, err := l.Acquire(ctx, site, "user:busy")
	if err != nil {
		t.Fatal(err)
	}
	defer busy()
	rows := func() []string {
		r, err := pool.Query(ctx, `SELECT caller_key FROM call_limits ORDER BY caller_key`)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := pgx.CollectRows(r, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	if got := rows(); len(got) != 3 {
		t.Fatalf("rows before = %q, want the site's and two callers'", got)
	}
	if err := l.purge(ctx, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := rows(); len(got) != 3 {
		t.Fatalf("rows deleted before two idle minutes: %q", got)
	}
	if err := l.purge(ctx, time.Now().Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := rows(); len(got) != 2 || got[0] != "" || got[1] != "user:busy" {
		t.Fatalf("rows after = %q, want the site's and user:busy's", got)
	}
}

// TestManyCallersTwoReplicasNeverDeadlock drives acquisitions, warm slots,
// batched give-backs and the janitor's purge on two replicas over several sites and
// callers at once. Rows are always locked in key order, so no statement
// may fail (a deadlock would surface as an error) and at the end no lease
// is left.
func TestManyCallersTwoReplicasNeverDeadlock(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var replicas []*Limiter
	var pools []*pgxpool.Pool
	for i := 0; i < 2; i++ {
		p, err := database.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		pools = append(pools, p)
		replicas = append(replicas, New(p, Limits{UserConcurrency: 2, UserPerMinute: 1 << 20, SiteConcurrency: 5, SitePerMinute: 1 << 20,
			Linger: 20 * time.Millisecond, WarmFor: time.Minute}, nil))
	}
	var sites []string
	for i := 0; i < 3; i++ {
		sites = append(sites, newSite(t, pools[0]))
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for _, r := range replicas {
		go r.Janitor(ctx, 5*time.Millisecond)
	}
	var wg sync.WaitGroup
	var admitted, refused atomic.Int64
	for g := 0; g < 12; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := replicas[g%2]
			for i := 0; i < 60; i++ {
				site := sites[(g+i)%len(sites)]
				caller := fmt.Sprint("user:", (g*7+i)%5)
				rel, err := r.Acquire(context.Background(), site, caller)
				if err != nil {
					if !rateLimited(err) {
						t.Errorf("replica %d: %v", g%2, err)
						return
					}
					refused.Add(1)
					continue
				}
				admitted.Add(1)
				rel()
			}
		}(g)
	}
	wg.Wait()
	stop()
	for _, r := range replicas {
		if err := r.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var left int
	if err := pools[0].QueryRow(context.Background(), `SELECT coalesce(sum(cardinality(leases)), 0) FROM call_limits`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d leases left after every call ended (%v)", left, err)
	}
	if admitted.Load() == 0 {
		t.Errorf("no call admitted (%d refused)", refused.Load())
	}
}

func TestLiveFloorOrdersWithLeaseIDs(t *testing.T) {
	for i := 0; i < 100; i++ {
		before := time.Now()
		id, err := uuid.NewV7()
		if err != nil {
			t.Fatal(err)
		}
		after := time.Now().Add(time.Millisecond)
		if floor := liveFloor(before, 0); bytes.Compare(id[:], floor[:]) < 0 {
			t.Fatalf("lease %s taken after %v is below that moment's floor %s", id, before, liveFloor(before, 0))
		}
		if floor := liveFloor(after, 0); bytes.Compare(id[:], floor[:]) >= 0 {
			t.Fatalf("lease %s is not below the floor of a later millisecond %s", id, liveFloor(after, 0))
		}
	}
}

// warmLimits keeps slots warm for back-to-back callers.
func warmLimits() Limits {
	lim := generous()
	lim.Linger = time.Second
	lim.WarmFor = 10 * time.Second
	return lim
}

// replica is a limiter on its own pool, with its janitor and its
// listener for refusals running, as in production.
func replica(t *testing.T, url string, lim Limits) (*Limiter, *pgxpool.Pool) {
	t.Helper()
	pool, err := database.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	l := New(pool, lim, nil)
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go l.Janitor(ctx, time.Minute)
	listener := invalidate.NewListener(url, nil)
	listener.OnMessage(NotifyPrefix, l.ReclaimMessage)
	go listener.Run(ctx)
	deadline := time.Now().Add(20 * time.Second)
	for !listener.Healthy() {
		if time.Now().After(deadline) {
			t.Fatal("the listener did not connect")
		}
		time.Sleep(time.Millisecond)
	}
	return l, pool
}

// rowCounts reads a row's leases and calls in the current window.
func rowCounts(t *testing.T, pool *pgxpool.Pool, site, caller string) (leases, calls int) {
	t.Helper()
	err := pool.QueryRow(context.Background(), `
		SELECT cardinality(leases), CASE WHEN window_start = date_trunc('minute', now()) THEN window_calls ELSE 0 END
		  FROM call_limits WHERE site_id = $1 AND caller_key = $2`, site, caller).Scan(&leases, &calls)
	if err != nil {
		t.Fatal(err)
	}
	return leases, calls
}

// TestWarmSlotsNeedNoRoundTrip: a caller whose calls come back to back
// costs two round trips for twenty calls, and once the replica gives back
// what it holds, the database counts exactly the twenty calls.
func TestWarmSlotsNeedNoRoundTrip(t *testing.T) {
	url := pgtest.NewDatabase(t)
	l, pool := replica(t, url, warmLimits())
	ctx := context.Background()
	for attempt := 0; attempt < 2; attempt++ {
		start := dbMinute(t, pool)
		// A site and a caller of the attempt's own: a first attempt cut by
		// the minute's turn counted some of its calls in the next minute,
		// which the site's row of a second attempt would add to its own.
		site := newSite(t, pool)
		caller := "user:" + uuid.NewString()
		before := l.roundTrips.Load()
		for i := 0; i < 20; i++ {
			rel, err := l.Acquire(ctx, site, caller)
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			rel()
		}
		// The first call's slot is given back (nothing came before it);
		// the second's stays warm and serves the other eighteen.
		if n := l.roundTrips.Load() - before; n != 2 {
			t.Errorf("round trips for 20 back-to-back calls = %d, want 2", n)
		}
		// The first lease's give-back is queued for the Janitor; send it
		// now rather than race it.
		if err := l.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if leases, _ := rowCounts(t, pool, site, caller); leases != 1 {
			t.Errorf("leases while one slot is warm = %d, want 1", leases)
		}
		if err := l.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		end := dbMinute(t, pool)
		if !end.Equal(start) {
			l = New(pool, warmLimits(), nil) // the minute turned: once more in one minute
			continue
		}
		leases, calls := rowCounts(t, pool, site, caller)
		if leases != 0 || calls != 20 {
			t.Errorf("after giving everything back: %d leases, %d calls this minute; want 0 and 20", leases, calls)
		}
		if _, calls := rowCounts(t, pool, site, ""); calls != 20 {
			t.Errorf("the site's row counts %d calls this minute, want 20", calls)
		}
		return
	}
}

// TestRefusalReclaimsIdleSlots: replica A keeps a warm slot for a caller
// whose only slot it is; when the caller's next call reaches replica B, B
// is refused once, A hears of it and gives the slot back, and B's next
// attempt succeeds, all inside one Acquire.
func TestRefusalReclaimsIdleSlots(t *testing.T) {
	url := pgtest.NewDatabase(t)
	lim := warmLimits()
	lim.UserConcurrency = 1
	a, pool := replica(t, url, lim)
	b, _ := replica(t, url, lim)
	site := newSite(t, pool)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		rel, err := a.Acquire(ctx, site, "user:a")
		if err != nil {
			t.Fatal(err)
		}
		rel()
	}
	if leases, _ := rowCounts(t, pool, site, "user:a"); leases != 1 {
		t.Fatalf("replica A holds %d leases, want its one warm slot", leases)
	}
	before := b.roundTrips.Load()
	rel, err := b.Acquire(ctx, site, "user:a")
	if err != nil {
		t.Fatalf("replica B: %v (replica A did not give back its idle slot)", err)
	}
	rel()
	if n := b.roundTrips.Load() - before; n < 2 {
		t.Errorf("replica B asked %d times; the first must have been refused", n)
	}
}

// TestReservationsAreExactAcrossReplicas: a caller allowed 20 calls a
// minute alternates between two replicas that each reserve calls ahead.
// Exactly 20 are admitted: no more, and none refused before the 20th,
// because a refused replica's announcement makes the other give back what
// it reserved and did not use.
func TestReservationsAreExactAcrossReplicas(t *testing.T) {
	url := pgtest.NewDatabase(t)
	lim := warmLimits()
	lim.UserPerMinute = 20
	a, pool := replica(t, url, lim)
	b, _ := replica(t, url, lim)
	replicas := []*Limiter{a, b}
	site := newSite(t, pool)
	ctx := context.Background()
	for attempt := 0; attempt < 2; attempt++ {
		start := dbMinute(t, pool)
		caller := "user:" + uuid.NewString()
		admitted := 0
		firstRefusal := -1
		for i := 0; i < 30; i++ {
			rel, err := replicas[(i/3)%2].Acquire(ctx, site, caller)
			if err != nil {
				if !rateLimited(err) {
					t.Fatal(err)
				}
				if firstRefusal < 0 {
					firstRefusal = i
				}
				continue
			}
			admitted++
			rel()
		}
		end := dbMinute(t, pool)
		if !end.Equal(start) {
			continue // the minute turned; once more
		}
		if admitted != 20 || firstRefusal != 20 {
			t.Errorf("admitted %d of 30 calls, first refused call #%d; want 20 and #20", admitted, firstRefusal)
		}
		return
	}
}

// TestReservationsAreToppedUpAhead: a caller allowed 80 calls a minute
// reserves ten at a time; its replica reserves more in the background
// before they run out, so forty back-to-back calls still cost only the
// two acquisitions, and the database ends up counting exactly forty.
func TestReservationsAreToppedUpAhead(t *testing.T) {
	url := pgtest.NewDatabase(t)
	lim := warmLimits()
	lim.UserPerMinute = 80
	l, pool := replica(t, url, lim)
	site := newSite(t, pool)
	ctx := context.Background()
	for attempt := 0; attempt < 2; attempt++ {
		start := dbMinute(t, pool)
		caller := "user:" + uuid.NewString()
		trips, topUps := l.roundTrips.Load(), l.topUps.Load()
		for i := 0; i < 40; i++ {
			rel, err := l.Acquire(ctx, site, caller)
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			rel()
			// Wait for a top-up under way, as a caller slower than this
			// loop would: the test is about the calls' round trips.
			waitForTopUps(t, l)
		}
		if n := l.roundTrips.Load() - trips; n != 2 {
			t.Errorf("round trips for 40 back-to-back calls = %d, want 2", n)
		}
		if n := l.topUps.Load() - topUps; n < 3 {
			t.Errorf("%d top-ups for 40 calls reserving 10 at a time, want at least 3", n)
		}
		if err := l.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		end := dbMinute(t, pool)
		if !end.Equal(start) {
			l = New(pool, lim, nil) // the minute turned: once more in one minute
			continue
		}
		if _, calls := rowCounts(t, pool, site, caller); calls != 40 {
			t.Errorf("the caller's row counts %d calls this minute, want 40", calls)
		}
		return
	}
}

// TestASitesTopUpRidesWithItsCallers: a site's reservation is spent by all
// its callers, so it runs low at other times than any one caller's. When
// either is due, the other is topped up in the same round trip if it is
// within a reservation of being due: after the first, the two stay in
// step and each top-up is one round trip, not two. Forty calls by one of
// two callers reserving ten at a time take at most five top-ups; out of
// step, they took seven.
func TestASitesTopUpRidesWithItsCallers(t *testing.T) {
	url := pgtest.NewDatabase(t)
	lim := warmLimits()
	lim.UserPerMinute, lim.SitePerMinute = 80, 80 // both reserving 10 at a time
	l, pool := replica(t, url, lim)
	site := newSite(t, pool)
	ctx := context.Background()
	for attempt := 0; attempt < 2; attempt++ {
		start := dbMinute(t, pool)
		other, caller := "user:"+uuid.NewString(), "user:"+uuid.NewString()
		call := func(who string) {
			t.Helper()
			rel, err := l.Acquire(ctx, site, who)
			if err != nil {
				t.Fatal(err)
			}
			rel()
			waitForTopUps(t, l)
		}
		// The other caller spends part of the site's reservation.
		for range 7 {
			call(other)
		}
		topUps := l.topUps.Load()
		for range 40 {
			call(caller)
		}
		if n := l.topUps.Load() - topUps; n > 5 {
			t.Errorf("%d top-ups for 40 calls reserving 10 at a time, want at most 5", n)
		}
		if err := l.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		if !dbMinute(t, pool).Equal(start) {
			l = New(pool, lim, nil) // the minute turned: once more in one minute
			continue
		}
		if _, calls := rowCounts(t, pool, site, caller); calls != 40 {
			t.Errorf("the caller's row counts %d calls this minute, want 40", calls)
		}
		if _, calls := rowCounts(t, pool, site, ""); calls != 47 {
			t.Errorf("the site's row counts %d calls this minute, want 47", calls)
		}
		return
	}
}

func waitForTopUps(t *testing.T, l *Limiter) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		l.mu.Lock()
		busy := false
		for _, cs := range l.callers {
			busy = busy || cs.toppingUp
		}
		for _, ss := range l.sites {
			busy = busy || ss.toppingUp
		}
		l.mu.Unlock()
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a top-up did not finish")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStatesOfIdleCallersAreDropped: the replica's per-caller and per-site
// state of callers with nothing in flight is dropped, with warm slots and
// without, so the maps do not grow with every caller ever seen.
func TestStatesOfIdleCallersAreDropped(t *testing.T) {
	pool := pgtest.NewPool(t)
	site := newSite(t, pool)
	for _, lim := range []Limits{generous(), warmLimits()} {
		l := New(pool, lim, nil)
		ctx := context.Background()
		for i := range 3 {
			rel, err := l.Acquire(ctx, site, fmt.Sprint("user:", i))
			if err != nil {
				t.Fatal(err)
			}
			rel()
		}
		busy, err := l.Acquire(ctx, site, "user:busy")
		if err != nil {
			t.Fatal(err)
		}
		l.expireIdle(time.Now().Add(lim.Linger + time.Millisecond))
		l.mu.Lock()
		callers, sites := len(l.callers), len(l.sites)
		l.mu.Unlock()
		if callers != 1 || sites != 1 {
			t.Errorf("linger %v: %d caller and %d site states left, want user:busy's and its site's", lim.Linger, callers, sites)
		}
		busy()
		if err := l.Drain(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReleaseLocksTheSiteRowFirst: a give-back batch holding a caller's
// unused reservation and another caller's lease must lock the site's row
// before any caller's row, as acquisitions do; otherwise the two deadlock
// (PostgreSQL aborted acquisitions under load before migration 00009).
// The test holds the site's row, lets the batch wait for it, and checks
// that the batch holds no caller's row while it waits.
func TestReleaseLocksTheSiteRowFirst(t *testing.T) {
	pool := pgtest.NewPool(t)
	site := newSite(t, pool)
	ctx := context.Background()
	l := New(pool, generous(), nil)
	var rels []func()
	for _, caller := range []string{"user:a", "user:b"} {
		rel, err := l.Acquire(ctx, site, caller)
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, rel)
	}
	siteID := uuid.MustParse(site)
	minute := time.Now().Truncate(time.Minute)
	l.mu.Lock()
	var leaseB uuid.UUID
	if err := pool.QueryRow(ctx, `SELECT leases[1] FROM call_limits WHERE site_id = $1 AND caller_key = 'user:b'`, siteID).Scan(&leaseB); err != nil {
		l.mu.Unlock()
		t.Fatal(err)
	}
	l.queue = []giveBack{
		{site: siteID, caller: "user:a", unused: 1, window: minute, expires: minute.Add(time.Minute)},
		{site: siteID, caller: "user:b", lease: leaseB, leased: true, expires: time.Now().Add(time.Hour)},
	}
	l.mu.Unlock()

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM call_limits WHERE site_id = $1 AND caller_key = '' FOR UPDATE`, siteID); err != nil {
		t.Fatal(err)
	}
	flushed := make(chan error, 1)
	go func() { flushed <- l.Flush(ctx) }()
	// Wait until the batch waits for a lock.
	for waiting := 0; waiting == 0; {
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%erpgate_call_release%'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-flushed:
			t.Fatalf("the batch did not wait for the site's row: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	// It must be waiting for the site's row holding no caller's row.
	if _, err := tx.Exec(ctx, `SELECT 1 FROM call_limits WHERE site_id = $1 AND caller_key IN ('user:a', 'user:b') FOR UPDATE NOWAIT`, siteID); err != nil {
		t.Fatalf("a caller's row was locked before the site's: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	var siteLeases int
	if err := pool.QueryRow(ctx, `SELECT cardinality(leases) FROM call_limits WHERE site_id = $1 AND caller_key = ''`, siteID).Scan(&siteLeases); err != nil || siteLeases != 1 {
		t.Errorf("site row leases after giving back b's = %d (%v), want a's alone", siteLeases, err)
	}
	rels[0]()
}

// TestJanitorSurvivesASilentConnection: the pooled connection goes silent
// (a partition dropped the flow without a reset) just before the janitor
// gives back a finished call's lease. The janitor must not wait on it for
// as long as the kernel takes to give up (a quarter of an hour) while the
// lease keeps the caller's slot taken on every replica: it gives the
// lease back on a new connection.
func TestJanitorSurvivesASilentConnection(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	good, err := database.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(good.Close)
	silencer := pgtest.NewSilencer(t, url)
	pool, err := database.Open(ctx, silencer.URL, database.WithMaxConns(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	site := newSite(t, good)
	l := New(pool, generous(), nil)
	rel, err := l.Acquire(ctx, site, "user:a")
	if err != nil {
		t.Fatal(err)
	}
	rel()
	silencer.SilenceAll()
	jctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop) // before the pool closes: frees a connection stuck in the janitor
	go l.Janitor(jctx, time.Minute)

	start := time.Now()
	deadline := start.Add(20 * time.Second)
	for {
		var left int
		if err := good.QueryRow(ctx, liveLeasesSQL).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			t.Logf("the lease was given back %v after the connection went silent", time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d leases still held 20 s after the call ended", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRefusedCallerCostsNoRoundTripPerCall: a caller over its per-minute
// limit that keeps calling was refused through the database every time:
// up to four round trips per call (the acquisition and its three retries
// after announcing the refusal to every replica), as fast as the caller
// sent them, while its refusal could not change before the retry-after
// it was told. A hundred refused calls in a row must cost far fewer
// round trips than calls.
func TestRefusedCallerCostsNoRoundTripPerCall(t *testing.T) {
	pool := pgtest.NewPool(t)
	site := newSite(t, pool)
	lim := generous()
	lim.UserPerMinute = 2
	l := New(pool, lim, nil)
	ctx := context.Background()
	for attempt := 0; attempt < 2; attempt++ {
		start := dbMinute(t, pool)
		caller := "user:" + uuid.NewString()
		for i := 0; i < 2; i++ {
			rel, err := l.Acquire(ctx, site, caller)
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			rel()
		}
		before := l.roundTrips.Load()
		for i := 0; i < 100; i++ {
			if _, err := l.Acquire(ctx, site, caller); !rateLimited(err) {
				t.Fatalf("refused call %d: %v", i, err)
			}
		}
		trips := l.roundTrips.Load() - before
		if !dbMinute(t, pool).Equal(start) {
			continue // the minute turned; once more
		}
		t.Logf("100 refused calls cost %d round trips", trips)
		if trips >= 100 {
			t.Errorf("100 refused calls cost %d round trips; want far fewer than one per call", trips)
		}
		// Another caller of the site is asked for as before.
		rel, err := l.Acquire(ctx, site, "user:"+uuid.NewString())
		if err != nil {
			t.Fatalf("another caller: %v", err)
		}
		rel()
		return
	}
}

// TestSiteOverItsCeilingCostsNoRoundTripPerCaller: a refusal is
// remembered per caller, so a site over its ceiling with many callers (a
// site's owner issues as many service tokens as they like) cost every one
// of them its round trips (the acquisition and its three retries, each
// announced to every replica) once a second, however certain the
// refusal: fifty tokens, two hundred round trips. A refusal by the site's
// own limits holds for all its callers alike; another site, and the
// site once a call of it ends here, are asked for as before.
func TestSiteOverItsCeilingCostsNoRoundTripPerCaller(t *testing.T) {
	pool, site, _, l, held := siteAtItsCeiling(t)
	ctx := context.Background()
	const callers = 50
	before := l.roundTrips.Load()
	for i := range callers {
		if _, err := l.Acquire(ctx, site, fmt.Sprintf("service:%d", i)); !rateLimited(err) {
			t.Fatalf("caller %d of a site at its ceiling: %v", i, err)
		}
	}
	trips := l.roundTrips.Load() - before
	t.Logf("%d callers of a site at its ceiling cost %d round trips", callers, trips)
	if trips >= callers {
		t.Errorf("%d callers of a site at its ceiling cost %d round trips; want fewer than one per caller", callers, trips)
	}
	other := newSite(t, pool)
	rel, err := l.Acquire(ctx, other, "service:0")
	if err != nil {
		t.Fatalf("another site: %v", err)
	}
	rel()
	held()
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rel, err = l.Acquire(ctx, site, "service:1")
	if err != nil {
		t.Fatalf("a caller of the site once its call ended: %v", err)
	}
	rel()
}

// TestSiteRefusalRememberedIsForgottenWhenTheLimitIsRaised: a refusal by
// the site's own limits is remembered for all its callers on this replica
// for up to a second; the operator raising the site's ceiling (live
// settings, SetNumbers) must end it at once, while the call holding the
// old ceiling still runs, so that no caller is refused by a number no
// longer in force. The memory is this replica's alone: another replica
// (a second Limiter on the same database) asks for itself.
func TestSiteRefusalRememberedIsForgottenWhenTheLimitIsRaised(t *testing.T) {
	pool, site, lim, l, held := siteAtItsCeiling(t)
	ctx := context.Background()
	defer held()
	if _, err := l.Acquire(ctx, site, "service:a"); !rateLimited(err) {
		t.Fatalf("a caller of a site at its ceiling of 1: %v", err)
	}
	other := New(pool, lim, nil)
	other.SetNumbers(0, 0, 2, 0)
	rel, err := other.Acquire(ctx, site, "service:b")
	if err != nil {
		t.Fatalf("another replica, its ceiling raised to 2, refused by this one's memory: %v", err)
	}
	rel()
	if err := other.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	l.SetNumbers(0, 0, 2, 0)
	rel, err = l.Acquire(ctx, site, "service:c")
	if err != nil {
		t.Fatalf("a caller of the site once its ceiling was raised to 2: %v", err)
	}
	rel()
}

// siteAtItsCeiling is a site whose ceiling is one call at once, with that
// call held by "user:holder" on l; held ends it.
func siteAtItsCeiling(t *testing.T) (pool *pgxpool.Pool, site string, lim Limits, l *Limiter, held func()) {
	t.Helper()
	pool = pgtest.NewPool(t)
	site = newSite(t, pool)
	lim = generous()
	lim.SiteConcurrency = 1
	l = New(pool, lim, nil)
	held, err := l.Acquire(context.Background(), site, "user:holder")
	if err != nil {
		t.Fatal(err)
	}
	return pool, site, lim, l, held
}
