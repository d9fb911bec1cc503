package manage

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

// replica serves the owner's page of p a second time, as another replica
// on the same database would: its own handler and server, nothing shared
// in memory. It returns the replica's base URL.
func (p *pages) replica(t *testing.T) string {
	t.Helper()
	return p.replicaWithEnds(t, pagesession.New(p.pool))
}

// replicaWithEnds is replica, checking ended sessions in ends.
func (p *pages) replicaWithEnds(t *testing.T, ends pagekit.SessionEnds) string {
	t.Helper()
	e := echo.New()
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	deps := p.h.deps
	deps.Proofs = erpadmin.New(erpadmin.Deps{Pool: p.pool, Keyring: p.keys, Registry: deps.Registry,
		HTTPClient: authorizingClient, PublicBaseURL: p.srv.URL})
	deps.Ends = ends
	New(deps).Register(e)
	return srv.URL
}

// send sends a request to base+path with form (a POST when form is not
// nil) and cookies, following no redirect.
func send(t *testing.T, base, path string, form url.Values, cookies ...*http.Cookie) (int, string, http.Header) {
	t.Helper()
	method, body := http.MethodGet, ""
	if form != nil {
		method, body = http.MethodPost, form.Encode()
	}
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// Someone who copied an owner's cookies (a shared computer, a proxy's
// log) has nothing once the owner signed out: neither the page nor an
// action, on the replica the owner signed out at or on any other.
func TestSignedOutSessionIsRefusedOnEveryReplica(t *testing.T) {
	p := newPages(t)
	other := p.replica(t)
	const user = "it.admin@demo.example"
	copied := p.session(p.acme, user)
	binding := &http.Cookie{Name: csrfCookie, Value: strings.Repeat("b", 43)}
	csrf := pagekit.CSRFToken(binding.Value, csrfPurpose(p.acme))
	for _, base := range []string{p.srv.URL, other} {
		if _, body, _ := send(t, base, "/sites/acme/manage", nil, copied); !strings.Contains(body, ownerPage+user) {
			t.Fatalf("before the sign-out, at %s: %s", base, body)
		}
	}
	status, _, header := send(t, p.srv.URL, "/sites/acme/manage/sign-out", url.Values{"csrf": {csrf}}, copied, binding)
	if status != http.StatusSeeOther || !strings.Contains(header.Get("Location"), "/sites/acme/manage?done=signed-out&check=") {
		t.Fatalf("sign-out: HTTP %d to %q", status, header.Get("Location"))
	}
	for _, base := range []string{p.srv.URL, other} {
		if _, body, _ := send(t, base, "/sites/acme/manage", nil, copied); strings.Contains(body, ownerPage) || !strings.Contains(body, signInPage+"acme") {
			t.Errorf("the copied cookie after the sign-out, at %s: %s", base, body)
		}
		form := url.Values{"csrf": {csrf}, "status": {"disabled"}}
		if status, body, _ := send(t, base, "/sites/acme/manage/status", form, copied, binding); status != http.StatusForbidden || !strings.Contains(body, "Sign in to manage this site") {
			t.Errorf("an action with the copied cookie after the sign-out, at %s: HTTP %d: %s", base, status, body)
		}
	}
	if site, err := p.h.deps.Store.GetSite(t.Context(), p.acme.ID); err != nil || site.Status != sites.StatusActive {
		t.Errorf("the site after the refused actions: %q, %v", site.Status, err)
	}
	// The owner's next sign-in is a session of its own, even in the same
	// second as the one ended.
	if _, body, _ := send(t, other, "/sites/acme/manage", nil, p.session(p.acme, user)); !strings.Contains(body, ownerPage+user) {
		t.Errorf("a new sign-in after the sign-out: %s", body)
	}
}

// When whether a session was signed out cannot be checked (the database
// does not answer), the session is refused and the owner is told that
// erpgate could not finish, not that their sign-in ended: signing in again
// would not help.
func TestUncheckedSessionIsRefusedWithAPlainSentence(t *testing.T) {
	p := newPages(t)
	down, err := pgxpool.New(t.Context(), "postgres://erpgate@127.0.0.1:1/erpgate?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(down.Close)
	base := p.replicaWithEnds(t, pagesession.New(down))

	cookie := p.session(p.acme, "it.admin@demo.example")
	binding := &http.Cookie{Name: csrfCookie, Value: strings.Repeat("b", 43)}
	form := url.Values{"csrf": {pagekit.CSRFToken(binding.Value, csrfPurpose(p.acme))}, "status": {"disabled"}}
	for _, c := range []struct {
		path string
		form url.Values
	}{{"/sites/acme/manage", nil}, {"/sites/acme/manage/status", form}} {
		status, body, _ := send(t, base, c.path, c.form, cookie, binding)
		if status != http.StatusInternalServerError || !strings.Contains(body, "erpgate could not finish this") || strings.Contains(body, "has ended") {
			t.Errorf("%s with the check failing: HTTP %d: %s", c.path, status, body)
		}
	}
	if site, err := p.h.deps.Store.GetSite(t.Context(), p.acme.ID); err != nil || site.Status != sites.StatusActive {
		t.Errorf("the site after the refused action: %q, %v", site.Status, err)
	}
}
