package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
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
// public addresses only, except for the hosts the operator listed, which
// may be anywhere (an ERP on the company's private network). A nil *Policy
// allows everything (development, where ERPs run on loopback).
type Policy struct {
	exempt []string // lower case, without a trailing dot
}

// NewPolicy returns a policy that exempts hosts (names or IP literals,
// compared without case and trailing dot).
func NewPolicy(hosts []string) *Policy {
	p := &Policy{}
	for _, h := range hosts {
		if h = normalizeHost(h); h != "" {
			p.exempt = append(p.exempt, h)
		}
	}
	return p
}

// Exempt reports whether host (which may carry a port and IPv6 brackets)
// is one the operator listed.
func (p *Policy) Exempt(host string) bool {
	return p == nil || slices.Contains(p.exempt, normalizeHost(host))
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

// CheckHost resolves host and returns nil when the policy allows every
// address it has: the host is exempt, or all its addresses are public.
// Otherwise the error is a *ForbiddenError naming the address, or wraps
// ErrUnresolved. A nil resolver is net's default.
func (p *Policy) CheckHost(ctx context.Context, resolver *net.Resolver, host string) error {
	if p.Exempt(host) {
		return nil
	}
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

// normalizeHost strips a port, IPv6 brackets and a trailing dot, and lower-
// cases the rest.
func normalizeHost(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimPrefix(strings.TrimSuffix(host, "]"), "[")
	return strings.ToLower(strings.TrimSuffix(host, "."))
}
