package main

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
)

// TestForwardedAddressWithAPortIsTheClients: some proxies write the
// client's address into X-Forwarded-For with its port (Azure Application
// Gateway's "203.0.113.7:51234", IIS ARR's by default, "[v6]:port").
// Behind such a trusted proxy the client is that address: were the entry
// unreadable, every request would be told as the proxy's own, so every
// person would share one source and one network, whose bound of
// registrations waiting to be finished (5) would then hold for the whole
// deployment. The port changes nothing of what is trusted: an entry
// written by the client itself, left of the proxy's, is never believed,
// and a client that is not a trusted proxy is its connection's address.
func TestForwardedAddressWithAPortIsTheClients(t *testing.T) {
	extract := clientIPExtractor([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	for _, tc := range []struct {
		name, remote, xff, want, network string
	}{
		{"IPv4 with a port", "10.0.0.5:40000", "203.0.113.7:51234", "203.0.113.7", "203.0.113.0/24"},
		{"IPv6 with a port", "10.0.0.5:40000", "[2001:db8:5::1]:51234", "2001:db8:5::1", "2001:db8:5::/48"},
		{"a chain of trusted proxies writing ports", "10.0.0.5:40000", "203.0.113.7:51234, 10.1.2.3:443", "203.0.113.7", "203.0.113.0/24"},
		{"the client's own entry left of the proxy's", "10.0.0.5:40000", "198.51.100.9:1, 203.0.113.7:51234", "203.0.113.7", "203.0.113.0/24"},
		{"without a port, as before", "10.0.0.5:40000", "203.0.113.7", "203.0.113.7", "203.0.113.0/24"},
		{"a client that is not a trusted proxy", "192.0.2.9:40000", "203.0.113.7:51234", "192.0.2.9", "192.0.2.0/24"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/register", nil)
		r.RemoteAddr = tc.remote
		r.Header.Set("X-Forwarded-For", tc.xff)
		got := extract(r)
		if got != tc.want || sourcelimit.Network(got) != tc.network {
			t.Errorf("%s (X-Forwarded-For %q from %s): the client is %q of network %s, want %q of %s",
				tc.name, tc.xff, tc.remote, got, sourcelimit.Network(got), tc.want, tc.network)
		}
		if r.Header.Get("X-Forwarded-For") != tc.xff {
			t.Errorf("%s: the request's header was changed to %q", tc.name, r.Header.Get("X-Forwarded-For"))
		}
	}
}
