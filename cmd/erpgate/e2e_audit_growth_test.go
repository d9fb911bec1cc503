package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
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
	if n := countRows(t, db, `SELECT coalesce(sum(repeats), 0)::int FROM admin_events WHERE action = 'register_start' AND reason LIKE 'invalid_request: %'`); n != anonymousSources {
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

// TestAnonymousSignInRefusalsDoNotGrowTheAudit: anyone may register an
// OAuth client and start a sign-in to a site, then bring the ERP's
// callback back with an error of their choosing, no one having signed in.
// Before, each such sign-in was a login_denied row of auth_events kept for
// ever, and the ERP's error code was stored as sent; now those of a minute
// are one row per site and reason, the reason an OAuth error code (any
// other is erp_other; the log line keeps it).
func TestAnonymousSignInRefusalsDoNotGrowTheAudit(t *testing.T) {
	_, gw, site := startFrappeOAuthGateway(t, loopbackProxyEnv)
	r := &oauthRig{t: t, gw: gw, site: site}
	r.clientID = r.register(e2eRedirectURI)
	callback := gw.callbackURL(t, site.Slug)
	from := time.Now()
	for n := 1; n <= anonymousSources; n++ {
		source := "203.0.113." + strconv.Itoa(n)
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar, Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get := func(target string) *http.Response {
			t.Helper()
			req, _ := http.NewRequest(http.MethodGet, target, nil)
			req.Header.Set("X-Forwarded-For", source)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		resp := get(r.authorizeURL(nil))
		to, err := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || err != nil || to.Query().Get("state") == "" {
			t.Fatalf("source %d: authorize: HTTP %d to %q", n, resp.StatusCode, resp.Header.Get("Location"))
		}
		// Half say the person declined, half send a code of their own.
		code := "access_denied"
		if n%2 == 0 {
			code = "made_up_" + strings.Repeat(string(rune('a'+n%26)), 1+n/26)
		}
		if resp := get(callback + "?" + url.Values{"state": {to.Query().Get("state")}, "error": {code}}.Encode()); resp.StatusCode >= 500 {
			t.Fatalf("source %d: callback: HTTP %d", n, resp.StatusCode)
		}
	}
	bound := 2 * minutesSpanned(from, time.Now())
	if rows := countRows(t, gw.DBURL, `SELECT count(*) FROM auth_events WHERE event = 'login_denied'`); rows > bound {
		t.Errorf("%d sign-ins refused with no one signed in left %d rows in auth_events; want at most %d (a minute's per reason)", anonymousSources, rows, bound)
	}
	if n := countRows(t, gw.DBURL, `SELECT coalesce(sum(repeats), 0)::int FROM auth_events WHERE event = 'login_denied' AND reason IN ('erp_access_denied', 'erp_other')`); n != anonymousSources {
		t.Errorf("the summary rows count %d refused sign-ins, want %d", n, anonymousSources)
	}
}

// TestAnonymousOwnerSignInRefusalsDoNotGrowTheAudit: anyone may start a
// sign-in on a site's owner page and bring the ERP's callback back with an
// error, no one having signed in. Before, each was an owner_sign_in row
// of admin_events kept for ever; now those of a site and minute are one
// row that counts them. A sign-in the ERP identified (an ERP user who is
// not an administrator) stays a row of its own.
func TestAnonymousOwnerSignInRefusalsDoNotGrowTheAudit(t *testing.T) {
	_, gw, site := startFrappeOAuthGateway(t, loopbackProxyEnv)
	callback := gw.callbackURL(t, site.Slug)
	from := time.Now()
	for n := 1; n <= anonymousSources; n++ {
		source := "203.0.113." + strconv.Itoa(n)
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar, Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		do := func(method, target string, form url.Values) (*http.Response, string) {
			t.Helper()
			var body io.Reader
			if form != nil {
				body = strings.NewReader(form.Encode())
			}
			req, _ := http.NewRequest(method, target, body)
			if form != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			req.Header.Set("Accept", "text/html")
			req.Header.Set("X-Forwarded-For", source)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			text, _ := io.ReadAll(resp.Body)
			return resp, string(text)
		}
		resp, page := do(http.MethodGet, gw.URL+"/sites/"+site.Slug+"/manage", nil)
		m := csrfInput.FindStringSubmatch(page)
		if resp.StatusCode != http.StatusOK || m == nil {
			t.Fatalf("source %d: the owner page: HTTP %d %s", n, resp.StatusCode, pageText(page))
		}
		resp, page = do(http.MethodPost, gw.URL+"/sites/"+site.Slug+"/manage/sign-in", url.Values{"csrf": {m[1]}})
		to, err := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || err != nil || to.Query().Get("state") == "" {
			t.Fatalf("source %d: start the owner sign-in: HTTP %d to %q %s", n, resp.StatusCode, resp.Header.Get("Location"), pageText(page))
		}
		if resp, page := do(http.MethodGet, callback+"?"+url.Values{"state": {to.Query().Get("state")}, "error": {"access_denied"}}.Encode(), nil); resp.StatusCode >= 500 {
			t.Fatalf("source %d: callback: HTTP %d %s", n, resp.StatusCode, pageText(page))
		}
	}
	bound := minutesSpanned(from, time.Now())
	if rows := countRows(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'owner_sign_in'`); rows > bound {
		t.Errorf("%d owner sign-ins refused with no one signed in left %d rows in admin_events; want at most %d (one a minute)", anonymousSources, rows, bound)
	}
	if n := queryInt(t, gw.DBURL, `SELECT coalesce(sum(repeats), 0)::int FROM admin_events WHERE action = 'owner_sign_in' AND outcome = 'refused' AND site_id = $1`, site.ID); n != anonymousSources {
		t.Errorf("the summary rows of the site count %d refused owner sign-ins, want %d", n, anonymousSources)
	}
}

// TestAnonymousRegistrationProofRefusalsDoNotGrowTheAudit: whoever holds a
// registration may send its browser to the ERP again and again and come
// back with an error, no one ever identified, from many sources. Before,
// each was a register_proof row kept for ever; now those of a minute and
// kind are one row that counts them.
func TestAnonymousRegistrationProofRefusalsDoNotGrowTheAudit(t *testing.T) {
	d := newBoundedRegistrations(t, 200, 0)
	gw := d.replicas[0]
	b := newRegistrationClient(t, gw.URL)
	path := b.startRegistration(d.erp)
	csrf := b.csrf(path)
	from := time.Now()
	for n := 1; n <= anonymousSources; n++ {
		source := map[string]string{"X-Forwarded-For": "203.0.113." + strconv.Itoa(n)}
		step, form := path+"/prove", url.Values{"csrf": {csrf}}
		if n == 1 {
			step, form = path+"/client", url.Values{"csrf": {csrf}, "client_id": {"made-up-client"}, "client_secret": {"made-up-secret"}}
		}
		status, h, page := b.do(http.MethodPost, step, form, source)
		to, err := url.Parse(h.Get("Location"))
		if status != http.StatusSeeOther || err != nil || to.Query().Get("state") == "" || to.Query().Get("redirect_uri") == "" {
			t.Fatalf("source %d: %s: %d to %q %s", n, step, status, h.Get("Location"), pageText(page))
		}
		back, err := url.Parse(to.Query().Get("redirect_uri"))
		if err != nil {
			t.Fatal(err)
		}
		back.RawQuery = url.Values{"state": {to.Query().Get("state")}, "error": {"access_denied"}}.Encode()
		if status, _, page := b.do(http.MethodGet, strings.TrimPrefix(back.String(), gw.URL), nil, source); status != http.StatusBadRequest {
			t.Fatalf("source %d: callback: %d %s", n, status, pageText(page))
		}
	}
	bound := minutesSpanned(from, time.Now())
	if rows := countRows(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'register_proof'`); rows > bound {
		t.Errorf("%d proofs refused with no one identified left %d rows in admin_events; want at most %d (one a minute)", anonymousSources, rows, bound)
	}
	if n := countRows(t, gw.DBURL, `SELECT coalesce(sum(repeats), 0)::int FROM admin_events WHERE action = 'register_proof' AND outcome = 'refused'`); n != anonymousSources {
		t.Errorf("the summary rows count %d refused proofs, want %d", n, anonymousSources)
	}
}
