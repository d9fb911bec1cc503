package authserver

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/authserver/storage"
)

// Retention of what the janitor removes.
const (
	// Refresh tokens are kept for a day past expiry so that late reuse is
	// still recognised as reuse.
	expiredTokenRetention = 24 * time.Hour
	// A sign-in flow is kept a few minutes past expiry so that a user who
	// comes back late is told it expired rather than that it is unknown.
	expiredFlowRetention = 5 * time.Minute
	// A registered client that never received a token is removed a day
	// after registering; one that did, after unusedClientIdle without a
	// token (at least the refresh-token lifespan).
	neverUsedClientRetention = 24 * time.Hour
	unusedClientIdle         = 30 * 24 * time.Hour
	janitorBatch             = 1000
	// janitorBound bounds one pass (a few deletes of a bounded batch
	// each): far above what a pass takes, it is what frees the janitor
	// from a pooled connection gone silent (a partition dropped the flow
	// without a reset), on which a statement would otherwise wait for as
	// long as the kernel takes to give up, a quarter of an hour.
	janitorBound = 10 * time.Second
)

// Janitor cleans up every interval until ctx ends: expired codes and
// tokens, expired sign-in flows, expired client metadata documents and
// registered clients nobody uses. Any number of replicas may run it: each
// pass deletes bounded batches. Expired rows are harmless (every expiry is
// checked when a row is read), so this only keeps the tables small; it is
// what stops unauthenticated requests from growing the database.
func (s *Server) Janitor(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.cleanUp(ctx)
	}
}

// cleanUp runs passes, each within janitorBound, until one finds less
// than a batch of each kind.
func (s *Server) cleanUp(ctx context.Context) {
	for {
		now := time.Now()
		pctx, cancel := context.WithTimeout(ctx, janitorBound)
		counts, err := s.deps.Store.CleanUp(pctx, s.cleanupPolicy(now))
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("OAuth clean-up", zap.Error(err))
			}
			return
		}
		if counts.Clients > 0 {
			s.log.Info("removed unused OAuth clients", zap.Int64("clients", counts.Clients))
		}
		if !counts.Full(janitorBatch) {
			return
		}
	}
}

func (s *Server) cleanupPolicy(now time.Time) storage.CleanupPolicy {
	return storage.CleanupPolicy{
		TokensExpiredBefore:    now.Add(-expiredTokenRetention),
		FlowsExpiredBefore:     now.Add(-expiredFlowRetention),
		DocumentsExpiredBefore: now,
		ClientsNeverUsedSince:  now.Add(-neverUsedClientRetention),
		ClientsIdleSince:       now.Add(-max(unusedClientIdle, s.deps.RefreshTokenLifespan)),
		Batch:                  janitorBatch,
	}
}
