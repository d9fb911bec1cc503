package authserver

import (
	"context"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
)

// maxRedirectURILength bounds one redirect URI.
const maxRedirectURILength = 1024

// knownAppRedirectURIs are the callbacks of widely used MCP clients whose
// private-use scheme is a single word, accepted exactly as written and in
// no other form. Cursor registers its callback together with its others in
// one registration, so refusing it would refuse Cursor altogether. A code
// sent there is no more exposed than one sent to a loopback port: every
// client must prove PKCE S256 to redeem it.
var knownAppRedirectURIs = map[string]bool{
	"cursor://anysphere.cursor-mcp/oauth/callback": true,
}

// checkRedirectURI is erpgate's one redirect-URI policy: registration, a
// Client ID Metadata Document and every authorization request go through
// it (issue 14, item 5). It accepts
//   - https URLs whose host is a domain name or an IP literal;
//   - http URLs whose host is a loopback IP literal (127.0.0.0/8, ::1) or
//     exactly localhost, with any port (native apps, RFC 8252 §7.3);
//   - private-use schemes in reverse-domain form such as
//     com.example.app:/cb (RFC 8252 §7.1);
//   - the exact callbacks of knownAppRedirectURIs.
//
// Anything else is refused: a host that merely starts with 127. or ends
// in .localhost can be anyone's, schemes such as ws:, view-source:, jar:
// or javascript: are not redirects to an app, and userinfo
// (https://claude.ai@evil.example/) would make the consent page name the
// wrong host. The errors are plain sentences for the client's developer.
func checkRedirectURI(raw string) error {
	switch {
	case raw == "":
		return invalidRedirect("a redirect URI is empty")
	case len(raw) > maxRedirectURILength:
		return invalidRedirect("a redirect URI is longer than %d bytes", maxRedirectURILength)
	case strings.Contains(raw, "#"):
		return invalidRedirect("the redirect URI %s must not have a fragment (#)", quoteURI(raw))
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] <= ' ' || raw[i] >= 0x7f {
			return invalidRedirect("the redirect URI %s contains a space, a control character or a non-ASCII character; percent-encode it", quoteURI(raw))
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return invalidRedirect("the redirect URI %s is not an absolute URI", quoteURI(raw))
	}
	if u.User != nil {
		return invalidRedirect("the redirect URI %s must not contain a user name or password before its host", quoteURI(raw))
	}
	// The raw URI is ASCII, but its host may be percent-encoded UTF-8,
	// which browsers decode as they follow the redirect and the consent
	// page shows decoded: cl%D0%B0ude.ai would read "clаude.ai" (a
	// Cyrillic а) and lead to the owner of its xn-- name.
	for i := 0; i < len(u.Host); i++ {
		if u.Host[i] >= 0x80 {
			return invalidRedirect("the redirect URI %s has a percent-encoded host; write an international domain name in its xn-- form", quoteURI(raw))
		}
	}
	if knownAppRedirectURIs[raw] {
		return nil
	}
	switch u.Scheme {
	case "https":
		if u.Opaque != "" || u.Hostname() == "" {
			return invalidRedirect("the redirect URI %s has no host", quoteURI(raw))
		}
		if !isNameOrAddress(u.Hostname()) {
			return invalidRedirect("the redirect URI %s has a host that is not a domain name or an IP address", quoteURI(raw))
		}
	case "http":
		if u.Opaque != "" || !isLoopbackHost(u.Hostname()) {
			return invalidRedirect("the redirect URI %s must use https; plain http is allowed only for 127.0.0.1, [::1] or localhost", quoteURI(raw))
		}
	default:
		if !isReverseDomainScheme(u.Scheme) {
			return invalidRedirect("the redirect URI %s must use https, http on loopback, or an app's own scheme in reverse-domain form such as com.example.app:/callback", quoteURI(raw))
		}
	}
	return nil
}

