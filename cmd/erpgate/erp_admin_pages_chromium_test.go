package main

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestChromiumERPAdminPages drives the simulators' administrator pages in
// Chromium, as a person registering erpgate does: sign in to the ERP and
// create the OAuth client there (Frappe's OAuth Client form, Acumatica's
// Connected Applications), read the generated id and secret off the page;
// a non-administrator is refused. Screenshots go to ERPGATE_TEST_SCREENSHOTS.
func TestChromiumERPAdminPages(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Debian's chromium is required at %s: %v", chromiumPath, err)
	}
	redirect := "https://gw.example/oauth/callback"

	t.Run("Frappe OAuth Client", func(t *testing.T) {
		sim := frappetest.NewServer(frappetest.Options{})
		t.Cleanup(sim.Close)
		admin, non := sim.User(frappetest.RoleAdministrator), sim.User(frappetest.RoleNonAdministrator)
		signIn := func(ctx context.Context, u frappetest.User) {
			browserDo(t, ctx, "open the OAuth Client form", chromedp.Navigate(sim.URL+"/app/oauth-client/new"))
			waitForTitle(t, ctx, "Login")
			saveScreenshot(t, ctx, "frappe-login.png")
			browserDo(t, ctx, "sign in to Frappe",
				chromedp.SendKeys(chromedp.CSS(`input[name="usr"]`), u.Email),
				chromedp.SendKeys(chromedp.CSS(`input[name="pwd"]`), u.Password),
				chromedp.Click(chromedp.CSS(`form[action="/login"] button[type="submit"]`)))
		}

		ctx := newChromium(t)
		signIn(ctx, non)
		waitForTitle(t, ctx, "Not Permitted")
		saveScreenshot(t, ctx, "frappe-oauth-client-not-permitted.png")

		ctx = newChromium(t)
		signIn(ctx, admin)
		waitForTitle(t, ctx, "New OAuth Client")
		saveScreenshot(t, ctx, "frappe-oauth-client-new.png")
		fill := func(responseType string) {
			browserDo(t, ctx, "fill in the OAuth Client",
				chromedp.SendKeys(chromedp.CSS(`#app_name`), "erpgate"),
				chromedp.SendKeys(chromedp.CSS(`#redirect_uris`), redirect),
				chromedp.SendKeys(chromedp.CSS(`#default_redirect_uri`), redirect),
				chromedp.SetValue(chromedp.CSS(`#response_type`), responseType),
				chromedp.Click(chromedp.CSS(`#save`)))
		}
		fill("Token")
		waitForTitle(t, ctx, "New OAuth Client")
		if text := browserResult(t, ctx, "read the error", chromedp.Text(chromedp.CSS(`#error`))); !strings.Contains(text, "Combination of Grant Type") {
			t.Errorf("error says %q", text)
		}
		saveScreenshot(t, ctx, "frappe-oauth-client-error.png")
		browserDo(t, ctx, "clear the form", chromedp.Navigate(sim.URL+"/app/oauth-client/new"))
		waitForTitle(t, ctx, "New OAuth Client")
		fill("Code")
		waitForTitle(t, ctx, "erpgate | Frappe")
		saveScreenshot(t, ctx, "frappe-oauth-client-saved.png")
		id := browserResult(t, ctx, "read the client id", chromedp.Text(chromedp.CSS(`#client-id`)))
		secret := browserResult(t, ctx, "read the client secret", chromedp.Text(chromedp.CSS(`#client-secret`)))
		c, ok := sim.Client(id)
		if !ok || c.Secret != secret || c.AppName != "erpgate" || c.SkipAuthorization || len(c.RedirectURIs) != 1 || c.RedirectURIs[0] != redirect {
			t.Fatalf("the page shows %q / %q; the simulator saved %+v", id, secret, c)
		}

		// Skip authorization is off: Frappe asks the person.
		q := url.Values{"client_id": {id}, "response_type": {"code"}, "redirect_uri": {redirect}, "scope": {"all openid"}, "state": {"st"}}
		browserDo(t, ctx, "open authorize", chromedp.Navigate(sim.URL+"/api/method/frappe.integrations.oauth2.authorize?"+q.Encode()))
		waitForTitle(t, ctx, "Confirm Access")
		if text := browserResult(t, ctx, "read Confirm Access", chromedp.Text(chromedp.CSS("body"))); !strings.Contains(text, "erpgate would like to access") {
			t.Errorf("Confirm Access says %q", text)
		}
		saveScreenshot(t, ctx, "frappe-confirm-access.png")
	})

	t.Run("Acumatica Connected Applications", func(t *testing.T) {
		sim := acumaticatest.NewServer(acumaticatest.Options{})
		t.Cleanup(sim.Close)
		admin, non := sim.User(acumaticatest.RoleFull), sim.User(acumaticatest.RoleNonAdmin)
		screen := sim.URL + acumaticatest.PathMain + "?ScreenId=" + acumaticatest.ScreenConnectedApps
		signIn := func(ctx context.Context, u acumaticatest.User) {
			browserDo(t, ctx, "open Connected Applications", chromedp.Navigate(screen))
			waitForTitle(t, ctx, "Sign In")
			saveScreenshot(t, ctx, "acumatica-sign-in.png")
			browserDo(t, ctx, "sign in to Acumatica",
				chromedp.SendKeys(chromedp.CSS(`#UserName`), u.Username),
				chromedp.SendKeys(chromedp.CSS(`#Password`), u.Password),
				chromedp.Click(chromedp.CSS(`#signin`)))
		}

		ctx := newChromium(t)
		signIn(ctx, non)
		waitForTitle(t, ctx, "Error")
		if text := browserResult(t, ctx, "read the refusal", chromedp.Text(chromedp.CSS(`#error`))); text != "You have insufficient rights to access the object (SM303010)." {
			t.Errorf("refusal says %q", text)
		}
		saveScreenshot(t, ctx, "acumatica-connected-apps-refused.png")

		ctx = newChromium(t)
		signIn(ctx, admin)
		waitForTitle(t, ctx, "Connected Applications")
		saveScreenshot(t, ctx, "acumatica-connected-apps.png")
		browserDo(t, ctx, "save a connected application without a redirect URI",
			chromedp.SendKeys(chromedp.CSS(`#ClientName`), "erpgate"),
			chromedp.Click(chromedp.CSS(`#save`)))
		waitForTitle(t, ctx, "Connected Applications")
		if text := browserResult(t, ctx, "read the error", chromedp.Text(chromedp.CSS(`#error`))); !strings.Contains(text, "needs a redirect URI") {
			t.Errorf("error says %q", text)
		}
		saveScreenshot(t, ctx, "acumatica-connected-apps-error.png")
		browserDo(t, ctx, "save the connected application",
			chromedp.SendKeys(chromedp.CSS(`#RedirectUri`), redirect),
			chromedp.Click(chromedp.CSS(`#save`)))
		waitForTitle(t, ctx, "Connected Applications")
		id := browserResult(t, ctx, "read the client id", chromedp.Text(chromedp.CSS(`#client-id`)))
		secret := browserResult(t, ctx, "read the secret", chromedp.Text(chromedp.CSS(`#client-secret`)))
		saveScreenshot(t, ctx, "acumatica-connected-app-saved.png")
		var saved *acumaticatest.Client
		for _, c := range sim.Clients() {
			if c.ID == id {
				saved = &c
			}
		}
		if saved == nil || saved.Secret != secret || saved.Name != "erpgate" || len(saved.RedirectURIs) != 1 || saved.RedirectURIs[0] != redirect ||
			!strings.HasSuffix(id, "@"+sim.Tenant()) {
			t.Fatalf("the page shows %q / %q; the simulator has %+v", id, secret, saved)
		}
	})
}
