package main

import (
	"net/http"
	"strings"
	"testing"
)

// untrustedProxySentence is how the console tells the operator that the
// replica serving it sees requests forwarded by a proxy it does not trust.
const untrustedProxySentence = "Requests reach erpgate through a proxy at 127.0.0.1 that is not in ERPGATE_TRUSTED_PROXIES"

// TestUntrustedProxyIsReported: behind a proxy not listed in
// ERPGATE_TRUSTED_PROXIES every visitor is the proxy's address, so the
// whole deployment shares one source's sign-in and registration limits
// and one network's 5 waiting registrations. Requests that come from an
// address that is not a trusted proxy but carry X-Forwarded-For are the
// sign of it: the replica logs a warning (once, naming the peer and the
// header, never the header's addresses) and the console's sites page
// says it in a sentence. The header is still not believed. Behind a
// trusted proxy, or without the header, nothing is said.
func TestUntrustedProxyIsReported(t *testing.T) {
	gw := startGateway(t, "", nil)
	var b *consoleBrowser
	for i := range 2 {
		b = newConsoleBrowser(t, gw.URL)
		b.c.Transport = forwardedFor("203.0.113.7")
		if status, page, _ := b.signIn(gw.AdminToken); status != http.StatusSeeOther {
			t.Fatalf("sign-in %d: HTTP %d\n%s", i, status, page)
		}
	}
	status, page, _ := b.do(http.MethodGet, "/console/sites", nil)
	if status != http.StatusOK {
		t.Fatalf("sites page: HTTP %d", status)
	}
	if !strings.Contains(page, untrustedProxySentence) {
		t.Errorf("the sites page does not say that requests come through an untrusted proxy:\n%s", page)
	}
	logs := gw.Logs.String()
	var warnings []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "untrusted proxy") {
			warnings = append(warnings, line)
		}
	}
	if len(warnings) != 1 {
		t.Fatalf("%d warnings of an untrusted proxy after two forwarded sign-ins, want 1:\n%s", len(warnings), logs)
	}
	for _, want := range []string{`"level":"warn"`, `"peer":"127.0.0.1"`, `"header":"X-Forwarded-For"`} {
		if !strings.Contains(warnings[0], want) {
			t.Errorf("the warning lacks %s: %s", want, warnings[0])
		}
	}
	if strings.Contains(logs, "203.0.113.7") {
		t.Errorf("the logs carry the forwarded address, which was not believed:\n%s", logs)
	}

	// The header is not believed: the sign-in limit is the peer's.
	// Behind a trusted proxy, and without the header, nothing is said.
	trusted := startGateway(t, gw.DBURL, map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1",
		"ERPGATE_ADMIN_TOKEN": gw.AdminToken, "ERPGATE_ENCRYPTION_KEYS": gw.Keys})
	bt := newConsoleBrowser(t, trusted.URL)
	bt.c.Transport = forwardedFor("203.0.113.7")
	if status, _, _ := bt.signIn(gw.AdminToken); status != http.StatusSeeOther {
		t.Fatalf("sign-in behind a trusted proxy: HTTP %d", status)
	}
	plain := startGateway(t, gw.DBURL, map[string]string{"ERPGATE_ADMIN_TOKEN": gw.AdminToken, "ERPGATE_ENCRYPTION_KEYS": gw.Keys})
	bp := newConsoleBrowser(t, plain.URL)
	if status, _, _ := bp.signIn(gw.AdminToken); status != http.StatusSeeOther {
		t.Fatalf("sign-in without a proxy: HTTP %d", status)
	}
	for name, g := range map[string]struct {
		gw *gateway
		b  *consoleBrowser
	}{"behind a trusted proxy": {trusted, bt}, "without a proxy": {plain, bp}} {
		if _, page, _ := g.b.do(http.MethodGet, "/console/sites", nil); strings.Contains(page, "ERPGATE_TRUSTED_PROXIES") {
			t.Errorf("%s, the sites page speaks of an untrusted proxy:\n%s", name, page)
		}
		if strings.Contains(g.gw.Logs.String(), "untrusted proxy") {
			t.Errorf("%s, the replica warns of an untrusted proxy:\n%s", name, g.gw.Logs.String())
		}
	}
}

// unreadHeaderSentence is how the console tells the operator that a proxy
// ERPGATE_TRUSTED_PROXIES lists names each visitor in a header erpgate
// does not read; the header follows.
const unreadHeaderSentence = "The proxy at 127.0.0.1 names each visitor in the "

