package main

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// anonymousSources is how many distinct sources the growth tests use:
// each sends one request, far within its own limit.
const anonymousSources = 40

// minutesSpanned is how many UTC minutes from..to touch: the most summary
// rows one kind of refusal may leave for requests sent in that time.
func minutesSpanned(from, to time.Time) int {
	return int(to.UTC().Truncate(time.Minute).Sub(from.UTC().Truncate(time.Minute))/time.Minute) + 1
}

// TestAnonymousRegistrationRefusalsDoNotGrowTheAudit: many sources, each
// starting one registration that is refused (an address that is not an
// ERP's), spread over two replicas behind a trusted proxy. Before, each
// refusal was a row of admin_events that nothing ever deleted, so that
// anyone could grow the table without bound; now the refusals of a minute
// are one row that counts them, on every replica together.
func TestAnonymousRegistrationRefusalsDoNotGrowTheAudit(t *testing.T) {
	d := newBoundedRegistrations(t, 200, 0)
	from := time.Now()
	for n := 1; n <= anonymousSources; n++ {
		gw := d.replicas[n%2]
		b := newRegistrationClient(t, gw.URL)
		form := url.Values{"csrf": {b.csrf("/register")}, "kind": {"frappe"}, "display_name": {"Target " + strconv.Itoa(n)},
			"base_url": {"ftp://erp" + strconv.Itoa(n) + ".example.com"}}
		status, _, page := b.do(http.MethodPost, "/register", form, map[string]string{"X-Forwarded-For": "203.0.113." + strconv.Itoa(n)})
		if status != http.StatusBadRequest {
			t.Fatalf("start %d: %d %s", n, status, pageText(page))
		}
	}
	bound := minutesSpanned(from, time.Now())
	db := d.replicas[0].DBURL
	if rows := countRows(t, db, `SELECT count(*) FROM admin_events WHERE action = 'register_start'`); rows > bound {
		t.Errorf("%d anonymous refused starts left %d rows in admin_events; want at most %d (one a minute)", anonymousSources, rows, bound)
	}
	if n := countRows(t, db, `SELECT coalesce(sum(repeats), 0)::int FROM admin_events WHERE action = 'register_start' AND outcome = 'refused'`); n != anonymousSources {
		t.Errorf("the summary rows count %d refused starts, want %d", n, anonymousSources)
	}
	if n := countRows(t, db, `SELECT coalesce(sum((details->'reasons'->>'invalid_request')::int), 0)::int FROM admin_events WHERE action = 'register_start'`); n != anonymousSources {
		t.Errorf("the summary rows count %d refusals as invalid_request, want %d", n, anonymousSources)
	}
}

// TestAnonymousConsoleSignInRefusalsDoNotGrowTheAudit: the same for
// wrong admin tokens at the console's sign-in, one from each source; the
// operator's own sign-in stays a row of its own.
func TestAnonymousConsoleSignInRefusalsDoNotGrowTheAudit(t *testing.T) {
	env := map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"}
	a := startGateway(t, "", env)
	env["ERPGATE_ADMIN_TOKEN"], env["ERPGATE_ENCRYPTION_KEYS"] = a.AdminToken, a.Keys
	replicas := []*gateway{a, startGateway(t, a.DBURL, env)}
	from := time.Now()
	for n := 1; n <= anonymousSources; n++ {
		b := newConsoleBrowser(t, replicas[n%2].URL)
		csrf := b.csrfOf("/console/sign-in")
		req, err := http.NewRequest(http.MethodPost, b.base+"/console/sign-in",
			strings.NewReader(url.Values{"csrf": {csrf}, "token": {"not-the-admin-token-" + strconv.Itoa(n)}}.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", "203.0.113."+strconv.Itoa(n))
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("guess %d: HTTP %d", n, resp.StatusCode)
		}
	}
	bound := minutesSpanned(from, time.Now())
	if status, _, _ := newConsoleBrowser(t, a.URL).signIn(a.AdminToken); status != http.StatusSeeOther {
		t.Fatalf("the operator's sign-in: HTTP %d", status)
	}
	if rows := countRows(t, a.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'console_sign_in' AND outcome = 'refused'`); rows > bound {
		t.Errorf("%d wrong tokens left %d rows in admin_events; want at most %d (one a minute)", anonymousSources, rows, bound)
	}
	if n := countRows(t, a.DBURL, `SELECT coalesce(sum(repeats), 0)::int FROM admin_events WHERE action = 'console_sign_in' AND outcome = 'refused'`); n != anonymousSources {
		t.Errorf("the summary rows count %d refused sign-ins, want %d", n, anonymousSources)
	}
	if n := countRows(t, a.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'console_sign_in' AND outcome = 'success' AND repeats = 1`); n != 1 {
		t.Errorf("%d rows of the operator's sign-in, want 1", n)
	}
}
