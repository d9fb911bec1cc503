package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// registrationClient is a cookie-keeping HTTP client on /register that does not
// follow redirects.
type registrationClient struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func newRegistrationClient(t *testing.T, base string) *registrationClient {
	jar, _ := cookiejar.New(nil)
	return &registrationClient{t: t, base: base, hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *registrationClient) do(method, path string, form url.Values, header map[string]string) (int, http.Header, string) {
	b.t.Helper()
	return sendForm(b.t, b.hc, method, b.base+path, form, header)
}

// sendForm sends a method request to target by hc, with form (when not
// nil) as its body and header, and returns the answer's status, header
// and body.
func sendForm(t *testing.T, hc *http.Client, method, target string, form url.Values, header map[string]string) (int, http.Header, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(raw)
}

// csrf opens path and returns its form's CSRF token.
func (b *registrationClient) csrf(path string) string {
	b.t.Helper()
	status, _, page := b.do(http.MethodGet, path, nil, nil)
	m := csrfField.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		b.t.Fatalf("GET %s: %d, no CSRF token", path, status)
	}
	return m[1]
}

// startRegistration submits step 1 for the simulator and returns the
// registration's path.
func (b *registrationClient) startRegistration(baseURL string) string {
	b.t.Helper()
	form := url.Values{"csrf": {b.csrf("/register")}, "kind": {"frappe"}, "display_name": {"Target Ltd"}, "base_url": {baseURL}}
	status, h, page := b.do(http.MethodPost, "/register", form, nil)
	loc := h.Get("Location")
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, b.base+"/register/") {
		b.t.Fatalf("start: %d %q %s", status, loc, pageText(page))
	}
	return strings.TrimPrefix(loc, b.base)
}

// TestRegistrationRefusesForeignBrowsersAndForgedPosts: a registration
// belongs to the browser that started it, and its forms accept only
// erpgate's own pages.
func TestRegistrationRefusesForeignBrowsersAndForgedPosts(t *testing.T) {
	gw := startGateway(t, "", nil)
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	owner := newRegistrationClient(t, gw.URL)
	path := owner.startRegistration(sim.URL)
	ownerCSRF := owner.csrf(path)

	t.Run("another browser cannot open or continue it, and is told nothing", func(t *testing.T) {
		other := newRegistrationClient(t, gw.URL)
		other.csrf("/register") // a browser cookie of its own
		status, _, page := other.do(http.MethodGet, path, nil, nil)
		_, _, unknown := other.do(http.MethodGet, "/register/0195d1f4-0000-7000-8000-000000000000", nil, nil)
		if status != http.StatusNotFound || pageText(page) != pageText(unknown) || strings.Contains(page, "Target Ltd") || strings.Contains(page, sim.URL) {
			t.Errorf("another browser got %d:\n%s\n(an unknown registration gives:\n%s)", status, pageText(page), pageText(unknown))
		}
		// Even with the owner's CSRF token (a leaked page), its cookie is
		// not the owner's.
		form := url.Values{"csrf": {ownerCSRF}, "client_id": {"x"}, "client_secret": {"y"}}
		if status, _, _ := other.do(http.MethodPost, path+"/client", form, nil); status != http.StatusForbidden {
			t.Errorf("another browser's post with the owner's token: %d", status)
		}
	})

	t.Run("posts without the token, with another form's, or from another origin are refused", func(t *testing.T) {
		for name, tc := range map[string]struct {
			form   url.Values
			header map[string]string
		}{
			"no token":       {url.Values{"client_id": {"x"}, "client_secret": {"y"}}, nil},
			"start's token":  {url.Values{"csrf": {owner.csrf("/register")}, "client_id": {"x"}, "client_secret": {"y"}}, nil},
			"foreign origin": {url.Values{"csrf": {ownerCSRF}, "client_id": {"x"}, "client_secret": {"y"}}, map[string]string{"Origin": "https://evil.example"}},
		} {
			status, _, page := owner.do(http.MethodPost, path+"/client", tc.form, tc.header)
			if status != http.StatusForbidden {
				t.Errorf("%s: %d %s", name, status, pageText(page))
			}
		}
		if n := countRows(t, gw.DBURL, `SELECT count(*) FROM pending_registrations WHERE client_id <> ''`); n != 0 {
			t.Errorf("a refused post stored a client: %d", n)
		}
	})

	t.Run("the owner's own post goes to the ERP", func(t *testing.T) {
		form := url.Values{"csrf": {ownerCSRF}, "client_id": {"someclient"}, "client_secret": {"somesecret"}}
		status, h, _ := owner.do(http.MethodPost, path+"/client", form, map[string]string{"Origin": gw.URL})
		if status != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), sim.URL+"/api/method/frappe.integrations.oauth2.authorize?") {
			t.Errorf("owner's post: %d to %q", status, h.Get("Location"))
		}
		if n := countRows(t, gw.DBURL, `SELECT count(*) FROM pending_registrations WHERE client_id = 'someclient' AND secret_ciphertext IS NOT NULL AND position('somesecret' in encode(secret_ciphertext, 'escape')) = 0`); n != 1 {
			t.Errorf("the client secret is not stored encrypted: %d", n)
		}
	})
}

