package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// An owner whose System Manager role the ERP took away after they signed
// in asks the owner's page for a service token: the page says in a
// sentence that the ERP no longer lists them as an administrator and that
// erpgate signed them out, nothing is issued, and the owner's page then
// shows the sign-in.
func TestChromiumOwnerSignedOutWhenTheERPNoLongerSaysAdmin(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	site := frappeOAuthSite(t, gw, "acme", sim)
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	activeTokens := `SELECT count(*) FROM service_tokens WHERE site_id = $1 AND NOT revoked`
	before := queryInt(t, gw.DBURL, activeTokens, site.ID)

	ctx := newChromium(t)
	docs := recordDocumentResponses(t, ctx)
	viewAt(t, ctx, desktopWidth, desktopHeight)
	manageURL := gw.URL + "/sites/acme/manage"
	signInToOwnerPage(t, ctx, gw, admin)

	demoted := admin
	demoted.Roles = slices.DeleteFunc(slices.Clone(admin.Roles), func(r string) bool { return r == frappetest.SystemManager })
	sim.AddUser(demoted)
	navigate(t, ctx, "ask for a token",
		chromedp.SendKeys(chromedp.CSS("#token_name"), "after the demotion"),
		chromedp.Click(chromedp.CSS(`form[action$="/manage/tokens"] button`)))
	waitForNewTitle(t, ctx, "You are signed out of this site's owner page")
	const sentence = "Your ERP no longer lists you as an administrator of this site, so erpgate signed you out. Nothing was changed. Sign in again if that has changed."
	if text := pageBody(t, ctx); !strings.Contains(text, sentence) {
		t.Errorf("the page does not say %q: %s", sentence, text)
	}
	if h, _ := docs.last("/sites/acme/manage/tokens"); h.status != http.StatusForbidden {
		t.Errorf("the refusal is HTTP %d, want %d", h.status, http.StatusForbidden)
	}
	if n := queryInt(t, gw.DBURL, activeTokens, site.ID); n != before {
		t.Errorf("%d active tokens after the refusal, want %d", n, before)
	}
	assertOwnerEvent(t, gw, "acme", "issue_service_token", "refused", admin.Email)
	saveScreenshot(t, ctx, "owner-signed-out-not-admin.png")
	notWiderThanTheScreen(t, ctx, "the refusal at a laptop's width")
	viewAt(t, ctx, phoneWidth, phoneHeight)
	notWiderThanTheScreen(t, ctx, "the refusal at a phone's width")
	saveScreenshot(t, ctx, "owner-signed-out-not-admin-phone.png")

	navigate(t, ctx, "open the owner page again", chromedp.Navigate(manageURL))
	waitForNewTitle(t, ctx, "Manage site acme")
	if text := pageBody(t, ctx); strings.Contains(text, "Signed in as") {
		t.Errorf("still signed in: %s", text)
	}
}
