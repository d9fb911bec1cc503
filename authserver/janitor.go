package authserver

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// Janitor deletes expired codes and tokens every interval until ctx ends.
// Any number of replicas may run it: each pass deletes a bounded batch.
// Expired rows are harmless (fosite checks every expiry), so this only
// keeps the table small; refresh tokens are kept for a day past expiry so
// that late reuse is still recognised as reuse.
func (s *Server) Janitor(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for {
			n, err := s.deps.Store.DeleteExpired(ctx, time.Now().Add(-24*time.Hour), 1000)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("delete expired OAuth tokens", zap.Error(err))
				}
				break
			}
			if n < 1000 {
				break
			}
		}
	}
}
