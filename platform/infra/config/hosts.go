package config

import (
	"net"
	"slices"
	"strings"
)

// IsDevHost reports whether host may use plain http: a loopback host
// (localhost, *.localhost, 127.0.0.0/8, ::1) or one listed in DevHosts.
// host may carry a port and IPv6 brackets; comparison ignores case and a
// trailing dot.
func (c *Config) IsDevHost(host string) bool {
	h := normalizeHost(host)
	if h == "" {
		return false
	}
	return isLoopbackHost(h) || slices.Contains(c.DevHosts, h)
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

// isLoopbackHost reports whether a normalized host always resolves to this
// machine. *.localhost counts (RFC 6761 §6.3), since Frappe benches name
// development sites that way.
func isLoopbackHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Production reports whether erpgate is served over https. Only then does
// it refuse ERPs at non-public addresses: served over plain http it is a
// development instance (loopback or DevHosts only), whose ERPs are
// simulators or benches on this machine.
func (c *Config) Production() bool {
	return strings.HasPrefix(c.PublicBaseURL, "https://")
}
