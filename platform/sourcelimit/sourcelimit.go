// Package sourcelimit keeps a token bucket per request source (a client
// address, IPv6 grouped by /64), in memory, per replica: the bound on what
// one source may do on endpoints that need no authentication (the OAuth
// server's registration and sign-in starts, the console's sign-in).
package sourcelimit

import (
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limit is a token bucket per request source: Burst requests at once, then
// one every Every.
type Limit struct {
	Burst int
	Every time.Duration
}

// maxSources bounds the sources one limiter remembers.
const maxSources = 100_000

// Limiter keeps a token bucket per source. It is safe for concurrent use.
type Limiter struct {
	limit Limit
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

// New returns a limiter of limit; now is the clock (time.Now).
func New(limit Limit, now func() time.Time) *Limiter {
	return &Limiter{limit: limit, now: now, buckets: map[string]*bucket{}}
}

// Allow takes one request of source from its bucket. When the bucket is
// empty it reports how long until the next request would be allowed, and
// whether this is the first refusal since the source was last allowed.
func (l *Limiter) Allow(source string) (ok bool, wait time.Duration, first bool) {
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
func (l *Limiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens.TokensAt(now) >= float64(l.limit.Burst) {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= maxSources {
		clear(l.buckets)
	}
}

// Source names the source of a request from its client address: an IPv4
// address (also when mapped into IPv6), or an IPv6 address's /64, since
// one host usually holds a whole /64. Text that is no address is its own
// source.
func Source(ip string) string {
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
