package manage

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/web/pagekit"
)

// A session erpgate holds no ERP token for (one begun before tokens were
// kept, or whose token was swept) cannot change the site: the change is
// refused and recorded, the session ended, and the page says to sign in
// again. Viewing the page still works until then.
func TestChangeWithoutAKeptERPTokenSignsOut(t *testing.T) {
	p := newPages(t)
	const user = "it.admin@demo.example"
	session := p.session(p.beta, user) // beta's sessions keep no token
	if _, body := p.get(t, "/sites/beta/manage", session); !strings.Contains(body, ownerPage+user) {
		t.Fatalf("the page before the change: %s", body)
	}
	binding := strings.Repeat("b", 43)
	form := url.Values{"csrf": {pagekit.CSRFToken(binding, csrfPurpose(p.beta))}, "status": {"disabled"}}
	status, body, _ := send(t, p.srv.URL, "/sites/beta/manage/status", form, session, &http.Cookie{Name: csrfCookie, Value: binding})
	if text := strings.Join(strings.Fields(body), " "); status != http.StatusForbidden || !strings.Contains(text, noSignInKept) {
		t.Errorf("HTTP %d, want 403 saying %q: %s", status, noSignInKept, body)
	}
	site, err := p.h.deps.Store.GetSite(t.Context(), p.beta.ID)
	if err != nil || site.Status != p.beta.Status {
		t.Errorf("the site is %q after the refusal (%v), want %q", site.Status, err, p.beta.Status)
	}
	if _, body := p.get(t, "/sites/beta/manage", session); !strings.Contains(body, signInPage+"beta") {
		t.Errorf("the session was not ended: %s", body)
	}
	events, err := p.h.deps.Store.ListEvents(t.Context(), p.beta.ID, site.CreatedAt.AddDate(-1, 0, 0), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 || events[0].Action != siteadmin.ActionUpdateSite || events[0].Outcome != siteadmin.OutcomeRefused || events[0].Actor != user {
		t.Errorf("the last event is %+v, want the refused update_site of %s", events, user)
	}
}

// A sign-in in a browser that holds an owner session replaces it: the
// browser keeps only the new cookie, so the replaced session is ended for
// every replica (a copy of its cookie no longer works) and the ERP token
// kept for it is dropped at once, not an hour and a half later by the
// sweep.
func TestSignInAgainDropsTheReplacedSessionsToken(t *testing.T) {
	p := newPages(t)
	const user = "it.admin@demo.example"
	old := p.session(p.acme, user)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.AddCookie(old)
	rec := httptest.NewRecorder()
	token := secrets.Secret(p.erp.IssueAccessToken(user, time.Hour))
	if err := p.h.startSession(rec, req, p.acme, user, connector.StoredToken{Access: token}); err != nil {
		t.Fatal(err)
	}
	var fresh *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == old.Name && c.Value != "" {
			fresh = c
		}
	}
	if fresh == nil || fresh.Value == old.Value {
		t.Fatalf("the second sign-in set no new session cookie: %+v", rec.Result().Cookies())
	}
	var rows int
	if err := p.pool.QueryRow(t.Context(), `SELECT count(*) FROM owner_session_tokens WHERE site_id = $1`, p.acme.ID).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("%d ERP tokens kept for acme's sessions (%v), want 1: the replaced session's stays", rows, err)
	}
	if _, body := p.get(t, "/sites/acme/manage", old); !strings.Contains(body, signInPage+"acme") {
		t.Errorf("the replaced session still shows the owner page: %s", body)
	}
	if _, body := p.get(t, "/sites/acme/manage", fresh); !strings.Contains(body, ownerPage+user) {
		t.Errorf("the new session does not show the owner page: %s", body)
	}
}
