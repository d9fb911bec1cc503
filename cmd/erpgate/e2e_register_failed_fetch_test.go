package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestFailedRegistrationStartsCountAgainstTheNetworksBound: a start whose
// address does not answer as an ERP stored nothing and was not counted,
// so one source (and every address of its network) could make erpgate
// fetch from any host it named, again and again, as long as each fetch
// failed. Every start that makes erpgate contact an address now holds one
// of its network's places (ERPGATE_REGISTRATION_MAX_PENDING_PER_NETWORK,
// 5) as a registration does, answered or not: past them the start is
// refused in a plain sentence before anything is fetched, and another
// network's start still reaches the address.
func TestFailedRegistrationStartsCountAgainstTheNetworksBound(t *testing.T) {
	const perNetwork, attempts = 5, 12 // within the source's 20 posts at once
	var fetched atomic.Int64
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		http.Error(w, "<html>no such thing</html>", http.StatusNotFound)
	}))
	t.Cleanup(garbage.Close)
	gw := startGateway(t, "", map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"})

	start := func(n int, source string) (int, http.Header, string) {
		b := newRegistrationClient(t, gw.URL)
		form := url.Values{"csrf": {b.csrf("/register")}, "kind": {"frappe"}, "display_name": {"Probe " + strconv.Itoa(n)},
			"base_url": {garbage.URL}}
		return b.do(http.MethodPost, "/register", form, map[string]string{"X-Forwarded-For": source})
	}
	refused := 0
	for n := 1; n <= attempts; n++ {
		status, h, page := start(n, "203.0.113.9")
		// The page's words: pageText keeps only its first 400 bytes.
		text := strings.Join(strings.Fields(page), " ")
		if status == http.StatusTooManyRequests {
			refused++
			secs, err := strconv.Atoi(h.Get("Retry-After"))
			if err != nil || secs < 1 || secs > 30*60 || !strings.Contains(text, "Too many registrations were started from your network") ||
				!strings.Contains(text, "Nothing was saved") {
				t.Fatalf("start %d refused: Retry-After %q: %s", n, h.Get("Retry-After"), text)
			}
			continue
		}
		if status != http.StatusBadGateway || !strings.Contains(text, "does not answer as") {
			t.Fatalf("start %d: %d %s", n, status, pageText(page))
		}
	}
	if got := fetched.Load(); got > perNetwork {
		t.Errorf("%d failing starts from one source made erpgate fetch %d times; the network's bound is %d", attempts, got, perNetwork)
	}
	if refused != attempts-perNetwork {
		t.Errorf("%d of %d starts refused, want %d", refused, attempts, attempts-perNetwork)
	}

	// Another address of the same network is refused too; another
	// network's start still reaches the address.
	before := fetched.Load()
	if status, _, page := start(100, "203.0.113.77"); status != http.StatusTooManyRequests {
		t.Errorf("a start from another address of the network: %d %s", status, pageText(page))
	}
	if status, _, page := start(101, "198.51.100.7"); status != http.StatusBadGateway {
		t.Errorf("a start from another network: %d %s", status, pageText(page))
	}
	if got := fetched.Load() - before; got != 1 {
		t.Errorf("the two starts made erpgate fetch %d times, want 1 (the other network's)", got)
	}
	// What counts is nobody's registration: no browser can open it.
	if n := countRows(t, gw.DBURL, `SELECT count(*) FROM pending_registrations WHERE browser_hash <> ''::bytea`); n != 0 {
		t.Errorf("%d failed starts are registrations a browser can open", n)
	}
}

// TestAFailedRegistrationStartHoldsItsPlaceBriefly: a start whose address
// did not answer as an ERP held its network's place for the registration's
// whole time (ERPGATE_REGISTRATION_PENDING_TTL, 30 minutes), so an
// administrator who mistyped the address five times was locked out for
// half an hour. Its place now holds only a short while (5 minutes, by
// Postgres's clock); a start whose ERP answered keeps the whole time.
func TestAFailedRegistrationStartHoldsItsPlaceBriefly(t *testing.T) {
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>no such thing</html>", http.StatusNotFound)
	}))
	t.Cleanup(garbage.Close)
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	gw := startGateway(t, "", nil)

	b := newRegistrationClient(t, gw.URL)
	form := url.Values{"csrf": {b.csrf("/register")}, "kind": {"frappe"}, "display_name": {"Mistyped"}, "base_url": {garbage.URL}}
	if status, _, page := b.do(http.MethodPost, "/register", form, nil); status != http.StatusBadGateway {
		t.Fatalf("the start at an address that is no ERP: %d %s", status, pageText(page))
	}
	if n := countRows(t, gw.DBURL, `SELECT count(*) FROM pending_registrations
		WHERE browser_hash = ''::bytea AND expires_at > now() AND expires_at <= now() + interval '5 minutes'`); n != 1 {
		t.Errorf("%d failed starts hold their place for at most 5 minutes, want 1 (%d rows in all)", n,
			countRows(t, gw.DBURL, `SELECT count(*) FROM pending_registrations`))
	}

	newRegistrationClient(t, gw.URL).startRegistration(sim.URL)
	if n := countRows(t, gw.DBURL, `SELECT count(*) FROM pending_registrations
		WHERE browser_hash <> ''::bytea AND expires_at > now() + interval '29 minutes'`); n != 1 {
		t.Errorf("%d started registrations keep the whole 30 minutes, want 1", n)
	}
}
