package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// The site owner's page in real Chromium, against the Frappe simulator:
// a non-administrator is refused, an administrator signs in through the
// ERP and carries out every action (settings, the OAuth client secret
// proven by a sign-in with it, the fixed API credential, service tokens,
// people, disable and enable, delete), each recorded as an erp_admin
// event naming them. Attacker's tests: a session of another site, no CSRF
// token, another origin, a forged session.
func TestChromiumOwnerPageFrappe(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	other := frappetest.NewServer(frappetest.Options{})
	defer other.Close()
	gw := startGateway(t, "", nil)
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	client := sim.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(context.Background(), site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
	frappeOAuthSite(t, gw, "beta", other)
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	nonAdmin := userWithRole(t, sim, frappetest.RoleNonAdministrator)
	service := userWithRole(t, sim, "service")
	// Someone has connected, for the people list.
	person := userWithRole(t, sim, "all-companies")
	connectOAuth(t, site.MCPURL, frappeLogin(person))

	ctx := newChromium(t)
	docs := recordDocumentResponses(t, ctx)
	manageURL := gw.URL + "/sites/acme/manage"

	t.Run("the sign-in page", func(t *testing.T) {
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage site acme")
		text := pageBody(t, ctx)
		if !strings.Contains(text, "administrators of the site's Frappe/ERPNext ERP") || strings.Contains(text, "Test acme") || strings.Contains(text, sim.URL) {
			t.Errorf("sign-in page says: %s", text)
		}
		h, _ := docs.last("/sites/acme/manage")
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' "+sim.URL) || strings.Contains(csp, "script-src") {
			t.Errorf("CSP %q", csp)
		}
		saveScreenshot(t, ctx, "owner-signin.png")
	})

	t.Run("a non-administrator is refused", func(t *testing.T) {
		clickAndSignInAtFrappe(t, ctx, `form[action$="/manage/sign-in"] button`, nonAdmin, "Only the ERP's administrators")
		text := pageBody(t, ctx)
		if !strings.Contains(text, "You signed in to your ERP as "+nonAdmin.Email+", who is not one of its administrators") {
			t.Errorf("refusal page says: %s", text)
		}
		if h, _ := docs.last("/sites/acme/oauth/callback"); h.status != http.StatusForbidden {
			t.Errorf("refusal page HTTP %d", h.status)
		}
		saveScreenshot(t, ctx, "owner-refused.png")
		navigate(t, ctx, "open the owner page again", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage site acme")
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_slug = 'acme' AND action = 'owner_sign_in'
			AND outcome = 'refused' AND actor_kind = 'erp_admin' AND actor = $1`, nonAdmin.Email); n != 1 {
			t.Errorf("%d refused owner_sign_in events for %s", n, nonAdmin.Email)
		}
		// Sign out of the ERP (its session cookie) to sign in as another person.
		clearCookies(t, ctx)
	})

	t.Run("an administrator signs in", func(t *testing.T) {
		signInToOwnerPage(t, ctx, gw, admin)
		text := pageBody(t, ctx)
		own := gw.callbackURL(t, site.Slug)
		for _, want := range []string{"Signed in as " + admin.Email, "You are signed in as an administrator", site.MCPURL, person.Email, "erpgate e2e client", service.Email,
			"whose redirect URI is " + own} {
			if !strings.Contains(text, want) {
				t.Errorf("owner page lacks %q: %s", want, text)
			}
		}
		if strings.Contains(text, "all sites once shared") {
			t.Errorf("a site with its own redirect URI is told to switch: %s", text)
		}
		saveScreenshot(t, ctx, "owner-page.png")
		// A site registered before sites had their own redirect URI is
		// told which to add and why.
		gw.useSharedCallback(t, site)
		navigate(t, ctx, "open the owner page of a site on the shared redirect URI", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Test acme")
		if text := pageBody(t, ctx); !strings.Contains(text, "whose redirect URI is "+gw.URL+"/oauth/callback") ||
			!strings.Contains(text, "Add the site's own, "+own) {
			t.Errorf("owner page of a shared site: %s", text)
		}
		saveScreenshot(t, ctx, "owner-page-shared-redirect.png")
		execSQL(t, gw.DBURL, `UPDATE sites SET shared_callback = false WHERE id = $1`, site.ID)
		for _, c := range browserCookies(t, ctx, gw.URL) {
			if c.Name == "erpgate_owner" && (!c.HTTPOnly || c.Expires-float64(time.Now().Unix()) > 31*60) {
				t.Errorf("session cookie %+v", c)
			}
		}
	})

	t.Run("settings", func(t *testing.T) {
		navigate(t, ctx, "change the settings",
			chromedp.SetValue(chromedp.CSS("#display_name"), "Acme Holdings"),
			chromedp.SetValue(chromedp.CSS("#setting_default_company"), "Demo Holdings NZ Ltd"),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/settings"] button`)))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		if text := pageBody(t, ctx); !strings.Contains(text, "The site's settings are saved.") {
			t.Errorf("after saving: %s", text)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites WHERE slug = 'acme' AND display_name = 'Acme Holdings' AND settings->>'default_company' = 'Demo Holdings NZ Ltd'`); n != 1 {
			t.Error("the settings were not saved")
		}
		assertOwnerEvent(t, gw, "acme", "update_site", "success", admin.Email)
		saveScreenshot(t, ctx, "owner-settings-saved.png")

		navigate(t, ctx, "give an invalid default company",
			chromedp.SetValue(chromedp.CSS("#setting_default_company"), strings.Repeat("x", 141)),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/settings"] button`)))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		if text := pageBody(t, ctx); !strings.Contains(text, "Default company is longer than 140 characters.") {
			t.Errorf("invalid settings: %s", text)
		}
		if typed := browserResult(t, ctx, "read the form", chromedp.Evaluate[string](`document.querySelector("#setting_default_company").value`)); typed != strings.Repeat("x", 141) {
			t.Errorf("the form lost what was typed: %q", typed)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites WHERE slug = 'acme' AND settings->>'default_company' = 'Demo Holdings NZ Ltd'`); n != 1 {
			t.Error("refused settings changed the site")
		}
		saveScreenshot(t, ctx, "owner-settings-refused.png")
	})

	t.Run("writes", func(t *testing.T) {
		ownerWritesSection(t, ctx, gw, "acme", manageURL, "Manage Acme Holdings", admin.Email, person.Email,
			[]string{"create_sales_order", "update_customer", "add_comment", "submit_document"}, "get_document")
	})

	// The site's own cap on the rows of one query (max_records) only
	// lowers the deployment's: above it is refused in a sentence, lower is
	// the site's, empty is the deployment's again.
	t.Run("rows per query", func(t *testing.T) {
		stored := `SELECT count(*) FROM live_settings l JOIN sites s ON s.id = l.site_id WHERE s.slug = 'acme' AND l.name = 'max_records'`
		save := chromedp.Click(chromedp.CSS(`form[action$="/manage/rows"] button`))
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		if text := pageBody(t, ctx); !strings.Contains(text, "A query erpgate sends your ERP returns at most 1000 rows, the number erpgate's operator set for every site.") {
			t.Errorf("the Rows per query section: %s", text)
		}
		navigate(t, ctx, "ask for more than the deployment's", chromedp.SetValue(chromedp.CSS("#max_records"), "5000"), save)
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		if text := pageBody(t, ctx); !strings.Contains(text, "Max records per query cannot be above 1000, the number erpgate's operator set for every site; ask them if your site needs more; nothing was changed.") {
			t.Errorf("5000 rows: %s", text)
		}
		if n := queryInt(t, gw.DBURL, stored); n != 0 {
			t.Errorf("a refused cap stored %d values", n)
		}
		saveSectionScreenshot(t, ctx, `section[aria-labelledby="rows"]`, "owner-rows-refused.png")

		navigate(t, ctx, "lower it to 5", chromedp.SetValue(chromedp.CSS("#max_records"), "5"), save)
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		if text := pageBody(t, ctx); !strings.Contains(text, "The rows per query are saved") || !strings.Contains(text, "returns at most 5 rows, your own number") {
			t.Errorf("after saving 5: %s", text)
		}
		if n := queryInt(t, gw.DBURL, stored+` AND l.value = '5'`); n != 1 {
			t.Error("the site's max_records is not 5")
		}
		assertOwnerEvent(t, gw, "acme", "change_setting", "success", admin.Email)
		saveSectionScreenshot(t, ctx, `section[aria-labelledby="rows"]`, "owner-rows-five.png")

		navigate(t, ctx, "empty the box", chromedp.Evaluate[chromedp.Void](`document.querySelector("#max_records").value = ""`), save)
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		if n := queryInt(t, gw.DBURL, stored); n != 0 {
			t.Errorf("the emptied box left %d values stored, want the deployment's", n)
		}
	})

	t.Run("the fixed API credential", func(t *testing.T) {
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		navigate(t, ctx, "give a wrong API secret",
			chromedp.SendKeys(chromedp.CSS("#cred_api_key"), admin.APIKey),
			chromedp.SendKeys(chromedp.CSS("#cred_api_secret"), "not-the-secret"),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/api-credential"] button`)))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		if text := pageBody(t, ctx); !strings.Contains(text, "nothing was saved") || !strings.Contains(text, "verified as "+service.Email) {
			t.Errorf("wrong API credential: %s", text)
		}
		assertOwnerEvent(t, gw, "acme", "put_api_connection", "refused", admin.Email)
		saveScreenshot(t, ctx, "owner-api-refused.png")
		navigate(t, ctx, "give the administrator's API key",
			chromedp.SendKeys(chromedp.CSS("#cred_api_key"), admin.APIKey),
			chromedp.SendKeys(chromedp.CSS("#cred_api_secret"), admin.APISecret),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/api-credential"] button`)))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		if text := pageBody(t, ctx); !strings.Contains(text, "The ERP accepted the fixed API credential") || !strings.Contains(text, "verified as "+admin.Email) {
			t.Errorf("right API credential: %s", text)
		}
		assertOwnerEvent(t, gw, "acme", "put_api_connection", "success", admin.Email)
	})

	t.Run("service tokens", func(t *testing.T) {
		navigate(t, ctx, "issue a token",
			chromedp.SendKeys(chromedp.CSS("#token_name"), "nightly report"),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/tokens"] button`)))
		waitForNewTitle(t, ctx, "Service token nightly report")
		token := browserResult(t, ctx, "read the token", chromedp.Evaluate[string](`document.querySelector("#token").value`))
		if !strings.HasPrefix(token, "egs_") {
			t.Fatalf("token %q", token)
		}
		saveScreenshot(t, ctx, "owner-token.png")
		cs := connect(t, gw.URL+"/service/mcp", map[string]string{"X-Erpgate-Service-Token": token})
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatalf("the new token does not work: %v", err)
		}
		assertOwnerEvent(t, gw, "acme", "issue_service_token", "success", admin.Email)

		navigate(t, ctx, "back to the owner page", chromedp.Click(chromedp.CSS(`a.button`)))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		navigate(t, ctx, "revoke the token", chromedp.Click(chromedp.CSS(`button[aria-label="Revoke token nightly report"]`)))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		if text := pageBody(t, ctx); !strings.Contains(text, "The service token is revoked") || !strings.Contains(text, "revoked 20") {
			t.Errorf("after revoking: %s", text)
		}
		if resp := serviceCall(t, gw.URL, token); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a revoked token: HTTP %d", resp.StatusCode)
		}
		assertOwnerEvent(t, gw, "acme", "revoke_service_token", "success", admin.Email)
	})

	t.Run("people", func(t *testing.T) {
		navigate(t, ctx, "revoke a person", chromedp.Click(chromedp.CSS(`button[aria-label="Revoke access of `+person.Email+`"]`)))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		text := pageBody(t, ctx)
		if !strings.Contains(text, "That person's access through erpgate is revoked") || !strings.Contains(text, "Nobody has connected yet.") {
			t.Errorf("after revoking a person: %s", text)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM oauth_tokens t JOIN sites s ON s.id = t.site_id WHERE s.slug = 'acme' AND t.subject = $1`, person.Email); n != 0 {
			t.Errorf("%d tokens of %s remain", n, person.Email)
		}
		assertOwnerEvent(t, gw, "acme", "revoke_person", "success", admin.Email)
		saveScreenshot(t, ctx, "owner-person-revoked.png")
	})

	t.Run("the OAuth client secret", func(t *testing.T) {
		navigate(t, ctx, "paste a wrong new secret",
			chromedp.SendKeys(chromedp.CSS("#client_secret"), "not-the-new-secret"),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/oauth-secret"] button`)))
		finishFrappeSignIn(t, ctx, admin, "Your ERP did not accept the change")
		saveScreenshot(t, ctx, "owner-secret-refused.png")
		assertOwnerEvent(t, gw, "acme", "rotate_oauth_secret", "refused", admin.Email)
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM owner_changes`); n != 0 {
			t.Errorf("%d pending changes left", n)
		}

		// The ERP's administrator generates a new secret: the old one
		// stops working there.
		client.Secret = "rotated-secret-0123456789"
		sim.PutClient(client)
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		navigate(t, ctx, "paste the new secret",
			chromedp.SendKeys(chromedp.CSS("#client_secret"), client.Secret),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/oauth-secret"] button`)))
		finishFrappeSignIn(t, ctx, admin, "Manage Acme Holdings")
		if text := pageBody(t, ctx); !strings.Contains(text, "The ERP accepted the new client secret") {
			t.Errorf("after rotating: %s", text)
		}
		assertOwnerEvent(t, gw, "acme", "rotate_oauth_secret", "success", admin.Email)
		saveScreenshot(t, ctx, "owner-secret-saved.png")
		// People's sign-ins now work with the new secret only.
		connectOAuth(t, site.MCPURL, frappeLogin(person))
	})

	t.Run("attacks", func(t *testing.T) {
		cookies := cookieHeader(browserCookies(t, ctx, gw.URL))
		csrf := browserResult(t, ctx, "read the form token", chromedp.Evaluate[string](`document.querySelector('input[name="csrf"]').value`))
		// A session of acme, with beta's own form token for this browser.
		navigate(t, ctx, "open beta's owner page", chromedp.Navigate(gw.URL+"/sites/beta/manage"))
		waitForNewTitle(t, ctx, "Manage site beta")
		betaCSRF := browserResult(t, ctx, "read beta's form token", chromedp.Evaluate[string](`document.querySelector('input[name="csrf"]').value`))
		saveScreenshot(t, ctx, "owner-other-site.png")
		cookies = cookieHeader(browserCookies(t, ctx, gw.URL))

		cases := []struct {
			name, path, cookie, origin string
			form                       url.Values
			want                       string
		}{
			{"acme's session on beta", "/sites/beta/manage/status", cookies, "", url.Values{"csrf": {betaCSRF}, "status": {"disabled"}}, "Sign in to manage this site"},
			{"no CSRF token", "/sites/acme/manage/status", cookies, "", url.Values{"status": {"disabled"}}, "This form cannot be sent"},
			{"acme's token on beta", "/sites/beta/manage/status", cookies, "", url.Values{"csrf": {csrf}, "status": {"disabled"}}, "This form cannot be sent"},
			{"another origin", "/sites/acme/manage/status", cookies, "https://attacker.example", url.Values{"csrf": {csrf}, "status": {"disabled"}}, "This form cannot be sent"},
			{"a forged session", "/sites/acme/manage/status", forgeSession(cookies), "", url.Values{"csrf": {csrf}, "status": {"disabled"}}, "Sign in to manage this site"},
		}
		for _, c := range cases {
			status, body := postForm(t, gw.URL+c.path, c.cookie, c.origin, c.form)
			if status != http.StatusForbidden || !strings.Contains(body, c.want) {
				t.Errorf("%s: HTTP %d, want 403 saying %q: %s", c.name, status, c.want, pageText(body))
			}
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites WHERE status = 'disabled'`); n != 0 {
			t.Errorf("an attack disabled %d sites", n)
		}
		// The same request with acme's session and token does it.
		if status, _ := postForm(t, gw.URL+"/sites/acme/manage/status", cookies, gw.URL, url.Values{"csrf": {csrf}, "status": {"active"}}); status != http.StatusSeeOther {
			t.Errorf("the owner's own post: HTTP %d", status)
		}
	})

	t.Run("disable and enable", func(t *testing.T) {
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		navigate(t, ctx, "disable the site", chromedp.Click(chromedp.CSS(`form[action$="/manage/status"] button`)))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		if text := pageBody(t, ctx); !strings.Contains(text, "The site is disabled") || !strings.Contains(text, "Enable the site") {
			t.Errorf("after disabling: %s", text)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites WHERE slug = 'acme' AND status = 'disabled'`); n != 1 {
			t.Error("the site is not disabled")
		}
		saveScreenshot(t, ctx, "owner-disabled.png")
		navigate(t, ctx, "enable the site", chromedp.Click(chromedp.CSS(`form[action$="/manage/status"] button`)))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		if text := pageBody(t, ctx); !strings.Contains(text, "The site is enabled.") {
			t.Errorf("after enabling: %s", text)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_slug = 'acme' AND action = 'update_site'
			AND actor_kind = 'erp_admin' AND actor = $1 AND details ? 'status'`, admin.Email); n != 2 {
			t.Errorf("%d status events, want 2", n)
		}
	})

	t.Run("delete", func(t *testing.T) {
		navigate(t, ctx, "type the wrong name",
			chromedp.SendKeys(chromedp.CSS("#confirm"), "acm"),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/delete"] button`)))
		waitForNewTitle(t, ctx, "Manage Acme Holdings")
		if text := pageBody(t, ctx); !strings.Contains(text, "type its short name, acme, in the box; nothing was deleted") {
			t.Errorf("wrong confirmation: %s", text)
		}
		saveScreenshot(t, ctx, "owner-delete-refused.png")
		navigate(t, ctx, "type the site's name",
			chromedp.SendKeys(chromedp.CSS("#confirm"), "acme"),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/delete"] button`)))
		waitForNewTitle(t, ctx, "Site acme deleted")
		saveScreenshot(t, ctx, "owner-deleted.png")
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites WHERE slug = 'acme'`); n != 0 {
			t.Error("the site is still there")
		}
		assertOwnerEvent(t, gw, "acme", "delete_site", "success", admin.Email)
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "No site to manage here")
	})
}

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Chromium is needed for this test and was not found at %s (%v): install Debian's `chromium` package", chromiumPath, err)
	}
}

func pageBody(t *testing.T, ctx context.Context) string {
	t.Helper()
	return browserResult(t, ctx, "read the page", chromedp.Text(chromedp.CSS("body")))
}

// signInToOwnerPage opens acme's owner page in ctx and signs in there as
// admin at the Frappe simulator, until the owner's page shows.
func signInToOwnerPage(t *testing.T, ctx context.Context, gw *gateway, admin frappetest.User) {
	t.Helper()
	navigate(t, ctx, "open the owner page", chromedp.Navigate(gw.URL+"/sites/acme/manage"))
	waitForNewTitle(t, ctx, "Manage site acme")
	clickAndSignInAtFrappe(t, ctx, `form[action$="/manage/sign-in"] button`, admin, "Manage Test acme")
}

// clickAndSignInAtFrappe clicks the button that starts a sign-in at the
// Frappe simulator and signs user in, until a page titled want shows.
func clickAndSignInAtFrappe(t *testing.T, ctx context.Context, button string, user frappetest.User, want string) {
	t.Helper()
	navigate(t, ctx, "start the sign-in", chromedp.Click(chromedp.CSS(button)))
	finishFrappeSignIn(t, ctx, user, want)
}

// finishFrappeSignIn signs user in at the Frappe simulator's login page
// when it shows, and allows its Confirm Access page when it shows, until a
// page titled want is open.
func finishFrappeSignIn(t *testing.T, ctx context.Context, user frappetest.User, want string) {
	t.Helper()
	switch waitForNewTitle(t, ctx, "Login", "Confirm Access", want) {
	case "Login":
		navigate(t, ctx, "fill in the Frappe login",
			chromedp.SendKeys(chromedp.CSS(`input[name="usr"]`), user.Email),
			chromedp.SendKeys(chromedp.CSS(`input[name="pwd"]`), user.Password),
			chromedp.Click(chromedp.CSS(`form[action="/login"] button[type="submit"]`)))
		if waitForNewTitle(t, ctx, "Confirm Access", want) == want {
			return
		}
	case want:
		return
	}
	navigate(t, ctx, "allow on Frappe's Confirm Access page", chromedp.Click(chromedp.CSS(`#allow`)))
	waitForNewTitle(t, ctx, want)
}

