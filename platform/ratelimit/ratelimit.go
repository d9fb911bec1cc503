// Package ratelimit enforces erpgate's call limits in Postgres, so they hold
// across every replica: per caller (a service token or an ERP user) at most
// N calls in flight and M calls started per minute, and per site an
// instance-wide ceiling on both, so a busy deployment never trips the ERP's
// own licence throttle.
//
// Acquisitions for one site are serialised by a transaction-scoped advisory
// lock; each is one short transaction in one round trip, and a release is
// one statement. A lease left by a crashed replica expires after the call
// budget.
package ratelimit

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
	// leaseTTL is Limits.LeaseTTL as a Postgres interval, built once.
	leaseTTL pgtype.Interval

	mu sync.Mutex
	// unreleased are leases of finished calls not yet deleted, with when
	// they expire: a call's release only queues its lease (the call does
	// not wait for the database), the Janitor deletes queued leases at
	// once, and the next Acquire deletes them in its own round trip. A
	// release that fails (database down) simply stays queued.
	unreleased map[uuid.UUID]time.Time
	// kick wakes the Janitor when a release was queued.
	kick chan struct{}
}

// New returns a limiter. Call Janitor in the background to purge old rows.
func New(pool *pgxpool.Pool, limits Limits, log *zap.Logger) *Limiter {
	if limits.LeaseTTL <= 0 {
		limits.LeaseTTL = 2 * time.Minute
	}
	if log == nil {
		log = zap.NewNop()
	}
	ttl := pgtype.Interval{Microseconds: limits.LeaseTTL.Microseconds(), Valid: true}
	return &Limiter{pool: pool, limits: limits, log: log, leaseTTL: ttl, unreleased: map[uuid.UUID]time.Time{}, kick: make(chan struct{}, 1)}
}

// lockKey maps a site id to the advisory lock that serialises its
// acquisitions. The high bit namespaces erpgate's limiter locks.
func lockKey(siteID string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("erpgate/ratelimit/" + siteID))
	return int64(h.Sum64() >> 1)
}

// acquireSQL counts what the caller and the site have in flight and have
// started this minute, and, only when every limit admits the call, counts
// it and takes a lease. It runs right after the site's advisory lock in the
// same implicit transaction, so it reads (with a snapshot taken after the
// lock) everything earlier holders of the lock committed.
//
// $1 site, $2 caller, $3 lease id, $4 lease TTL, $5..$8 the limits: user
// concurrency, site concurrency, user per minute, site per minute.
const acquireSQL = `
WITH clock AS (
	SELECT now() AS at, date_trunc('minute', now()) AS minute
), counts AS (
	SELECT
		(SELECT count(*) FROM call_leases, clock WHERE site_id = $1 AND caller_key = $2 AND expires_at > clock.at) AS user_in_flight,
		(SELECT count(*) FROM call_leases, clock WHERE site_id = $1 AND expires_at > clock.at) AS site_in_flight,
		coalesce((SELECT calls FROM call_windows, clock WHERE site_id = $1 AND caller_key = $2 AND window_start = clock.minute), 0) AS user_calls,
		coalesce((SELECT calls FROM call_windows, clock WHERE site_id = $1 AND caller_key = '' AND window_start = clock.minute), 0) AS site_calls
), admitted AS (
	SELECT 1 FROM counts
	WHERE user_in_flight < $5 AND site_in_flight < $6 AND user_calls < $7 AND site_calls < $8
), counted AS (
	INSERT INTO call_windows (site_id, caller_key, window_start, calls)
	SELECT $1, k, clock.minute, 1 FROM admitted, clock, unnest(ARRAY[$2::text, '']) AS k
	ON CONFLICT (site_id, caller_key, window_start) DO UPDATE SET calls = call_windows.calls + 1
), leased AS (
	INSERT INTO call_leases (id, site_id, caller_key, expires_at)
	SELECT $3, $1, $2, clock.at + $4::interval FROM admitted, clock
)
SELECT user_in_flight, site_in_flight, user_calls, site_calls, clock.minute + interval '1 minute'
FROM counts, clock`

