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
	gw := d.replicas[n%len(d.replicas)]
	b := newRegistrationClient(t, gw.URL)
	source := "203.0.113." + strconv.Itoa(n)
	if n > 255 {
		source = "198.51.100." + strconv.Itoa(n-255)
	}
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

// TestRegistrationBoundHoldsUnderConcurrentStarts: many sources starting
// at once on two replicas get exactly the bound's registrations between
// them, not one more.
func TestRegistrationBoundHoldsUnderConcurrentStarts(t *testing.T) {
	const bound, sources = 5, 40
	// Every start has passed the check before storing (the table is
	// empty) when the ERP answers the first: only the count under the lock
	// stands between them and the table.
	d := newBoundedRegistrations(t, bound, sources)
	type attempt struct {
		b    *registrationClient
		form url.Values
	}
	var attempts []attempt
	for n := 1; n <= sources; n++ {
		b := newRegistrationClient(t, d.replicas[n%2].URL)
		attempts = append(attempts, attempt{b, url.Values{"csrf": {b.csrf("/register")}, "kind": {"frappe"},
			"display_name": {"Target " + strconv.Itoa(n)}, "base_url": {d.erp}, "source": {"203.0.113." + strconv.Itoa(n)}}})
	}
	var (
		wg                sync.WaitGroup
		mu                sync.Mutex
		admitted, refused int
		others            []string
		ready             = make(chan struct{})
	)
	for _, a := range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			source := a.form.Get("source")
			a.form.Del("source")
			req, err := http.NewRequest(http.MethodPost, a.b.base+"/register", strings.NewReader(a.form.Encode()))
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Forwarded-For", source)
			<-ready
			resp, err := a.b.hc.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			switch resp.StatusCode {
			case http.StatusSeeOther:
				admitted++
			case http.StatusServiceUnavailable:
				refused++
			default:
				others = append(others, resp.Status)
			}
		}()
	}
	close(ready)
	wg.Wait()
	if len(others) > 0 {
		t.Fatalf("unexpected answers: %q", others)
	}
	if admitted != bound || refused != sources-bound {
		t.Errorf("%d starts admitted and %d refused; want %d and %d", admitted, refused, bound, sources-bound)
	}
	if got := d.waiting(t); got != bound {
		t.Errorf("%d registrations are waiting to be finished; the bound is %d", got, bound)
	}
}