func browserCookies(t *testing.T, ctx context.Context, base string) []*network.Cookie {
	t.Helper()
	res := browserResult(t, ctx, "read cookies", func(ctx context.Context, tg *chromedp.Target) (network.GetCookiesResult, error) {
		return cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/"}})
	})
	return res.Cookies
}

func clearCookies(t *testing.T, ctx context.Context) {
	t.Helper()
	browserDo(t, ctx, "clear cookies", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.ClearBrowserCookies, cdp.Empty{})
		return err
	}))
}

func cookieHeader(cookies []*network.Cookie) string {
	parts := make([]string, 0, len(cookies))
	for _, c := range cookies {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// forgeSession changes the owner session's value, keeping its MAC.
func forgeSession(cookies string) string {
	parts := strings.Split(cookies, "; ")
	for i, p := range parts {
		if v, ok := strings.CutPrefix(p, "erpgate_owner="); ok {
			parts[i] = "erpgate_owner=AAAA" + v[4:]
		}
	}
	return strings.Join(parts, "; ")
}

// postForm posts a form as a program would, without following redirects.
func postForm(t *testing.T, target, cookie, origin string, form url.Values) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", cookie)
	if origin != "" {
		req.Header.Set("Origin", origin)
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
	return resp.StatusCode, string(b)
}

// serviceCall lists tools on /service/mcp with a service token.
func serviceCall(t *testing.T, base, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/service/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Erpgate-Service-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// assertOwnerEvent checks that an ERP administrator's action was recorded.
func assertOwnerEvent(t *testing.T, gw *gateway, slug, action, outcome, user string) {
	t.Helper()
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_slug = $1 AND action = $2 AND outcome = $3
		AND actor_kind = 'erp_admin' AND actor = $4`, slug, action, outcome, user); n == 0 {
		t.Errorf("no %s %s event by %s", outcome, action, user)
	}
}

// navigate runs steps that load another page, marking the page shown so
// that waitForNewTitle waits for the next one: erpgate's pages answer a
// form with a page of the same title.
func navigate(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	browserResult(t, ctx, "mark the page", chromedp.Evaluate[bool](`window.erpgateOldPage = true`))
	browserDo(t, ctx, what, steps...)
}

// waitForNewTitle is waitForTitle for a page that navigate did not mark.
func waitForNewTitle(t *testing.T, ctx context.Context, prefixes ...string) string {
	t.Helper()
	last := ""
	for {
		title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState === "complete" && !window.erpgateOldPage ? document.title : ""`))
		if err == nil {
			if title != "" && title != last {
				last = title + ": " + pageSummary(ctx)
			}
			for _, p := range prefixes {
				if title != "" && strings.HasPrefix(title, p) {
					return p
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for a page titled %q: last title %q: %v", prefixes, last, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// pageSummary is the start of the page's text, for failure messages.
func pageSummary(ctx context.Context) string {
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 600) : ""`))
	return s
}

// The owner's page against the Acumatica simulator, where its settings
// differ: a non-administrator is refused; the administrator changes the
// endpoint version; an invalid version and a move to a tenant they have
// not proven are refused with nothing changed.
func TestChromiumOwnerPageAcumatica(t *testing.T) {
	needChromium(t)
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	acumaticaOAuthSite(t, gw, "acu", sim)
	admin := sim.User(acumaticatest.RoleFull)
	nonAdmin := sim.User(acumaticatest.RoleNonAdmin)
	// Acumatica's user id is the OIDC subject, login@tenant.
	adminID := admin.Username + "@" + sim.Tenant()
	ctx := newChromium(t)
	manageURL := gw.URL + "/sites/acu/manage"

	t.Run("a non-administrator is refused", func(t *testing.T) {
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage site acu")
		if text := pageBody(t, ctx); !strings.Contains(text, "administrators of the site's Acumatica ERP") {
			t.Errorf("sign-in page: %s", text)
		}
		navigate(t, ctx, "start the sign-in", chromedp.Click(chromedp.CSS(`form[action$="/manage/sign-in"] button`)))
		finishAcumaticaSignIn(t, ctx, nonAdmin, "Only the ERP's administrators")
		if text := pageBody(t, ctx); !strings.Contains(text, "as "+nonAdmin.Username+"@"+sim.Tenant()+", who is not one of its administrators") {
			t.Errorf("refusal: %s", text)
		}
		saveScreenshot(t, ctx, "owner-acumatica-refused.png")
		clearCookies(t, ctx)
	})

	t.Run("an administrator changes the endpoint version", func(t *testing.T) {
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage site acu")
		navigate(t, ctx, "start the sign-in", chromedp.Click(chromedp.CSS(`form[action$="/manage/sign-in"] button`)))
		finishAcumaticaSignIn(t, ctx, admin, "Manage Acumatica acu")
		tenant := browserResult(t, ctx, "read the tenant", chromedp.Evaluate[string](`document.querySelector("#setting_tenant").value`))
		if tenant != sim.Tenant() {
			t.Errorf("tenant field %q, want %q", tenant, sim.Tenant())
		}
		saveScreenshot(t, ctx, "owner-acumatica-page.png")
		navigate(t, ctx, "change the endpoint version",
			chromedp.SetValue(chromedp.CSS("#setting_endpoint_version"), "25.200.001"),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/settings"] button`)))
		waitForNewTitle(t, ctx, "Manage Acumatica acu")
		if text := pageBody(t, ctx); !strings.Contains(text, "The site's settings are saved.") {
			t.Errorf("after saving: %s", text)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites WHERE slug = 'acu' AND settings->>'endpoint_version' = '25.200.001' AND settings->>'tenant' = $1`, sim.Tenant()); n != 1 {
			t.Error("the endpoint version was not saved")
		}
		assertOwnerEvent(t, gw, "acu", "update_site", "success", adminID)

		navigate(t, ctx, "give an invalid version",
			chromedp.SetValue(chromedp.CSS("#setting_endpoint_version"), "latest"),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/settings"] button`)))
		waitForNewTitle(t, ctx, "Manage Acumatica acu")
		if text := pageBody(t, ctx); !strings.Contains(text, "Endpoint version is not a version such as 24.200.001.") {
			t.Errorf("invalid version: %s", text)
		}
		saveScreenshot(t, ctx, "owner-acumatica-settings-refused.png")
	})

	t.Run("writes", func(t *testing.T) {
		ownerWritesSection(t, ctx, gw, "acu", manageURL, "Manage Acumatica acu", adminID, nonAdmin.Username+"@"+sim.Tenant(),
			[]string{"acumatica_create_sales_order", "acumatica_update_customer", "acumatica_add_note"}, "acumatica_list_customers")
	})

	t.Run("a wrong new client secret is refused by the ERP", func(t *testing.T) {
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Acumatica acu")
		navigate(t, ctx, "paste a wrong new secret",
			chromedp.SendKeys(chromedp.CSS("#client_secret"), "not-the-new-secret"),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/oauth-secret"] button`)))
		finishAcumaticaSignIn(t, ctx, admin, "Your ERP did not accept the change")
		saveScreenshot(t, ctx, "owner-acumatica-secret-refused.png")
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_slug = 'acu' AND action = 'rotate_oauth_secret' AND outcome = 'refused'`); n != 1 {
			t.Errorf("%d refused rotations", n)
		}
		// The stored secret still signs the owner in, after signing out.
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Acumatica acu")
		navigate(t, ctx, "sign out", chromedp.Click(chromedp.CSS(`form[action$="/manage/sign-out"] button`)))
		waitForNewTitle(t, ctx, "Manage site acu")
		if text := pageBody(t, ctx); !strings.Contains(text, "You are signed out") {
			t.Errorf("after signing out: %s", text)
		}
		navigate(t, ctx, "sign in again", chromedp.Click(chromedp.CSS(`form[action$="/manage/sign-in"] button`)))
		finishAcumaticaSignIn(t, ctx, admin, "Manage Acumatica acu")
	})

	t.Run("a move to another tenant is proven first", func(t *testing.T) {
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Acumatica acu")
		navigate(t, ctx, "change the tenant",
			chromedp.SetValue(chromedp.CSS("#setting_tenant"), "OtherCompany"),
			chromedp.Click(chromedp.CSS(`form[action$="/manage/settings"] button`)))
		finishAcumaticaSignIn(t, ctx, admin, "The change was not saved", "Your ERP did not accept the change")
		saveScreenshot(t, ctx, "owner-acumatica-tenant-refused.png")
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites WHERE slug = 'acu' AND settings->>'tenant' = $1`, sim.Tenant()); n != 1 {
			t.Error("the tenant changed without its proof")
		}
		assertOwnerEvent(t, gw, "acu", "update_site", "refused", adminID)
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM owner_changes`); n != 0 {
			t.Errorf("%d pending changes left", n)
		}
	})
}

// finishAcumaticaSignIn signs user in at the Acumatica simulator's sign-in
// page and allows its consent page, when they show, until a page titled
// one of want is open.
func finishAcumaticaSignIn(t *testing.T, ctx context.Context, user acumaticatest.User, want ...string) {
	t.Helper()
	title := waitForNewTitle(t, ctx, append([]string{"Acumatica ERP - Sign In", "Acumatica ERP - Consent"}, want...)...)
	if title == "Acumatica ERP - Sign In" {
		navigate(t, ctx, "fill in the Acumatica login",
			chromedp.SendKeys(chromedp.CSS(`input[name="`+acumaticatest.FormUsername+`"]`), user.Username),
			chromedp.SendKeys(chromedp.CSS(`input[name="`+acumaticatest.FormPassword+`"]`), user.Password),
			chromedp.Click(chromedp.CSS(`form#login button[type="submit"]`)))
		title = waitForNewTitle(t, ctx, append([]string{"Acumatica ERP - Consent"}, want...)...)
	}
	if title == "Acumatica ERP - Consent" {
		navigate(t, ctx, "allow on Acumatica's consent page", chromedp.Click(chromedp.CSS(`form#consent button[value="yes"]`)))
		waitForNewTitle(t, ctx, want...)
	}
}

