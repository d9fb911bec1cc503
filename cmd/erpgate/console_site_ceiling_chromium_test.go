package main

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
)

// TestChromiumConsoleSitesOwnCallCeiling: on a site's settings page the
// operator gives the site a call ceiling of its own (seed 000: a small
// licence tier's Acumatica throttles at some 6 calls at once). While the
// site has none, the box is empty and says the deployment's number applies
// (a box holding the deployment's number would, saved, pin the site to
// it); nonsense is refused in a sentence that says what is allowed; 6 is
// then the site's, in force on the replica; emptying the box returns the
// site to the deployment's, and the page says so rather than "default".
func TestChromiumConsoleSitesOwnCallCeiling(t *testing.T) {
	gw, ctx := consoleOfAcme(t, 2*time.Minute)
	var siteID uuid.UUID
	if err := gw.App.pool.QueryRow(ctx, `SELECT id FROM sites WHERE slug = 'acme'`).Scan(&siteID); err != nil {
		t.Fatal(err)
	}
	inForce := func() any { v, _, _ := gw.App.live.Current().Effective(siteID, "site_concurrency"); return v }
	js := func(what, expr string) string {
		t.Helper()
		return browserResult(t, ctx, what, chromedp.Evaluate[string](expr))
	}
	row := `document.querySelector("#setting-site_concurrency")`
	box := `document.querySelector("#value-site_concurrency")`

	browserDo(t, ctx, "open the site's settings", chromedp.Navigate(gw.URL+"/console/settings?site=acme"))
	waitForTitle(t, ctx, "Settings")
	if got := js("the box", box+`.value`); got != "" {
		t.Errorf("the site's box holds %q while it has no ceiling of its own, want it empty", got)
	}
	if got, want := js("the box's hint", box+`.placeholder`), "empty: the deployment's, 10"; got != want {
		t.Errorf("the site's box hints %q, want %q", got, want)
	}
	if got, want := js("the row's source", row+`.querySelector(".source").innerText`), "From: the deployment's value, default, from ERPGATE_LIMIT_SITE_CONCURRENCY"; got != want {
		t.Errorf("the row says %q, want %q", got, want)
	}
	saveScreenshot(t, ctx, "console-site-ceiling-none.png")

	browserDo(t, ctx, "type 0", chromedp.SetValue(chromedp.CSS(`#value-site_concurrency`), "0"))
	submitAndWait(t, ctx, "save 0", "Settings", chromedp.Click(chromedp.CSS(`#setting-site_concurrency button[type="submit"]`)))
	saveScreenshot(t, ctx, "console-site-ceiling-zero.png")
	if got, want := browserResult(t, ctx, "the refusal", chromedp.Text(chromedp.CSS(`p.error`))),
		"Nothing was changed: Per-site concurrent calls (ceiling) must be a whole number from 1 to 1073741824."; got != want {
		t.Errorf("the console says %q after 0, want %q", got, want)
	}
	if v := inForce(); v != 10 {
		t.Errorf("after the refused 0 the site's ceiling is %v, want the deployment's 10", v)
	}

	browserDo(t, ctx, "type 6", chromedp.SetValue(chromedp.CSS(`#value-site_concurrency`), "6"))
	submitAndWait(t, ctx, "save 6", "Settings", chromedp.Click(chromedp.CSS(`#setting-site_concurrency button[type="submit"]`)))
	saveScreenshot(t, ctx, "console-site-ceiling-six.png")
	if got, want := js("the notice", `document.querySelector("p.flash").innerText`), "Per-site concurrent calls (ceiling) is changed; every replica applies it within a second."; got != want {
		t.Errorf("the notice after 6: %q, want %q", got, want)
	}
	if got := js("the value", row+`.querySelector("code.value").innerText`); got != "6" {
		t.Errorf("the row shows %q in force, want 6", got)
	}
	if got := js("the reset button", row+`.querySelector("button[name=reset]").innerText`); got != "Back to the deployment's" {
		t.Errorf("the row's reset button says %q, want \"Back to the deployment's\"", got)
	}
	if v := inForce(); v != 6 {
		t.Errorf("after saving 6 the site's ceiling in force is %v", v)
	}

	js("empty the box", box+`.value = ""`)
	submitAndWait(t, ctx, "save it empty", "Settings", chromedp.Click(chromedp.CSS(`#setting-site_concurrency button[type="submit"]`)))
	saveScreenshot(t, ctx, "console-site-ceiling-emptied.png")
	if got, want := js("the notice", `document.querySelector("p.flash") ? document.querySelector("p.flash").innerText : document.querySelector("p.error").innerText`),
		"Per-site concurrent calls (ceiling) of site acme is back to the deployment's."; got != want {
		t.Errorf("the notice after emptying the box: %q, want %q", got, want)
	}
	if v := inForce(); v != 10 {
		t.Errorf("after emptying the box the site's ceiling is %v, want the deployment's 10", v)
	}
}
