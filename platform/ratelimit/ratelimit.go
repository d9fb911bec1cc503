// Package ratelimit enforces erpgate's call limits in Postgres, so they hold
// across every replica: per caller (a service token or an ERP user) at most
// N calls in flight and M calls started per minute, and per site an
// instance-wide ceiling on both, so a busy deployment never trips the ERP's
// own licence throttle.
//
// Acquisitions for one site are serialised by a transaction-scoped advisory
// lock; each is one short transaction. A lease left by a crashed replica
// expires after the call budget.
package ratelimit

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
}

// New returns a limiter. Call Janitor in the background to purge old rows.
func New(pool *pgxpool.Pool, limits Limits, log *zap.Logger) *Limiter {
	if limits.LeaseTTL <= 0 {
		limits.LeaseTTL = 2 * time.Minute
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Limiter{pool: pool, limits: limits, log: log}
}

// lockKey maps a site id to the advisory lock that serialises its
// acquisitions. The high bit namespaces erpgate's limiter locks.
func lockKey(siteID string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("erpgate/ratelimit/" + siteID))
	return int64(h.Sum64() >> 1)
}

// Acquire takes a slot for one call of callerKey on siteID, or fails with
// RATE_LIMITED and a retry-after.
func (l *Limiter) Acquire(ctx context.Context, siteID, callerKey string) (func(), error) {
	site, err := uuid.Parse(siteID)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: site id: %w", err)
	}
	lease := uuid.New()
	var refusal *toolerr.Error
	err = pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey(siteID)); err != nil {
			return err
		}
		var userInFlight, siteInFlight int
		if err := tx.QueryRow(ctx, `
			SELECT count(*) FILTER (WHERE caller_key = $2), count(*)
			FROM call_leases WHERE site_id = $1 AND expires_at > now()`, site, callerKey).Scan(&userInFlight, &siteInFlight); err != nil {
			return err
		}
		if userInFlight >= l.limits.UserConcurrency {
			refusal = limited(time.Second, "this caller already has %d calls in flight, the most allowed at once; wait for one to finish", userInFlight)
			return nil
		}
		if siteInFlight >= l.limits.SiteConcurrency {
			refusal = limited(time.Second, "this ERP site already has %d calls in flight, the most erpgate sends it at once; retry shortly", siteInFlight)
			return nil
		}
		var userCalls, siteCalls int
		var windowEnd time.Time
		if err := tx.QueryRow(ctx, `
			WITH w AS (SELECT date_trunc('minute', now()) AS start)
			SELECT
				coalesce((SELECT calls FROM call_windows, w WHERE site_id = $1 AND caller_key = $2 AND window_start = w.start), 0),
				coalesce((SELECT calls FROM call_windows, w WHERE site_id = $1 AND caller_key = '' AND window_start = w.start), 0),
				(SELECT start FROM w) + interval '1 minute'`, site, callerKey).Scan(&userCalls, &siteCalls, &windowEnd); err != nil {
			return err
		}
		wait := time.Until(windowEnd)
		if userCalls >= l.limits.UserPerMinute {
			refusal = limited(wait, "this caller made %d calls this minute, the most allowed", userCalls)
			return nil
		}
		if siteCalls >= l.limits.SitePerMinute {
			refusal = limited(wait, "this ERP site received %d calls this minute, the most erpgate sends it", siteCalls)
			return nil
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO call_windows (site_id, caller_key, window_start, calls)
			VALUES ($1, $2, date_trunc('minute', now()), 1), ($1, '', date_trunc('minute', now()), 1)
			ON CONFLICT (site_id, caller_key, window_start) DO UPDATE SET calls = call_windows.calls + 1`, site, callerKey); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO call_leases (id, site_id, caller_key, expires_at)
			VALUES ($1, $2, $3, now() + $4::interval)`, lease, site, callerKey, l.limits.LeaseTTL.String())
		return err
	})
	if err != nil {
		return nil, toolerr.Wrap(toolerr.UpstreamUnavailable, fmt.Errorf("ratelimit: acquire: %w", err),
			"erpgate could not check its call limits (its database is unavailable); retry shortly")
	}
	if refusal != nil {
		return nil, refusal
	}
	return func() { l.release(lease) }, nil
}

func limited(wait time.Duration, format string, args ...any) *toolerr.Error {
	if wait < time.Second {
		wait = time.Second
	}
	return toolerr.New(toolerr.RateLimited, format, args...).WithRetryAfter(wait)
}

// release frees a lease. It runs after the call, whose context may be gone.
func (l *Limiter) release(lease uuid.UUID) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := l.pool.Exec(ctx, `DELETE FROM call_leases WHERE id = $1`, lease); err != nil {
		// The lease expires on its own; the slot is only blocked until then.
		l.log.Warn("releasing a call lease failed; it will expire", zap.Error(err))
	}
}

// Janitor deletes expired leases and finished windows every interval until
// ctx ends.
func (l *Limiter) Janitor(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
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
