// Package sourcelimit bounds what one request source (a client address,
// IPv6 grouped by /64) may do on the endpoints that need no
// authentication: a token bucket per source, kept in memory per replica.
// The /64s of one IPv6 /48 also share a bucket of sixteen sources' worth:
// a /48 is one organisation's network, and one holder's 65,536 /64s must
// not each get a source's bound. The OAuth endpoints and the self-service
// registration use it.
package sourcelimit

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
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

// WithDefault fills a zero Burst or Every from def.
func (l Limit) WithDefault(def Limit) Limit {
	if l.Burst <= 0 {
		l.Burst = def.Burst
	}
	if l.Every <= 0 {
		l.Every = def.Every
	}
	return l
}

// maxSources bounds the sources one limiter remembers.
const maxSources = 100_000

// Limiter keeps a token bucket per source. It is safe for concurrent use.
type Limiter struct {
	limit Limit
	// site is the bound of the /64s of one IPv6 /48 together.
	site Limit
	now  func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

// bucket is one source's tokens, and whether its last request was refused
// (so that only the first refusal in a row is logged).
type bucket struct {
	tokens  *rate.Limiter
	refused bool
}

// New returns a limiter; now is the clock (time.Now outside tests).
func New(limit Limit, now func() time.Time) *Limiter {
	site := Limit{Burst: limit.Burst * siteShare, Every: limit.Every / siteShare}
	return &Limiter{limit: limit, site: site, now: now, buckets: map[string]*bucket{}}
}

// Allow takes one request of source from its bucket. When the bucket is
// empty it reports how long until the next request would be allowed, and
// whether this is the first refusal since the source was last allowed.
func (l *Limiter) Allow(source string) (ok bool, wait time.Duration, first bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	var siteTaken *rate.Reservation
	if site, ok := siteOf(source); ok {
		b := l.bucket(site, l.site, now)
		r := b.tokens.ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			// The /64 gets no bucket of its own.
			r.CancelAt(now)
			first, b.refused = !b.refused, true
			return false, d, first
		}
		b.refused = false
		siteTaken = r
	}
	b := l.bucket(source, l.limit, now)
	r := b.tokens.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		if siteTaken != nil {
			siteTaken.CancelAt(now)
		}
		first, b.refused = !b.refused, true
		return false, d, first
	}
	b.refused = false
	return true, 0, false
}

// Check is Allow for requests that count only when they fail (Charge):
// it takes nothing, and refuses while the source's bucket is empty or in
// debt.
func (l *Limiter) Check(source string) (ok bool, wait time.Duration, first bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if site, ok := siteOf(source); ok {
		if ok, wait, first := l.check(site, l.site, now); !ok {
			return false, wait, first
		}
	}
	return l.check(source, l.limit, now)
}

// check is Check of one bucket. l.mu is held.
func (l *Limiter) check(key string, limit Limit, now time.Time) (ok bool, wait time.Duration, first bool) {
	b, found := l.buckets[key]
	if !found {
		return true, 0, false
	}
	if tokens := b.tokens.TokensAt(now); tokens < 1 {
		first, b.refused = !b.refused, true
		return false, time.Duration((1 - tokens) * float64(limit.Every)), first
	}
	b.refused = false
	return true, 0, false
}

// Charge takes one request of source from its bucket after it failed,
// into debt if the bucket is empty: requests that Check let through at
// once are all paid for, with a longer wait.
func (l *Limiter) Charge(source string) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if site, ok := siteOf(source); ok {
		l.bucket(site, l.site, now).tokens.ReserveN(now, 1)
	}
	l.bucket(source, l.limit, now).tokens.ReserveN(now, 1)
}

// ChargeWait is Charge, and reports how long until the source's next
// request would be allowed (0 while its bucket still has a request). A
// source is put at most a full burst in debt: one already that deep is
// not charged further, so the wait it reports never exceeds what its
// bucket takes to fill from empty (Burst times Every), however many
// charge it (a site's callers, each of whom a wait may hold).
func (l *Limiter) ChargeWait(source string) time.Duration {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if site, ok := siteOf(source); ok {
		l.bucket(site, l.site, now).tokens.ReserveN(now, 1)
	}
	b := l.bucket(source, l.limit, now)
	if b.tokens.TokensAt(now)-1 >= float64(1-l.limit.Burst) {
		b.tokens.ReserveN(now, 1)
	}
	if tokens := b.tokens.TokensAt(now); tokens < 1 {
		return time.Duration((1 - tokens) * float64(l.limit.Every))
	}
	return 0
}

// maxHold bounds what Hold puts a source in debt for.
const maxHold = time.Hour

// Hold puts source's bucket in debt, if need be, so that Check refuses
// it for at least d (at most maxHold): a source made to wait for a
// budget it shares with others.
func (l *Limiter) Hold(source string, d time.Duration) {
	if d <= 0 {
		return
	}
	d = min(d, maxHold)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(source, l.limit, now)
	// Refused while tokens < 1, for (1 - tokens) Every.
	want := 1 - float64(d)/float64(l.limit.Every)
	for tokens := b.tokens.TokensAt(now); tokens > want; tokens = b.tokens.TokensAt(now) {
		b.tokens.ReserveN(now, min(l.limit.Burst, max(1, int(math.Ceil(tokens-want)))))
	}
}

// siteOf returns the /48 of an IPv6 source (a /64, from Source).
func siteOf(source string) (string, bool) {
	if !strings.HasSuffix(source, "/64") {
		return "", false
	}
	p, err := netip.ParsePrefix(source)
	if err != nil || !p.Addr().Is6() {
		return "", false
	}
	site, _ := p.Addr().Prefix(48)
	return site.String(), true
}

// bucket returns source's bucket, new if need be. l.mu is held.
func (l *Limiter) bucket(source string, limit Limit, now time.Time) *bucket {
	b, found := l.buckets[source]
	if !found {
		if len(l.buckets) >= maxSources {
			l.sweep(now)
		}
		b = &bucket{tokens: rate.NewLimiter(rate.Every(limit.Every), limit.Burst)}
		l.buckets[source] = b
	}
	return b
}

// sweep forgets the sources whose bucket has filled up again (they are as
// good as new), and, if that is not enough, every source: memory stays
// bounded however many sources an attack uses, at the price of letting
// some of them start again.
func (l *Limiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens.TokensAt(now) >= float64(b.tokens.Burst()) {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= maxSources {
		clear(l.buckets)
	}
}

// Source names the source of a client address for the limits: IPv6
// addresses grouped by /64, since one host usually holds a whole /64.
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

// Network names the network of a client address: its IPv4 /24 or IPv6
// /48, one organisation's network as far as an address tells, for bounds
// that must not fall to a handful of a network's addresses. It keeps less
// of the address than Source, and is what may be stored of it. A value
// that is not an address is returned as it is.
func Network(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	addr = addr.Unmap().WithZone("")
	bits := 48
	if addr.Is4() {
		bits = 24
	}
	p, _ := addr.Prefix(bits)
	return p.String()
}

// DirectIP is the address the connection comes from.
func DirectIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// RetryAfter sets the Retry-After header for a wait and returns it in
// whole seconds.
func RetryAfter(h http.Header, wait time.Duration) int {
	secs := int(math.Ceil(wait.Seconds()))
	h.Set("Retry-After", strconv.Itoa(secs))
	return secs
}

// siteShare is how many sources' worth of requests the /64s of one IPv6
// /48 share.
const siteShare = 16
