package authserver

import (
	"net/url"
	"regexp"
	"testing"
)

// cspOneSource is one CSP source expression (CSP3 §2.3.1) that names one
// origin or one scheme and nothing more: a scheme-source, or a
// host-source with a scheme, a host of DNS labels or a bracketed IPv6
// literal, and an optional port. No wildcard, and none of the ";" and ","
// that end a directive or a policy.
var cspOneSource = regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9+.-]*:|https?://(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]+)?)$`)

// FuzzConsentFormAction: the consent page's form-action gains, for the
// redirect URI of an accepted request, exactly one CSP source, allowing
// that redirect's origin (or its app scheme) and no other: whatever the
// client registered, the header stays one policy whose form-action is
// its last directive.
func FuzzConsentFormAction(f *testing.F) {
	for _, c := range redirectURICases {
		f.Add(c.uri)
	}
	f.Add("https://app.example:8443/cb")
	f.Add("https://[2001:db8::1]/cb")
	f.Fuzz(func(t *testing.T, raw string) {
		if checkRedirectURI(raw) != nil {
			return
		}
		src := cspSource(raw)
		if src == "" {
			return
		}
		if !cspOneSource.MatchString(src) {
			t.Fatalf("cspSource(%q) = %q, not one CSP source for one origin", raw, src)
		}
		u, _ := url.Parse(raw)
		if want := u.Scheme + ":"; src != want && src != u.Scheme+"://"+u.Host {
			t.Fatalf("cspSource(%q) = %q, not the redirect's origin or scheme", raw, src)
		}
	})
}