// TestRegistrationIsLimitedPerSource: one source gets 20 registration
// posts at once, then waits; X-Forwarded-For from an untrusted peer does
// not make it another source.
func TestRegistrationIsLimitedPerSource(t *testing.T) {
	gw := startGateway(t, "", nil)
	b := newRegistrationClient(t, gw.URL)
	token := b.csrf("/register")
	for i := range 20 {
		status, _, page := b.do(http.MethodPost, "/register", url.Values{"csrf": {token}, "kind": {"frappe"}}, map[string]string{"X-Forwarded-For": "203.0.113." + strconv.Itoa(i+1)})
		if status != http.StatusBadRequest {
			t.Fatalf("post %d: %d %s", i+1, status, pageText(page))
		}
	}
	status, h, page := b.do(http.MethodPost, "/register", url.Values{"csrf": {token}, "kind": {"frappe"}}, map[string]string{"X-Forwarded-For": "198.51.100.1"})
	if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.Contains(pageText(page), "Too many attempts") {
		t.Fatalf("post 21: %d Retry-After %q %s", status, h.Get("Retry-After"), pageText(page))
	}
}

// countRows runs a count query on the database at dbURL.
func countRows(t *testing.T, dbURL, sql string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// With registration turned off, /register is not served and the landing
// page does not link it.
func TestRegistrationCanBeTurnedOff(t *testing.T) {
	gw := startGateway(t, "", map[string]string{"ERPGATE_REGISTRATION_ENABLED": "false"})
	b := newRegistrationClient(t, gw.URL)
	if status, _, page := b.do(http.MethodGet, "/register", nil, map[string]string{"Accept": "text/html"}); status != http.StatusNotFound {
		t.Errorf("GET /register: %d %s", status, pageText(page))
	}
	if status, _, _ := b.do(http.MethodPost, "/register", url.Values{"kind": {"frappe"}}, nil); status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
		t.Errorf("POST /register: %d", status)
	}
	if _, _, page := b.do(http.MethodGet, "/", nil, nil); strings.Contains(page, "/register") {
		t.Error("the landing page links registration")
	}
}

// /oauth/callback sends a proof's state (adm_…) to the proofs and every
// other state to the authorization server; a forged proof state reaches no
// registration.
func TestCallbackRoutesByStatePrefix(t *testing.T) {
	gw := startGateway(t, "", nil)
	b := newRegistrationClient(t, gw.URL)
	status, _, page := b.do(http.MethodGet, "/oauth/callback?state=adm_"+strings.Repeat("A", 43)+"&code=x", nil, nil)
	if status != http.StatusBadRequest || !strings.Contains(pageText(page), "erpgate does not know this sign-in") {
		t.Errorf("proof state: %d %s", status, pageText(page))
	}
	status, _, page = b.do(http.MethodGet, "/oauth/callback?state="+strings.Repeat("A", 43)+"&code=x", nil, nil)
	if status < 400 || strings.Contains(pageText(page), "erpgate does not know this sign-in") {
		t.Errorf("sign-in state: %d %s", status, pageText(page))
	}
	if n := countRows(t, gw.DBURL, `SELECT count(*) FROM admin_events`); n != 0 {
		t.Errorf("forged callbacks left %d audit events", n)
	}
}

