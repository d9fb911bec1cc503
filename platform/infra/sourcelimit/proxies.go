package sourcelimit

import (
	"net/http"
	"net/netip"
	"sync"
	"time"

	"go.uber.org/zap"
)

// xForwardedFor is the one forwarding header erpgate reads, and only
// from a trusted proxy.
const xForwardedFor = "X-Forwarded-For"

// forwardingHeaders are the headers a reverse proxy or load balancer
// writes to name the client it forwards, in the order they are reported,
// the one read first.
var forwardingHeaders = []string{xForwardedFor, "Forwarded", "X-Real-IP"}

// WarnEvery is how often a replica logs again that requests come through
// a proxy it does not trust, or one whose header it does not read.
const WarnEvery = 10 * time.Minute

// Kind is what a Sighting is the sign of.
type Kind int

const (
	// Untrusted: a request carried a forwarding header but came from an
	// address that is not a trusted proxy, the sign of a proxy in front
	// that ERPGATE_TRUSTED_PROXIES does not list.
	Untrusted Kind = iota
	// Unread: a request came from a trusted proxy that named the client
	// only in Forwarded or X-Real-IP, with no X-Forwarded-For, the only
	// header erpgate reads.
	Unread
	kinds
)

// Sighting is the latest request of one Kind: behind such a proxy every
// visitor counts as the proxy's address.
type Sighting struct {
	Kind Kind
	// Peer is the connection's address (the proxy's); Header the first
	// forwarding header the request carried (for Unread, the first of
	// Forwarded and X-Real-IP). The header's content is not kept: it was
	// not believed.
	Peer, Header string
	At           time.Time
	// Requests counts such requests since the replica started.
	Requests int64
}

// UntrustedProxies notices requests that carry a forwarding header but
// come from an address that is not a trusted proxy, and requests from a
// trusted proxy that names the client only in a header erpgate does not
// read (Forwarded, X-Real-IP). Behind either proxy every visitor is the
// proxy's address, so all of them share one source's limits and one
// network's bound of waiting registrations. It only tells: no header is
// believed for it. The state is this replica's, in memory.
type UntrustedProxies struct {
	trusted []netip.Prefix
	log     *zap.Logger
	now     func() time.Time

	mu sync.Mutex
	// last and logged are per Kind: one kind's warning does not hold
	// back the other's.
	last   [kinds]Sighting
	logged [kinds]time.Time
}

// NewUntrustedProxies watches for proxies not in trusted, and for those in
// it that send no X-Forwarded-For; log gets a warning of each kind at most
// once every WarnEvery; now nil is time.Now.
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
// address that is not a trusted proxy (Untrusted), or comes from a trusted
// proxy with Forwarded or X-Real-IP but no X-Forwarded-For (Unread). A
// request without such a header costs three header look-ups.
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
			// X-Forwarded-For comes first in forwardingHeaders: any other
			// header found means the proxy sent none.
			if header != xForwardedFor {
				u.saw(Unread, peer, header)
			}
			return
		}
	}
	u.saw(Untrusted, peer, header)
}

// saw records a request of kind from peer with header, and logs the
// kind's warning unless it was logged within WarnEvery.
func (u *UntrustedProxies) saw(kind Kind, peer netip.Addr, header string) {
	now := u.now()
	u.mu.Lock()
	n := u.last[kind].Requests + 1
	u.last[kind] = Sighting{Kind: kind, Peer: peer.String(), Header: header, At: now, Requests: n}
	warn := u.logged[kind].IsZero() || now.Sub(u.logged[kind]) >= WarnEvery
	if warn {
		u.logged[kind] = now
	}
	u.mu.Unlock()
	if !warn {
		return
	}
	fields := []zap.Field{zap.String("peer", peer.String()), zap.String("header", header), zap.Int64("requests_so_far", n)}
	switch kind {
	case Untrusted:
		u.log.Warn("requests come through an untrusted proxy: every client behind it counts as its address, sharing one source's limits; list it in ERPGATE_TRUSTED_PROXIES", fields...)
	case Unread:
		u.log.Warn("a trusted proxy names its clients only in a header erpgate does not read: erpgate reads only X-Forwarded-For, so every client behind the proxy counts as its address, sharing one source's limits; make the proxy send X-Forwarded-For", fields...)
	}
}

// Sightings is this replica's latest sighting of each kind it has seen,
// in the order of the kinds; none when it has seen none.
func (u *UntrustedProxies) Sightings() []Sighting {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	var seen []Sighting
	for _, s := range u.last {
		if s.Requests > 0 {
			seen = append(seen, s)
		}
	}
	return seen
}
