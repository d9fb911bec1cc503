package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// A site the operator disabled stays disabled until the operator enables
// it: its owner, signed in on the owner page, is told so in a plain
// sentence, and neither the page's status form nor its delete form (delete,
// then register the same address again) undoes the operator's decision.
// The owner still pauses and resumes the site themselves, and the console
// and the admin API say who disabled it.
func TestChromiumOwnerCannotUndoOperatorDisable(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	client := sim.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(context.Background(), site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	ctx := newChromium(t)
	manageURL := gw.URL + "/sites/acme/manage"
	const operatorSentence = "Your erpgate operator disabled this site, so only they can enable it again"

	// apiSite is the site as the admin API shows it.
	apiSite := func(t *testing.T) (status, disabledBy string) {
		t.Helper()
		var s struct {
			Status     string  `json:"status"`
			DisabledBy *string `json:"disabled_by"`
		}
		if err := gw.admin.do(context.Background(), http.MethodGet, "/sites/"+site.ID, nil, &s); err != nil {
			t.Fatal(err)
		}
		if s.DisabledBy == nil {
			return s.Status, "null"
		}
		return s.Status, *s.DisabledBy
	}
	setStatus := func(t *testing.T, status string) {
		t.Helper()
		if err := gw.admin.do(context.Background(), http.MethodPatch, "/sites/"+site.ID, map[string]string{"status": status}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// ownerPost posts one of the owner page's forms as the signed-in
	// browser would, with its cookies and form token.
	ownerPost := func(t *testing.T, path string, form url.Values) (int, string) {
		t.Helper()
		form.Set("csrf", browserResult(t, ctx, "read the form token", chromedp.Evaluate[string](`document.querySelector('input[name="csrf"]').value`)))
		return postForm(t, manageURL+path, cookieHeader(browserCookies(t, ctx, gw.URL)), gw.URL, form)
	}
	statusButtons := func(t *testing.T) int {
		t.Helper()
		return browserResult(t, ctx, "count the status forms", chromedp.Evaluate[int](`document.querySelectorAll('form[action$="/manage/status"] button').length`))
	}

	signInToOwnerPage(t, ctx, gw, admin)

	t.Run("the operator disables the site in the console", func(t *testing.T) {
		navigate(t, ctx, "open the console", chromedp.Navigate(gw.URL+"/console"))
		waitForNewTitle(t, ctx, "Console sign-in")
		navigate(t, ctx, "sign in", chromedp.SendKeys(chromedp.CSS(`#token`), gw.AdminToken), chromedp.Click(chromedp.CSS(`form button[type="submit"]`)))
		waitForNewTitle(t, ctx, "Sites")
		navigate(t, ctx, "click disable", chromedp.Click(chromedp.CSS(`#site-acme form.inline button`)))
		waitForNewTitle(t, ctx, "Sites")
		if text := browserResult(t, ctx, "read the site's status", chromedp.Text(chromedp.CSS("#site-acme .status"))); strings.Join(strings.Fields(text), " ") != "disabled by the operator" {
			t.Errorf("console status after the operator's disable: %q", text)
		}
		saveScreenshot(t, ctx, "console-sites-operator-disabled.png")
		if status, by := apiSite(t); status != "disabled" || by != "operator" {
			t.Errorf("admin API: status %s, disabled_by %s", status, by)
		}
	})

	t.Run("the owner cannot enable it", func(t *testing.T) {
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Test acme")
		if text := pageBody(t, ctx); !strings.Contains(text, operatorSentence) {
			t.Errorf("the owner page does not say the operator disabled the site: %s", text)
		}
		if n := statusButtons(t); n != 0 {
			t.Errorf("the owner page offers %d status buttons on a site the operator disabled", n)
		}
		saveScreenshot(t, ctx, "owner-operator-disabled.png")
		saveSectionScreenshot(t, ctx, `section[aria-labelledby="status"]`, "owner-operator-disabled-section.png")

		// The page's form, posted as it was before the operator's disable.
		for _, status := range []string{"active", "disabled"} {
			code, body := ownerPost(t, "/status", url.Values{"status": {status}})
			if code != http.StatusConflict || !strings.Contains(pageText(body), operatorSentence+"; nothing was changed.") {
				t.Errorf("owner posts status %s: HTTP %d: %s", status, code, pageText(body))
			}
		}
		if status, by := apiSite(t); status != "disabled" || by != "operator" {
			t.Errorf("after the owner's posts: status %s, disabled_by %s", status, by)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_slug = 'acme' AND action = 'update_site'
			AND actor_kind = 'erp_admin' AND outcome = 'refused'`); n != 2 {
			t.Errorf("%d refused update_site events by the owner, want 2", n)
		}
	})

	t.Run("the owner cannot delete it to register it again", func(t *testing.T) {
		code, body := ownerPost(t, "/delete", url.Values{"confirm": {"acme"}})
		if code != http.StatusConflict || !strings.Contains(pageText(body), "Your erpgate operator disabled this site, so it cannot be deleted until they enable it again; nothing was deleted.") {
			t.Errorf("owner deletes: HTTP %d: %s", code, pageText(body))
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites WHERE slug = 'acme' AND status = 'disabled'`); n != 1 {
			t.Error("the operator's disabled site is gone or enabled")
		}
	})

	// The operator's disable is theirs to lift: the owner cannot change the
	// site's write settings meanwhile either, and the Writes section says
	// so instead of offering a form that would be refused.
	t.Run("the owner cannot change its write settings", func(t *testing.T) {
		const writesSentence = "Your erpgate operator disabled this site, so its settings cannot be changed until they enable it again"
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Test acme")
		section := browserResult(t, ctx, "read the Writes section", chromedp.Text(chromedp.CSS(`section[aria-labelledby="writes"]`)))
		if !strings.Contains(section, writesSentence+".") {
			t.Errorf("the Writes section of a site the operator disabled does not say so: %s", section)
		}
		if n := browserResult(t, ctx, "count the Writes section's enabled fields and buttons", chromedp.Evaluate[int](
			`Array.from(document.querySelectorAll('form[action$="/manage/writes"] input:not([type="hidden"]), form[action$="/manage/writes"] button')).filter(function (e) { return !e.matches(":disabled"); }).length`)); n != 0 {
			t.Errorf("the Writes section offers %d fields and buttons on a site the operator disabled", n)
		}
		saveSectionScreenshot(t, ctx, `section[aria-labelledby="writes"]`, "owner-operator-disabled-writes.png")

		// The page's form, posted as it was before the operator's disable.
		// A change, one the form would refuse by itself (service writes with
		// no approver), and one that changes nothing: each is told the same.
		for _, form := range []url.Values{
			{"write_tool": {"update_customer"}, "service_writes": {"on"}, "approver": {admin.Email}},
			{"service_writes": {"on"}},
			{},
		} {
			code, body := ownerPost(t, "/writes", form)
			if code != http.StatusConflict || !strings.Contains(pageText(body), writesSentence+"; nothing was changed.") {
				t.Errorf("owner posts write settings %v: HTTP %d: %s", form, code, pageText(body))
			}
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM live_settings WHERE site_id = '`+site.ID+`'`); n != 0 {
			t.Errorf("the owner's post saved %d settings of a site the operator disabled", n)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_slug = 'acme' AND action = 'change_setting'
			AND actor_kind = 'erp_admin' AND outcome = 'refused'`); n != 3 {
			t.Errorf("%d refused change_setting events by the owner, want 3", n)
		}
	})

	// Its other settings (display name, the connector's settings) are
	// the same: the Settings section says so and offers no form that
	// would be refused.
	t.Run("the owner cannot change its other settings", func(t *testing.T) {
		const settingsSentence = "Your erpgate operator disabled this site, so its settings cannot be changed until they enable it again."
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Test acme")
		section := browserResult(t, ctx, "read the Settings section", chromedp.Text(chromedp.CSS(`section[aria-labelledby="settings"]`)))
		if !strings.Contains(section, settingsSentence) {
			t.Errorf("the Settings section of a site the operator disabled does not say so: %s", section)
		}
		if n := browserResult(t, ctx, "count the Settings section's enabled fields and buttons", chromedp.Evaluate[int](
			`Array.from(document.querySelectorAll('form[action$="/manage/settings"] input:not([type="hidden"]), form[action$="/manage/settings"] button')).filter(function (e) { return !e.matches(":disabled"); }).length`)); n != 0 {
			t.Errorf("the Settings section offers %d fields and buttons on a site the operator disabled", n)
		}
		saveSectionScreenshot(t, ctx, `section[aria-labelledby="settings"]`, "owner-operator-disabled-settings.png")
		code, body := ownerPost(t, "/settings", url.Values{"display_name": {"Renamed while disabled"}})
		if code != http.StatusConflict || !strings.Contains(pageText(body), "nothing was changed") {
			t.Errorf("owner posts settings: HTTP %d: %s", code, pageText(body))
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites WHERE slug = 'acme' AND display_name = 'Renamed while disabled'`); n != 0 {
			t.Error("the owner renamed a site the operator disabled")
		}
	})

	// Nor its credentials and service tokens: a new OAuth client secret,
	// another API credential and a new token would each change what the
	// site lets in while the operator has it disabled. Revoking a token
	// lets in less, so it stays possible. Each form is posted directly, as
	// a program would, not through the page.
	t.Run("the owner cannot change its credentials or issue a token, but revokes one", func(t *testing.T) {
		const (
			secretSentence = "Your erpgate operator disabled this site, so its OAuth client secret cannot be changed until they enable it again"
			apiSentence    = "Your erpgate operator disabled this site, so its API credential cannot be changed until they enable it again"
			tokenSentence  = "Your erpgate operator disabled this site, so no service token can be issued until they enable it again"
		)
		var tokenID string
		if err := gw.App.pool.QueryRow(context.Background(), `SELECT id::text FROM service_tokens WHERE site_id = $1 AND NOT revoked`, site.ID).Scan(&tokenID); err != nil {
			t.Fatalf("the site's service token: %v", err)
		}
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Test acme")
		for _, s := range []struct{ section, form, sentence string }{
			{"oauth", "oauth-secret", secretSentence},
			{"api", "api-credential", apiSentence},
			{"tokens", "tokens", tokenSentence},
		} {
			text := browserResult(t, ctx, "read the "+s.section+" section", chromedp.Text(chromedp.CSS(`section[aria-labelledby="`+s.section+`"]`)))
			if !strings.Contains(text, s.sentence+".") {
				t.Errorf("the %s section of a site the operator disabled does not say so: %s", s.section, text)
			}
			if n := browserResult(t, ctx, "count the "+s.form+" form's enabled fields and buttons", chromedp.Evaluate[int](
				`Array.from(document.querySelectorAll('form[action$="/manage/`+s.form+`"] input:not([type="hidden"]), form[action$="/manage/`+s.form+`"] select, form[action$="/manage/`+s.form+`"] button')).filter(function (e) { return !e.matches(":disabled"); }).length`)); n != 0 {
				t.Errorf("the %s section offers %d fields and buttons on a site the operator disabled", s.section, n)
			}
		}
		if n := browserResult(t, ctx, "count the Revoke buttons", chromedp.Evaluate[int](`document.querySelectorAll('form[action$="/manage/tokens/revoke"] button:enabled').length`)); n != 1 {
			t.Errorf("the Service tokens section offers %d Revoke buttons, want 1", n)
		}
		for _, w := range []int64{phoneWidth, desktopWidth} {
			viewAt(t, ctx, w, desktopHeight)
			notWiderThanTheScreen(t, ctx, fmt.Sprintf("the owner page of a site the operator disabled at %d px", w))
			for _, s := range []string{"oauth", "api", "tokens"} {
				saveSectionScreenshot(t, ctx, `section[aria-labelledby="`+s+`"]`, fmt.Sprintf("%d-owner-operator-disabled-%s.png", w, s))
			}
			saveScreenshot(t, ctx, fmt.Sprintf("%d-owner-operator-disabled.png", w))
		}

		refused := func(action string) int {
			return queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_slug = 'acme' AND action = $1
				AND actor_kind = 'erp_admin' AND outcome = 'refused'`, action)
		}
		identity := func() string {
			var id string
			if err := gw.App.pool.QueryRow(context.Background(), `SELECT verified_identity FROM connections WHERE site_id = $1 AND type = 'api_token'`, site.ID).Scan(&id); err != nil {
				t.Fatal(err)
			}
			return id
		}
		before := identity()
		other := userWithRole(t, sim, "all-companies")
		for _, p := range []struct {
			path, sentence, nothing, action string
			form                            url.Values
		}{
			{"/oauth-secret", secretSentence, "nothing was changed", "rotate_oauth_secret", url.Values{"client_secret": {"a-new-secret-from-the-erp"}}},
			{"/api-credential", apiSentence, "nothing was saved", "put_api_connection", url.Values{"cred_api_key": {other.APIKey}, "cred_api_secret": {other.APISecret}}},
			{"/tokens", tokenSentence, "nothing was issued", "issue_service_token", url.Values{"name": {"while disabled"}, "expires_in_days": {"90"}}},
		} {
			code, body := ownerPost(t, p.path, p.form)
			if code != http.StatusConflict || !strings.Contains(pageText(body), p.sentence+"; "+p.nothing+".") {
				t.Errorf("owner posts %s: HTTP %d: %s", p.path, code, pageText(body))
			}
			if n := refused(p.action); n != 1 {
				t.Errorf("owner posts %s: %d refused %s events by the owner, want 1", p.path, n, p.action)
			}
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM owner_changes WHERE site_id = '`+site.ID+`'`); n != 0 {
			t.Errorf("the owner's new client secret waits for its proof (%d changes) on a site the operator disabled", n)
		}
		if got := identity(); got != before {
			t.Errorf("the owner replaced the API credential of a site the operator disabled: verified as %q, was %q", got, before)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM service_tokens WHERE site_id = '`+site.ID+`'`); n != 1 {
			t.Errorf("the site has %d service tokens after the owner's post, want its 1", n)
		}

		code, body := ownerPost(t, "/tokens/revoke", url.Values{"token_id": {tokenID}})
		if code != http.StatusSeeOther {
			t.Errorf("owner revokes a token: HTTP %d: %s", code, pageText(body))
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM service_tokens WHERE id = '`+tokenID+`' AND revoked`); n != 1 {
			t.Error("the owner could not revoke a service token of a site the operator disabled")
		}
		viewAt(t, ctx, 1024, 900)
	})

	t.Run("the owner pauses and resumes it once the operator enabled it", func(t *testing.T) {
		setStatus(t, "active")
		if status, by := apiSite(t); status != "active" || by != "null" {
			t.Errorf("after the operator's enable: status %s, disabled_by %s", status, by)
		}
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage Test acme")
		navigate(t, ctx, "pause the site", chromedp.Click(chromedp.CSS(`form[action$="/manage/status"] button`)))
		waitForNewTitle(t, ctx, "Manage Test acme")
		// The status section's words: recent activity, further down, still
		// tells the refusals of the operator's disable.
		section := browserResult(t, ctx, "read the status section", chromedp.Text(chromedp.CSS(`section[aria-labelledby="status"]`)))
		if text := pageBody(t, ctx); !strings.Contains(text, "The site is disabled") || strings.Contains(section, operatorSentence) || statusButtons(t) != 1 {
			t.Errorf("after the owner's disable: %s", text)
		}
		if status, by := apiSite(t); status != "disabled" || by != "owner" {
			t.Errorf("after the owner's disable: status %s, disabled_by %s", status, by)
		}
		saveScreenshot(t, ctx, "owner-paused.png")
		navigate(t, ctx, "resume the site", chromedp.Click(chromedp.CSS(`form[action$="/manage/status"] button`)))
		waitForNewTitle(t, ctx, "Manage Test acme")
		if text := pageBody(t, ctx); !strings.Contains(text, "The site is enabled.") {
			t.Errorf("after the owner's enable: %s", text)
		}
		if status, by := apiSite(t); status != "active" || by != "null" {
			t.Errorf("after the owner's enable: status %s, disabled_by %s", status, by)
		}
	})

	t.Run("the operator's disable of a paused site is the operator's", func(t *testing.T) {
		navigate(t, ctx, "pause the site", chromedp.Click(chromedp.CSS(`form[action$="/manage/status"] button`)))
		waitForNewTitle(t, ctx, "Manage Test acme")
		setStatus(t, "disabled")
		if status, by := apiSite(t); status != "disabled" || by != "operator" {
			t.Errorf("the operator disabled a paused site: status %s, disabled_by %s", status, by)
		}
		// The owner's page, open since the pause, still offers to enable.
		navigate(t, ctx, "click enable on the page shown before the operator's disable", chromedp.Click(chromedp.CSS(`form[action$="/manage/status"] button`)))
		waitForNewTitle(t, ctx, "Manage Test acme")
		if text := pageBody(t, ctx); !strings.Contains(text, operatorSentence+"; nothing was changed.") || statusButtons(t) != 0 {
			t.Errorf("owner resumes a site the operator then disabled: %s", text)
		}
		saveSectionScreenshot(t, ctx, `section[aria-labelledby="status"]`, "owner-operator-disabled-refused.png")
		if status, by := apiSite(t); status != "disabled" || by != "operator" {
			t.Errorf("after the owner's click: status %s, disabled_by %s", status, by)
		}
		navigate(t, ctx, "open the console", chromedp.Navigate(gw.URL+"/console/sites"))
		waitForNewTitle(t, ctx, "Sites")
		if text := browserResult(t, ctx, "read the site's status", chromedp.Text(chromedp.CSS("#site-acme .status"))); strings.Join(strings.Fields(text), " ") != "disabled by the operator" {
			t.Errorf("console status: %q", text)
		}
	})
}
