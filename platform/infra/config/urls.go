package config

import (
	"net/url"
	"slices"
	"strings"
)

// PublicURL joins the public base URL and path with exactly one slash:
// PublicURL("/.well-known/oauth-authorization-server") and
// PublicURL(".well-known/oauth-authorization-server") are equal. An empty
// path returns the base URL itself.
func (c *Config) PublicURL(path string) string {
	base := strings.TrimRight(c.PublicBaseURL, "/")
	if path == "" {
		return base
	}
	return base + "/" + strings.TrimLeft(path, "/")
}

// PublicOrigin returns the origin of the public base URL as a browser
// sends it (Origin), in lower case, or "" if the base URL is not set.
func (c *Config) PublicOrigin() string {
	u, err := url.Parse(c.PublicBaseURL)
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(Origin(u))
}

// Origin is u's origin as a browser sends it in an Origin header:
// scheme://host[:port], without the scheme's default port (a base URL
// written https://host:443 is the origin https://host). web/pagekit,
// which imports nothing of erpgate's, keeps its own copy (originOf).
func Origin(u *url.URL) string {
	host := u.Host
	if p := u.Port(); (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80") {
		host = strings.TrimSuffix(host, ":"+p)
	}
	return u.Scheme + "://" + host
}

// AcceptsOrigin reports whether a browser Origin header value may call the
// MCP endpoints: the public base URL's origin or one of MCP.AllowedOrigins,
// compared case-insensitively. An empty origin is not accepted; whether
// requests without an Origin header are allowed is the caller's decision.
func (c *Config) AcceptsOrigin(origin string) bool {
	origin = strings.ToLower(strings.TrimRight(origin, "/"))
	if origin == "" {
		return false
	}
	if origin == c.PublicOrigin() {
		return true
	}
	return slices.Contains(c.MCP.AllowedOrigins, origin)
}
