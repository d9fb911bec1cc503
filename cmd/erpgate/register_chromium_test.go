package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/connectors/acumatica"
	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/freeport"
)

// registration drives /register in Chromium against one gateway.
type registration struct {
	t    *testing.T
	gw   *gateway
	ctx  context.Context
	docs *documentResponses
	n    int // screenshots so far, for their order
}

func newRegistration(t *testing.T) *registration {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Chromium is needed for this test and was not found at %s (%v): install Debian's `chromium` package", chromiumPath, err)
	}
	r := &registration{t: t, gw: startGateway(t, "", nil), ctx: newChromiumWithin(t, 3*time.Minute)}
	r.docs = recordDocumentResponses(t, r.ctx)
	return r
}

// shot saves a screenshot named after the test and the page.
func (r *registration) shot(name string) {
	r.t.Helper()
	r.n++
	prefix := strings.NewReplacer("/", "-", " ", "-").Replace(r.t.Name())
	saveScreenshot(r.t, r.ctx, fmt.Sprintf("%s-%02d-%s.png", prefix, r.n, name))
}

// text is the visible text of the page.
func (r *registration) text() string {
	return browserResult(r.t, r.ctx, "read the page", chromedp.Evaluate[string](`document.body.innerText`))
}

// kitChecks checks what every page promises: a label for every input,
// nothing from another origin, and a policy that runs no script but
// erpgate's own file, and that only on the pages with copy buttons, whose
// buttons the script then shows.
func (r *registration) kitChecks(page string) {
	r.t.Helper()
	path := browserResult(r.t, r.ctx, "read the path", chromedp.Evaluate[string](`location.pathname`))
	h, ok := r.docs.last(path)
	if !ok {
		r.t.Fatalf("%s: the browser saw no response for %s", page, path)
	}
	csp := h.Get("Content-Security-Policy")
	copyButtons := browserResult(r.t, r.ctx, "count copy buttons", chromedp.Evaluate[int](`document.querySelectorAll('button[data-copy]').length`))
	shown := browserResult(r.t, r.ctx, "count shown copy buttons", chromedp.Evaluate[int](`[...document.querySelectorAll('button[data-copy]')].filter(b => !b.hidden).length`))
	switch {
	case strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "default-src 'none'"):
		r.t.Errorf("%s: CSP %q", page, csp)
	case copyButtons > 0 && !strings.Contains(csp, "script-src 'self' "+r.gw.URL+";"):
		r.t.Errorf("%s has copy buttons but its CSP %q runs no script of erpgate's", page, csp)
	case copyButtons == 0 && strings.Contains(csp, "script-src"):
		r.t.Errorf("%s has no copy buttons but its CSP %q allows scripts", page, csp)
	case shown != copyButtons:
		r.t.Errorf("%s: the script showed %d of %d copy buttons", page, shown, copyButtons)
	}
	unlabelled := browserResult(r.t, r.ctx, "find inputs without a label", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('input:not([type=hidden]), select, textarea')].filter(i => !i.labels || i.labels.length === 0 || !i.labels[0].innerText.trim()).map(i => i.name || i.outerHTML)`))
	if len(unlabelled) > 0 {
		r.t.Errorf("%s: inputs without a label: %v", page, unlabelled)
	}
	foreign := browserResult(r.t, r.ctx, "find other origins", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[href], [src], [action]')].map(e => e.href || e.src || e.action).concat(performance.getEntriesByType('resource').map(r => r.name)).filter(u => new URL(u, location.href).origin !== location.origin)`))
	if len(foreign) > 0 {
		r.t.Errorf("%s refers to other origins: %v", page, foreign)
	}
}

// submit clicks sel, a button that loads a new page, after blanking the
// title, so that a wait for the next page's title cannot match this one.
func (r *registration) submit(what, sel string) {
	r.t.Helper()
	browserResult(r.t, r.ctx, "blank the title", chromedp.Evaluate[string](`document.title = ""`))
	browserDo(r.t, r.ctx, what, chromedp.Click(chromedp.CSS(sel)))
}

