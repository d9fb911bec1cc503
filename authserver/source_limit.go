package authserver

import (
	"context"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"
)

// SourceLimit is a token bucket per request source: Burst requests at
// once, then one every Every.
type SourceLimit struct {
	Burst int
	Every time.Duration
}

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
	def := func(v *SourceLimit, burst int, every time.Duration) {
		if v.Burst <= 0 {
			v.Burst = burst
		}
		if v.Every <= 0 {
			v.Every = every
		}
	}
	def(&l.Register, 30, time.Minute)
	def(&l.Authorize, 30, 2*time.Second)
	def(&l.ChooseSite, 10, 6*time.Second)
	def(&l.FetchDocument, 10, 6*time.Second)
	return l
}

// maxSources bounds the sources one limiter remembers.
const maxSources = 100_000

// sourceLimiter keeps a token bucket per source.
type sourceLimiter struct {
	limit SourceLimit
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

// bucket is one source's tokens, and whether its last request was refused
// (so that only the first refusal in a row is logged).
type bucket struct {
	tokens  *rate.Limiter
	refused bool
}

func newSourceLimiter(limit SourceLimit, now func() time.Time) *sourceLimiter {
	return &sourceLimiter{limit: limit, now: now, buckets: map[string]*bucket{}}
}

// allow takes one request of source from its bucket. When the bucket is
// empty it reports how long until the next request would be allowed, and
// whether this is the first refusal since the source was last allowed.
func (l *sourceLimiter) allow(source string) (ok bool, wait time.Duration, first bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, found := l.buckets[source]
	if !found {
		if len(l.buckets) >= maxSources {
			l.sweep(now)
		}
		b = &bucket{tokens: rate.NewLimiter(rate.Every(l.limit.Every), l.limit.Burst)}
		l.buckets[source] = b
	}
	r := b.tokens.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		first, b.refused = !b.refused, true
		return false, d, first
	}
	b.refused = false
	return true, 0, false
}

// sweep forgets the sources whose bucket has filled up again (they are as
// good as new), and, if that is not enough, every source: memory stays
// bounded however many sources an attack uses, at the price of letting
// some of them start again.
func (l *sourceLimiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens.TokensAt(now) >= float64(l.limit.Burst) {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= maxSources {
		clear(l.buckets)
	}
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
// (as Deps.ClientIP finds it), IPv6 addresses grouped by /64, since one
// host usually holds a whole /64.
func (s *Server) requestSource(r *http.Request) string {
	ip := s.deps.ClientIP(r)
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	addr = addr.Unmap().WithZone("")
	if addr.Is4() {
		return addr.String()
	}
	p, _ := addr.Prefix(64)
	return p.String()
}

// directClientIP is the address the connection comes from.
func directClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// limited takes one request of r's source from l. When the bucket is empty
// it sets Retry-After and returns false with the wait in whole seconds;
// the caller answers 429.
func (s *Server) limited(w http.ResponseWriter, r *http.Request, l *sourceLimiter, what string) (int, bool) {
	source := s.requestSource(r)
	ok, wait, first := l.allow(source)
	if ok {
		return 0, true
	}
	secs := int(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
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
