// Package ratelimit enforces erpgate's call limits in Postgres, so they hold
// across every replica: per caller (a service token or an ERP user) at most
// N calls in flight and M calls started per minute, and per site an
// instance-wide ceiling on both, so a busy deployment never trips the ERP's
// own licence throttle.
//
// The counts live in one row per (site, caller) and one per site, updated in
// place (migration 00007): an acquisition is one round trip that locks the
// site's row, then the caller's, and a release is queued and ended in
// batches off the reply path. A lease left by a crashed replica stops
// counting after the call budget and a margin.
package ratelimit

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/toolerr"
)

// Limits are the numbers a Limiter enforces.
type Limits struct {
	UserConcurrency int
	UserPerMinute   int
	SiteConcurrency int
	SitePerMinute   int
	// LeaseTTL bounds how long a lease of a vanished replica blocks a slot.
	LeaseTTL time.Duration
}

// Limiter implements mcpengine.Limiter on Postgres.
type Limiter struct {
	pool   *pgxpool.Pool
	limits Limits
	log    *zap.Logger

	mu sync.Mutex
	// unreleased are the leases of finished calls not yet ended in the
	// database: a call's release only queues its lease (the reply does not
	// wait for the database) and wakes the Janitor, which ends every queued
	// lease in one round trip. A flush that fails (database down) leaves
	// them queued, and the next Acquire on their site and caller ends them
	// in its own round trip.
	unreleased map[uuid.UUID]pending
	// kick wakes the Janitor when a release was queued.
	kick chan struct{}
}

// pending is a queued release.
type pending struct {
	site    uuid.UUID
	caller  string
	expires time.Time
}

// New returns a limiter. Run Janitor in the background: it ends the leases
// of finished calls and purges idle rows.
func New(pool *pgxpool.Pool, limits Limits, log *zap.Logger) *Limiter {
	if limits.LeaseTTL <= 0 {
		limits.LeaseTTL = 2 * time.Minute
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Limiter{pool: pool, limits: limits, log: log, unreleased: map[uuid.UUID]pending{}, kick: make(chan struct{}, 1)}
}

// liveFloor is the smallest lease id still live at now: the UUID whose
// first 48 bits are the millisecond now - ttl and whose other bits are
// zero. Lease ids are UUIDv7 (their first 48 bits are the millisecond they
// were taken) and Postgres compares UUIDs byte by byte, so a lease has
// expired when its id is below the floor. Replicas' clocks must agree to
// well within the TTL (the call budget plus a margin).
func liveFloor(now time.Time, ttl time.Duration) uuid.UUID {
	var u uuid.UUID
	ms := uint64(now.Add(-ttl).UnixMilli())
	for i := 0; i < 6; i++ {
		u[i] = byte(ms >> (8 * (5 - i)))
	}
	return u
}

// Acquire takes a slot for one call of callerKey on siteID, or fails with
// RATE_LIMITED and a retry-after.
//
// It costs one round trip: erpgate_call_acquire (migration 00007) updates
// the site's row and the caller's row in place.
func (l *Limiter) Acquire(ctx context.Context, siteID, callerKey string) (func(), error) {
	site, err := uuid.Parse(siteID)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: site id: %w", err)
	}
	// Leases of this caller's finished calls still queued for release (the
	// Janitor has not sent them yet, or the database was down when it
	// tried) must not count against this call: they are ended in its
	// round trip.
	ended := l.queuedFor(site, callerKey)
	lease, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("ratelimit: lease id: %w", err)
	}
	now := time.Now()
	var admitted bool
	var userInFlight, siteInFlight, userCalls, siteCalls int
	var windowEnd time.Time
	err = l.pool.QueryRow(ctx, `SELECT * FROM erpgate_call_acquire($1, $2, $3, $4, $5, $6, $7, $8)`,
		pgUUID(site), callerKey, pgUUID(lease), pgUUIDs(ended),
		l.limits.UserConcurrency, l.limits.SiteConcurrency, l.limits.UserPerMinute, l.limits.SitePerMinute,
	).Scan(&admitted, &userInFlight, &siteInFlight, &userCalls, &siteCalls, &windowEnd)
	if err != nil {
		return nil, toolerr.Wrap(toolerr.UpstreamUnavailable, fmt.Errorf("ratelimit: acquire: %w", err),
			"erpgate could not check its call limits (its database is unavailable); retry shortly")
	}
	l.released(ended) // admitted or not, they were ended
	if admitted {
		expires := now.Add(l.limits.LeaseTTL)
		return func() { l.release(lease, pending{site: site, caller: callerKey, expires: expires}) }, nil
	}
	switch wait := time.Until(windowEnd); {
	case siteInFlight >= l.limits.SiteConcurrency:
		return nil, limited(time.Second, "this ERP site already has %d calls in flight, the most erpgate sends it at once; retry shortly", siteInFlight)
	case siteCalls >= l.limits.SitePerMinute:
		return nil, limited(wait, "this ERP site received %d calls this minute, the most erpgate sends it", siteCalls)
	case userInFlight >= l.limits.UserConcurrency:
		return nil, limited(time.Second, "this caller already has %d calls in flight, the most allowed at once; wait for one to finish", userInFlight)
	default:
		return nil, limited(wait, "this caller made %d calls this minute, the most allowed", userCalls)
	}
}

