package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// boundedRegistrations is a deployment of two replicas on one database,
// behind a trusted proxy (so that each test source is its own), which
// keeps at most bound registrations waiting to be finished, and a Frappe
// simulator behind a counter of the requests erpgate sends it.
type boundedRegistrations struct {
	replicas []*gateway
	erp      string
	// erpRequests counts what reached the ERP: the start's kind probe.
	erpRequests atomic.Int64
}

// newBoundedRegistrations starts the deployment. The ERP holds its first
// hold requests until all of them have come (0: none), so that that many
// starts have passed every check before the ERP answered any.
func newBoundedRegistrations(t *testing.T, bound, hold int) *boundedRegistrations {
	t.Helper()
	env := map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1", "ERPGATE_REGISTRATION_MAX_PENDING": strconv.Itoa(bound)}
	a := startGateway(t, "", env)
	env["ERPGATE_ADMIN_TOKEN"], env["ERPGATE_ENCRYPTION_KEYS"] = a.AdminToken, a.Keys
	b := startGateway(t, a.DBURL, env)
	d := &boundedRegistrations{replicas: []*gateway{a, b}}
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	target, err := url.Parse(sim.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	allCame := make(chan struct{})
	counted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := d.erpRequests.Add(1); n == int64(hold) {
			close(allCame)
		} else if n < int64(hold) {
			select {
			case <-allCame:
			case <-r.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(counted.Close)
	d.erp = counted.URL
	return d
}

// start begins a registration of the simulator from source n (its own
// address, 203.0.113.n or 198.51.100.n-256), on replica n mod 2, in a
// browser of its own.
func (d *boundedRegistrations) start(t *testing.T, n int) (int, http.Header, string) {
	t.Helper()
	source := "203.0.113." + strconv.Itoa(n)
	if n > 255 {
		source = "198.51.100." + strconv.Itoa(n-255)
	}
	return d.startFrom(t, n, source)
}

// startFrom is start from the given source address.
func (d *boundedRegistrations) startFrom(t *testing.T, n int, source string) (int, http.Header, string) {
	t.Helper()
	gw := d.replicas[n%len(d.replicas)]
	b := newRegistrationClient(t, gw.URL)
	form := url.Values{"csrf": {b.csrf("/register")}, "kind": {"frappe"}, "display_name": {"Target " + strconv.Itoa(n)}, "base_url": {d.erp}}
	return b.do(http.MethodPost, "/register", form, map[string]string{"X-Forwarded-For": source})
}

func (d *boundedRegistrations) waiting(t *testing.T) int {
	t.Helper()
	return countRows(t, d.replicas[0].DBURL, `SELECT count(*) FROM pending_registrations WHERE stage = 'client' AND expires_at > now()`)
}

// refusedAsFull checks that a start was refused because the deployment's
// registrations waiting to be finished are at their bound: 503, a
// Retry-After within at most, and a plain sentence.
func refusedAsFull(t *testing.T, what string, status int, h http.Header, page string, atMost int) {
	t.Helper()
	secs, err := strconv.Atoi(h.Get("Retry-After"))
	text := pageText(page)
	if status != http.StatusServiceUnavailable || err != nil || secs < 1 || secs > atMost ||
		!strings.Contains(text, "Too many registrations are waiting to be finished") || !strings.Contains(text, "Nothing was saved") {
		t.Fatalf("%s: %d, Retry-After %q (want 1 to %d s): %s", what, status, h.Get("Retry-After"), atMost, text)
	}
}

// TestRegistrationsWaitingAreBoundedDeploymentWide: sources that each stay
// well within their own limit, spread over two replicas, cannot together
// keep more registrations waiting to be finished than the deployment's
// bound; past it the start is refused before erpgate contacts the ERP, and
// a finished or expired registration makes room again.
func TestRegistrationsWaitingAreBoundedDeploymentWide(t *testing.T) {
	const bound = 4
	d := newBoundedRegistrations(t, bound, 0)
	for n := 1; n <= bound; n++ {
		if status, h, page := d.start(t, n); status != http.StatusSeeOther {
			t.Fatalf("start %d (within the bound): %d %q %s", n, status, h.Get("Location"), pageText(page))
		}
	}
	contacted := d.erpRequests.Load()
	for n := bound + 1; n <= bound+6; n++ {
		status, h, page := d.start(t, n)
		refusedAsFull(t, "start "+strconv.Itoa(n)+" (past the bound)", status, h, page, 30*60)
	}
	if got := d.waiting(t); got != bound {
		t.Errorf("%d registrations are waiting to be finished; the bound is %d", got, bound)
	}
	if got := d.erpRequests.Load(); got != contacted {
		t.Errorf("refused starts sent the ERP %d requests", got-contacted)
	}
	logs := d.replicas[0].Logs.String() + d.replicas[1].Logs.String()
	if n := strings.Count(logs, "registrations waiting to be finished are at their bound"); n < 1 || n > 2 {
		t.Errorf("the operator was told %d times (want once per replica that refused, at most 2):\n%s", n, logs)
	}

	// Retry-After says when the first waiting registration closes.
	execSQL(t, d.replicas[0].DBURL, `UPDATE pending_registrations SET expires_at = now() + interval '90 seconds'
		WHERE id = (SELECT id FROM pending_registrations ORDER BY created_at LIMIT 1)`)
	status, h, page := d.start(t, 20)
	refusedAsFull(t, "a start with one registration closing within 90 s", status, h, page, 90)

	// A finished registration no longer waits, nor does an expired one.
	execSQL(t, d.replicas[0].DBURL, `UPDATE pending_registrations SET stage = 'registered'
		WHERE id = (SELECT id FROM pending_registrations ORDER BY created_at LIMIT 1)`)
	if status, _, page := d.start(t, 21); status != http.StatusSeeOther {
		t.Fatalf("a start after one registration finished: %d %s", status, pageText(page))
	}
	status, h, page = d.start(t, 22)
	refusedAsFull(t, "a start at the bound again", status, h, page, 30*60)
	execSQL(t, d.replicas[0].DBURL, `UPDATE pending_registrations SET expires_at = now() - interval '1 second'
		WHERE id = (SELECT id FROM pending_registrations WHERE stage = 'client' ORDER BY created_at LIMIT 1)`)
	if status, _, page := d.start(t, 23); status != http.StatusSeeOther {
		t.Fatalf("a start after one registration expired: %d %s", status, pageText(page))
	}
	if got := d.waiting(t); got != bound {
		t.Errorf("%d registrations are waiting to be finished at the end; the bound is %d", got, bound)
	}
}

// TestRegistrationBoundHoldsUnderConcurrentStarts: many sources, each of
// a network of its own, starting at once on two replicas get exactly the
// bound's registrations between them, not one more, and only those
// contact the ERP: a start holds its place, counted under the lock,
// before it does.
func TestRegistrationBoundHoldsUnderConcurrentStarts(t *testing.T) {
	const bound, sources = 5, 40
	// The ERP answers none of the admitted starts until all of them have
	// come: each holds its place while the others are counted.
	d := newBoundedRegistrations(t, bound, bound)
	var from []string
	for n := 1; n <= sources; n++ {
		from = append(from, "198.18."+strconv.Itoa(n)+".1")
	}
	answers := d.startAtOnce(t, from)
	if admitted, refused := answers[http.StatusSeeOther], answers[http.StatusServiceUnavailable]; admitted != bound || refused != sources-bound || len(answers) > 2 {
		t.Errorf("answers %v; want %d starts admitted (303) and %d refused (503)", answers, bound, sources-bound)
	}
	if got := d.waiting(t); got != bound {
		t.Errorf("%d registrations are waiting to be finished; the bound is %d", got, bound)
	}
	if got := d.erpRequests.Load(); got != bound {
		t.Errorf("the ERP was sent %d requests; only the %d admitted starts may contact it", got, bound)
	}
}

// TestRegistrationNetworkBoundHoldsUnderConcurrentStarts: many addresses
// of one /24 starting at once on two replicas get exactly the network's
// five registrations between them, not one more, and only those contact
// the ERP: the network's count is taken under the bound's lock, before
// the ERP is contacted.
func TestRegistrationNetworkBoundHoldsUnderConcurrentStarts(t *testing.T) {
	const perNetwork, sources = 5, 20
	d := newBoundedRegistrations(t, 200, perNetwork)
	var from []string
	for n := 1; n <= sources; n++ {
		from = append(from, "203.0.113."+strconv.Itoa(n))
	}
	answers := d.startAtOnce(t, from)
	if admitted, refused := answers[http.StatusSeeOther], answers[http.StatusTooManyRequests]; admitted != perNetwork || refused != sources-perNetwork || len(answers) > 2 {
		t.Errorf("answers %v; want %d starts admitted (303) and %d refused (429)", answers, perNetwork, sources-perNetwork)
	}
	if got := d.waiting(t); got != perNetwork {
		t.Errorf("%d registrations are waiting to be finished; one network may keep %d", got, perNetwork)
	}
	if got := d.erpRequests.Load(); got != perNetwork {
		t.Errorf("the ERP was sent %d requests; only the network's %d admitted starts may contact it", got, perNetwork)
	}
}

// startAtOnce starts a registration from each source, all at once, on
// both replicas, and counts the answers by status.
func (d *boundedRegistrations) startAtOnce(t *testing.T, sources []string) map[int]int {
	t.Helper()
	var reqs []*http.Request
	var clients []*registrationClient
	for n, source := range sources {
		b := newRegistrationClient(t, d.replicas[n%2].URL)
		form := url.Values{"csrf": {b.csrf("/register")}, "kind": {"frappe"}, "display_name": {"Target " + strconv.Itoa(n)}, "base_url": {d.erp}}
		req, err := http.NewRequest(http.MethodPost, b.base+"/register", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", source)
		reqs, clients = append(reqs, req), append(clients, b)
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		answers = map[int]int{}
		ready   = make(chan struct{})
	)
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ready
			resp, err := clients[i].hc.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			answers[resp.StatusCode]++
		}()
	}
	close(ready)
	wg.Wait()
	return answers
}

// refusedForNetwork checks that a start was refused because its source's
// network has as many registrations waiting to be finished as one network
// may: 429, a Retry-After within at most, and a plain sentence.
func refusedForNetwork(t *testing.T, what string, status int, h http.Header, page string, atMost int) {
	t.Helper()
	secs, err := strconv.Atoi(h.Get("Retry-After"))
	text := pageText(page)
	if status != http.StatusTooManyRequests || err != nil || secs < 1 || secs > atMost ||
		!strings.Contains(text, "Too many registrations started from your network are waiting to be finished") || !strings.Contains(text, "Nothing was saved") {
		t.Fatalf("%s: %d, Retry-After %q (want 1 to %d s): %s", what, status, h.Get("Retry-After"), atMost, text)
	}
}

// TestRegistrationsOfOneNetworkCannotFillTheBound: ten addresses of one
// IPv4 /24, each starting two registrations (far within its own limit),
// spread over two replicas, filled the deployment's bound of
// registrations waiting to be finished, and so kept everyone else's
// registrations out until theirs expired. One network (an IPv4 /24, an
// IPv6 /48) now keeps at most five waiting, counted in Postgres with the
// bound: past that its starts are refused (429, Retry-After until the
// first of its registrations closes, a plain sentence) before the ERP is
// contacted, and other networks still start theirs, of the same ERP
// address too: strangers starting registrations of an ERP's address do
// not keep its administrator out. Only the network is stored, never the
// address.
func TestRegistrationsOfOneNetworkCannotFillTheBound(t *testing.T) {
	const bound, perNetwork = 20, 5
	d := newBoundedRegistrations(t, bound, 0)
	admitted := 0
	var contacted int64
	for n := 1; n <= bound; n++ {
		source := "203.0.113." + strconv.Itoa(n%10+1)
		status, h, page := d.startFrom(t, n, source)
		if admitted < perNetwork {
			if status != http.StatusSeeOther {
				t.Fatalf("start %d from %s (within the network's bound): %d %s", n, source, status, pageText(page))
			}
			admitted++
			contacted = d.erpRequests.Load()
			continue
		}
		refusedForNetwork(t, "start "+strconv.Itoa(n)+" from "+source+" (past the network's bound)", status, h, page, 30*60)
	}
	if got := d.erpRequests.Load(); got != contacted {
		t.Errorf("starts refused for their network sent the ERP %d requests", got-contacted)
	}
	if got := d.waiting(t); got != perNetwork {
		t.Errorf("%d registrations are waiting to be finished; one network may keep %d", got, perNetwork)
	}
	// Another network, starting a registration of the same ERP.
	if status, _, page := d.startFrom(t, 1, "198.51.100.7"); status != http.StatusSeeOther {
		t.Fatalf("a start from another network: %d %s", status, pageText(page))
	}

	// The /64s of one IPv6 /48 are one network.
	for n := 1; n <= perNetwork+3; n++ {
		source := "2001:db8:5:" + strconv.Itoa(n) + "::1"
		status, h, page := d.startFrom(t, n, source)
		if n <= perNetwork {
			if status != http.StatusSeeOther {
				t.Fatalf("start from %s (within the network's bound): %d %s", source, status, pageText(page))
			}
			continue
		}
		refusedForNetwork(t, "start from "+source+" (past the network's bound)", status, h, page, 30*60)
	}
	if status, _, page := d.startFrom(t, 2, "2001:db8:6::1"); status != http.StatusSeeOther {
		t.Fatalf("a start from another /48: %d %s", status, pageText(page))
	}

	// What is stored is the network, not the address.
	db := d.replicas[0].DBURL
	for network, want := range map[string]int{"203.0.113.0/24": perNetwork, "198.51.100.0/24": 1, "2001:db8:5::/48": perNetwork, "2001:db8:6::/48": 1} {
		if got := countRows(t, db, `SELECT count(*) FROM pending_registrations WHERE source_network = '`+network+`'`); got != want {
			t.Errorf("%d registrations stored for %s, want %d", got, network, want)
		}
	}
	if got := countRows(t, db, `SELECT count(*) FROM pending_registrations
		WHERE source_network NOT IN ('203.0.113.0/24', '198.51.100.0/24', '2001:db8:5::/48', '2001:db8:6::/48')`); got != 0 {
		t.Errorf("%d registrations stored with something else than their network", got)
	}

	// Retry-After says when the network's first waiting registration
	// closes; once one closes, the network may start one again.
	execSQL(t, db, `UPDATE pending_registrations SET expires_at = now() + interval '90 seconds'
		WHERE id = (SELECT id FROM pending_registrations WHERE source_network = '203.0.113.0/24' ORDER BY created_at LIMIT 1)`)
	status, h, page := d.startFrom(t, 1, "203.0.113.200")
	refusedForNetwork(t, "a start with one of the network's registrations closing within 90 s", status, h, page, 90)
	execSQL(t, db, `UPDATE pending_registrations SET stage = 'registered'
		WHERE id = (SELECT id FROM pending_registrations WHERE source_network = '203.0.113.0/24' ORDER BY created_at LIMIT 1)`)
	if status, _, page := d.startFrom(t, 1, "203.0.113.201"); status != http.StatusSeeOther {
		t.Fatalf("a start after one of the network's registrations finished: %d %s", status, pageText(page))
	}
}

// TestFinishedRegistrationKeepsNoNetwork: a registration keeps the network
// it was started from only while it waits to be finished; once the ERP's
// administrator has proven it and the site exists, the row keeps none.
func TestFinishedRegistrationKeepsNoNetwork(t *testing.T) {
	gw := startGateway(t, "", nil)
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	t.Cleanup(sim.Close)
	if status, text := registerAcumaticaOverHTTP(t, gw, sim, sim.Tenant(), sim.User(acumaticatest.RoleFull)); status != http.StatusSeeOther && status != http.StatusOK {
		t.Fatalf("the registration: HTTP %d %s", status, text)
	}
	if n := countRows(t, gw.DBURL, `SELECT count(*) FROM sites`); n != 1 {
		t.Fatalf("%d sites after the registration, want 1", n)
	}
	if n := countRows(t, gw.DBURL, `SELECT count(*) FROM pending_registrations WHERE stage = 'registered' AND source_network = ''`); n != 1 {
		t.Errorf("%d finished registrations keep no network, want 1", n)
	}
	if n := countRows(t, gw.DBURL, `SELECT count(*) FROM pending_registrations WHERE source_network <> ''`); n != 0 {
		t.Errorf("%d registrations keep a network", n)
	}
}