// TestTrustedProxyWithoutXForwardedForIsReported: erpgate reads only
// X-Forwarded-For, so behind a listed proxy that names the client only in
// Forwarded (RFC 7239) or only in X-Real-IP (nginx's common default) every
// visitor is the proxy's address, sharing one source's sign-in and
// registration limits, as behind a proxy not listed. The replica logs a
// warning (once, naming the proxy and the header, never the header's
// addresses, saying only X-Forwarded-For is read and that the proxy should
// send it) and the console's sites page says it in a sentence. The headers
// are still not believed. A listed proxy that sends X-Forwarded-For, with
// the others, and a client without any of the headers, are not reported.
func TestTrustedProxyWithoutXForwardedForIsReported(t *testing.T) {
	first := startGateway(t, "", map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"})
	env := map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1", "ERPGATE_ADMIN_TOKEN": first.AdminToken, "ERPGATE_ENCRYPTION_KEYS": first.Keys}
	for _, tc := range []struct {
		gw     *gateway
		header string
		value  string
	}{
		{first, "Forwarded", "for=198.51.100.7"},
		{startGateway(t, first.DBURL, env), "X-Real-IP", "198.51.100.7"},
	} {
		var b *consoleBrowser
		for i := range 2 {
			b = newConsoleBrowser(t, tc.gw.URL)
			b.c.Transport = proxyHeaders{tc.header: tc.value}
			if status, page, _ := b.signIn(first.AdminToken); status != http.StatusSeeOther {
				t.Fatalf("%s: sign-in %d: HTTP %d\n%s", tc.header, i, status, page)
			}
		}
		_, page, _ := b.do(http.MethodGet, "/console/sites", nil)
		want := unreadHeaderSentence + tc.header + " header, but erpgate reads only X-Forwarded-For, so every visitor counts as the proxy"
		// A listed address that is no proxy is a client that wrote the
		// header itself, and could as well write X-Forwarded-For and
		// choose its own address: the page says to unlist it then.
		if !strings.Contains(page, want) || !strings.Contains(page, "Make the proxy send X-Forwarded-For.") ||
			!strings.Contains(page, "If 127.0.0.1 is not your proxy, remove it from ERPGATE_TRUSTED_PROXIES") {
			t.Errorf("%s: the sites page does not say that the proxy's header is not read:\n%s", tc.header, page)
		}
		if strings.Contains(page, "not in ERPGATE_TRUSTED_PROXIES") {
			t.Errorf("%s: the sites page calls the listed proxy untrusted:\n%s", tc.header, page)
		}
		logs := tc.gw.Logs.String()
		var warnings []string
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, "X-Forwarded-For") && strings.Contains(line, `"level":"warn"`) {
				warnings = append(warnings, line)
			}
		}
		if len(warnings) != 1 {
			t.Fatalf("%s: %d warnings of a header not read after two sign-ins, want 1:\n%s", tc.header, len(warnings), logs)
		}
		for _, want := range []string{`"peer":"127.0.0.1"`, `"header":"` + tc.header + `"`, "reads only X-Forwarded-For", "make the proxy send X-Forwarded-For"} {
			if !strings.Contains(warnings[0], want) {
				t.Errorf("%s: the warning lacks %s: %s", tc.header, want, warnings[0])
			}
		}
		if strings.Contains(logs, "198.51.100.7") {
			t.Errorf("%s: the logs carry the forwarded address, which was not believed:\n%s", tc.header, logs)
		}
	}

	// A listed proxy that sends X-Forwarded-For too, and a client that
	// sends none of the headers: nothing is said.
	quiet := startGateway(t, first.DBURL, env)
	for _, headers := range []proxyHeaders{
		{},
		{"X-Forwarded-For": "198.51.100.7", "Forwarded": "for=198.51.100.7", "X-Real-IP": "198.51.100.7"},
	} {
		b := newConsoleBrowser(t, quiet.URL)
		b.c.Transport = headers
		if status, _, _ := b.signIn(first.AdminToken); status != http.StatusSeeOther {
			t.Fatalf("sign-in with %v: HTTP %d", headers, status)
		}
		if _, page, _ := b.do(http.MethodGet, "/console/sites", nil); strings.Contains(page, unreadHeaderSentence) || strings.Contains(page, "ERPGATE_TRUSTED_PROXIES") {
			t.Errorf("with %v, the sites page speaks of a proxy:\n%s", headers, page)
		}
	}
	if logs := quiet.Logs.String(); strings.Contains(logs, "X-Forwarded-For") || strings.Contains(logs, "untrusted proxy") {
		t.Errorf("a listed proxy sending X-Forwarded-For, or a client without the headers, was warned of:\n%s", logs)
	}
}

// proxyHeaders sends each request through the default transport with
// these headers set, as a proxy in front would.
type proxyHeaders map[string]string

func (h proxyHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for name, value := range h {
		r.Header.Set(name, value)
	}
	return http.DefaultTransport.RoundTrip(r)
}