// Acquire takes a slot for one call of callerKey on siteID, or fails with
// RATE_LIMITED and a retry-after.
//
// It costs one round trip: the advisory lock and acquireSQL go in one
// batch, which Postgres runs as one implicit transaction. The tables are
// unlogged (migration 00006), so its commit waits for no WAL flush.
func (l *Limiter) Acquire(ctx context.Context, siteID, callerKey string) (func(), error) {
	site, err := uuid.Parse(siteID)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: site id: %w", err)
	}
	lease := uuid.New()
	expires := time.Now().Add(l.limits.LeaseTTL)
	batch := &pgx.Batch{}
	// Leases this replica failed to release (during a database outage)
	// go first, in the same round trip, so they do not count against
	// their callers now that the database answers again.
	unreleased := l.unreleasedLeases()
	if len(unreleased) > 0 {
		batch.Queue(`DELETE FROM call_leases WHERE id = ANY($1)`, unreleased)
	}
	batch.Queue(`SELECT pg_advisory_xact_lock($1)`, lockKey(siteID))
	batch.Queue(acquireSQL, site, callerKey, lease, l.leaseTTL,
		l.limits.UserConcurrency, l.limits.SiteConcurrency, l.limits.UserPerMinute, l.limits.SitePerMinute)
	var userInFlight, siteInFlight, userCalls, siteCalls int
	var windowEnd time.Time
	br := l.pool.SendBatch(ctx, batch)
	if len(unreleased) > 0 {
		_, err = br.Exec()
	}
	if err == nil {
		_, err = br.Exec()
	}
	if err == nil {
		err = br.QueryRow().Scan(&userInFlight, &siteInFlight, &userCalls, &siteCalls, &windowEnd)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && len(unreleased) > 0 {
		// The batch committed as one implicit transaction.
		l.released(unreleased)
	}
	if err != nil {
		return nil, toolerr.Wrap(toolerr.UpstreamUnavailable, fmt.Errorf("ratelimit: acquire: %w", err),
			"erpgate could not check its call limits (its database is unavailable); retry shortly")
	}
	switch wait := time.Until(windowEnd); {
	case userInFlight >= l.limits.UserConcurrency:
		return nil, limited(time.Second, "this caller already has %d calls in flight, the most allowed at once; wait for one to finish", userInFlight)
	case siteInFlight >= l.limits.SiteConcurrency:
		return nil, limited(time.Second, "this ERP site already has %d calls in flight, the most erpgate sends it at once; retry shortly", siteInFlight)
	case userCalls >= l.limits.UserPerMinute:
		return nil, limited(wait, "this caller made %d calls this minute, the most allowed", userCalls)
	case siteCalls >= l.limits.SitePerMinute:
		return nil, limited(wait, "this ERP site received %d calls this minute, the most erpgate sends it", siteCalls)
	}
	return func() { l.release(lease, expires) }, nil
}

func limited(wait time.Duration, format string, args ...any) *toolerr.Error {
	if wait < time.Second {
		wait = time.Second
	}
	return toolerr.New(toolerr.RateLimited, format, args...).WithRetryAfter(wait)
}

// release queues a finished call's lease for deletion and wakes the
// Janitor. The call's reply does not wait for the database; until the lease
// is deleted it still counts, which can only make the limits stricter.
func (l *Limiter) release(lease uuid.UUID, expires time.Time) {
	l.mu.Lock()
	l.unreleased[lease] = expires
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Flush deletes every queued lease now. Call it before closing the pool,
// so that a replica shutting down leaves no lease behind.
func (l *Limiter) Flush(ctx context.Context) error {
	ids := l.unreleasedLeases()
	if len(ids) == 0 {
		return nil
	}
	if _, err := l.pool.Exec(ctx, `DELETE FROM call_leases WHERE id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("ratelimit: release %d leases: %w", len(ids), err)
	}
	l.released(ids)
	return nil
}

// unreleasedLeases returns the leases whose release failed and that have
// not expired yet, forgetting expired ones.
func (l *Limiter) unreleasedLeases() []uuid.UUID {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []uuid.UUID
	now := time.Now()
	for id, exp := range l.unreleased {
		if exp.Before(now) {
			delete(l.unreleased, id)
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

// released forgets leases that are now deleted.
func (l *Limiter) released(ids []uuid.UUID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		delete(l.unreleased, id)
	}
}

// Janitor deletes expired leases and finished windows every interval until
// ctx ends.
//
// It also deletes the leases of finished calls as soon as they are queued
// (see release), and retries every second while that fails.
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
		if _, err := l.pool.Exec(ctx, `DELETE FROM call_leases WHERE expires_at < now()`); err != nil && ctx.Err() == nil {
			l.log.Warn("purging expired call leases failed", zap.Error(err))
		}
		if _, err := l.pool.Exec(ctx, `DELETE FROM call_windows WHERE window_start < now() - interval '2 minutes'`); err != nil && ctx.Err() == nil {
			l.log.Warn("purging old call windows failed", zap.Error(err))
		}
	}
}
