package netguard

import (
	"errors"
	"fmt"
	"net/netip"

	"code.dny.dev/ssrf"
)

// ErrForbiddenAddress means a connection was about to reach an address that
// is not public. Errors that Check and the dialers return wrap it.
var ErrForbiddenAddress = errors.New("address is not public")

// registry judges addresses by the IANA special-purpose registries (IPv4
// and IPv6, generated into code.dny.dev/ssrf), plus IPv4 multicast; an
// IPv6 address outside global unicast (2000::/3) is refused outright, which
// covers IPv4-compatible (::/96), site-local (fec0::/10), unique-local,
// link-local and multicast addresses. Ports and networks are not its
// concern here: the callers choose them.
var registry = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// Prefixes whose addresses embed an IPv4 address.
var (
	// nat64 is the well-known NAT64 prefix (RFC 6052): 64:ff9b::a.b.c.d is
	// a.b.c.d reached through the network's NAT64 gateway. An IPv6-only
	// host reaches the IPv4 internet this way (DNS64 answers with it), so
	// it is judged by the IPv4 address it embeds.
	nat64 = ssrf.IPv6NAT64Prefix
	// sixToFour (RFC 3056) and teredo (RFC 4380) tunnel to the IPv4
	// address they embed through a relay. Both are deprecated and in the
	// registry; they are refused whatever they embed, and the refusal
	// names the embedded address.
	sixToFour = netip.MustParsePrefix("2002::/16")
	teredo    = netip.MustParsePrefix("2001::/32")
)

// ForbiddenError says which address was refused and why. It wraps
// ErrForbiddenAddress; its text is a plain sentence for operators.
type ForbiddenError struct {
	// Host is the name that resolved to Addr, or "" for a literal address.
	Host string
	Addr netip.Addr
	// Kind describes the refused address: "a loopback address".
	Kind string
}

func (e *ForbiddenError) Error() string {
	if !e.Addr.IsValid() {
		return e.Kind
	}
	if e.Host != "" {
		return fmt.Sprintf("%s resolves to %s, %s", e.Host, e.Addr, e.Kind)
	}
	return fmt.Sprintf("%s is %s", e.Addr, e.Kind)
}

func (e *ForbiddenError) Unwrap() error { return ErrForbiddenAddress }

// Check returns nil when ip is a public unicast address, and otherwise a
// *ForbiddenError (wrapping ErrForbiddenAddress) naming its kind.
//
// An address that carries an IPv4 address is judged by that address too:
// IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses are
// public exactly when the IPv4 address is; 6to4 and Teredo addresses are
// never public.
func Check(ip netip.Addr) error {
	if !ip.IsValid() {
		return &ForbiddenError{Addr: ip, Kind: "no address to connect to"}
	}
	ip = ip.WithZone("")
	if v4, ok := embeddedIPv4(ip); ok {
		if checkOne(v4) != nil {
			return &ForbiddenError{Addr: ip, Kind: "a form of " + v4.String() + ", " + kind(v4)}
		}
		if ip.Is4In6() || nat64.Contains(ip) {
			return nil
		}
	}
	if checkOne(ip) != nil {
		return &ForbiddenError{Addr: ip, Kind: kind(ip)}
	}
	return nil
}

// Public reports whether Check accepts ip.
func Public(ip netip.Addr) bool { return Check(ip) == nil }

func checkOne(ip netip.Addr) error { return registry.SafeAddr(ip) }

// embeddedIPv4 returns the IPv4 address an IPv4-mapped, NAT64, 6to4 or
// Teredo address leads to (for Teredo, its server's and its client's
// addresses both count: the worse of the two is returned).
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	switch {
	case ip.Is4In6():
		return ip.Unmap(), true
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case teredo.Contains(ip):
		server := netip.AddrFrom4([4]byte(b[4:8]))
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		if checkOne(server) != nil {
			return server, true
		}
		return client, true
	}
	return netip.Addr{}, false
}

// Well-known blocks named in refusals; the registry decides, these only
// explain.
var (
	thisNetwork  = netip.MustParsePrefix("0.0.0.0/8")
	shared       = netip.MustParsePrefix("100.64.0.0/10")
	benchmarking = netip.MustParsePrefix("198.18.0.0/15")
	reserved     = netip.MustParsePrefix("240.0.0.0/4")
	broadcast    = netip.MustParseAddr("255.255.255.255")
	compatible   = netip.MustParsePrefix("::/96")
	siteLocal    = netip.MustParsePrefix("fec0::/10")
	uniqueLocal  = netip.MustParsePrefix("fc00::/7")
)

// kind names the kind of a refused address in a few words.
func kind(ip netip.Addr) string {
	switch {
	case ip == broadcast:
		return "the broadcast address"
	case ip.IsUnspecified() || thisNetwork.Contains(ip):
		return "an unspecified (this network) address"
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address"
	case ip.IsMulticast():
		return "a multicast address"
	case uniqueLocal.Contains(ip):
		return "a unique-local address"
	case ip.IsPrivate():
		return "a private address"
	case shared.Contains(ip):
		return "a shared (carrier-grade NAT) address"
	case benchmarking.Contains(ip):
		return "a benchmarking address"
	case reserved.Contains(ip):
		return "a reserved address"
	case compatible.Contains(ip):
		return "an IPv4-compatible IPv6 address"
	case siteLocal.Contains(ip):
		return "a site-local address"
	case sixToFour.Contains(ip):
		return "a 6to4 address"
	case teredo.Contains(ip):
		return "a Teredo address"
	case nat64.Contains(ip) || ip.Is4In6():
		return "an IPv4 address in IPv6 form"
	}
	return "a special-purpose address (IANA registry)"
}