// pgUUID and pgUUIDs pass UUIDs to pgx in binary form (a uuid.UUID is a
// driver.Valuer, which pgx would format as text and parse again).
func pgUUID(u uuid.UUID) pgtype.UUID { return pgtype.UUID{Bytes: u, Valid: true} }

func pgUUIDs(us []uuid.UUID) []pgtype.UUID {
	out := make([]pgtype.UUID, len(us))
	for i, u := range us {
		out[i] = pgUUID(u)
	}
	return out
}

func limited(wait time.Duration, format string, args ...any) *toolerr.Error {
	if wait < time.Second {
		wait = time.Second
	}
	return toolerr.New(toolerr.RateLimited, format, args...).WithRetryAfter(wait)
}

// release queues a finished call's lease and wakes the Janitor. The call's
// reply does not wait for the database; until the lease is ended it still
// counts, which can only make the limits stricter.
func (l *Limiter) release(lease uuid.UUID, p pending) {
	l.mu.Lock()
	l.unreleased[lease] = p
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Flush ends every queued lease now, in one round trip. Call it before
// closing the pool, so that a replica shutting down leaves no lease behind.
func (l *Limiter) Flush(ctx context.Context) error {
	ids, sites, callers := l.unreleasedLeases()
	if len(ids) == 0 {
		return nil
	}
	if _, err := l.pool.Exec(ctx, `SELECT erpgate_call_release($1, $2, $3)`, pgUUIDs(sites), callers, pgUUIDs(ids)); err != nil {
		return fmt.Errorf("ratelimit: release %d leases: %w", len(ids), err)
	}
	l.released(ids)
	return nil
}

// queuedFor returns the queued leases of callerKey's calls on site.
func (l *Limiter) queuedFor(site uuid.UUID, callerKey string) []uuid.UUID {
	ended := []uuid.UUID{} // an empty array, not NULL
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, p := range l.unreleased {
		if p.site == site && p.caller == callerKey {
			ended = append(ended, id)
		}
	}
	return ended
}

// unreleasedLeases returns the queued leases that have not expired yet
// (the Janitor removes expired ones from the database), forgetting expired
// ones, as the parallel arrays erpgate_call_release takes, sorted by site
// and caller: the order in which rows must be locked.
func (l *Limiter) unreleasedLeases() (ids []uuid.UUID, sites []uuid.UUID, callers []string) {
	type queued struct {
		id uuid.UUID
		pending
	}
	var all []queued
	l.mu.Lock()
	now := time.Now()
	for id, p := range l.unreleased {
		if p.expires.Before(now) {
			delete(l.unreleased, id)
			continue
		}
		all = append(all, queued{id, p})
	}
	l.mu.Unlock()
	slices.SortFunc(all, func(a, b queued) int {
		if c := bytes.Compare(a.site[:], b.site[:]); c != 0 {
			return c
		}
		return strings.Compare(a.caller, b.caller)
	})
	for _, q := range all {
		ids = append(ids, q.id)
		sites = append(sites, q.site)
		callers = append(callers, q.caller)
	}
	return ids, sites, callers
}

// released forgets leases that are now ended.
func (l *Limiter) released(ids []uuid.UUID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		delete(l.unreleased, id)
	}
}

// Janitor ends the leases of finished calls as soon as they are queued
// (see release), retrying every second while that fails, and every
// interval removes leases older than the lease TTL (a crashed replica's)
// and deletes the rows of callers idle for two minutes, until ctx ends.
// Its maintenance statements skip rows that are locked rather than wait
// for them, so they never deadlock with calls.
func (l *Limiter) Janitor(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	retry := time.NewTicker(time.Second)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.kick:
			_ = l.Flush(ctx)
			continue
		case <-retry.C:
			_ = l.Flush(ctx)
			continue
		case <-t.C:
		}
		if err := l.purge(ctx, time.Now()); err != nil && ctx.Err() == nil {
			l.log.Warn("purging call limit rows failed", zap.Error(err))
		}
	}
}

// purge removes leases taken before now - the lease TTL and deletes rows
// with no lease and no call for two minutes.
func (l *Limiter) purge(ctx context.Context, now time.Time) error {
	if _, err := l.pool.Exec(ctx, `
		UPDATE call_limits c
		   SET leases = ARRAY(SELECT x FROM unnest(c.leases) x WHERE x >= $1)
		  FROM (SELECT site_id, caller_key FROM call_limits
		         WHERE EXISTS (SELECT 1 FROM unnest(leases) x WHERE x < $1)
		           FOR UPDATE SKIP LOCKED) stale
		 WHERE c.site_id = stale.site_id AND c.caller_key = stale.caller_key`,
		pgUUID(liveFloor(now, l.limits.LeaseTTL))); err != nil {
		return fmt.Errorf("ratelimit: remove expired leases: %w", err)
	}
	if _, err := l.pool.Exec(ctx, `
		DELETE FROM call_limits c
		 USING (SELECT site_id, caller_key FROM call_limits
		         WHERE window_start < $1::timestamptz - interval '2 minutes' AND cardinality(leases) = 0
		           FOR UPDATE SKIP LOCKED) idle
		 WHERE c.site_id = idle.site_id AND c.caller_key = idle.caller_key`, now); err != nil {
		return fmt.Errorf("ratelimit: delete idle rows: %w", err)
	}
	return nil
}