// start fills in step 1 and submits it.
func (r *registration) start(kind, name, baseURL string, extra map[string]string) {
	r.t.Helper()
	browserDo(r.t, r.ctx, "open /register", chromedp.Navigate(r.gw.URL+"/register"))
	waitForTitle(r.t, r.ctx, "Register your ERP")
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.Click(chromedp.CSS(`input[name="kind"][value="` + kind + `"]`)),
		chromedp.SetValue(chromedp.CSS(`#display_name`), name),
		chromedp.SetValue(chromedp.CSS(`#base_url`), baseURL),
	}
	for id, v := range extra {
		steps = append(steps, chromedp.SetValue(chromedp.CSS("#"+id), v))
	}
	browserDo(r.t, r.ctx, "fill in step 1", steps...)
	r.shot("start")
	r.kitChecks("start page")
	r.submit("submit step 1", `form button[type="submit"]`)
}

// pasteClient fills in step 2 and submits it.
func (r *registration) pasteClient(id, secret string) {
	r.t.Helper()
	browserDo(r.t, r.ctx, "paste the client",
		chromedp.SetValue(chromedp.CSS(`#client_id`), id),
		chromedp.SetValue(chromedp.CSS(`#client_secret`), secret))
	r.submit("submit the client", `form[action$="/client"] button[type="submit"]`)
}

// frappeLogin signs user in on the Frappe simulator's login page and
// allows the Confirm Access page.
func (r *registration) frappeLogin(user frappetest.User) {
	r.t.Helper()
	waitForTitle(r.t, r.ctx, "Login")
	browserDo(r.t, r.ctx, "fill in the Frappe login",
		chromedp.SendKeys(chromedp.CSS(`input[name="usr"]`), user.Email),
		chromedp.SendKeys(chromedp.CSS(`input[name="pwd"]`), user.Password))
	r.submit("sign in at Frappe", `form[action="/login"] button[type="submit"]`)
	waitForTitle(r.t, r.ctx, "Confirm Access")
	r.submit("allow on Frappe's Confirm Access page", `#allow`)
}

// value reads the text of the element with id on the page.
func (r *registration) value(id string) string {
	r.t.Helper()
	return strings.TrimSpace(browserResult(r.t, r.ctx, "read #"+id, chromedp.Evaluate[string](`document.getElementById(`+"`"+id+"`"+`).textContent`)))
}

// createFrappeClient does step 2 in the ERP as the page says: signed in
// to the Frappe desk as admin, a new OAuth Client with the values the
// registration page shows. It returns to the registration page and
// returns the client's id and secret.
func (r *registration) createFrappeClient(sim *frappetest.Server, admin frappetest.User) (id, secret string) {
	r.t.Helper()
	page := browserResult(r.t, r.ctx, "read the URL", chromedp.Evaluate[string](`location.href`))
	app, scopes, redirect := r.value("v-app"), r.value("v-scopes"), r.value("v-redirect")
	browserDo(r.t, r.ctx, "open the OAuth Client form", chromedp.Navigate(sim.URL+"/app/oauth-client/new"))
	if waitForTitle(r.t, r.ctx, "Login", "New OAuth Client") == "Login" {
		browserDo(r.t, r.ctx, "fill in the Frappe login",
			chromedp.SendKeys(chromedp.CSS(`input[name="usr"]`), admin.Email),
			chromedp.SendKeys(chromedp.CSS(`input[name="pwd"]`), admin.Password))
		r.submit("sign in at Frappe", `form[action="/login"] button[type="submit"]`)
		waitForTitle(r.t, r.ctx, "New OAuth Client")
	}
	browserDo(r.t, r.ctx, "fill in the OAuth Client",
		chromedp.SetValue(chromedp.CSS(`#app_name`), app),
		chromedp.SetValue(chromedp.CSS(`#scopes`), scopes),
		chromedp.SetValue(chromedp.CSS(`#redirect_uris`), redirect),
		chromedp.SetValue(chromedp.CSS(`#default_redirect_uri`), redirect))
	r.shot("frappe-oauth-client")
	r.submit("save the OAuth Client", `#save`)
	waitForTitle(r.t, r.ctx, app)
	id, secret = r.value("client-id"), r.value("client-secret")
	browserDo(r.t, r.ctx, "back to the registration", chromedp.Navigate(page))
	waitForTitle(r.t, r.ctx, "Create the OAuth client")
	return id, secret
}

