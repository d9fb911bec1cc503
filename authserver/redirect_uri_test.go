package authserver

import (
	"net"
	"net/url"
	"strings"
	"testing"
)

// redirectURICases are every redirect URI named in issue 14 (item 5), the
// look-alikes around them, and the forms MCP clients really use.
var redirectURICases = []struct {
	uri     string
	allowed bool
}{
	// https anywhere; http only on loopback, any port (RFC 8252 §7.3).
	{"https://claude.ai/api/mcp/auth_callback", true},
	{"https://app.example:8443/cb?x=1", true},
	{"http://127.0.0.1/callback", true},
	{"http://127.0.0.1:54321/callback", true},
	{"http://127.8.9.10:1/cb", true},
	{"http://[::1]:8080/cb", true},
	{"http://localhost:3000/cb", true},
	{"http://LOCALHOST/cb", true},
	// Private-use schemes in reverse-domain form (RFC 8252 §7.1).
	{"com.example.app:/oauth2redirect", true},
	{"com.example.app://callback", true},
	{"io.modelcontextprotocol.inspector:/cb", true},
	// Cursor's callback, exactly; its scheme in any other form is not.
	{"cursor://anysphere.cursor-mcp/oauth/callback", true},
	{"cursor://anysphere.cursor-mcp/oauth/callback?x=1", false},
	{"cursor://anysphere.cursor-mcp/oauth/callback/", false},
	{"cursor://evil.example/oauth/callback", false},
	{"CURSOR://anysphere.cursor-mcp/oauth/callback", false},

	// Fake loopback hosts.
	{"http://127.evil.example/cb", false},
	{"http://127.0.0.1.nip.io/cb", false},
	{"http://localhost.evil.example/cb", false},
	{"http://app.localhost/cb", false},
	{"http://127.1/cb", false},
	{"http://0x7f.0.0.1/cb", false},
	{"http://2130706433/cb", false},
	{"http://[::ffff:127.0.0.1]/cb", false},
	{"http://[fe80::1%25eth0]/cb", false},
	{"http://10.0.0.1/cb", false},
	{"http://example.com/cb", false},
	{"http:/cb", false},
	// Schemes a browser runs, or that are not redirects at all.
	{"ws://127.0.0.1/cb", false},
	{"wss://app.example/cb", false},
	{"view-source:https://evil.example/", false},
	{"jar:https://evil.example/a.jar!/", false},
	{"filesystem:https://evil.example/temporary/", false},
	{"javascript:alert(1)", false},
	{"data:text/html,hi", false},
	{"file:///etc/passwd", false},
	{"blob:https://app.example/uuid", false},
	{"myapp://callback", false},
	{"com..example:/cb", false},
	{"com.-example.app:/cb", false},
	{"com.example+x.app:/cb", false},
	// Userinfo would mislead the consent page.
	{"https://claude.ai@evil.example/cb", false},
	{"https://user:pass@app.example/cb", false},
	{"http://user@127.0.0.1/cb", false},
	{"com.example.app://user@host/cb", false},
	// A host must be ASCII as written (an IDN in its xn-- form): a
	// percent-encoded one is decoded by browsers and would show on the
	// consent page as a look-alike (Cyrillic "а" in clаude.ai).
	{"https://cl%D0%B0ude.ai/cb", false},
	{"https://xn--clude-6ve.ai/cb", true},
	{"https://app.example/caf%C3%A9", true},
	// A host must be a domain name or an IP literal: Go's parser also
	// takes *, ; and , there, which the consent page's CSP would read as
	// a wildcard or more directives.
	{"https://*/cb", false},
	{"https://app.example;sandbox/cb", false},
	{"https://a,b/cb", false},
	{"https://app..example/cb", false},
	{"https://[fe80::1%25eth0]/cb", false},
	{"https://[2001:db8::1]:8443/cb", true},
	{"https://203.0.113.7/cb", true},
	{"https://my_app.example/cb", true},
	// Malformed.
	{"https://app.example/cb#fragment", false},
	{"https://app.example/cb#", false},
	{"/relative/cb", false},
	{"https:///cb", false},
	{"https:app.example/cb", false},
	{"https://app.example/c b", false},
	{"https://app.example/\u00e9", false},
	{"", false},
	{"https://app.example/" + strings.Repeat("x", 1100), false},
}

func TestRedirectURIPolicy(t *testing.T) {
	for _, c := range redirectURICases {
		err := checkRedirectURI(c.uri)
		if (err == nil) != c.allowed {
			t.Errorf("checkRedirectURI(%.80q) = %v, want allowed=%v", c.uri, err, c.allowed)
		}
	}
}

// The consent page names the host that will receive the code, never a
// user name that makes another host look like it.
func TestRedirectDisplayHost(t *testing.T) {
	for raw, want := range map[string]string{
		"https://claude.ai/api/mcp/auth_callback": "claude.ai",
		"https://claude.ai@evil.example/cb":       "evil.example",
		"http://127.0.0.1:54321/callback":         "127.0.0.1:54321",
		"http://[::1]:8080/cb":                    "[::1]:8080",
		"com.example.app:/oauth2redirect":         "com.example.app",
	} {
		if got := hostOf(raw); got != want {
			t.Errorf("hostOf(%q) = %q, want %q", raw, got, want)
		}
	}
}

// FuzzRedirectURIPolicy checks the policy's promises on any input: an
// accepted URI parses, has no userinfo and no fragment, uses https, http
// on a loopback address or localhost, or a reverse-domain private-use
// scheme, and the consent page shows it without an '@'.
func FuzzRedirectURIPolicy(f *testing.F) {
	for _, c := range redirectURICases {
		f.Add(c.uri)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if checkRedirectURI(raw) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || u.User != nil || strings.Contains(raw, "#") || len(raw) > maxRedirectURILength {
			t.Fatalf("accepted %q: parse error %v, userinfo %v", raw, err, u.User)
		}
		switch u.Scheme {
		case "https":
			if u.Hostname() == "" {
				t.Fatalf("accepted https without a host: %q", raw)
			}
		case "http":
			h := u.Hostname()
			ip := net.ParseIP(h)
			loopback := h == "::1" || strings.EqualFold(h, "localhost") || (ip != nil && ip.To4() != nil && ip.To4()[0] == 127 && !strings.Contains(h, ":"))
			if !loopback {
				t.Fatalf("accepted plain http to %q: %q", h, raw)
			}
		default:
			if !strings.Contains(u.Scheme, ".") && !knownAppRedirectURIs[raw] {
				t.Fatalf("accepted scheme %q that is not in reverse-domain form: %q", u.Scheme, raw)
			}
		}
		if h := hostOf(raw); strings.Contains(h, "@") || strings.IndexFunc(h, func(r rune) bool { return r >= 0x80 }) >= 0 {
			t.Fatalf("display host of %q is %q", raw, h)
		}
	})
}
