package manage

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

// An owner of an Acumatica site whose access tokens last 10 minutes, less
// than an owner session, makes changes 11 minutes after signing in, at
// one replica and then another: the first renews the ERP token they
// signed in with (its refresh token, once), the second uses the renewed
// one, and both go through; neither signs them out.
func TestOwnerChangesOutliveTheERPsShortTokens(t *testing.T) {
	p := newPages(t)
	ctx := t.Context()
	site, erp, admin, later := shortTokenSite(t, p, "acu-short", "Short tokens")
	session := p.acumaticaSignIn(t, site, admin)
	later(11 * time.Minute)
	binding := &http.Cookie{Name: csrfCookie, Value: strings.Repeat("b", 43)}
	csrf := pagekit.CSRFToken(binding.Value, csrfPurpose(site))
	for i, c := range []struct{ base, status, done string }{
		{p.replica(t), "disabled", "?done=disabled"},
		{p.srv.URL, "active", "?done=enabled"},
	} {
		status, body, header := send(t, c.base, "/sites/acu-short/manage/status", url.Values{"csrf": {csrf}, "status": {c.status}}, session, binding)
		if status != http.StatusSeeOther || !strings.Contains(header.Get("Location"), c.done+"&check=") {
			t.Fatalf("change %d after the ERP token expired: HTTP %d to %q: %s", i+1, status, header.Get("Location"), body)
		}
		if got, err := p.h.deps.Store.GetSite(ctx, site.ID); err != nil || string(got.Status) != c.status {
			t.Errorf("change %d: the site is %q (%v), want %q", i+1, got.Status, err, c.status)
		}
	}
	if n := erp.RefreshCount(); n != 1 {
		t.Errorf("%d refreshes at the ERP, want 1", n)
	}
}

// acumaticaSignIn walks user's sign-in at the Acumatica site's ERP with
// the site's OAuth client, as the owner's sign-in does, and starts the
// owner session with what the proof holds.
func (p *pages) acumaticaSignIn(t *testing.T, site sites.Site, user acumaticatest.User) *http.Cookie {
	t.Helper()
	ctx := t.Context()
	csite, client, err := p.h.deps.Admin.OAuthClient(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	conn, _ := p.h.deps.Registry.Get("acumatica")
	oauth := conn.(connector.UpstreamOAuth)
	redirect := p.h.deps.Proofs.RedirectURI(site.CallbackPath())
	verifier := strings.Repeat("verifier-", 6)
	sum := sha256.Sum256([]byte(verifier))
	authURL, err := oauth.AuthorizationURL(csite, client, connector.AuthorizationRequest{RedirectURI: redirect, State: "st",
		CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	loc, err := acumaticatest.CompleteAuthorization(nil, authURL, user.Username, user.Password)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := oauth.ExchangeCode(ctx, csite, client, http.DefaultClient, loc.Query().Get("code"), redirect, verifier)
	if err != nil {
		t.Fatal(err)
	}
	who, err := oauth.Identify(ctx, csite, authorizingClient(csite, oauth.TokenAuthorizer(tok.AccessToken)))
	if err != nil {
		t.Fatal(err)
	}
	proof := erpadmin.Proof{User: who, Token: tok.AccessToken, Refresh: tok.RefreshToken, Expires: time.Now().Add(tok.ExpiresIn)}
	rec := httptest.NewRecorder()
	if err := p.h.startSession(rec, httptest.NewRequest(http.MethodGet, "/", nil), site, who.ID, proof.Tokens()); err != nil {
		t.Fatal(err)
	}
	return rec.Result().Cookies()[0]
}

// An owner whose kept ERP token needs renewing on a site whose OAuth
// client the operator has since removed cannot prove they still
// administer it: the change is refused in a plain sentence (nothing
// changed, ask the operator) and they are signed out, rather than shown
// the generic error page.
func TestOwnerChangeOnASiteWithoutItsOAuthClientSignsOutPlainly(t *testing.T) {
	p := newPages(t)
	ctx := t.Context()
	site, erp, admin, later := shortTokenSite(t, p, "acu-gone", "No client")
	session := p.acumaticaSignIn(t, site, admin)
	if err := p.h.deps.Admin.DeleteConnection(ctx, siteadmin.Operator, site, sites.ConnectionOAuth); err != nil {
		t.Fatal(err)
	}
	later(11 * time.Minute)

	binding := &http.Cookie{Name: csrfCookie, Value: strings.Repeat("b", 43)}
	form := url.Values{"csrf": {pagekit.CSRFToken(binding.Value, csrfPurpose(site))}, "status": {"disabled"}}
	status, body, _ := send(t, p.srv.URL, "/sites/acu-gone/manage/status", form, session, binding)
	text := strings.Join(strings.Fields(body), " ")
	for _, want := range []string{"Nothing was changed", "no OAuth sign-in", "operator"} {
		if status != http.StatusForbidden || !strings.Contains(text, want) {
			t.Errorf("HTTP %d, want 403 saying %q: %s", status, want, text)
		}
	}
	if got, err := p.h.deps.Store.GetSite(ctx, site.ID); err != nil || got.Status != site.Status {
		t.Errorf("the site is %q after the refusal (%v), want %q", got.Status, err, site.Status)
	}
	if _, body := p.get(t, "/sites/acu-gone/manage", session); !strings.Contains(body, signInPage+"acu-gone") {
		t.Errorf("the session was not ended: %s", body)
	}
	if n := erp.RefreshCount(); n != 0 {
		t.Errorf("%d refreshes at the ERP, want none", n)
	}
}

// shortTokenSite registers, as slug, an Acumatica site on a simulator
// whose access tokens last 10 minutes and whose clock later moves on, with
// erpgate's OAuth client, and returns it, the simulator and one of its
// administrators.
func shortTokenSite(t *testing.T, p *pages, slug, name string) (sites.Site, *acumaticatest.Server, acumaticatest.User, func(time.Duration)) {
	t.Helper()
	var (
		mu       sync.Mutex
		erpClock = acumaticatest.DefaultNow
	)
	erp := acumaticatest.NewServer(acumaticatest.Options{TokenLifetime: 10 * time.Minute, Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return erpClock
	}})
	t.Cleanup(erp.Close)
	site, err := p.h.deps.Admin.CreateSite(t.Context(), siteadmin.Operator, siteadmin.NewSite{Slug: slug, Kind: "acumatica", DisplayName: name,
		BaseURL: erp.URL, Settings: json.RawMessage(`{"tenant":"` + erp.Tenant() + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	app := erp.RegisterClient(p.h.deps.Proofs.RedirectURI(site.CallbackPath()))
	if _, err := p.h.deps.Admin.PutOAuthConnection(t.Context(), siteadmin.Operator, site, map[string]string{"client_id": app.ID, "client_secret": app.Secret}); err != nil {
		t.Fatal(err)
	}
	var admin acumaticatest.User
	for _, u := range erp.Users() {
		if u.IsAdministrator() {
			admin = u
		}
	}
	later := func(d time.Duration) {
		mu.Lock()
		erpClock = erpClock.Add(d)
		mu.Unlock()
	}
	return site, erp, admin, later
}