// ownerWritesSection walks the Writes section of a signed-in owner's page
// (slug's, titled title): service writes without an approver are refused
// and the form keeps what was ticked; two tools with an approver are
// saved as the site's live settings, one change_setting event by the
// owner each; unticking saves only what changed; a read tool or a name
// the catalogue lacks, posted as a write tool, is refused.
func ownerWritesSection(t *testing.T, ctx context.Context, gw *gateway, slug, manageURL, title, owner, approver string, tools []string, readTool string) {
	t.Helper()
	navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
	waitForNewTitle(t, ctx, title)
	text := pageBody(t, ctx)
	for _, want := range append([]string{"Every write waits for the approval of the person signed in", "this cannot be turned off"}, tools...) {
		if !strings.Contains(text, want) {
			t.Errorf("the Writes section lacks %q: %s", want, text)
		}
	}
	if strings.Contains(text, readTool) {
		t.Errorf("the Writes section lists the read tool %s", readTool)
	}
	writeTools := `SELECT count(*) FROM live_settings l JOIN sites s ON s.id = l.site_id WHERE s.slug = '` + slug + `' AND l.name = 'write_tools'`
	events := func() int {
		return queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_slug = $1 AND action = 'change_setting' AND outcome = 'success'
			AND actor_kind = 'erp_admin' AND actor = $2`, slug, owner)
	}
	tick := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Click(chromedp.CSS(`input[name="write_tool"][value="` + name + `"]`))
	}
	save := chromedp.Click(chromedp.CSS(`form[action$="/manage/writes"] button`))

	navigate(t, ctx, "enable two tools and service writes without an approver",
		tick(tools[0]), tick(tools[1]), chromedp.Click(chromedp.CSS(`input[name="service_writes"]`)), save)
	waitForNewTitle(t, ctx, title)
	if text := pageBody(t, ctx); !strings.Contains(text, "name the ERP user who approves them; nothing was changed") {
		t.Errorf("service writes without an approver: %s", text)
	}
	kept := browserResult(t, ctx, "read the form", chromedp.Evaluate[int](`document.querySelectorAll('input[name="write_tool"]:checked, input[name="service_writes"]:checked').length`))
	if kept != 3 {
		t.Errorf("the refused form kept %d of its 3 ticks", kept)
	}
	if n := queryInt(t, gw.DBURL, writeTools); n != 0 {
		t.Errorf("a refused change stored %d write_tools values", n)
	}
	saveScreenshot(t, ctx, "owner-writes-refused-"+slug+".png")
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="writes"]`, "owner-writes-section-refused-"+slug+".png")

	navigate(t, ctx, "name the approver and save", chromedp.SendKeys(chromedp.CSS("#approver"), approver), save)
	waitForNewTitle(t, ctx, title)
	if text := pageBody(t, ctx); !strings.Contains(text, "The write settings are saved.") {
		t.Errorf("after saving the writes: %s", text)
	}
	if n := queryInt(t, gw.DBURL, writeTools+` AND l.value @> to_jsonb(ARRAY[$1::text, $2::text]) AND jsonb_array_length(l.value) = 2`, tools[0], tools[1]); n != 1 {
		t.Error("write_tools is not the two tools ticked")
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM live_settings l JOIN sites s ON s.id = l.site_id WHERE s.slug = $1
		AND ((l.name = 'service_writes' AND l.value = 'true') OR (l.name = 'service_write_approver' AND l.value = to_jsonb($2::text)))`, slug, approver); n != 2 {
		t.Errorf("%d of the service-write settings stored, want 2", n)
	}
	if n := events(); n != 3 {
		t.Errorf("%d change_setting events by the owner, want 3", n)
	}
	saveScreenshot(t, ctx, "owner-writes-"+slug+".png")
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="writes"]`, "owner-writes-section-"+slug+".png")

	navigate(t, ctx, "untick a tool", tick(tools[1]), save)
	waitForNewTitle(t, ctx, title)
	if n := queryInt(t, gw.DBURL, writeTools+` AND l.value = to_jsonb(ARRAY[$1::text])`, tools[0]); n != 1 {
		t.Error("write_tools is not the one tool left ticked")
	}
	if n := events(); n != 4 {
		t.Errorf("%d change_setting events, want 4 (only what changed is saved)", n)
	}

	// Attack: a read tool, or a name the catalogue lacks, posted as a
	// write tool is refused, and nothing changes.
	cookies := cookieHeader(browserCookies(t, ctx, gw.URL))
	csrf := browserResult(t, ctx, "read the form token", chromedp.Evaluate[string](`document.querySelector('input[name="csrf"]').value`))
	for _, name := range []string{readTool, "drop_everything"} {
		status, body := postForm(t, manageURL+"/writes", cookies, gw.URL, url.Values{"csrf": {csrf}, "write_tool": {tools[0], name}})
		if status != http.StatusBadRequest || !strings.Contains(body, "There is no write tool "+name+" on this site; nothing was changed.") {
			t.Errorf("write tool %s: HTTP %d: %s", name, status, pageText(body))
		}
	}
	if n := queryInt(t, gw.DBURL, writeTools+` AND l.value = to_jsonb(ARRAY[$1::text])`, tools[0]); n != 1 {
		t.Error("a refused post changed write_tools")
	}
}

