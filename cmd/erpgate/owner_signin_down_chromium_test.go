package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestChromiumOwnerSignInWhenTheERPIsDown: the owner's sign-in asks the
// ERP first, as the registration does, and when nothing answers at its
// address shows erpgate's sign-in page again with a sentence saying so
// and the button to try again. Before, the browser was sent to the ERP and
// showed its own "This site can't be reached" page.
func TestChromiumOwnerSignInWhenTheERPIsDown(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	gw := startGateway(t, "", nil)
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	client := sim.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(context.Background(), site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
	erpHost := strings.TrimPrefix(sim.URL, "http://")
	sim.Close() // the ERP is down: its address refuses connections

	ctx := newChromium(t)
	manageURL := gw.URL + "/sites/acme/manage"
	navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
	waitForNewTitle(t, ctx, "Manage site acme")
	for attempt := range 2 { // the first sign-in, and trying again
		navigate(t, ctx, "start the sign-in", chromedp.Click(chromedp.CSS(`form[action$="/manage/sign-in"] button`)))
		if got := waitForNewTitle(t, ctx, "Manage site acme", erpHost, "127.0.0.1"); got != "Manage site acme" {
			t.Fatalf("attempt %d: the browser shows a page titled %q at %s: %s", attempt+1, got,
				browserResult(t, ctx, "read the address", chromedp.Location()), pageSummary(ctx))
		}
		if attempt == 0 {
			saveScreenshot(t, ctx, "TestChromiumOwnerSignInWhenTheERPIsDown.png")
		}
		if loc := browserResult(t, ctx, "read the address", chromedp.Location()); !strings.HasPrefix(loc, gw.URL+"/") {
			t.Errorf("attempt %d: the browser is at %s", attempt+1, loc)
		}
		problem := browserResult(t, ctx, "read the refusal", chromedp.Text(chromedp.CSS(`[role="alert"]`)))
		want := "The ERP at " + sim.URL + " could not be reached. You sign in to this page through your ERP: try again once it answers."
		if problem != want {
			t.Errorf("attempt %d: the page says %q, want %q", attempt+1, problem, want)
		}
		if n := browserResult(t, ctx, "count the sign-in buttons", chromedp.Evaluate[int](`document.querySelectorAll('form[action$="/manage/sign-in"] button').length`)); n != 1 {
			t.Errorf("attempt %d: %d sign-in buttons to try again", attempt+1, n)
		}
	}
}