// signOutOfERP drops the ERP's session cookie (both run on 127.0.0.1, and
// cookies do not tell ports apart), keeping erpgate's.
func (r *registration) signOutOfERP() {
	r.t.Helper()
	if _, err := chromedp.Call(r.ctx, network.DeleteCookies, network.DeleteCookiesParams{Name: "sid", Domain: "127.0.0.1"}); err != nil {
		r.t.Fatalf("sign out of the ERP: %v", err)
	}
}

// events lists the audit events of registration, oldest first, as
// "action outcome reason".
func (r *registration) events() []string {
	r.t.Helper()
	conn, err := pgx.Connect(context.Background(), r.gw.DBURL)
	if err != nil {
		r.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT action || ' ' || outcome || ' ' || reason FROM admin_events ORDER BY id`)
	if err != nil {
		r.t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

func (r *registration) exec(sql string) {
	r.t.Helper()
	conn, err := pgx.Connect(context.Background(), r.gw.DBURL)
	if err != nil {
		r.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		r.t.Fatal(err)
	}
}

func (r *registration) count(sql string) int {
	r.t.Helper()
	return countRows(r.t, r.gw.DBURL, sql)
}

// redirectURI is the redirect URI of the latest registration, by the site
// name it was given when it began.
func (r *registration) redirectURI() string {
	r.t.Helper()
	slug := queryString(r.t, r.gw.DBURL, `SELECT slug FROM pending_registrations ORDER BY created_at DESC LIMIT 1`)
	if slug == "" {
		r.t.Fatal("the registration has no site name")
	}
	return r.gw.URL + "/sites/" + slug + "/oauth/callback"
}

func (r *registration) expectText(page string, wants ...string) {
	r.t.Helper()
	text := r.text()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			r.t.Errorf("%s lacks %q:\n%s", page, w, text)
		}
	}
}

func hasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

// closedAddress is an address where nothing listens, for the whole test.
func closedAddress(t *testing.T) string { return "http://" + freeport.Refusing(t) }

// TestChromiumRegistrationFrappe walks the whole self-service registration
// of a Frappe site in Chromium, with the refusals on the way: an
// unreachable address, a wrong client secret, a non-administrator's
// sign-in, an expired registration, and the same address registered twice. Screenshots of
// every page go to ERPGATE_TEST_SCREENSHOTS.
func TestChromiumRegistrationFrappe(t *testing.T) {
	r := newRegistration(t)
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	admin := userWithRole(t, sim, "administrator")
	clerk := userWithRole(t, sim, "all-companies")
	bot := userWithRole(t, sim, "service")
	ctx := r.ctx

	t.Run("the landing page links registration", func(t *testing.T) {
		browserDo(t, ctx, "open /", chromedp.Navigate(r.gw.URL+"/"))
		waitForTitle(t, ctx, "AI assistants for your company's ERP")
		r.shot("landing")
		r.submit("follow the registration link", `a.button[href$="/register"]`)
		waitForTitle(t, ctx, "Register your ERP")
	})

	t.Run("an unreachable address is refused at the start", func(t *testing.T) {
		dead := closedAddress(t)
		r.start("frappe", "Nowhere Ltd", dead, nil)
		waitForTitle(t, ctx, "Register your ERP")
		r.shot("unreachable")
		r.expectText("unreachable start", "could not be reached")
		if got := browserResult(t, ctx, "read the kept value", chromedp.Evaluate[string](`document.querySelector('#base_url').value`)); got != dead {
			t.Errorf("the typed address was lost: %q", got)
		}
		// The start holds its place in its network's bound (it made
		// erpgate contact the address), as no registration anyone can open.
		if n := r.count(`SELECT count(*) FROM pending_registrations WHERE browser_hash <> ''::bytea OR client_id <> ''`); n != 0 {
			t.Errorf("%d pending registrations after a refused start", n)
		}
		if n := r.count(`SELECT count(*) FROM pending_registrations WHERE browser_hash = ''::bytea AND stage = 'client'`); n != 1 {
			t.Errorf("%d places held after a refused start, want 1", n)
		}
	})

	var registrationURL string
	t.Run("a non-administrator's sign-in registers nothing", func(t *testing.T) {
		r.start("frappe", "Demo Frappe Ltd", sim.URL, map[string]string{"default_company": "Demo Holdings NZ Ltd"})
		waitForTitle(t, ctx, "Create the OAuth client")
		r.shot("client-step")
		r.kitChecks("client page")
		registrationURL = browserResult(t, ctx, "read the URL", chromedp.Evaluate[string](`location.href`))
		// Without JavaScript the page shows its values and no copy
		// button that would do nothing.
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatal(err)
		}
		browserDo(t, ctx, "reload without JavaScript", chromedp.Navigate(registrationURL))
		waitForTitle(t, ctx, "Create the OAuth client")
		r.shot("client-step-no-js")
		if shown := browserResult(t, ctx, "count shown copy buttons", chromedp.Evaluate[int](`[...document.querySelectorAll('button[data-copy]')].filter(b => b.offsetParent !== null).length`)); shown != 0 {
			t.Errorf("without JavaScript %d copy buttons show", shown)
		}
		r.expectText("client page without JavaScript", r.redirectURI(), "all openid")
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
			t.Fatal(err)
		}
		browserDo(t, ctx, "reload with JavaScript", chromedp.Navigate(registrationURL))
		waitForTitle(t, ctx, "Create the OAuth client")
		r.expectText("client page", r.redirectURI(), "all openid", "Authorization Code", "Skip Authorization")
		id, secret := r.createFrappeClient(sim, admin)
		if c, ok := sim.Client(id); !ok || c.Secret != secret || c.SkipAuthorization {
			t.Fatalf("the OAuth Client made as the page says: %+v", c)
		}
		r.signOutOfERP()
		// A wrong secret: Frappe signs the id_token with the client's
		// real one, so the exchange refuses it.
		r.pasteClient(id, secret+"x")
		r.frappeLogin(admin)
		waitForTitle(t, ctx, "The ERP refused the OAuth client")
		r.shot("wrong-secret")
		r.expectText("wrong secret", "did not accept the client id and secret", "nothing was registered")
		if n := r.count(`SELECT count(*) FROM sites`); n != 0 {
			t.Fatalf("%d sites after a wrong secret", n)
		}
		r.submit("back to the client step", `a.button[href*="/register/"]`)
		waitForTitle(t, ctx, "Create the OAuth client")
		r.signOutOfERP()
		r.pasteClient(id, secret)
		r.frappeLogin(clerk)
		waitForTitle(t, ctx, "You are not an administrator of this ERP")
		r.shot("not-admin")
		r.expectText("not-admin page", clerk.Email, "lacks the System Manager role", "nothing was registered")
		if n := r.count(`SELECT count(*) FROM sites`); n != 0 {
			t.Fatalf("%d sites after a non-administrator's sign-in", n)
		}
		// Signed in again, as the administrator this time.
		r.signOutOfERP()
		r.submit("sign in again", `form[action$="/prove"] button`)
		r.frappeLogin(admin)
		waitForTitle(t, ctx, "Demo Frappe Ltd is registered")
		r.shot("registered")
		r.kitChecks("result page")
		mcpURL := browserResult(t, ctx, "read the MCP URL", chromedp.Evaluate[string](`document.querySelector('#mcp-url').textContent`))
		if !strings.HasPrefix(mcpURL, r.gw.URL+"/sites/demo-frappe-ltd-") || !strings.HasSuffix(mcpURL, "/mcp") {
			t.Errorf("MCP URL %q", mcpURL)
		}
		// The site has the name its redirect URI was given with, and its
		// own redirect URI.
		if n := r.count(`SELECT count(*) FROM sites s JOIN pending_registrations p ON p.site_id = s.id
			WHERE s.slug = p.slug AND NOT s.shared_callback AND s.slug LIKE 'demo-frappe-ltd-%'`); n != 1 {
			t.Errorf("%d registered sites with the redirect URI their OAuth client was made with", n)
		}
		r.expectText("result page", "claude mcp add --transport http erp "+mcpURL, "[mcp_servers.erp]", "ChatGPT", "VS Code")
		// Registering starts the new site's preflight; its result is stored.
		waitFor(t, 30*time.Second, "the registered site's preflight", func() bool {
			return r.count(`SELECT count(*) FROM site_preflight p JOIN sites s ON s.id = p.site_id WHERE s.slug LIKE 'demo-frappe-ltd-%'`) == 1
		})
		if n := r.count(`SELECT count(*) FROM sites WHERE settings->>'default_company' = 'Demo Holdings NZ Ltd'`); n != 1 {
			t.Errorf("%d sites with the default company", n)
		}
		if n := r.count(`SELECT count(*) FROM connections WHERE type = 'oauth'`); n != 1 {
			t.Errorf("%d OAuth connections", n)
		}
	})

	t.Run("an API credential is verified, saved, and its token shown once", func(t *testing.T) {
		browserDo(t, ctx, "give a wrong API secret",
			chromedp.SetValue(chromedp.CSS(`#f-api_key`), bot.APIKey),
			chromedp.SetValue(chromedp.CSS(`#f-api_secret`), "not-the-secret"))
		r.submit("submit the API credential", `form[action$="/api"] button`)
		waitForTitle(t, ctx, "Demo Frappe Ltd is registered")
		r.shot("api-refused")
		r.expectText("refused API credential", "The ERP refused these credentials, so nothing was saved")
		// The operator's disable lands right after the credential's write:
		// the token is refused, and nothing is saved.
		r.exec(`CREATE FUNCTION test_operator_disables() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE sites SET status = 'disabled', disabled_by = 'operator' WHERE id = NEW.site_id; RETURN NEW; END $$`)
		r.exec(`CREATE TRIGGER test_operator_disables AFTER INSERT OR UPDATE ON connections
			FOR EACH ROW WHEN (NEW.type = 'api_token') EXECUTE FUNCTION test_operator_disables()`)
		for _, screen := range []struct {
			name          string
			width, height int64
		}{{"phone", phoneWidth, phoneHeight}, {"desktop", desktopWidth, desktopHeight}} {
			viewAt(t, ctx, screen.width, screen.height)
			browserDo(t, ctx, "give the API credential",
				chromedp.SetValue(chromedp.CSS(`#f-api_key`), bot.APIKey),
				chromedp.SetValue(chromedp.CSS(`#f-api_secret`), bot.APISecret))
			r.submit("submit the API credential", `form[action$="/api"] button`)
			waitForTitle(t, ctx, "Demo Frappe Ltd is registered")
			r.shot("api-site-disabled-" + screen.name)
			fitsTheScreen(t, ctx, "the refused API step on a "+screen.name)
			r.expectText("API step on a site disabled meanwhile", "Your erpgate operator disabled this site, so nothing was saved and no service token was issued.")
		}
		r.exec(`DROP TRIGGER test_operator_disables ON connections`)
		if n := r.count(`SELECT count(*) FROM connections WHERE type = 'api_token'`); n != 0 {
			t.Errorf("%d API credentials saved on the site disabled meanwhile", n)
		}
		viewAt(t, ctx, desktopWidth, desktopHeight)
		browserDo(t, ctx, "give the API credential",
			chromedp.SetValue(chromedp.CSS(`#f-api_key`), bot.APIKey),
			chromedp.SetValue(chromedp.CSS(`#f-api_secret`), bot.APISecret))
		r.submit("submit the API credential", `form[action$="/api"] button`)
		waitForTitle(t, ctx, "Demo Frappe Ltd is registered")
		r.shot("api-token")
		token := browserResult(t, ctx, "read the token", chromedp.Evaluate[string](`document.querySelector('#service-token').textContent`))
		r.expectText("token page", "shows it only this once", bot.Email, "It expires on ", "90 days from now")
		// Like a token issued on the owner's page, it expires unless chosen
		// otherwise there (90 days).
		if n := queryInt(t, r.gw.DBURL, `SELECT count(*) FROM service_tokens WHERE name = 'registration'
			AND expires_at = created_at + interval '90 days'`); n != 1 {
			t.Errorf("%d registration tokens expire 90 days after they were issued, want 1", n)
		}
		cs := connect(t, r.gw.URL+"/service/mcp", map[string]string{"X-Erpgate-Service-Token": token})
		tools, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{})
		if err != nil || len(tools.Tools) == 0 {
			t.Fatalf("the service token does not work: %v", err)
		}
		// Shown once: the page does not show it again.
		browserDo(t, ctx, "reload the result", chromedp.Navigate(registrationURL))
		waitForTitle(t, ctx, "Demo Frappe Ltd is registered")
		if strings.Contains(r.text(), token) {
			t.Error("the service token is shown again")
		}
	})

	t.Run("the same address cannot be registered twice", func(t *testing.T) {
		// The start and a non-administrator's sign-in say nothing of the
		// address being registered: only the ERP's administrator learns it.
		r.start("frappe", "Someone Else", sim.URL+"/", nil)
		waitForTitle(t, ctx, "Create the OAuth client")
		r.shot("taken-client-step")
		client := sim.RegisterClient(r.redirectURI())
		r.signOutOfERP()
		r.pasteClient(client.ID, client.Secret)
		r.frappeLogin(clerk)
		waitForTitle(t, ctx, "You are not an administrator of this ERP")
		if text := r.text(); strings.Contains(text, "already registered") {
			t.Errorf("a non-administrator is told the address is registered:\n%s", text)
		}
		r.signOutOfERP()
		r.submit("sign in again", `form[action$="/prove"] button`)
		r.frappeLogin(admin)
		waitForTitle(t, ctx, "This ERP is already registered")
		r.shot("already-registered")
		if n := r.count(`SELECT count(*) FROM sites`); n != 1 {
			t.Errorf("%d sites after registering the same address again", n)
		}
		text := r.text()
		for _, private := range []string{"Demo Frappe Ltd", "demo-frappe-ltd", admin.Email} {
			if strings.Contains(text, private) {
				t.Errorf("the refusal names %q:\n%s", private, text)
			}
		}
		r.expectText("already registered", "/manage")
	})

	t.Run("an expired registration is refused and leaves nothing", func(t *testing.T) {
		other := frappetest.NewServer(frappetest.Options{})
		t.Cleanup(other.Close)
		r.start("frappe", "Late Ltd", other.URL, nil)
		waitForTitle(t, ctx, "Create the OAuth client")
		r.exec(`UPDATE pending_registrations SET expires_at = now() - interval '1 second' WHERE stage = 'client'`)
		client := other.RegisterClient(r.redirectURI())
		r.pasteClient(client.ID, client.Secret)
		waitForTitle(t, ctx, "This registration is not open")
		r.shot("expired")
		r.expectText("expired page", "nothing of one that expired was kept or activated")
		// Expired while the person was at the ERP's sign-in.
		r.start("frappe", "Later Ltd", other.URL, nil)
		waitForTitle(t, ctx, "Create the OAuth client")
		if n := r.count(`SELECT count(*) FROM pending_registrations WHERE display_name = 'Late Ltd'`); n != 0 {
			t.Errorf("the expired registration was not swept: %d", n)
		}
		client = other.RegisterClient(r.redirectURI())
		r.pasteClient(client.ID, client.Secret)
		waitForTitle(t, ctx, "Login")
		r.exec(`UPDATE pending_registrations SET expires_at = now() - interval '1 second' WHERE stage = 'client'`)
		r.signOutOfERP()
		r.frappeLogin(admin)
		waitForTitle(t, ctx, "This sign-in cannot be used")
		r.shot("expired-during-sign-in")
		if n := r.count(`SELECT count(*) FROM sites WHERE base_url = '` + other.URL + `'`); n != 0 {
			t.Errorf("%d sites for an expired registration", n)
		}
	})

	t.Run("every step is an audit event", func(t *testing.T) {
		events := r.events()
		for _, want := range []string{
			"register_start refused upstream_unreachable",
			"register_start success",
			"register_client success",
			"register_proof refused credential_rejected: client_refused",
			"register_proof refused credential_rejected: not_admin: " + clerk.Email,
			"register_proof success",
			"create_site success",
			"put_oauth_connection success",
			"put_api_connection refused",
			"put_api_connection success",
			"issue_service_token success",
			"create_site refused conflict: a site for " + sim.URL + " is already registered",
			"register_proof refused credential_rejected: state",
		} {
			if !hasEvent(events, want) {
				t.Errorf("no event %q in:\n%s", want, strings.Join(events, "\n"))
			}
		}
	})
}