// TestRegistrationKeepsPastedPasswordsOutOfEvents: an address typed with
// a password in it (user:password@host) is refused, and the audit event
// of the refusal does not keep the password.
func TestRegistrationKeepsPastedPasswordsOutOfEvents(t *testing.T) {
	gw := startGateway(t, "", nil)
	b := newRegistrationClient(t, gw.URL)
	const secret = "Hunter2Secret"
	for _, raw := range []string{"https://admin:" + secret + "@erp.example.com", "admin:" + secret + "@erp.example.com"} {
		form := url.Values{"csrf": {b.csrf("/register")}, "kind": {"frappe"}, "display_name": {"Target Ltd"}, "base_url": {raw}}
		if status, _, page := b.do(http.MethodPost, "/register", form, nil); status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", raw, status, pageText(page))
		}
	}
	if n := countRows(t, gw.DBURL, `SELECT coalesce(sum(repeats), 0)::int FROM admin_events WHERE action = 'register_start' AND outcome = 'refused'`); n != 2 {
		t.Errorf("%d refused register_start events counted, want 2", n)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE position($1 in details::text || reason) > 0`, secret); n != 0 {
		t.Errorf("%d audit events keep the password", n)
	}
	// Each refusal is logged with the address typed, as shown.
	if logs := gw.Logs.String(); strings.Contains(logs, secret) || !strings.Contains(logs, "erp.example.com") {
		t.Errorf("the log keeps the password, or not the address:\n%s", logs)
	}
}

// TestRegistrationRefusesOversizedForms: the registration's forms are
// anyone's to post, so a body far larger than any of them is refused
// unread, as the other pages' forms are, and starts nothing.
func TestRegistrationRefusesOversizedForms(t *testing.T) {
	gw := startGateway(t, "", nil)
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	b := newRegistrationClient(t, gw.URL)
	form := url.Values{"csrf": {b.csrf("/register")}, "kind": {"frappe"}, "display_name": {"Target Ltd"}, "base_url": {sim.URL},
		"padding": {strings.Repeat("x", 2<<20)}}
	status, _, page := b.do(http.MethodPost, "/register", form, nil)
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB start form: %d %s", status, pageText(page))
	}
	if n := countRows(t, gw.DBURL, `SELECT count(*) FROM pending_registrations`); n != 0 {
		t.Errorf("a 2 MiB form started %d registrations", n)
	}
}

// TestRegistrationStartDoesNotRevealRegisteredAddresses: an anonymous
// visitor who starts a registration for an address another tenant has
// registered is answered as for any other address (on to the OAuth client
// step), so the start page cannot be used to find out which ERPs use
// erpgate. Only the proof at the ERP, by one of its administrators, can
// tell them.
func TestRegistrationStartDoesNotRevealRegisteredAddresses(t *testing.T) {
	gw := startGateway(t, "", nil)
	registered := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(registered.Close)
	gw.registerFrappe(t, "acme", registered, userWithRole(t, registered, "service"))
	free := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(free.Close)

	visitor := newRegistrationClient(t, gw.URL)
	var pages []string
	for _, base := range []string{registered.URL, free.URL} {
		form := url.Values{"csrf": {visitor.csrf("/register")}, "kind": {"frappe"}, "display_name": {"Target Ltd"}, "base_url": {base}}
		status, h, page := visitor.do(http.MethodPost, "/register", form, nil)
		if status != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), gw.URL+"/register/") {
			t.Errorf("start for %s: HTTP %d to %q: %s", base, status, h.Get("Location"), pageText(page))
			continue
		}
		status, _, page = visitor.do(http.MethodGet, strings.TrimPrefix(h.Get("Location"), gw.URL), nil, nil)
		text := pageText(page)
		if status != http.StatusOK || strings.Contains(text, "already registered") {
			t.Errorf("client step for %s: HTTP %d: %s", base, status, text)
		}
		pages = append(pages, strings.ReplaceAll(regexp.MustCompile(`/register/[0-9a-f-]{36}(\.[A-Za-z0-9_-]{14})?`).ReplaceAllString(text, "/register/ID"), base, "BASE"))
	}
	if len(pages) == 2 && pages[0] != pages[1] {
		t.Errorf("the client step differs for a registered address:\n%s\n---\n%s", pages[0], pages[1])
	}
}
