package approve

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

// An approver signed in twice on a site's approval pages (their own
// computer, and a shared one they forgot to sign out of, or a copied
// cookie) signs out everywhere from one: the other session can then
// neither see the change nor approve it, on any replica. Another person's
// approval session on the site, and the approver's on another site, stay.
func TestApprovalSignOutEverywhereEndsThePersonsOtherSessionsOnEveryReplica(t *testing.T) {
	d := newDatabase(t)
	a, baseA := d.replica(t)
	_, baseB := d.replica(t)
	start := func(site sites.Site, user string) *http.Cookie {
		t.Helper()
		rec := httptest.NewRecorder()
		if err := a.startSession(rec, httptest.NewRequest(http.MethodGet, "/", nil), site, user); err != nil {
			t.Fatal(err)
		}
		return rec.Result().Cookies()[0]
	}
	const colleague = "bob@example.com"
	acme := d.site
	here, forgotten := start(acme, approver), start(acme, approver)
	theirs := start(acme, colleague)
	beta, betaAction := d.otherSite(t)
	onBeta := start(beta, approver)
	binding := &http.Cookie{Name: csrfCookie, Value: strings.Repeat("b", 43)}
	csrf := pagekit.CSRFToken(binding.Value, csrfPurpose(d.action.ID))
	page := "/approve/" + d.action.ID.String()
	const signedIn = "Signed in as <strong>" + approver
	if _, body, _ := send(t, baseB, page, nil, forgotten, binding); !strings.Contains(body, signedIn) || !strings.Contains(body, page+`/sign-out-everywhere"`) {
		t.Errorf("before, the page offers no sign-out everywhere: %s", body)
	}

	status, _, header := send(t, baseA, page+"/sign-out-everywhere", url.Values{"csrf": {csrf}}, here, binding)
	next, err := url.Parse(header.Get("Location"))
	if status != http.StatusSeeOther || err != nil || next.Path != page || next.Query().Get("done") != "signed-out-everywhere" {
		t.Fatalf("sign out everywhere: HTTP %d to %q", status, header.Get("Location"))
	}
	if _, body, _ := send(t, baseA, next.RequestURI(), nil, here, binding); !strings.Contains(body, "You are signed out of Acme&#39;s approval pages in this browser and in every other one you signed in with.") {
		t.Errorf("the page after signing out everywhere does not say so: %s", body)
	}
	for _, c := range []*http.Cookie{here, forgotten} {
		for _, base := range []string{baseB, baseA} {
			if _, body, _ := send(t, base, page, nil, c, binding); strings.Contains(body, "Signed in as") || !strings.Contains(body, "Sign in to decide") {
				t.Errorf("a session of %s after signing out everywhere, at %s, is still signed in", approver, base)
			}
			form := url.Values{"csrf": {csrf}, "decision": {"approve"}}
			if status, body, _ := send(t, base, page+"/decide", form, c, binding); status != http.StatusForbidden || !strings.Contains(body, "Sign in to decide") {
				t.Errorf("Approve with a session of %s after signing out everywhere, at %s: HTTP %d", approver, base, status)
			}
		}
	}
	got, err := approval.NewStore(d.pool, nil).Get(t.Context(), d.site.ID, d.action.ID)
	if err != nil || got.Status != approval.Proposed {
		t.Fatalf("the change after the ended sessions' approvals: %q, %v (a session that should have ended approved it)", got.Status, err)
	}
	var events int
	if err := d.pool.QueryRow(t.Context(), `SELECT count(*) FROM admin_events WHERE site_id = $1 AND action = 'approval_sign_out_everywhere'
		AND actor = $2 AND actor_kind = 'erp_user' AND outcome = 'success'`, d.site.ID, approver).Scan(&events); err != nil || events != 1 {
		t.Errorf("%d approval_sign_out_everywhere events of %s (%v), want 1", events, approver, err)
	}

	// Not another person's session, nor the person's on another site.
	if _, body, _ := send(t, baseB, page, nil, theirs, binding); !strings.Contains(body, "You are signed in here as <strong>"+colleague) {
		t.Errorf("%s's session after %s signed out everywhere: %s", colleague, approver, body)
	}
	if _, body, _ := send(t, baseB, "/approve/"+betaAction.ID.String(), nil, onBeta, binding); !strings.Contains(body, signedIn) {
		t.Errorf("%s's session on beta after signing out everywhere on acme: %s", approver, body)
	}
	// A sign-in after it is a session of its own.
	if _, body, _ := send(t, baseB, page, nil, start(acme, approver), binding); !strings.Contains(body, signedIn) {
		t.Errorf("a new sign-in after signing out everywhere: %s", body)
	}
}

