package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
)

// TestChromiumConsoleSitesOwnMaxRecords: on a site's settings page the
// operator gives the site a row cap of its own, below the deployment's
// (design.md: max records per query, capped per site). While the site has
// none, the box is empty and says the deployment's number applies; a number
// above the deployment's is refused in a sentence saying a site's own only
// lowers it; 5 is then the site's, in force on the replica; emptying the
// box returns the site to the deployment's.
func TestChromiumConsoleSitesOwnMaxRecords(t *testing.T) {
	gw, ctx := consoleOfAcme(t, 2*time.Minute)
	var siteID uuid.UUID
	if err := gw.App.pool.QueryRow(ctx, `SELECT id FROM sites WHERE slug = 'acme'`).Scan(&siteID); err != nil {
		t.Fatal(err)
	}
	inForce := func() any { v, _, _ := gw.App.live.Current().Effective(siteID, "max_records"); return v }
	js := func(what, expr string) string {
		t.Helper()
		return browserResult(t, ctx, what, chromedp.Evaluate[string](expr))
	}
	row := `document.querySelector("#setting-max_records")`
	box := `document.querySelector("#value-max_records")`
	save := chromedp.Click(chromedp.CSS(`#setting-max_records button[type="submit"]`))

	browserDo(t, ctx, "open the site's settings", chromedp.Navigate(gw.URL+"/console/settings?site=acme"))
	waitForTitle(t, ctx, "Settings")
	if got := js("the box", `(`+box+` || {value: "no box"}).value`); got != "" {
		t.Fatalf("the site's max_records box holds %q while it has no cap of its own, want it empty", got)
	}
	if got, want := js("the box's hint", box+`.placeholder`), "empty: the deployment's, 1000"; got != want {
		t.Errorf("the site's box hints %q, want %q", got, want)
	}
	saveScreenshot(t, ctx, "console-site-max-records-none.png")

	browserDo(t, ctx, "type 5000", chromedp.SetValue(chromedp.CSS(`#value-max_records`), "5000"))
	submitAndWait(t, ctx, "save 5000", "Settings", save)
	saveScreenshot(t, ctx, "console-site-max-records-above.png")
	if got, want := browserResult(t, ctx, "the refusal", chromedp.Text(chromedp.CSS(`p.error`))),
		"Nothing was changed: Max records per query of a site cannot be above the deployment's 1000 (a site's own value only lowers it)."; got != want {
		t.Errorf("the console says %q after 5000, want %q", got, want)
	}
	if v := inForce(); v != 1000 {
		t.Errorf("after the refused 5000 the site's cap is %v, want the deployment's 1000", v)
	}

	browserDo(t, ctx, "type 5", chromedp.SetValue(chromedp.CSS(`#value-max_records`), "5"))
	submitAndWait(t, ctx, "save 5", "Settings", save)
	saveScreenshot(t, ctx, "console-site-max-records-five.png")
	if got, want := js("the notice", `document.querySelector("p.flash").innerText`), "Max records per query is changed; every replica applies it within a second."; got != want {
		t.Errorf("the notice after 5: %q, want %q", got, want)
	}
	if got := js("the value", row+`.querySelector("code.value").innerText`); got != "5" {
		t.Errorf("the row shows %q in force, want 5", got)
	}
	if v := inForce(); v != 5 {
		t.Errorf("after saving 5 the site's cap in force is %v", v)
	}

	js("empty the box", box+`.value = ""`)
	submitAndWait(t, ctx, "save it empty", "Settings", save)
	if got, want := js("the notice", `document.querySelector("p.flash") ? document.querySelector("p.flash").innerText : document.querySelector("p.error").innerText`),
		"Max records per query of site acme is back to the deployment's."; got != want {
		t.Errorf("the notice after emptying the box: %q, want %q", got, want)
	}
	if v := inForce(); v != 1000 {
		t.Errorf("after emptying the box the site's cap is %v, want the deployment's 1000", v)
	}
}

// TestChromiumConsoleSiteMaxRecordsAboveALoweredDeployments: a site's own
// cap of 500 stays stored when the operator later lowers the deployment's
// to 300, and the engine applies 300. The site's settings page shows 300
// in force and says that the site's own 500 is above it, rather than 500
// alone as if it applied.
func TestChromiumConsoleSiteMaxRecordsAboveALoweredDeployments(t *testing.T) {
	gw, ctx := consoleOfAcme(t, 2*time.Minute)
	js := func(what, expr string) string {
		t.Helper()
		return browserResult(t, ctx, what, chromedp.Evaluate[string](expr))
	}
	save := chromedp.Click(chromedp.CSS(`#setting-max_records button[type="submit"]`))

	browserDo(t, ctx, "open the site's settings", chromedp.Navigate(gw.URL+"/console/settings?site=acme"))
	waitForTitle(t, ctx, "Settings")
	browserDo(t, ctx, "type 500", chromedp.SetValue(chromedp.CSS(`#value-max_records`), "500"))
	submitAndWait(t, ctx, "save 500", "Settings", save)
	browserDo(t, ctx, "open the deployment's settings", chromedp.Navigate(gw.URL+"/console/settings"))
	waitForTitle(t, ctx, "Settings")
	browserDo(t, ctx, "type 300", chromedp.SetValue(chromedp.CSS(`#value-max_records`), "300"))
	submitAndWait(t, ctx, "save 300", "Settings", save)

	browserDo(t, ctx, "open the site's settings again", chromedp.Navigate(gw.URL+"/console/settings?site=acme"))
	waitForTitle(t, ctx, "Settings")
	saveScreenshot(t, ctx, "console-site-max-records-above-the-deployments.png")
	row := `document.querySelector("#setting-max_records")`
	if got := js("the value", row+`.querySelector("code.value").innerText`); got != "300" {
		t.Errorf("the row shows %q in force, want the deployment's 300", got)
	}
	if got, want := js("the row", row+`.querySelector("td").innerText`), "This site's own 500 is above the deployment's 300, so 300 applies."; !strings.Contains(got, want) {
		t.Errorf("the row says %q, want it to say %q", got, want)
	}
	if got := js("the box", `document.querySelector("#value-max_records").value`); got != "500" {
		t.Errorf("the box holds %q, want the site's own 500", got)
	}
}