// redirectURISecure is fosite's RedirectSecureChecker: the same policy,
// when fosite answers an authorization request.
func redirectURISecure(_ context.Context, u *url.URL) bool {
	return checkRedirectURI(u.String()) == nil
}

// isNameOrAddress reports whether host (without brackets) is a domain
// name (labels of letters, digits, '-' and '_') or an IP literal without
// a zone. Go's URL parser also takes hosts such as *, a;b or a,b, which
// no browser can be sent to and which would reach the consent page's
// Content-Security-Policy as a wildcard or as more directives.
func isNameOrAddress(host string) bool {
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.Zone() == ""
	}
	for _, l := range strings.Split(host, ".") {
		if l == "" {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') && c != '-' && c != '_' {
				return false
			}
		}
	}
	return true
}

// isLoopbackHost reports whether host (without brackets) is a loopback IP
// literal or exactly localhost. Names are not resolved: 127.0.0.1.nip.io
// resolves to loopback for whoever asks, but its owner can change that.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || addr.Zone() != "" {
		return false
	}
	return (addr.Is4() && addr.IsLoopback()) || addr == netip.IPv6Loopback()
}

// isReverseDomainScheme reports whether a (lower-case) scheme is a domain
// name written backwards, at least two labels of letters, digits and
// inner hyphens (RFC 8252 §7.1). Every scheme a browser runs itself
// (javascript, data, view-source, jar, ws, …) has a single label.
func isReverseDomainScheme(scheme string) bool {
	labels := strings.Split(scheme, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-' {
				return false
			}
		}
	}
	return scheme[0] >= 'a' && scheme[0] <= 'z'
}

// isRegisteredRedirectURI reports whether a requested redirect URI is one
// of registered: the same string, or the same string but for the port of
// an http loopback IP literal (RFC 8252 §7.3). fosite's own loopback match
// ignores the scheme and compares decoded paths, so it would also take
// http://127.0.0.1:9/cb for https://127.0.0.1/cb, or /a%2Fb for /a/b; this
// is the exact match erpgate promises, checked as well.
func isRegisteredRedirectURI(requested string, registered []string) bool {
	portless, loopback := withoutLoopbackPort(requested)
	for _, r := range registered {
		if r == requested {
			return true
		}
		if p, ok := withoutLoopbackPort(r); loopback && ok && p == portless {
			return true
		}
	}
	return false
}

// withoutLoopbackPort returns raw without its port when raw is an http URL
// whose host is a loopback IP literal (not localhost, whose port RFC 8252
// does not let vary), written exactly as such; everything after the host
// stays as written.
func withoutLoopbackPort(raw string) (string, bool) {
	const prefix = "http://"
	if !strings.HasPrefix(raw, prefix) {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || !strings.HasPrefix(raw, prefix+u.Host) {
		return "", false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") || !isLoopbackHost(host) {
		return "", false
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return prefix + host + raw[len(prefix+u.Host):], true
}

// hostOf is what the consent page shows as the place that receives the
// answer: the host (and port) of an http(s) redirect URI, never its
// userinfo, or the app's scheme for a private-use scheme.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		return u.Host
	}
	return u.Scheme
}

// consentHost is what a consent covers: the host the consent page names
// (hostOf), without the port of an http loopback host, which a client may
// choose anew for every sign-in on the same machine.
func consentHost(raw string) string {
	u, err := url.Parse(raw)
	if err == nil && u.Scheme == "http" && isLoopbackHost(u.Hostname()) {
		host := strings.ToLower(u.Hostname())
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		return host
	}
	return hostOf(raw)
}

// quoteURI quotes a redirect URI for an error message, shortened to 80
// bytes at a character boundary. The URI is the client's text: control
// and non-ASCII characters are escaped (\n, \x1b, \u00e9), so that the
// message stays one printable line.
func quoteURI(raw string) string {
	if len(raw) <= 80 {
		return strconv.QuoteToASCII(raw)
	}
	q := strconv.QuoteToASCII(connector.CutText(raw, 80))
	return q[:len(q)-1] + "…\""
}