// saveSectionScreenshot is saveScreenshot of the element sel, for a
// section of a long page.
func saveSectionScreenshot(t *testing.T, ctx context.Context, sel, name string) {
	t.Helper()
	if dir := os.Getenv("ERPGATE_TEST_SCREENSHOTS"); dir != "" {
		png := browserResult(t, ctx, "screenshot "+name, chromedp.Screenshot(sel))
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The owner page's recent activity names who proposed a write: a write a
// service token proposed is the token's, not an "AI client"'s.
func TestChromiumOwnerPageActivityNamesServiceTokenWrites(t *testing.T) {
	needChromium(t)
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	tokenID := uuid.NewString()
	newApprovals(t, gw).proposeAsService(t, site.ID, "acme", tokenID, admin.Email)

	ctx := newChromium(t)
	signInToOwnerPage(t, ctx, gw, admin)
	rows := browserResult(t, ctx, "read the recent activity", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("tr")].map(r => r.innerText.replace(/\s+/g, " ").trim()).filter(r => r.includes("proposed a write"))`))
	if len(rows) != 1 || !strings.Contains(rows[0], "service token "+tokenID) || strings.Contains(rows[0], "AI client") {
		t.Fatalf("the proposal's activity row %q, want it to name service token %s", rows, tokenID)
	}
}
