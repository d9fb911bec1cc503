package mcpengine

import (
	"context"
)

// Limiter bounds how many calls a caller and a site may make. Acquire
// returns a release function, or a *toolerr.Error with code RATE_LIMITED
// (and RetryAfter) when a limit is reached. Implementations must hold
// across replicas.
type Limiter interface {
	Acquire(ctx context.Context, siteID string, callerKey string) (release func(), err error)
}
