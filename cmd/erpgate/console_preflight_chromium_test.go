package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

// TestChromiumConsolePreflightAcumatica runs the preflight from the console
// in real headless Chromium on two Acumatica sites: one healthy, and one
// whose API user has lost its right to the canary inquiry on the simulator
// (an administrator withdrawing it). The healthy site passes every check;
// the broken one fails the readability check, saying which inquiry and
// what to do, and the sites page shows each outcome.
func TestChromiumConsolePreflightAcumatica(t *testing.T) {
	gw := startGateway(t, "", nil)
	register := func(slug string) (*acumaticatest.Server, acumaticatest.ServiceLogin) {
		acu := acumaticatest.NewServer(acumaticatest.Options{})
		t.Cleanup(acu.Close)
		svc := acu.ServiceLogin()
		site, err := registerAcumaticaService(context.Background(), gw.admin, devState{}, acumaticaService(svc), slug, "Acumatica "+slug, acu.URL)
		if err != nil {
			t.Fatal(err)
		}
		client := acu.RegisterClient(gw.callbackURL(t, site.Slug))
		if err := gw.admin.putOAuthClient(context.Background(), site.ID, client.ID, client.Secret); err != nil {
			t.Fatal(err)
		}
		return acu, svc
	}
	register("healthy")
	broken, brokenSvc := register("broken")
	broken.SetInquiryAccess(brokenSvc.Username, acumaticatest.CanaryInquiry, false)

	ctx := newChromium(t)
	signInToConsole(t, ctx, gw, "/console")
	for _, slug := range []string{"healthy", "broken"} {
		if text := browserResult(t, ctx, "read the stored preflight of "+slug, chromedp.Text(chromedp.CSS(`#site-`+slug+` a[href*="/console/preflight"]`))); text != "not run yet" {
			t.Fatalf("%s before the console's run: %q, want \"not run yet\" (registration through the admin API runs none), so what follows comes from the console's run", slug, text)
		}
	}

	// run opens a site's preflight from the sites page, runs it and returns
	// each check's row text by check id.
	run := func(t *testing.T, slug string) map[string]string {
		t.Helper()
		browserDo(t, ctx, "back to the sites", chromedp.Navigate(gw.URL+"/console/sites"))
		waitForTitle(t, ctx, "Sites")
		browserDo(t, ctx, "open the preflight of "+slug, chromedp.Click(chromedp.CSS(`#site-`+slug+` a[href*="/console/preflight"]`)))
		waitForTitle(t, ctx, "Preflight")
		browserDo(t, ctx, "run the preflight of "+slug, chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
		if text := browserResult(t, ctx, "read the flash", chromedp.Text(chromedp.CSS(`p.flash`))); !strings.Contains(text, slug) {
			t.Errorf("flash after running %s: %q", slug, text)
		}
		ids := browserResult(t, ctx, "list the checks", chromedp.Evaluate[[]string](`[...document.querySelectorAll("tbody tr[id^='check-']")].map(r => r.id.slice(6))`))
		if len(ids) == 0 {
			t.Fatalf("the preflight page of %s shows no checks after the run: %s", slug, currentPage(ctx))
		}
		rows := map[string]string{}
		for _, id := range ids {
			rows[id] = browserResult(t, ctx, "read check "+id, chromedp.Text(chromedp.CSS(`tr[id="check-`+id+`"]`)))
		}
		return rows
	}
	// status is a row's Result cell.
	status := func(t *testing.T, id string) string {
		t.Helper()
		return browserResult(t, ctx, "read the result of "+id, chromedp.Text(chromedp.CSS(`tr[id="check-`+id+`"] td.status`)))
	}
	// Every check the Acumatica preflight makes: the address, the
	// credential, the OAuth client, and the instance's own settings.
	allChecks := []string{"dns", "tls", "api_credential", "oauth_client",
		"acumatica.oauth_endpoints", "acumatica.redirect_uri", "acumatica.shared_redirect_uri", "acumatica.endpoint_version",
		"acumatica.canary_exposed", "acumatica.canary_readable"}

	t.Run("a healthy site passes every check", func(t *testing.T) {
		rows := run(t, "healthy")
		if len(rows) != len(allChecks) {
			t.Errorf("checks shown %v, want %v", rows, allChecks)
		}
		for _, id := range allChecks {
			if got := status(t, id); got != "passed" {
				t.Errorf("%s: %q, want passed (%s)", id, got, rows[id])
			}
		}
		if text := browserResult(t, ctx, "read the verdict", chromedp.Text(chromedp.CSS(`#verdict`))); !strings.HasPrefix(text, "Every check passed (run ") {
			t.Errorf("verdict %q", text)
		}
		// The seeded inquiry, found and read by the seeded API user.
		if row := rows["acumatica.canary_readable"]; !strings.Contains(row, acumaticatest.CanaryInquiry) {
			t.Errorf("canary_readable does not name the inquiry %s: %q", acumaticatest.CanaryInquiry, row)
		}
		saveScreenshot(t, ctx, "console-preflight-acumatica-healthy.png")
	})

	t.Run("a site whose API user may not read the canary fails that check", func(t *testing.T) {
		rows := run(t, "broken")
		if len(rows) != len(allChecks) {
			t.Errorf("checks shown %v, want %v", rows, allChecks)
		}
		for _, id := range allChecks {
			want := "passed"
			// The inquiry is still exposed (the service document lists it
			// whoever asks); only reading it is refused.
			if id == "acumatica.canary_readable" {
				want = "failed"
			}
			if got := status(t, id); got != want {
				t.Errorf("%s: %q, want %s (%s)", id, got, want, rows[id])
			}
		}
		if text := browserResult(t, ctx, "read the verdict", chromedp.Text(chromedp.CSS(`#verdict`))); !strings.HasPrefix(text, "1 of "+strconv.Itoa(len(allChecks))+" checks failed (run ") {
			t.Errorf("verdict %q", text)
		}
		found := browserResult(t, ctx, "read what was found", chromedp.Text(chromedp.CSS(`tr[id="check-acumatica.canary_readable"] td:nth-of-type(2)`)))
		fix := browserResult(t, ctx, "read the fix", chromedp.Text(chromedp.CSS(`tr[id="check-acumatica.canary_readable"] td:nth-of-type(3)`)))
		// The seeded canary inquiry is MCPAccess on screen GI000001; the
		// simulator refuses it with Acumatica's "insufficient rights" body.
		if !strings.Contains(found, acumaticatest.CanaryInquiry) {
			t.Errorf("found %q does not name the inquiry %s", found, acumaticatest.CanaryInquiry)
		}
		if !strings.Contains(fix, acumaticatest.CanaryInquiry) || !strings.Contains(fix, "View rights") {
			t.Errorf("fix %q does not say to give View rights on %s", fix, acumaticatest.CanaryInquiry)
		}
		saveScreenshot(t, ctx, "console-preflight-acumatica-broken.png")
	})

	t.Run("the sites page shows each outcome", func(t *testing.T) {
		browserDo(t, ctx, "back to the sites", chromedp.Navigate(gw.URL+"/console/sites"))
		waitForTitle(t, ctx, "Sites")
		if text := browserResult(t, ctx, "read the healthy summary", chromedp.Text(chromedp.CSS(`#site-healthy a[href*="/console/preflight"]`))); !strings.HasPrefix(text, "passed") {
			t.Errorf("healthy site's summary %q", text)
		}
		want := "failed 1 of " + strconv.Itoa(len(allChecks)) + " checks"
		if text := browserResult(t, ctx, "read the broken summary", chromedp.Text(chromedp.CSS(`#site-broken a[href*="/console/preflight"]`))); !strings.HasPrefix(text, want) {
			t.Errorf("broken site's summary %q, want %q…", text, want)
		}
		saveScreenshot(t, ctx, "console-sites-preflight-outcomes.png")
	})
}
