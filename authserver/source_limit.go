package authserver

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
)

// SourceLimit is a token bucket per request source: Burst requests at
// once, then one every Every.
type SourceLimit = sourcelimit.Limit

// SourceLimits bound what one source may do on the endpoints that need no
// authentication, so that it can neither fill the database nor probe for
// sites at will (issue 14). They are kept in memory, per replica.
type SourceLimits struct {
	// Register bounds POST /oauth/register. Default 30 at once, then one
	// a minute.
	Register SourceLimit
	// Authorize bounds /oauth/authorize, which starts a sign-in flow and,
	// for a site's MCP URL, names the site's ERP. Default 30 at once, then
	// one every 2 s.
	Authorize SourceLimit
	// ChooseSite bounds the ERP addresses typed on /mcp's sign-in page.
	// Default 10 at once, then one every 6 s.
	ChooseSite SourceLimit
	// FetchDocument bounds the Client ID Metadata Documents fetched for
	// one source's requests (authorize, token and revocation requests may
	// all name a new URL). Default 10 at once, then one every 6 s.
	FetchDocument SourceLimit
}

func (l SourceLimits) withDefaults() SourceLimits {
	l.Register = l.Register.WithDefault(SourceLimit{Burst: 30, Every: time.Minute})
	l.Authorize = l.Authorize.WithDefault(SourceLimit{Burst: 30, Every: 2 * time.Second})
	l.ChooseSite = l.ChooseSite.WithDefault(SourceLimit{Burst: 10, Every: 6 * time.Second})
	l.FetchDocument = l.FetchDocument.WithDefault(SourceLimit{Burst: 10, Every: 6 * time.Second})
	return l
}

// sourceLimiter keeps a token bucket per source.
type sourceLimiter = sourcelimit.Limiter

func newSourceLimiter(limit SourceLimit, now func() time.Time) *sourceLimiter {
	return sourcelimit.New(limit, now)
}

type sourceKey struct{}

// withSource notes the request's source in ctx, for limits applied deeper
// down (client metadata document fetches).
func withSource(ctx context.Context, source string) context.Context {
	return context.WithValue(ctx, sourceKey{}, source)
}

func sourceFrom(ctx context.Context) (string, bool) {
	s, ok := ctx.Value(sourceKey{}).(string)
	return s, ok
}

// requestSource names the source of r for the limits: its client address
// (as Deps.ClientIP finds it), IPv6 addresses grouped by /64.
func (s *Server) requestSource(r *http.Request) string {
	return sourcelimit.Source(s.deps.ClientIP(r))
}

// directClientIP is the address the connection comes from.
func directClientIP(r *http.Request) string { return sourcelimit.DirectIP(r) }

// limited takes one request of r's source from l. When the bucket is empty
// it sets Retry-After and returns false with the wait in whole seconds;
// the caller answers 429.
func (s *Server) limited(w http.ResponseWriter, r *http.Request, l *sourceLimiter, what string) (int, bool) {
	source := s.requestSource(r)
	ok, wait, first := l.Allow(source)
	if ok {
		return 0, true
	}
	secs := sourcelimit.RetryAfter(w.Header(), wait)
	if first {
		// Once per run of refusals: a flood must not become a flood of
		// log lines.
		s.log.Info("source rate limit", zap.String("endpoint", what), zap.String("source", source))
	}
	return secs, false
}

// inSeconds says "in N seconds" (or "in 1 second").
func inSeconds(secs int) string {
	if secs == 1 {
		return "in 1 second"
	}
	return "in " + strconv.Itoa(secs) + " seconds"
}
