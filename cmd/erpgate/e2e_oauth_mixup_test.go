package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// mixUpERP is an attacker's "ERP", registered as a site of its own: its
// sign-in page sends the browser on to an honest site's ERP with that
// site's client id and redirect URI and the attacker's own PKCE challenge,
// keeping erpgate's state; a code erpgate hands its token endpoint is
// redeemed at the honest ERP with the attacker's verifier (Frappe does not
// ask a PKCE client for its secret). Everything else is a simulator's, so
// the site registers like any other.
type mixUpERP struct {
	*httptest.Server
	mu sync.Mutex
	// codes counts the codes erpgate sent to the attacker's token
	// endpoint; stolen is what redeeming them at the honest ERP gave.
	codes  int
	stolen map[string]any
}

const mixUpVerifier = "attacker-verifier-0123456789-0123456789-0123456789"

// newMixUpERP answers for the attacker; honest is the victim site's ERP,
// honestAuthorize a redirect erpgate made to it (its client id and
// redirect URI are in it, for anyone to read).
func newMixUpERP(t *testing.T, backing, honest *frappetest.Server, honestAuthorize *url.URL) *mixUpERP {
	t.Helper()
	clientID, redirect := honestAuthorize.Query().Get("client_id"), honestAuthorize.Query().Get("redirect_uri")
	m := &mixUpERP{}
	base, err := url.Parse(backing.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(base)
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/method/frappe.integrations.oauth2.authorize":
			q := r.URL.Query()
			q.Set("client_id", clientID)
			q.Set("redirect_uri", redirect)
			q.Set("code_challenge", s256(mixUpVerifier))
			http.Redirect(w, r, honest.URL+r.URL.Path+"?"+q.Encode(), http.StatusFound)
		case "/api/method/frappe.integrations.oauth2.get_token":
			_ = r.ParseForm()
			m.mu.Lock()
			m.codes++
			m.mu.Unlock()
			resp, err := http.PostForm(honest.URL+r.URL.Path, url.Values{
				"grant_type": {"authorization_code"}, "code": {r.PostForm.Get("code")},
				"redirect_uri": {redirect}, "client_id": {clientID}, "code_verifier": {mixUpVerifier}})
			if err == nil {
				var out map[string]any
				_ = json.NewDecoder(resp.Body).Decode(&out)
				_ = resp.Body.Close()
				m.mu.Lock()
				m.stolen = out
				m.mu.Unlock()
			}
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(m.Close)
	return m
}

// mixUp is the attack's set-up on one gateway: the honest site acme
// (with its own redirect URI, or the shared one) and the attacker's site
// evil, whose "ERP" knows acme's client id and redirect URI.
type mixUp struct {
	honest  *frappetest.Server
	evil    *mixUpERP
	evilMCP string
}

func newMixUp(t *testing.T, gw *gateway, shared bool) *mixUp {
	t.Helper()
	honest := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(honest.Close)
	backing := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(backing.Close)
	acme := gw.registerFrappe(t, "acme", honest, userWithRole(t, honest, "service"))
	if shared {
		gw.useSharedCallback(t, acme)
	}
	client := honest.RegisterClient(gw.callbackURL(t, acme.Slug))
	if err := gw.admin.putOAuthClient(context.Background(), acme.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
	// Anyone learns acme's client id and redirect URI from the redirect
	// erpgate makes to acme's ERP.
	rig := &oauthRig{t: t, gw: gw, site: acme}
	rig.clientID = rig.register(e2eRedirectURI)
	toHonest, err := url.Parse(noFollow(t, rig.authorizeURL(nil)).Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	m := &mixUp{honest: honest, evil: newMixUpERP(t, backing, honest, toHonest)}
	evilSite := gw.registerFrappeAt(t, "evil", m.evil.URL, userWithRole(t, backing, "service"))
	evilClient := backing.RegisterClient(gw.callbackURL(t, evilSite.Slug))
	if err := gw.admin.putOAuthClient(context.Background(), evilSite.ID, evilClient.ID, evilClient.Secret); err != nil {
		t.Fatal(err)
	}
	m.evilMCP = evilSite.MCPURL
	return m
}

// noCodeTaken fails the test if erpgate sent the attacker's ERP a code.
func (m *mixUp) noCodeTaken(t *testing.T) {
	t.Helper()
	m.evil.mu.Lock()
	defer m.evil.mu.Unlock()
	if m.evil.codes != 0 || m.evil.stolen != nil {
		t.Fatalf("erpgate sent the attacker's ERP %d code(s) from the honest ERP; redeeming them gave an access token: %v",
			m.evil.codes, m.evil.stolen["access_token"] != nil)
	}
}

// TestAnotherSitesERPCannotTakeAPersonsCode is the ERP mix-up attack
// (RFC 9700 §4.4): anyone may register a site, so an attacker registers
// their own "ERP" and sends a person of an honest site a sign-in link for
// it. Their ERP sends the person on to the honest ERP, which sends the
// code back to erpgate with the attacker's flow's state. erpgate must not
// hand that code to the attacker's ERP: each site has its own redirect
// URI, and a code that comes back at another site's is refused before
// any exchange. The honest site is tried with its own redirect URI and
// with the shared one that sites registered before it keep.
func TestAnotherSitesERPCannotTakeAPersonsCode(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := "own redirect URI"
		if shared {
			name = "shared redirect URI"
		}
		t.Run(name, func(t *testing.T) {
			gw := startGateway(t, "", nil)
			m := newMixUp(t, gw, shared)
			attacker := &oauthRig{t: t, gw: gw, site: devSite{MCPURL: m.evilMCP}}
			attacker.clientID = attacker.register(e2eRedirectURI)

			victim := userWithRole(t, m.honest, "all-companies")
			b := newHeadlessBrowser(t, e2eRedirectURI, frappeLogin(victim))
			final, err := b.Run(context.Background(), http.MethodGet, attacker.authorizeURL(nil), nil)
			m.noCodeTaken(t)
			if final != nil && final.Query().Get("code") != "" {
				t.Fatalf("the MCP client got a code: %s", final)
			}
			last := b.LastPage()
			text := pageText(last.Body)
			if last.Status != http.StatusBadRequest || !strings.Contains(text, "another ERP") {
				t.Fatalf("last page %d %s (err %v): %s", last.Status, last.URL, err, text)
			}
			if !strings.HasPrefix(last.URL, gw.URL) {
				t.Fatalf("the refusal is not erpgate's page: %s", last.URL)
			}
		})
	}
}

// TestChromiumMixUpRefusalPage: the person the attack is tried on sees, in
// a real browser, erpgate's page saying the sign-in came back from
// another ERP and was ended.
func TestChromiumMixUpRefusalPage(t *testing.T) {
	needChromium(t)
	gw := startGateway(t, "", nil)
	m := newMixUp(t, gw, false)
	const redirectURI = "http://127.0.0.1:9/callback"
	clientID := registerPublicClient(t, gw.URL, "mix-up client", redirectURI)
	_, link := authorizeURL(t, gw.URL, clientID, redirectURI, m.evilMCP)
	ctx := newChromium(t)
	docs := recordDocumentResponses(t, ctx)
	victim := userWithRole(t, m.honest, "all-companies")
	browserDo(t, ctx, "open the attacker's link", chromedp.Navigate(link))
	logInAtFrappe(t, ctx, victim)
	waitForTitle(t, ctx, "Confirm Access")
	browserDo(t, ctx, "allow on the honest ERP's Confirm Access page", chromedp.Click(chromedp.CSS(`#allow`)))
	waitForTitle(t, ctx, "The sign-in came back from another ERP")
	saveScreenshot(t, ctx, "signin-mixup.png")
	text := pageBody(t, ctx)
	for _, want := range []string{"came back from another ERP", "has ended it", "connect again"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not say %q: %s", want, text)
		}
	}
	if h, ok := docs.last("/sites/acme/oauth/callback"); !ok || h.status != http.StatusBadRequest {
		t.Errorf("refusal page: seen %v, HTTP %d, want 400", ok, h.status)
	}
	m.noCodeTaken(t)
}

// TestASiteKeepsTheSharedRedirectURIUntilSwitched: a site registered
// before sites had their own redirect URI keeps signing people in through
// the shared one, whose OAuth client its ERP has; the operator switches
// it, after adding the site's own to the ERP, and cannot switch it back.
func TestASiteKeepsTheSharedRedirectURIUntilSwitched(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	own := gw.callbackURL(t, site.Slug)
	if own != gw.URL+"/sites/acme/oauth/callback" {
		t.Fatalf("a new site's redirect URI is %s", own)
	}
	gw.useSharedCallback(t, site)
	shared := gw.callbackURL(t, site.Slug)
	if shared != gw.URL+"/oauth/callback" {
		t.Fatalf("a shared site's redirect URI is %s", shared)
	}
	client := sim.RegisterClient(shared)
	if err := gw.admin.putOAuthClient(context.Background(), site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
	rig := &oauthRig{t: t, gw: gw, sim: sim, site: site, user: userWithRole(t, sim, "all-companies")}
	rig.clientID = rig.register(e2eRedirectURI)
	if status, out := rig.exchange(rig.code()); status != http.StatusOK || out["access_token"] == nil {
		t.Fatalf("sign-in through the shared redirect URI: HTTP %d %v", status, out)
	}

	var patched siteResponse
	err := gw.admin.do(context.Background(), http.MethodPatch, "/sites/"+site.ID, map[string]any{"shared_callback": true}, &patched)
	if ae := (*apiError)(nil); !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
		t.Fatalf("switching back to the shared redirect URI: %v", err)
	}
	if err := gw.admin.do(context.Background(), http.MethodPatch, "/sites/"+site.ID, map[string]any{"shared_callback": false}, &patched); err != nil {
		t.Fatal(err)
	}
	if patched.SharedCallback || patched.OAuthRedirectURI != own {
		t.Fatalf("after the switch: shared %v, redirect URI %s", patched.SharedCallback, patched.OAuthRedirectURI)
	}
	loc, err := url.Parse(noFollow(t, rig.authorizeURL(nil)).Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got := loc.Query().Get("redirect_uri"); got != own {
		t.Fatalf("after the switch the ERP is asked to send people back to %s", got)
	}
	// The ERP's client still has only the shared one: until the operator
	// adds the site's own, the ERP refuses the sign-in, as it should.
	client.RedirectURIs = append(client.RedirectURIs, own)
	sim.PutClient(client)
	if status, out := rig.exchange(rig.code()); status != http.StatusOK || out["access_token"] == nil {
		t.Fatalf("sign-in through the site's own redirect URI: HTTP %d %v", status, out)
	}
}

// injectERP is an attacker's "ERP" on the shared redirect URI whose
// sign-in sends the browser on to an honest ERP with the authorization
// request of a sign-in the attacker began there themselves (client id,
// redirect URI, PKCE challenge), keeping the state of the sign-in it was
// sent; its token endpoint keeps the code erpgate hands it. An ERP that
// asks for the client's secret (Acumatica) will not redeem that code for
// the attacker, so they bring it back to erpgate, into their own sign-in.
type injectERP struct {
	*httptest.Server
	mu     sync.Mutex
	honest *url.URL
	code   string
}

func newInjectERP(t *testing.T, backing *frappetest.Server) *injectERP {
	t.Helper()
	base, err := url.Parse(backing.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(base)
	e := &injectERP{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		defer e.mu.Unlock()
		switch r.URL.Path {
		case "/api/method/frappe.integrations.oauth2.authorize":
			to := *e.honest
			q := to.Query()
			q.Set("state", r.URL.Query().Get("state"))
			to.RawQuery = q.Encode()
			http.Redirect(w, r, to.String(), http.StatusFound)
		case "/api/method/frappe.integrations.oauth2.get_token":
			_ = r.ParseForm()
			e.code = r.PostForm.Get("code")
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(e.Close)
	return e
}

// TestAnERPCodeCompletesOneSignInOnly: two sites still on the shared
// redirect URI cannot tell whose ERP sent a code back, so the attacker's
// shared site gets, at its token endpoint, a code the honest Acumatica
// ERP issued to a person (see injectERP). Acumatica will not redeem it
// without the honest site's client secret; erpgate has it, so the
// attacker brings the code back to erpgate in a sign-in of their own for
// the honest site, whose PKCE challenge the code carries. erpgate must
// not complete a second sign-in with a code it was already given: the
// attacker would get tokens that act as the person.
func TestAnERPCodeCompletesOneSignInOnly(t *testing.T) {
	ctx := context.Background()
	gw := startGateway(t, "", nil)
	honest := acumaticatest.NewServer(acumaticatest.Options{})
	t.Cleanup(honest.Close)
	var acme siteResponse
	if err := gw.admin.do(ctx, http.MethodPost, "/sites", map[string]any{
		"slug": "acme", "kind": "acumatica", "display_name": "Acme", "base_url": honest.URL,
		"settings": map[string]string{"tenant": honest.Tenant()},
	}, &acme); err != nil {
		t.Fatal(err)
	}
	gw.useSharedCallback(t, devSite{ID: acme.ID})
	client := honest.RegisterClient(gw.callbackURL(t, acme.Slug))
	if err := gw.admin.putOAuthClient(ctx, acme.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
	backing := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(backing.Close)
	evil := newInjectERP(t, backing)
	evilSite := gw.registerFrappeAt(t, "evil", evil.URL, userWithRole(t, backing, "service"))
	gw.useSharedCallback(t, evilSite)
	evilClient := backing.RegisterClient(gw.callbackURL(t, evilSite.Slug))
	if err := gw.admin.putOAuthClient(ctx, evilSite.ID, evilClient.ID, evilClient.Secret); err != nil {
		t.Fatal(err)
	}

	// The attacker begins a sign-in for acme in their own browser.
	attacker := &oauthRig{t: t, gw: gw, site: devSite{MCPURL: acme.MCPURL}}
	attacker.clientID = attacker.register(e2eRedirectURI)
	ab := newHeadlessBrowser(t, e2eRedirectURI, nil)
	toHonest, attackerState := attacker.startSignIn(ab)
	evil.mu.Lock()
	evil.honest = toHonest
	evil.mu.Unlock()

	// The person opens the attacker's sign-in link for evil and signs in
	// at acme's ERP, which sends its code to the shared redirect URI.
	lure := &oauthRig{t: t, gw: gw, site: devSite{MCPURL: evilSite.MCPURL}}
	lure.clientID = lure.register(e2eRedirectURI)
	victim := honest.User(acumaticatest.RoleFull)
	vb := newHeadlessBrowser(t, e2eRedirectURI, acumaticaLogin(victim))
	_, _ = vb.Run(ctx, http.MethodGet, lure.authorizeURL(nil), nil)
	evil.mu.Lock()
	code := evil.code
	evil.mu.Unlock()
	if code == "" {
		t.Fatalf("the attacker's ERP got no code (last page %d %s)", vb.LastPage().Status, pageText(vb.LastPage().Body))
	}

	final, err := ab.Run(ctx, http.MethodGet, gw.URL+"/oauth/callback?"+url.Values{"code": {code}, "state": {attackerState}}.Encode(), nil)
	if final != nil && final.Query().Get("code") != "" {
		status, tok := attacker.exchange(final.Query().Get("code"))
		t.Fatalf("the attacker's sign-in completed with the person's code: token endpoint HTTP %d, access token %v",
			status, tok["access_token"] != nil)
	}
	last := ab.LastPage()
	if last.Status != http.StatusBadRequest || !strings.HasPrefix(last.URL, gw.URL) {
		t.Errorf("the attacker's sign-in: %v, last page HTTP %d at %s: %s", err, last.Status, last.URL, pageText(last.Body))
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM upstream_tokens WHERE site_id = $1`, acme.ID); n != 0 {
		t.Errorf("erpgate keeps %d ERP token(s) for acme", n)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM auth_events WHERE event = 'login_denied' AND reason = 'code_reused'`); n != 1 {
		t.Errorf("%d login_denied/code_reused events, want 1", n)
	}
}
