package manage

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/connectors/acumatica"
	"github.com/erpgate/erpgate/connectors/frappe"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// pages is the owner's page on a fresh database with two Frappe sites,
// acme (on erp, the Frappe simulator) and beta, and a clock the test
// moves.
type pages struct {
	h          *Handler
	srv        *httptest.Server
	pool       *pgxpool.Pool
	keys       *secrets.Keyring
	now        time.Time
	acme, beta sites.Site
	erp        *frappetest.Server
}

// authorizingClient is the ERP client of these tests: a plain HTTP client
// that authorises each request with auth, as the outbound transport does.
func authorizingClient(_ connector.Site, auth connector.Authorizer) *http.Client {
	if auth == nil {
		return http.DefaultClient
	}
	return &http.Client{Transport: authorizing{auth}}
}

type authorizing struct{ auth connector.Authorizer }

func (a authorizing) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if err := a.auth.Authorize(req); err != nil {
		return nil, err
	}
	return http.DefaultTransport.RoundTrip(req)
}

func newPages(t *testing.T) *pages {
	t.Helper()
	pool := pgtest.NewPool(t)
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	reg := connector.NewRegistry()
	reg.MustRegister(frappe.New())
	reg.MustRegister(acumatica.New(acumatica.Options{}))
	store := sites.NewStore(pool, keys)
	hc := authorizingClient
	live := livesettings.New(pool, livesettings.Defaults{MaxRecords: 1000, UserConcurrency: 3, UserPerMinute: 40, SiteConcurrency: 10, SitePerMinute: 300}, nil)
	if err := live.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	admin := siteadmin.New(siteadmin.Deps{Store: store, Registry: reg, HTTPClient: hc, Settings: live})
	p := &pages{now: time.Unix(1_800_000_000, 0), pool: pool, keys: keys, erp: frappetest.NewServer(frappetest.Options{})}
	t.Cleanup(p.erp.Close)
	e := echo.New()
	p.srv = httptest.NewServer(e)
	t.Cleanup(p.srv.Close)
	kit, err := pagekit.New(p.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proofs := erpadmin.New(erpadmin.Deps{Pool: pool, Keyring: keys, Registry: reg, HTTPClient: hc, PublicBaseURL: p.srv.URL})
	p.h = New(Deps{Kit: kit, Admin: admin, Store: store, Registry: reg, Proofs: proofs,
		Signer: pagekit.NewSigner(keys.DeriveKey("owner session signing")), Now: func() time.Time { return p.now }, Settings: live,
		Ends: pagesession.New(pool), Tokens: pagesession.NewTokens(pool, keys)})
	p.h.Register(e)
	for i, slug := range []string{"acme", "beta"} {
		site, err := admin.CreateSite(t.Context(), siteadmin.Operator, siteadmin.NewSite{Slug: slug, Kind: "frappe", DisplayName: "Site " + slug,
			BaseURL: []string{p.erp.URL, "http://127.0.0.1:8002"}[i], Settings: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			p.acme = site
		} else {
			p.beta = site
		}
	}
	return p
}

// session is the cookie an owner's sign-in sets for user on site.
// acumaticaSite is the Acumatica site acu, tenant Company, as the
// operator created it.
func (p *pages) acumaticaSite(t *testing.T) sites.Site {
	t.Helper()
	site, err := p.h.deps.Admin.CreateSite(t.Context(), siteadmin.Operator, siteadmin.NewSite{Slug: "acu", Kind: "acumatica", DisplayName: "Site acu",
		BaseURL: "http://127.0.0.1:8004", Settings: json.RawMessage(`{"tenant":"Company"}`)})
	if err != nil {
		t.Fatal(err)
	}
	return site
}

// proveChange answers as the ERP's callback does once user, an
// administrator there, signed in to prove the owner change id of site.
func (p *pages) proveChange(site sites.Site, id uuid.UUID, user string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/sites/"+site.Slug+"/oauth/callback", nil)
	p.h.changeDone(rec, req, site.ID.String()+"/"+id.String(),
		erpadmin.Proof{User: connector.UpstreamUser{ID: user}, Check: connector.AdminCheck{Admin: true}}, nil)
	return rec
}

// On acme, user is a System Manager at its ERP (made one if the simulator
// lacks them) and the session keeps a token the ERP issued them, as a
// sign-in there would; on other sites the session keeps no ERP token, so
// its changes are refused.
func (p *pages) session(site sites.Site, user string) *http.Cookie {
	rec := httptest.NewRecorder()
	var token secrets.Secret
	if site.ID == p.acme.ID {
		if !slices.ContainsFunc(p.erp.Users(), func(u frappetest.User) bool { return strings.EqualFold(u.Email, user) }) {
			p.erp.AddUser(frappetest.User{Email: user, FullName: "Owner", Roles: []string{frappetest.SystemManager}})
		}
		token = secrets.Secret(p.erp.IssueAccessToken(user, time.Hour))
	}
	if err := p.h.startSession(rec, httptest.NewRequest(http.MethodGet, "/", nil), site, user, connector.StoredToken{Access: token}); err != nil {
		panic(err)
	}
	return rec.Result().Cookies()[0]
}

func (p *pages) get(t *testing.T, path string, cookies ...*http.Cookie) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

const (
	signInPage = "<title>Manage site "
	ownerPage  = "Signed in as <strong>"
)

// A session is its site's for 30 minutes; another site's, an expired one,
// one signed for another purpose or with another key shows the sign-in
// page.
func TestOwnerSessionIsOneSitesAndShort(t *testing.T) {
	p := newPages(t)
	acme := p.session(p.acme, "it.admin@demo.example")
	if c := acme; !c.HttpOnly || c.MaxAge != int(SessionLifetime.Seconds()) || c.SameSite != http.SameSiteLaxMode {
		t.Errorf("session cookie %+v", c)
	}
	if _, body := p.get(t, "/sites/acme/manage", acme); !strings.Contains(body, ownerPage+"it.admin@demo.example") {
		t.Fatalf("acme's session on acme: %s", body)
	}
	if _, body := p.get(t, "/sites/beta/manage", acme); !strings.Contains(body, signInPage+"beta") || strings.Contains(body, ownerPage) {
		t.Errorf("acme's session on beta: %s", body)
	}
	p.now = p.now.Add(SessionLifetime)
	if _, body := p.get(t, "/sites/acme/manage", acme); !strings.Contains(body, signInPage+"acme") {
		t.Errorf("an expired session: %s", body)
	}
	p.now = p.now.Add(-SessionLifetime)
	for name, value := range map[string]string{
		"another purpose": p.h.deps.Signer.Sign("operator", p.acme.SessionScope()+"|it.admin@demo.example", p.now.Add(time.Minute)),
		"another key":     pagekit.NewSigner([]byte(strings.Repeat("k", 32))).Sign(sessionPurpose, p.acme.SessionScope()+"|it.admin@demo.example", p.now.Add(time.Minute)),
		"no user":         p.h.deps.Signer.Sign(sessionPurpose, p.acme.SessionScope()+"|", p.now.Add(time.Minute)),
		"a site id only":  p.h.deps.Signer.Sign(sessionPurpose, p.acme.SessionScope(), p.now.Add(time.Minute)),
	} {
		if _, body := p.get(t, "/sites/acme/manage", &http.Cookie{Name: acme.Name, Value: value}); !strings.Contains(body, signInPage+"acme") {
			t.Errorf("%s: %s", name, body)
		}
	}
}

// The page of a slug that is no site says the same whether the slug is
// malformed or merely unknown, and names nothing.
func TestUnknownSiteGivesOnePlainPage(t *testing.T) {
	p := newPages(t)
	s1, b1 := p.get(t, "/sites/nosuch/manage")
	s2, b2 := p.get(t, "/sites/No_Such!/manage")
	if s1 != http.StatusNotFound || s2 != http.StatusNotFound || b1 != b2 || !strings.Contains(b1, "No site to manage here") {
		t.Errorf("HTTP %d and %d:\n%s\n%s", s1, s2, b1, b2)
	}
	for _, private := range []string{"Site acme", p.erp.URL, "Site beta"} {
		if strings.Contains(b1, private) {
			t.Errorf("the page names %q", private)
		}
	}
	if _, body := p.get(t, "/sites/acme/manage"); strings.Contains(body, "Site acme") || strings.Contains(body, p.erp.URL) {
		t.Errorf("the sign-in page names the site's display name or address: %s", body)
	}
}

// Starting sign-ins is limited per source: each start writes a proof row.
func TestSignInStartsAreLimitedPerSource(t *testing.T) {
	p := newPages(t)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(p.srv.URL + "/sites/acme/manage")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no form token on %s", page)
	}
	form := url.Values{"csrf": {string(m[1])}}
	statuses := map[int]int{}
	for range 21 {
		resp, err := hc.PostForm(p.srv.URL+"/sites/acme/manage/sign-in", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		statuses[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Error("a refusal without Retry-After")
		}
	}
	// The site has no OAuth client, so an allowed start says so (409).
	if statuses[http.StatusConflict] != 20 || statuses[http.StatusTooManyRequests] != 1 {
		t.Errorf("statuses %v, want 20 × 409 and 1 × 429", statuses)
	}
}

// A site deleted and registered again under the same slug is another
// site: the old owner's session does not carry over.
func TestSessionDoesNotOutliveItsSite(t *testing.T) {
	p := newPages(t)
	old := p.session(p.acme, "it.admin@demo.example")
	if err := p.h.deps.Admin.DeleteSite(t.Context(), siteadmin.Operator, p.acme); err != nil {
		t.Fatal(err)
	}
	if _, err := p.h.deps.Admin.CreateSite(t.Context(), siteadmin.Operator, siteadmin.NewSite{Slug: "acme", Kind: "frappe", DisplayName: "New acme",
		BaseURL: "http://127.0.0.1:8003", Settings: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, body := p.get(t, "/sites/acme/manage", old); !strings.Contains(body, signInPage+"acme") || strings.Contains(body, ownerPage) {
		t.Errorf("the old site's session on the new acme: %s", body)
	}
}

// A site moved to another ERP is another company's site: an owner
// session proven at the old ERP does not carry over to it.
func TestSessionDoesNotFollowItsSiteToAnotherERP(t *testing.T) {
	p := newPages(t)
	old := p.session(p.acme, "it.admin@demo.example")
	if _, body := p.get(t, "/sites/acme/manage", old); !strings.Contains(body, ownerPage+"it.admin@demo.example") {
		t.Fatalf("the session before the move: %s", body)
	}
	moved := "http://127.0.0.1:8009"
	if _, err := p.h.deps.Admin.UpdateSite(t.Context(), siteadmin.Operator, p.acme, siteadmin.SiteChange{BaseURL: &moved}); err != nil {
		t.Fatal(err)
	}
	if _, body := p.get(t, "/sites/acme/manage", old); !strings.Contains(body, signInPage+"acme") || strings.Contains(body, ownerPage) {
		t.Errorf("the old ERP's owner on the moved site: %s", body)
	}
}

// An owner who proved a move to another tenant stays signed in on the
// moved site, and the session proven at the old tenant does not.
func TestProvenTenantMoveKeepsItsProver(t *testing.T) {
	p := newPages(t)
	ctx := t.Context()
	admin := p.h.deps.Admin
	site := p.acumaticaSite(t)
	old := p.session(site, "admin@Company")
	id, err := admin.ProposeOwnerChange(ctx, siteadmin.ERPAdmin("admin@Company"), site,
		siteadmin.OwnerChangeRequest{Settings: json.RawMessage(`{"tenant":"OtherCompany"}`)})
	if err != nil {
		t.Fatal(err)
	}
	rec := p.proveChange(site, id, "admin@OtherCompany")
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", cookies)
	}
	if _, body := p.get(t, "/sites/acu/manage", cookies[0]); !strings.Contains(body, ownerPage+"admin@OtherCompany") {
		t.Errorf("the prover after the move: %s", body)
	}
	if _, body := p.get(t, "/sites/acu/manage", old); !strings.Contains(body, signInPage+"acu") || strings.Contains(body, ownerPage) {
		t.Errorf("the old tenant's owner after the move: %s", body)
	}
}

// A tenant move waits for its proof (up to siteadmin.OwnerChangeTTL); a
// change the operator makes to the site's other settings meanwhile (a
// narrower canary inquiry) is kept when the move is applied, not
// overwritten by the settings as they were when the owner asked.
func TestProvenTenantMoveKeepsTheOperatorsChangeMeanwhile(t *testing.T) {
	p := newPages(t)
	ctx := t.Context()
	admin := p.h.deps.Admin
	site := p.acumaticaSite(t)
	// The owner's form: the stored settings with the tenant typed over.
	form := map[string]any{}
	if err := json.Unmarshal(site.Settings, &form); err != nil {
		t.Fatal(err)
	}
	form["tenant"] = "OtherCompany"
	proposed, _ := json.Marshal(form)
	id, err := admin.ProposeOwnerChange(ctx, siteadmin.ERPAdmin("admin@Company"), site, siteadmin.OwnerChangeRequest{Settings: proposed})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.UpdateSite(ctx, siteadmin.Operator, site, siteadmin.SiteChange{Settings: json.RawMessage(`{"tenant":"Company","canary_gi":"MCPStaff"}`)}); err != nil {
		t.Fatal(err)
	}
	rec := p.proveChange(site, id, "admin@OtherCompany")
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
	}
	after, err := p.h.deps.Store.GetSite(ctx, site.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(after.Settings, &got); err != nil {
		t.Fatal(err)
	}
	if got["tenant"] != "OtherCompany" || got["canary_gi"] != "MCPStaff" {
		t.Errorf("settings after the move %s, want tenant OtherCompany and the operator's canary_gi MCPStaff", after.Settings)
	}
}

// A proven move to another tenant of a site with a fixed API credential
// (the old tenant's) is refused with nothing changed, and the page says
// so in the owner's words: their page cannot remove the credential, so
// they are told to ask the operator. Before, it said the admin API's
// "Site “acu” has an API credential of its current tenant; delete it
// before moving the site to another tenant, then add the new tenant's."
func TestProvenTenantMoveWithAnAPICredentialIsToldPlainly(t *testing.T) {
	p := newPages(t)
	ctx := t.Context()
	admin := p.h.deps.Admin
	site := p.acumaticaSite(t)
	if _, err := p.h.deps.Store.PutVerifiedConnection(ctx, site.ID, site.BaseURL, sites.ConnectionAPIToken, "api@Company",
		map[string]secrets.Secret{"client_id": "c@Company", "client_secret": "s", "username": "api", "password": "p"}); err != nil {
		t.Fatal(err)
	}
	id, err := admin.ProposeOwnerChange(ctx, siteadmin.ERPAdmin("admin@Company"), site,
		siteadmin.OwnerChangeRequest{Settings: json.RawMessage(`{"tenant":"OtherCompany"}`)})
	if err != nil {
		t.Fatal(err)
	}
	rec := p.proveChange(site, id, "admin@OtherCompany")
	body := html.UnescapeString(rec.Body.String())
	if rec.Code != http.StatusConflict || !strings.Contains(body, "The change was not saved") {
		t.Fatalf("HTTP %d: %s", rec.Code, body)
	}
	for _, want := range []string{"fixed API credential", "ask your erpgate operator", "nothing was changed"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not say %q: %s", want, body)
		}
	}
	for _, words := range []string{"site “", "delete it before"} {
		if strings.Contains(body, words) {
			t.Errorf("the page says %q, the admin API's words: %s", words, body)
		}
	}
	if after, err := p.h.deps.Store.GetSite(ctx, site.ID); err != nil || after.IdentityKey != site.IdentityKey {
		t.Errorf("the site moved: %+v, %v", after, err)
	}
}

// TestOwnerWithASessionPassesASpentSource: owner pages share the bound of
// lookups that find nothing with the token doors, per source. An owner
// at a shared address (an office's NAT) where someone else spent it was
// answered 429 on their own site's page, signed in or not, for as long
// as that went on. A session erpgate signed is let through uncharged;
// one that turns out not to be the site's (another site's owner
// probing) is remembered and bounded on that site from then on.
func TestOwnerWithASessionPassesASpentSource(t *testing.T) {
	p := pagesAtASpentSource(t)
	acme := p.session(p.acme, "it.admin@demo.example")
	if status, body := p.get(t, "/sites/acme/manage", acme); status != http.StatusOK || !strings.Contains(body, ownerPage+"it.admin@demo.example") {
		t.Fatalf("the owner's own page from the spent source: HTTP %d %s", status, body)
	}
	if status, _ := p.get(t, "/sites/acme/manage"); status != http.StatusTooManyRequests {
		t.Errorf("the page without a session from the spent source: HTTP %d, want 429", status)
	}
	// acme's owner looks at beta's page: shown the sign-in once, then
	// bounded like anyone without a session.
	if status, body := p.get(t, "/sites/beta/manage", acme); status != http.StatusOK || !strings.Contains(body, signInPage+"beta") {
		t.Errorf("acme's session on beta from the spent source: HTTP %d %s", status, body)
	}
	if status, _ := p.get(t, "/sites/beta/manage", acme); status != http.StatusTooManyRequests {
		t.Errorf("acme's session on beta again after it failed there: HTTP %d, want 429", status)
	}
}

// TestOwnerOfTwoSitesKeepsTheirPageAfterLookingAtTheOther: a session shown
// on another site's page was remembered whole, so the owner of acme and
// beta, signed in on acme, who opened beta's page at a shared address
// where someone else spent the bound on links that lead nowhere, was
// answered 429 on acme's page from then on: locked out of their own page
// by someone else's made-up links. A session is remembered per site it
// failed on; one that named a site that does not exist is bounded
// everywhere, so a session cannot look up made-up sites uncharged.
func TestOwnerOfTwoSitesKeepsTheirPageAfterLookingAtTheOther(t *testing.T) {
	p := pagesAtASpentSource(t)
	acme := p.session(p.acme, "it.admin@demo.example")
	if status, body := p.get(t, "/sites/beta/manage", acme); status != http.StatusOK || !strings.Contains(body, signInPage+"beta") {
		t.Fatalf("acme's session on beta from the spent source: HTTP %d %s", status, body)
	}
	if status, body := p.get(t, "/sites/acme/manage", acme); status != http.StatusOK || !strings.Contains(body, ownerPage+"it.admin@demo.example") {
		t.Errorf("the owner's own page after a look at beta, from the spent source: HTTP %d %s", status, body)
	}
	if status, _ := p.get(t, "/sites/beta/manage", acme); status != http.StatusTooManyRequests {
		t.Errorf("acme's session on beta again: HTTP %d, want 429", status)
	}
	// A made-up site: looked up once, then the session is bounded
	// everywhere.
	if status, _ := p.get(t, "/sites/nosuchsite3/manage", acme); status != http.StatusNotFound {
		t.Errorf("acme's session on an unknown site: HTTP %d, want 404", status)
	}
	for _, slug := range []string{"nosuchsite4", "acme"} {
		if status, _ := p.get(t, "/sites/"+slug+"/manage", acme); status != http.StatusTooManyRequests {
			t.Errorf("acme's session on %s after it named an unknown site: HTTP %d, want 429", slug, status)
		}
	}
}

// pagesAtASpentSource is newPages with a bound of one lookup that finds
// nothing per source, spent by a page of a site that does not exist.
func pagesAtASpentSource(t *testing.T) *pages {
	t.Helper()
	p := newPages(t)
	p.h.deps.Lookups = sourcelimit.NewLookups(sourcelimit.Limit{Burst: 1, Every: time.Hour}, nil)
	if status, _ := p.get(t, "/sites/nosuchsite/manage"); status != http.StatusNotFound {
		t.Fatalf("an unknown site's page: HTTP %d, want 404", status)
	}
	if status, _ := p.get(t, "/sites/nosuchsite2/manage"); status != http.StatusTooManyRequests {
		t.Fatalf("another unknown site's page: HTTP %d, want 429 (the source spent)", status)
	}
	return p
}