// acumaticaSignIn signs username in on the Acumatica simulator's OAuth
// sign-in page and allows the consent page.
func (r *registration) acumaticaSignIn(username, password string) {
	r.t.Helper()
	waitForTitle(r.t, r.ctx, "Acumatica ERP - Sign In")
	browserDo(r.t, r.ctx, "fill in the Acumatica sign-in",
		chromedp.SendKeys(chromedp.CSS(`#login input[name="username"]`), username),
		chromedp.SendKeys(chromedp.CSS(`#login input[name="password"]`), password))
	r.submit("sign in at Acumatica", `#login button[type="submit"]`)
	waitForTitle(r.t, r.ctx, "Acumatica ERP - Consent")
	r.submit("allow on Acumatica's consent page", `#consent button[value="yes"]`)
}

// createConnectedApp does step 2 in Acumatica as the page says: signed in
// as admin, a new Connected Application (SM303010) for the authorization
// code flow with the page's redirect URI. It returns to the registration
// page and returns the client id and the shared secret.
func (r *registration) createConnectedApp(base string, admin acumaticatest.User) (id, secret string) {
	r.t.Helper()
	page := browserResult(r.t, r.ctx, "read the URL", chromedp.Evaluate[string](`location.href`))
	app, redirect := r.value("v-app"), r.value("v-redirect")
	browserDo(r.t, r.ctx, "open Connected Applications", chromedp.Navigate(base+acumaticatest.PathMain+"?ScreenId="+acumaticatest.ScreenConnectedApps))
	waitForTitle(r.t, r.ctx, "Sign In - Acumatica ERP")
	browserDo(r.t, r.ctx, "fill in the Acumatica sign-in",
		chromedp.SendKeys(chromedp.CSS(`#UserName`), admin.Username),
		chromedp.SendKeys(chromedp.CSS(`#Password`), admin.Password))
	r.submit("sign in to Acumatica", `#signin`)
	waitForTitle(r.t, r.ctx, "Connected Applications")
	browserDo(r.t, r.ctx, "fill in the application",
		chromedp.SetValue(chromedp.CSS(`#ClientName`), app),
		chromedp.SetValue(chromedp.CSS(`#Flow`), acumaticatest.FlowAuthorizationCode),
		chromedp.SetValue(chromedp.CSS(`#RedirectUri`), redirect))
	r.shot("acumatica-connected-app")
	r.submit("save the application", `#save`)
	waitForTitle(r.t, r.ctx, "Connected Applications")
	id, secret = r.value("client-id"), r.value("client-secret")
	browserDo(r.t, r.ctx, "back to the registration", chromedp.Navigate(page))
	waitForTitle(r.t, r.ctx, "Create the OAuth client")
	return id, secret
}

