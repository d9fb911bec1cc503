package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/store/approval"
)

// An owner signed in to the site's owner page in two browsers (their own,
// and a shared computer they left) presses Sign out everywhere in the
// first: it says in a sentence that they are signed out in every browser,
// and the second browser's page, still open with its forms, changes
// nothing: disabling the site there asks them to sign in, and the site
// stays active.
func TestChromiumOwnerSignOutEverywhere(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	frappeOAuthSite(t, gw, "acme", sim)
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	manageURL := gw.URL + "/sites/acme/manage"
	signIn := func(ctx context.Context) {
		t.Helper()
		navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
		waitForNewTitle(t, ctx, "Manage site acme")
		clickAndSignInAtFrappe(t, ctx, `form[action$="/manage/sign-in"] button`, admin, "Manage Test acme")
	}
	own, shared := newChromiumWithin(t, 120*time.Second), newChromiumWithin(t, 120*time.Second)
	signIn(shared)
	signIn(own)

	const button = `form[action$="/manage/sign-out-everywhere"] button`
	if label := browserResult(t, own, "read the button", chromedp.Text(chromedp.CSS(button))); label != "Sign out everywhere" {
		t.Errorf("the button says %q", label)
	}
	viewAt(t, own, desktopWidth, desktopHeight)
	notWiderThanTheScreen(t, own, "the owner's page at a laptop's width")
	saveScreenshot(t, own, "owner-sign-out-everywhere.png")
	viewAt(t, own, phoneWidth, phoneHeight)
	notWiderThanTheScreen(t, own, "the owner's page at a phone's width")
	saveScreenshot(t, own, "owner-sign-out-everywhere-phone.png")

	navigate(t, own, "sign out everywhere", chromedp.Click(chromedp.CSS(button)))
	waitForNewTitle(t, own, "Manage site acme")
	const sentence = "You are signed out of this site's owner page in this browser and in every other one you signed in with. Nobody can use those sign-ins to change the site any more."
	if text := pageBody(t, own); !strings.Contains(text, sentence) || strings.Contains(text, "Signed in as") {
		t.Errorf("after signing out everywhere the page does not say %q: %s", sentence, text)
	}
	notWiderThanTheScreen(t, own, "signed out everywhere, at a phone's width")
	saveScreenshot(t, own, "owner-signed-out-everywhere-phone.png")
	viewAt(t, own, desktopWidth, desktopHeight)
	notWiderThanTheScreen(t, own, "signed out everywhere, at a laptop's width")
	saveScreenshot(t, own, "owner-signed-out-everywhere.png")
	assertOwnerEvent(t, gw, "acme", "owner_sign_out_everywhere", "success", admin.Email)

	// The shared computer's page is still open, with its forms.
	navigate(t, shared, "disable the site from the other browser", chromedp.Click(chromedp.CSS(`form[action$="/manage/status"] button`)))
	waitForNewTitle(t, shared, "Sign in to manage this site")
	if text := pageBody(t, shared); !strings.Contains(text, "Your sign-in on this site's owner page has ended") || !strings.Contains(text, "Nothing was changed.") {
		t.Errorf("the other browser's change: %s", text)
	}
	saveScreenshot(t, shared, "owner-signed-out-everywhere-other-browser.png")
	if status := queryString(t, gw.DBURL, `SELECT status FROM sites WHERE slug = 'acme'`); status != "active" {
		t.Errorf("the site is %s after the other browser's change", status)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM owner_session_tokens`); n != 0 {
		t.Errorf("%d ERP tokens still kept for the ended sessions", n)
	}
	navigate(t, shared, "open the owner page in the other browser", chromedp.Navigate(manageURL))
	waitForNewTitle(t, shared, "Manage site acme")
	if text := pageBody(t, shared); strings.Contains(text, "Signed in as") {
		t.Errorf("the other browser is still signed in: %s", text)
	}
}

// An approver signed in to a change's approval page in two browsers
// presses Sign out everywhere in the first: the page says so in a
// sentence and offers the sign-in again, and the second browser's Approve
// button, still on its screen, approves nothing.
func TestChromiumApprovalSignOutEverywhere(t *testing.T) {
	needChromium(t)
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	ap := newApprovals(t, gw)
	approver := userWithRole(t, sim, "all-companies")
	update := ap.propose(t, site.ID, "acme", "frappe", approver.Email, "update_customer", customerUpdate("ACME-CORP"))
	pageURL := gw.URL + "/approve/" + update.ID.String()
	signIn := func(ctx context.Context) {
		t.Helper()
		navigate(t, ctx, "open the approval page", chromedp.Navigate(pageURL))
		waitForNewTitle(t, ctx, "Approve a change on Test acme")
		clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, approver, "Approve a change on Test acme")
	}
	own, shared := newChromiumWithin(t, 120*time.Second), newChromiumWithin(t, 120*time.Second)
	signIn(shared)
	signIn(own)

	const button = `form[action$="/sign-out-everywhere"] button`
	if label := browserResult(t, own, "read the button", chromedp.Text(chromedp.CSS(button))); label != "Sign out everywhere" {
		t.Errorf("the button says %q", label)
	}
	viewAt(t, own, desktopWidth, desktopHeight)
	notWiderThanTheScreen(t, own, "the approval page at a laptop's width")
	saveScreenshot(t, own, "approval-sign-out-everywhere.png")
	viewAt(t, own, phoneWidth, phoneHeight)
	notWiderThanTheScreen(t, own, "the approval page at a phone's width")
	saveScreenshot(t, own, "approval-sign-out-everywhere-phone.png")

	navigate(t, own, "sign out everywhere", chromedp.Click(chromedp.CSS(button)))
	waitForNewTitle(t, own, "Approve a change on Test acme")
	const sentence = "You are signed out of Test acme's approval pages in this browser and in every other one you signed in with. Nobody can use those sign-ins to approve or reject a change any more."
	if text := pageBody(t, own); !strings.Contains(text, sentence) || strings.Contains(text, "Signed in as") || !strings.Contains(text, "Sign in to decide") {
		t.Errorf("after signing out everywhere the page does not say %q: %s", sentence, text)
	}
	notWiderThanTheScreen(t, own, "signed out everywhere, at a phone's width")
	saveScreenshot(t, own, "approval-signed-out-everywhere-phone.png")
	viewAt(t, own, desktopWidth, desktopHeight)
	notWiderThanTheScreen(t, own, "signed out everywhere, at a laptop's width")
	saveScreenshot(t, own, "approval-signed-out-everywhere.png")

	// The other browser still shows Approve.
	navigate(t, shared, "approve from the other browser",
		chromedp.WaitEnabled(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
	waitForNewTitle(t, shared, "Sign in to decide")
	saveScreenshot(t, shared, "approval-signed-out-everywhere-other-browser.png")
	if s := ap.status(t, update); s != approval.Proposed {
		t.Errorf("after the other browser's Approve: the change is %s", s)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'approval_sign_out_everywhere' AND actor = $1 AND outcome = 'success'`, approver.Email); n != 1 {
		t.Errorf("%d approval_sign_out_everywhere events", n)
	}
}
