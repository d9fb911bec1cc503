package sourcelimit

import (
	"net/http"
	"net/netip"
	"sync"
	"time"

	"go.uber.org/zap"
)

// forwardingHeaders are the headers a reverse proxy or load balancer
// writes to name the client it forwards, in the order they are reported.
var forwardingHeaders = []string{"X-Forwarded-For", "Forwarded", "X-Real-IP"}

// WarnEvery is how often a replica logs again that requests come through
// a proxy it does not trust.
const WarnEvery = 10 * time.Minute

// Sighting is the latest request that came from an address that is not a
// trusted proxy but carried a forwarding header: the sign of a proxy in
// front that ERPGATE_TRUSTED_PROXIES does not list.
type Sighting struct {
	// Peer is the connection's address (the proxy's); Header the first
	// forwarding header the request carried. The header's content is not
	// kept: it was not believed.
	Peer, Header string
	At           time.Time
	// Requests counts such requests since the replica started.
	Requests int64
}

// UntrustedProxies notices requests that carry a forwarding header but
// come from an address that is not a trusted proxy. Behind such a proxy
// every visitor is the proxy's address, so all of them share one source's
// limits and one network's bound of waiting registrations. It only tells:
// the header is never believed. The state is this replica's, in memory.
type UntrustedProxies struct {
	trusted []netip.Prefix
	log     *zap.Logger
	now     func() time.Time

	mu     sync.Mutex
	last   Sighting
	logged time.Time
}

// NewUntrustedProxies watches for proxies not in trusted; log gets a
// warning at most once every WarnEvery; now nil is time.Now.
func NewUntrustedProxies(trusted []netip.Prefix, log *zap.Logger, now func() time.Time) *UntrustedProxies {
	if log == nil {
		log = zap.NewNop()
	}
	if now == nil {
		now = time.Now
	}
	return &UntrustedProxies{trusted: trusted, log: log, now: now}
}

// Wrap is extract, noting each request it is asked about: it is called
// only where a request's source matters (the limits of the pages and
// endpoints that need no authentication), so that no other request pays
// even the header check.
func (u *UntrustedProxies) Wrap(extract func(*http.Request) string) func(*http.Request) string {
	return func(r *http.Request) string {
		u.Note(r)
		return extract(r)
	}
}

// Note records r if it carries a forwarding header and comes from an
// address that is not a trusted proxy. A request without such a header
// costs three header look-ups.
func (u *UntrustedProxies) Note(r *http.Request) {
	if u == nil {
		return
	}
	header := ""
	for _, h := range forwardingHeaders {
		if len(r.Header.Values(h)) > 0 {
			header = h
			break
		}
	}
	if header == "" {
		return
	}
	peer, err := netip.ParseAddr(DirectIP(r))
	if err != nil {
		return
	}
	peer = peer.Unmap().WithZone("")
	for _, p := range u.trusted {
		if p.Contains(peer) {
			return
		}
	}
	now := u.now()
	u.mu.Lock()
	u.last = Sighting{Peer: peer.String(), Header: header, At: now, Requests: u.last.Requests + 1}
	warn := u.logged.IsZero() || now.Sub(u.logged) >= WarnEvery
	if warn {
		u.logged = now
	}
	n := u.last.Requests
	u.mu.Unlock()
	if warn {
		u.log.Warn("requests come through an untrusted proxy: every client behind it counts as its address, sharing one source's limits; list it in ERPGATE_TRUSTED_PROXIES",
			zap.String("peer", peer.String()), zap.String("header", header), zap.Int64("requests_so_far", n))
	}
}

// Last is the latest sighting on this replica, if any.
func (u *UntrustedProxies) Last() (Sighting, bool) {
	if u == nil {
		return Sighting{}, false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.last, u.last.Requests > 0
}
