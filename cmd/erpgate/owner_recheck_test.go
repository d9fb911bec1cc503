package main

import (
	"context"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e/signin"
)

// ownerBrowser is an owner's browser on the owner's page: it keeps
// cookies (of every replica at 127.0.0.1, as a browser keeps a host's)
// and does not follow redirects.
type ownerBrowser struct {
	t  *testing.T
	hc *http.Client
}

func newOwnerBrowser(t *testing.T) *ownerBrowser {
	jar, _ := cookiejar.New(nil)
	return &ownerBrowser{t: t, hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *ownerBrowser) do(method, target string, form url.Values) (int, http.Header, string) {
	b.t.Helper()
	return sendForm(b.t, b.hc, method, target, form, nil)
}

// csrf opens the owner page at base and returns its forms' token.
func (b *ownerBrowser) csrf(base, slug string) string {
	b.t.Helper()
	status, _, page := b.do(http.MethodGet, base+"/sites/"+slug+"/manage", nil)
	m := csrfField.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		b.t.Fatalf("the owner page of %s: HTTP %d, no form token: %s", slug, status, pageText(page))
	}
	return m[1]
}

// signedIn reports whether the owner page at base shows the owner's page
// (rather than the sign-in page).
func (b *ownerBrowser) signedIn(base, slug string) bool {
	b.t.Helper()
	_, _, page := b.do(http.MethodGet, base+"/sites/"+slug+"/manage", nil)
	return strings.Contains(page, "Signed in as <strong>")
}

// finishSignIn opens the ERP's redirect back to erpgate and checks that it
// signed the owner in.
func (b *ownerBrowser) finishSignIn(back *url.URL, slug string) {
	b.t.Helper()
	status, h, page := b.do(http.MethodGet, back.String(), nil)
	if status != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "/sites/"+slug+"/manage?done=signed-in&check=") {
		b.t.Fatalf("back from the ERP: HTTP %d to %q: %s", status, h.Get("Location"), pageText(page))
	}
}

// signInFrappe signs user in on the owner page of slug at base, through
// the Frappe simulator's sign-in.
func (b *ownerBrowser) signInFrappe(base, slug, callback string, user frappetest.User) {
	b.t.Helper()
	csrf := b.csrf(base, slug)
	br := signin.NewBrowser(callback, frappeLogin(user))
	br.HC = b.hc
	back, err := br.Run(context.Background(), http.MethodPost, base+"/sites/"+slug+"/manage/sign-in", url.Values{"csrf": {csrf}})
	if err != nil {
		b.t.Fatalf("owner sign-in at Frappe: %v", err)
	}
	b.finishSignIn(back, slug)
}

// signInAcumatica signs user in on the owner page of slug at base, through
// the Acumatica simulator's sign-in.
func (b *ownerBrowser) signInAcumatica(base, slug string, user acumaticatest.User) {
	b.t.Helper()
	status, h, page := b.do(http.MethodPost, base+"/sites/"+slug+"/manage/sign-in", url.Values{"csrf": {b.csrf(base, slug)}})
	if status != http.StatusSeeOther {
		b.t.Fatalf("start the owner sign-in: HTTP %d: %s", status, pageText(page))
	}
	back, err := acumaticatest.CompleteAuthorization(nil, h.Get("Location"), user.Username, user.Password)
	if err != nil {
		b.t.Fatalf("owner sign-in at Acumatica: %v", err)
	}
	b.finishSignIn(back, slug)
}

// issueToken asks the owner page at base for a service token.
func (b *ownerBrowser) issueToken(base, slug, name string) (int, string) {
	b.t.Helper()
	status, _, page := b.do(http.MethodPost, base+"/sites/"+slug+"/manage/tokens",
		url.Values{"csrf": {b.csrf(base, slug)}, "name": {name}, "expires_in_days": {"30"}})
	return status, strings.Join(strings.Fields(pageText(page)), " ")
}