// Signing out everywhere takes a session: without one there is nobody
// whose sessions to end, and nothing is recorded.
func TestApprovalSignOutEverywhereWithoutASession(t *testing.T) {
	d := newDatabase(t)
	_, base := d.replica(t)
	binding := &http.Cookie{Name: csrfCookie, Value: strings.Repeat("b", 43)}
	page := "/approve/" + d.action.ID.String()
	status, _, header := send(t, base, page+"/sign-out-everywhere", url.Values{"csrf": {pagekit.CSRFToken(binding.Value, csrfPurpose(d.action.ID))}}, binding)
	if status != http.StatusSeeOther || !strings.HasSuffix(header.Get("Location"), page) {
		t.Errorf("without a session: HTTP %d to %q", status, header.Get("Location"))
	}
	var events int
	if err := d.pool.QueryRow(t.Context(), `SELECT count(*) FROM admin_events WHERE action = 'approval_sign_out_everywhere'`).Scan(&events); err != nil || events != 0 {
		t.Errorf("%d events without a session (%v)", events, err)
	}
}

// otherSite is a second Frappe site, beta, with a change ana@example.com
// proposed there.
func (d *database) otherSite(t *testing.T) (sites.Site, approval.Action) {
	t.Helper()
	site, err := d.admin.CreateSite(t.Context(), siteadmin.Operator, siteadmin.NewSite{Slug: "beta", Kind: "frappe", DisplayName: "Beta",
		BaseURL: "http://127.0.0.1:8002", Settings: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	digest, err := approval.Digest(json.RawMessage(`{"credit_limit":3}`))
	if err != nil {
		t.Fatal(err)
	}
	action, err := approval.NewStore(d.pool, nil).Propose(t.Context(), approval.Action{
		Key:      approval.Key{SiteID: site.ID, AuthType: "oauth", Principal: approver, Tool: "update_customer", ArgsDigest: digest},
		SiteSlug: "beta", Kind: "frappe", ClientID: "client-1", Approver: approver,
		Preview: connector.Preview{Operation: "update", DocType: "Customer", DocName: "BETA", Summary: "Update BETA.",
			Fields: []connector.PreviewField{{Name: "credit_limit", Label: "Credit limit", Before: "1", HasBefore: true, After: "3"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return site, action
}

// "You are signed out … in every other one you signed in with" is said
// after the person's own Sign out everywhere, in their browser, and never
// from a link alone: anyone can send a link to an approval page with
// ?done=signed-out-everywhere, and a person told that every sign-in has
// ended would not sign out a browser that is still signed in.
func TestApprovalSignedOutEverywhereIsNotSaidFromALink(t *testing.T) {
	d := newDatabase(t)
	_, base := d.replica(t)
	binding := &http.Cookie{Name: csrfCookie, Value: strings.Repeat("b", 43)}
	page := "/approve/" + d.action.ID.String()
	for _, cookies := range [][]*http.Cookie{nil, {binding}} {
		if _, body, _ := send(t, base, page+"?done=signed-out-everywhere", nil, cookies...); strings.Contains(body, "You are signed out of Acme&#39;s approval pages") {
			t.Errorf("a link with ?done=signed-out-everywhere (cookies %d) says the person is signed out everywhere", len(cookies))
		}
	}
}
