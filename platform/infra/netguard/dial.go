package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
)

// Control is a net.Dialer Control function: it refuses to connect to an
// address Check refuses. It runs on the address actually dialled, after
// DNS resolution.
func Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &ForbiddenError{Kind: fmt.Sprintf("the dialled address %q is not an IP address and port", address)}
	}
	return Check(ap.Addr())
}

// Guard returns a copy of d that connects only to public addresses.
func Guard(d *net.Dialer) *net.Dialer {
	guarded := *d
	guarded.Control = Control
	return &guarded
}

// Policy is the address policy for hosts an operator registered (ERPs):
// public addresses only, except for the host and port pairs the operator
// listed, which may be anywhere (an ERP on the company's private network).
// Only the listed port of a listed host is exempt: listing the company's
// ERP must not let anyone who can register a site reach every other
// service of that host. A nil *Policy allows everything (development,
// where ERPs run on loopback).
type Policy struct {
	exempt []string // host:port, the host in lower case, without a trailing dot
}

// defaultPort is the port of a listed host that names none: HTTPS's, as
// erpgate reaches ERPs in production over HTTPS only.
const defaultPort = "443"

// NewPolicy returns a policy that exempts hosts: names or IP literals,
// compared without case and trailing dot, each with a port (host:port,
// [v6]:port) or, without one, on 443.
func NewPolicy(hosts []string) *Policy {
	p := &Policy{}
	for _, h := range hosts {
		if hp := normalizeHostPort(h); hp != "" {
			p.exempt = append(p.exempt, hp)
		}
	}
	return p
}

// Exempt reports whether hostport (host:port, [v6]:port, or a host alone
// for port 443) is one the operator listed.
func (p *Policy) Exempt(hostport string) bool {
	return p == nil || slices.Contains(p.exempt, normalizeHostPort(hostport))
}

// DialContext returns a dial function for an http.Transport: d as it is for
// an exempt host, d guarded by Control for every other.
func (p *Policy) DialContext(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	if p == nil {
		return d.DialContext
	}
	guarded := Guard(d)
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if p.Exempt(address) {
			return d.DialContext(ctx, network, address)
		}
		return guarded.DialContext(ctx, network, address)
	}
}

// ErrUnresolved means a host name had no address to judge.
var ErrUnresolved = errors.New("the host name does not resolve")

// CheckHost resolves the host of hostport (as Exempt takes it) and
// returns nil when the policy allows every address it has: host and port
// are exempt, or all its addresses are public. Otherwise the error is a
// *ForbiddenError naming the address, or wraps ErrUnresolved. A nil
// resolver is net's default.
func (p *Policy) CheckHost(ctx context.Context, resolver *net.Resolver, hostport string) error {
	if p.Exempt(hostport) {
		return nil
	}
	host := hostport
	h := normalizeHost(host)
	if ip, err := netip.ParseAddr(h); err == nil {
		return Check(ip)
	}
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	addrs, err := resolver.LookupNetIP(ctx, "ip", h)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("%w: %s", ErrUnresolved, h)
	}
	for _, ip := range addrs {
		// The resolver gives IPv4 answers in IPv4-mapped form.
		if err := Check(ip.Unmap()); err != nil {
			var forbidden *ForbiddenError
			if !errors.As(err, &forbidden) {
				return err
			}
			fe := *forbidden
			fe.Host = h
			return &fe
		}
	}
	return nil
}

// normalizeHostPort is host:port with the host as normalizeHost has it,
// and port 443 when hostport names none; "" for no host.
func normalizeHostPort(hostport string) string {
	port := defaultPort
	if _, p, err := net.SplitHostPort(hostport); err == nil {
		port = p
	}
	host := normalizeHost(hostport)
	if host == "" {
		return ""
	}
	return net.JoinHostPort(host, port)
}

// normalizeHost strips a port, IPv6 brackets and a trailing dot, and lower-
// cases the rest.
func normalizeHost(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimPrefix(strings.TrimSuffix(host, "]"), "[")
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// URLHostPort is u's host and port, the port its scheme's when u names
// none: what CheckHost takes for a base URL.
func URLHostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = defaultPort
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// Listing is how an operator lists u's host in the policy: the host alone
// for port 443, host:port otherwise.
func Listing(u *url.URL) string {
	hp := URLHostPort(u)
	if _, port, _ := net.SplitHostPort(hp); port == defaultPort {
		return u.Hostname()
	}
	return hp
}