// secondReplica runs another erpgate replica on gw's database, keys and
// public address, and returns its own address and its logs.
func secondReplica(t *testing.T, gw *gateway) (string, *syncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	serveReplica(t, ln, gw.URL, gw.DBURL, gw.AdminToken, gw.Keys, nil, logs)
	return "http://" + ln.Addr().String(), logs
}

// bearerTokens notes the Bearer tokens sent to a Frappe simulator's
// openid_profile (the administrator check): the owners' ERP tokens.
type bearerTokens struct {
	mu     sync.Mutex
	tokens []string
}

func (b *bearerTokens) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.tokens)
}

// frappeNotingTokens is the Frappe simulator on a loopback port, noting
// the tokens its administrator check is asked with. It stops at cleanup.
func frappeNotingTokens(t *testing.T) (*frappetest.Server, *bearerTokens) {
	t.Helper()
	sim := frappetest.NewHandler(frappetest.Options{})
	seen := &bearerTokens{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && strings.HasSuffix(r.URL.Path, ".openid_profile") {
			seen.mu.Lock()
			seen.tokens = append(seen.tokens, tok)
			seen.mu.Unlock()
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &frappetest.Server{Simulator: sim, URL: srv.URL}, seen
}

const (
	notAdminAnyMore = "Your ERP no longer lists you as an administrator of this site, so erpgate signed you out. Nothing was changed."
	signInEnded     = "Your ERP no longer accepts your sign-in (it was revoked or has expired), so erpgate signed you out. Nothing was changed."
	erpNotReached   = "Your ERP could not be reached to check that you still administer it, so nothing was changed."
)

// TestOwnerChangesAskTheERPAgainFrappe: an owner signed in on the owner's
// page keeps their say over the site only while the ERP says they
// administer it. Each change asks the ERP again, with the owner's own ERP
// token, on whichever replica takes it: once the ERP took their System
// Manager role away, or revoked their sign-in, the change is refused,
// nothing changes, the session ends and the refusal is recorded; while the
// ERP cannot be reached the change is refused and the session kept. Views
// of the page do not ask the ERP. The kept token goes at sign-out.
func TestOwnerChangesAskTheERPAgainFrappe(t *testing.T) {
	sim, seen := frappeNotingTokens(t)
	gw := startGateway(t, "", nil)
	site := frappeOAuthSite(t, gw, "acme", sim)
	other, otherLogs := secondReplica(t, gw)
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	callback := gw.callbackURL(t, site.Slug)
	activeTokens := `SELECT count(*) FROM service_tokens WHERE site_id = $1 AND NOT revoked`
	profile := "/api/method/frappe.integrations.oauth2.openid_profile"
	b := newOwnerBrowser(t)
	b.signInFrappe(gw.URL, site.Slug, callback, admin)

	t.Run("an administrator's change works on every replica", func(t *testing.T) {
		before := queryInt(t, gw.DBURL, activeTokens, site.ID)
		if status, page := b.issueToken(other, site.Slug, "from the other replica"); status != http.StatusCreated {
			t.Fatalf("issue a token on the other replica: HTTP %d: %s", status, page)
		}
		if n := queryInt(t, gw.DBURL, activeTokens, site.ID); n != before+1 {
			t.Errorf("%d active tokens, want %d", n, before+1)
		}
	})

	t.Run("viewing the page does not ask the ERP", func(t *testing.T) {
		before := sim.RequestCount(profile)
		for _, base := range []string{gw.URL, other} {
			if !b.signedIn(base, site.Slug) {
				t.Fatalf("not signed in on %s", base)
			}
		}
		if n := sim.RequestCount(profile) - before; n != 0 {
			t.Errorf("two views of the page asked the ERP %d times", n)
		}
	})

	t.Run("the ERP cannot be reached: refused, still signed in", func(t *testing.T) {
		sim.SetFault(frappetest.Fault{PathPrefix: profile, Status: http.StatusServiceUnavailable})
		defer sim.ClearFaults()
		before := queryInt(t, gw.DBURL, activeTokens, site.ID)
		status, page := b.issueToken(gw.URL, site.Slug, "while the ERP is down")
		if status != http.StatusBadGateway || !strings.Contains(page, erpNotReached) {
			t.Errorf("HTTP %d, want %d saying %q: %s", status, http.StatusBadGateway, erpNotReached, page)
		}
		if n := queryInt(t, gw.DBURL, activeTokens, site.ID); n != before {
			t.Errorf("%d active tokens after the refusal, want %d", n, before)
		}
		sim.ClearFaults()
		if !b.signedIn(gw.URL, site.Slug) {
			t.Error("the owner was signed out because the ERP could not be reached")
		}
	})

	t.Run("the ERP took the administrator role away", func(t *testing.T) {
		demoted := admin
		demoted.Roles = slices.DeleteFunc(slices.Clone(admin.Roles), func(r string) bool { return r == frappetest.SystemManager })
		sim.AddUser(demoted)
		defer sim.AddUser(admin)
		before := queryInt(t, gw.DBURL, activeTokens, site.ID)
		status, page := b.issueToken(other, site.Slug, "after the demotion")
		if status != http.StatusForbidden || !strings.Contains(page, notAdminAnyMore) {
			t.Errorf("HTTP %d, want %d saying %q: %s", status, http.StatusForbidden, notAdminAnyMore, page)
		}
		if n := queryInt(t, gw.DBURL, activeTokens, site.ID); n != before {
			t.Errorf("%d active tokens after the refusal, want %d", n, before)
		}
		for _, base := range []string{gw.URL, other} {
			if b.signedIn(base, site.Slug) {
				t.Errorf("still signed in on %s", base)
			}
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_id = $1 AND action = 'issue_service_token'
			AND outcome = 'refused' AND actor_kind = 'erp_admin' AND actor = $2 AND reason LIKE '%System Manager%'`, site.ID, admin.Email); n != 1 {
			t.Errorf("%d refused issue_service_token events naming the missing role, want 1", n)
		}
	})

	t.Run("the ERP revoked the owner's sign-in", func(t *testing.T) {
		b.signInFrappe(gw.URL, site.Slug, callback, admin)
		sim.RevokeRefreshTokens(admin.Email)
		status, _, raw := b.do(http.MethodPost, gw.URL+"/sites/"+site.Slug+"/manage/settings",
			url.Values{"csrf": {b.csrf(gw.URL, site.Slug)}, "display_name": {"Renamed after the revocation"}, "setting_default_company": {""}})
		page := strings.Join(strings.Fields(pageText(raw)), " ")
		if status != http.StatusForbidden || !strings.Contains(page, signInEnded) {
			t.Errorf("HTTP %d, want %d saying %q: %s", status, http.StatusForbidden, signInEnded, page)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites WHERE id = $1 AND display_name = 'Renamed after the revocation'`, site.ID); n != 0 {
			t.Error("the display name was changed")
		}
		if b.signedIn(other, site.Slug) {
			t.Error("still signed in")
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_id = $1 AND action = 'update_site'
			AND outcome = 'refused' AND actor = $2`, site.ID, admin.Email); n != 1 {
			t.Errorf("%d refused update_site events, want 1", n)
		}
	})

	t.Run("signing out drops the kept ERP token", func(t *testing.T) {
		b.signInFrappe(other, site.Slug, callback, admin)
		kept := `SELECT count(*) FROM owner_session_tokens WHERE site_id = $1`
		if n := queryInt(t, gw.DBURL, kept, site.ID); n != 1 {
			t.Fatalf("%d ERP tokens kept for the site's one session, want 1", n)
		}
		if status, _, page := b.do(http.MethodPost, gw.URL+"/sites/"+site.Slug+"/manage/sign-out", url.Values{"csrf": {b.csrf(gw.URL, site.Slug)}}); status != http.StatusSeeOther {
			t.Fatalf("sign out: HTTP %d: %s", status, pageText(page))
		}
		if n := queryInt(t, gw.DBURL, kept, site.ID); n != 0 {
			t.Errorf("%d ERP tokens kept after the sign-out, want 0", n)
		}
	})

	t.Run("no owner's ERP token is in a log or an audit event", func(t *testing.T) {
		tokens := seen.all()
		if len(tokens) < 4 {
			t.Fatalf("the ERP was asked with %d tokens, want at least 4", len(tokens))
		}
		events := queryString(t, gw.DBURL, `SELECT coalesce(string_agg(e::text, ' '), '') FROM admin_events e WHERE site_id = $1`, site.ID)
		for _, tok := range tokens {
			if strings.Contains(gw.Logs.String(), tok) || strings.Contains(otherLogs.String(), tok) || strings.Contains(events, tok) {
				t.Errorf("an owner's ERP token (%d characters) is in a log or an audit event", len(tok))
			}
		}
	})
}

// TestOwnerChangesAskTheERPAgainAcumatica: the same on Acumatica, whose
// administrators are those the administrators' inquiry lists: once the
// inquiry is closed to the owner, or their ERP sign-in has ended (its
// token expired and its refresh token revoked), a change is refused and
// the session ended.
func TestOwnerChangesAskTheERPAgainAcumatica(t *testing.T) {
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	t.Cleanup(sim.Close)
	gw := startGateway(t, "", nil)
	acumaticaOAuthSite(t, gw, "acu", sim)
	other, _ := secondReplica(t, gw)
	admin := sim.User(acumaticatest.RoleFull)
	adminID := admin.Username + "@" + sim.Tenant()
	b := newOwnerBrowser(t)
	b.signInAcumatica(gw.URL, "acu", admin)
	setStatus := func(base, status string) (int, string) {
		code, _, raw := b.do(http.MethodPost, base+"/sites/acu/manage/status", url.Values{"csrf": {b.csrf(base, "acu")}, "status": {status}})
		return code, strings.Join(strings.Fields(pageText(raw)), " ")
	}
	siteStatus := `SELECT status FROM sites WHERE slug = 'acu'`

	t.Run("an administrator's change works on every replica", func(t *testing.T) {
		if code, page := setStatus(other, "disabled"); code != http.StatusSeeOther {
			t.Fatalf("disable: HTTP %d: %s", code, page)
		}
		if code, page := setStatus(gw.URL, "active"); code != http.StatusSeeOther {
			t.Fatalf("enable: HTTP %d: %s", code, page)
		}
	})

	t.Run("the ERP no longer lists the owner as an administrator", func(t *testing.T) {
		sim.SetInquiryAccess(admin.Username, "MCPAdmin", false)
		defer sim.ResetInquiryAccess()
		code, page := setStatus(other, "disabled")
		if code != http.StatusForbidden || !strings.Contains(page, notAdminAnyMore) {
			t.Errorf("HTTP %d, want %d saying %q: %s", code, http.StatusForbidden, notAdminAnyMore, page)
		}
		if got := queryString(t, gw.DBURL, siteStatus); got != "active" {
			t.Errorf("the site is %s", got)
		}
		if b.signedIn(gw.URL, "acu") {
			t.Error("still signed in")
		}
		assertOwnerEvent(t, gw, "acu", "update_site", "refused", adminID)
	})

	t.Run("the owner's ERP sign-in ended", func(t *testing.T) {
		// The access token expired and its refresh token was revoked:
		// erpgate cannot renew it (an expired one alone it renews).
		b.signInAcumatica(other, "acu", admin)
		sim.ExpireTokens()
		sim.RevokeRefreshTokens(admin.Username)
		code, page := setStatus(gw.URL, "disabled")
		if code != http.StatusForbidden || !strings.Contains(page, signInEnded) {
			t.Errorf("HTTP %d, want %d saying %q: %s", code, http.StatusForbidden, signInEnded, page)
		}
		if got := queryString(t, gw.DBURL, siteStatus); got != "active" {
			t.Errorf("the site is %s", got)
		}
		if b.signedIn(other, "acu") {
			t.Error("still signed in")
		}
	})
}
