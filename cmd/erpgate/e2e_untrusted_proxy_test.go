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