func acumaticaUser(t *testing.T, sim *acumaticatest.Server, username string) acumaticatest.User {
	t.Helper()
	for _, u := range sim.Users() {
		if u.Username == username {
			return u
		}
	}
	t.Fatalf("no Acumatica user %s", username)
	return acumaticatest.User{}
}

// TestChromiumRegistrationAcumatica walks the registration of an
// Acumatica instance under a virtual directory, with its refusals:
// a wrong client secret, then a non-administrator, then the administrator.
func TestChromiumRegistrationAcumatica(t *testing.T) {
	r := newRegistration(t)
	sim := acumaticatest.NewServer(acumaticatest.Options{PathPrefix: "/AcumaticaERP"})
	t.Cleanup(sim.Close)
	base := sim.URL // with its virtual directory
	if !strings.HasSuffix(base, "/AcumaticaERP") {
		t.Fatalf("simulator URL %s has no virtual directory", base)
	}
	admin := acumaticaUser(t, sim, "admin")
	manager := acumaticaUser(t, sim, "office.manager")
	ctx := r.ctx

	t.Run("a tenant is required", func(t *testing.T) {
		r.start("acumatica", "Demo Acumatica", base, nil)
		waitForTitle(t, ctx, "Register your ERP")
		r.expectText("start without tenant", "Give the Acumatica tenant's login name")
	})

	t.Run("a wrong secret and a non-administrator register nothing, the administrator does", func(t *testing.T) {
		r.start("acumatica", "Demo Acumatica", base, map[string]string{"tenant": sim.Tenant()})
		waitForTitle(t, ctx, "Create the OAuth client")
		r.shot("client-step")
		r.kitChecks("client page")
		r.expectText("client page", acumatica.OAuthScope, "Authorization Code", r.redirectURI(), "MCPAdmin", "@"+sim.Tenant())
		if text := r.text(); strings.Count(text, "api:concurrent_access") != 1 || !strings.Contains(text, "never asks for api:concurrent_access") {
			t.Errorf("the page must name api:concurrent_access only to say erpgate never asks for it:\n%s", text)
		}
		id, secret := r.createConnectedApp(base, admin)
		if !strings.HasSuffix(id, "@"+sim.Tenant()) || secret == "" {
			t.Fatalf("client id %q", id)
		}

		r.pasteClient(id, secret+"x")
		r.acumaticaSignIn(admin.Username, admin.Password)
		waitForTitle(t, ctx, "The ERP refused the OAuth client")
		r.shot("wrong-secret")
		r.expectText("wrong secret", "did not accept the client id and secret", "nothing was registered")

		r.submit("back to the client step", `a.button[href*="/register/"]`)
		waitForTitle(t, ctx, "Create the OAuth client")
		r.pasteClient(id, secret)
		r.acumaticaSignIn(manager.Username, manager.Password)
		waitForTitle(t, ctx, "You are not an administrator of this ERP")
		r.shot("not-admin")
		if n := r.count(`SELECT count(*) FROM sites`); n != 0 {
			t.Fatalf("%d sites before an administrator signed in", n)
		}

		r.submit("sign in again", `form[action$="/prove"] button`)
		r.acumaticaSignIn(admin.Username, admin.Password)
		waitForTitle(t, ctx, "Demo Acumatica is registered")
		r.shot("registered")
		r.kitChecks("result page")
		if n := r.count(`SELECT count(*) FROM sites WHERE base_url = '` + base + `' AND identity_key = '` + sim.Tenant() + `'`); n != 1 {
			t.Errorf("%d sites for the instance", n)
		}
	})

	t.Run("an API user is verified and its token shown once", func(t *testing.T) {
		login := sim.ServiceLogin()
		browserDo(t, ctx, "give the API credential",
			chromedp.SetValue(chromedp.CSS(`#f-client_id`), login.ClientID),
			chromedp.SetValue(chromedp.CSS(`#f-client_secret`), login.ClientSecret),
			chromedp.SetValue(chromedp.CSS(`#f-username`), login.Username),
			chromedp.SetValue(chromedp.CSS(`#f-password`), login.Password))
		r.submit("submit the API credential", `form[action$="/api"] button`)
		waitForTitle(t, ctx, "Demo Acumatica is registered")
		r.shot("api-token")
		token := r.value("service-token")
		cs := connect(t, r.gw.URL+"/service/mcp", map[string]string{"X-Erpgate-Service-Token": token})
		if tools, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{}); err != nil || len(tools.Tools) == 0 {
			t.Fatalf("the service token does not work: %v", err)
		}
	})

	t.Run("the same instance and tenant cannot be registered twice", func(t *testing.T) {
		r.start("acumatica", "Again", base+"/", map[string]string{"tenant": sim.Tenant()})
		waitForTitle(t, ctx, "Create the OAuth client")
		client := sim.RegisterClient(r.redirectURI())
		r.pasteClient(client.ID, client.Secret)
		r.acumaticaSignIn(admin.Username, admin.Password)
		waitForTitle(t, ctx, "This ERP is already registered")
		r.shot("already-registered")
		r.expectText("already registered", "with this tenant")
	})

	t.Run("every step is an audit event", func(t *testing.T) {
		events := r.events()
		for _, want := range []string{
			"register_start success",
			"register_client success",
			"register_proof refused credential_rejected: client_refused",
			"register_proof refused credential_rejected: not_admin",
			"register_proof success",
			"create_site success",
			"put_oauth_connection success",
			"put_api_connection success",
			"issue_service_token success",
			"create_site refused conflict: a site for " + base + " with the same tenant is already registered",
		} {
			if !hasEvent(events, want) {
				t.Errorf("no event %q in:\n%s", want, strings.Join(events, "\n"))
			}
		}
	})
}
