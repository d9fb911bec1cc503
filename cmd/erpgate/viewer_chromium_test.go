package main

import (
	"context"
	"encoding/csv"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// viewerSeed is what TestChromiumViewer stores: 130 tool calls of acme,
// one every two minutes back from now, and 20 of a deleted site.
const (
	viewerAcmeCalls = 130
	viewerGoneCalls = 20
	// viewerHostile is the ERP user and tool name of one more call: markup
	// that would run if a page or chart did not escape it.
	viewerHostile = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`
	viewerCalls   = viewerAcmeCalls + viewerGoneCalls + 1
)

// seedViewerEvents stores the events the viewer test expects: call i of
// acme is by ann (even i) or bob (odd i), with client claude (i%3 == 0)
// or cursor, tool get_customer (i%4 == 0) or list_customers, and fails
// with PERMISSION_DENIED when i%10 == 0.
func seedViewerEvents(t *testing.T, gw *gateway) {
	t.Helper()
	ctx := t.Context()
	if _, err := gw.App.pool.Exec(ctx, `
		INSERT INTO usage_events (occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, error_code,
		                          duration_ms, erp_ms, erp_user, client_id)
		SELECT now() - (i * 2 + 1) * interval '1 minute', s.id, 'acme', 'oauth', 'req-' || i, 'tools/call',
		       CASE WHEN i % 4 = 0 THEN 'get_customer' ELSE 'list_customers' END,
		       CASE WHEN i % 10 = 0 THEN 'error' ELSE 'success' END,
		       CASE WHEN i % 10 = 0 THEN 'PERMISSION_DENIED' ELSE '' END,
		       40 + i, 30 + i,
		       CASE WHEN i % 2 = 0 THEN 'ann@acme.example' ELSE 'bob@acme.example' END,
		       CASE WHEN i % 3 = 0 THEN 'claude' ELSE 'cursor' END
		FROM sites s, generate_series(0, $1 - 1) i WHERE s.slug = 'acme'`, viewerAcmeCalls); err != nil {
		t.Fatal(err)
	}
	if _, err := gw.App.pool.Exec(ctx, `
		INSERT INTO usage_events (occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, duration_ms, erp_ms, client_id)
		SELECT now() - (i * 7 + 2) * interval '1 minute', '00000000-0000-4000-8000-00000000dead', 'gone', 'service_token', 'gone-' || i,
		       'tools/call', 'list_items', 'success', 15, 5, 'token-1'
		FROM generate_series(0, $1 - 1) i`, viewerGoneCalls); err != nil {
		t.Fatal(err)
	}
	if _, err := gw.App.pool.Exec(ctx, `
		INSERT INTO usage_events (occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, duration_ms, erp_ms, erp_user, client_id)
		SELECT now() - interval '3 hours', id, slug, 'oauth', 'hostile', 'tools/call', $1, 'success', 9, 4, $1, 'claude'
		FROM sites WHERE slug = 'acme'`, viewerHostile); err != nil {
		t.Fatal(err)
	}
	if _, err := gw.App.pool.Exec(ctx, `
		INSERT INTO auth_events (occurred_at, site_id, event, erp_user, client_id, reason)
		SELECT now() - interval '30 minutes', id, 'sign_in', 'ann@acme.example', 'claude', '' FROM sites WHERE slug = 'acme'
		UNION ALL
		SELECT now() - interval '20 minutes', id, 'login_denied', 'eve@acme.example', 'claude', 'access_denied' FROM sites WHERE slug = 'acme'`); err != nil {
		t.Fatal(err)
	}
}

// signInToConsole opens path of the console, which asks for the sign-in,
// signs in with the admin token and waits for the sites page, where a
// sign-in lands.
func signInToConsole(t *testing.T, ctx context.Context, gw *gateway, path string) {
	t.Helper()
	browserDo(t, ctx, "open the console", chromedp.Navigate(gw.URL+path))
	waitForTitle(t, ctx, "Console sign-in")
	browserDo(t, ctx, "sign in",
		chromedp.SendKeys(chromedp.CSS(`#token`), gw.AdminToken),
		chromedp.Click(chromedp.CSS(`form button[type="submit"]`)))
	waitForTitle(t, ctx, "Sites")
}

// consoleOfAcme starts a gateway with acme, a Frappe site on a simulator
// of its own, stores each of seed's events, and signs in to its console
// in a Chromium of the deadline within, which it returns on the sites
// page.
func consoleOfAcme(t *testing.T, within time.Duration, seed ...func(*testing.T, *gateway)) (*gateway, context.Context) {
	t.Helper()
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	gw := startGateway(t, "", nil)
	gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "all-companies"))
	for _, s := range seed {
		s(t, gw)
	}
	ctx := newChromiumWithin(t, within)
	signInToConsole(t, ctx, gw, "/console")
	return gw, ctx
}

// submitAndWait runs steps that leave the page (a form sent, a link
// followed) and waits until another page with a title starting with title
// is loaded: the same title would otherwise be seen on the old page.
func submitAndWait(t *testing.T, ctx context.Context, what, title string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	browserDo(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.__erpgateOld = true`))
	browserDo(t, ctx, what, steps...)
	deadline := time.Now().Add(20 * time.Second)
	for {
		// An evaluation can fail while the old page is being replaced
		// ("Inspected target navigated or closed"): that is the change
		// under way, so look again.
		old, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__erpgateOld === true`))
		if err == nil && !old {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the page did not change (%s; last error %v)", what, currentPage(ctx), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitForTitle(t, ctx, title)
}

// downloadExport clicks the export link and returns the file the browser
// saved.
func downloadExport(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	dir := t.TempDir()
	browserDo(t, ctx, "allow downloads", chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir,
		})
		return err
	}))
	browserDo(t, ctx, "click the export", chromedp.Click(chromedp.CSS(`#export`)))
	path := filepath.Join(dir, name)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			// Chromium writes to a .crdownload file and renames it when done.
			return string(b)
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			t.Fatalf("no %s downloaded; the folder has %v", name, entries)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestChromiumViewer drives the usage and audit viewer in real headless
// Chromium: the charts and the first page, filters set in the form (and
// kept in the URL), keyset paging through every event once, the CSV
// export of a filtered view, bad filters, and the audit with sign-in and
// administration events.
func TestChromiumViewer(t *testing.T) {
	frappe := frappetest.NewServer(frappetest.Options{})
	defer frappe.Close()
	gw := startGateway(t, "", nil)
	gw.registerFrappe(t, "acme", frappe, userWithRole(t, frappe, "all-companies"))
	seedViewerEvents(t, gw)
	ctx := newChromium(t)

	signInToConsole(t, ctx, gw, "/console/usage")
	submitAndWait(t, ctx, "open the viewer", "Usage", chromedp.Click(chromedp.CSS(`nav a[href$="/console/usage"]`)))
	if n := browserResult(t, ctx, "count the rows", chromedp.Evaluate[int](`document.querySelectorAll("#events tbody tr").length`)); n != 50 {
		t.Errorf("first page: %d rows, want 50", n)
	}
	charts := browserResult(t, ctx, "read the charts", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("svg.chart")].map(s => s.getAttribute("role") + "|" + s.querySelector("title").textContent)`))
	if len(charts) != 3 || !strings.HasPrefix(charts[0], "img|Tool calls per hour") || !strings.Contains(charts[2], "at the ERP and in erpgate") {
		t.Errorf("charts %q", charts)
	}
	// The calls table's totals are every seeded call of the last 24 hours.
	total := browserResult(t, ctx, "sum the calls table", chromedp.Evaluate[int](
		`[...document.querySelectorAll("#calls-table tbody tr")].reduce((n, r) => n + Number(r.lastElementChild.textContent), 0)`))
	if total != viewerCalls {
		t.Errorf("calls table total %d, want %d", total, viewerCalls)
	}
	// The hostile name is text in the chart's legend, and ran nowhere.
	legend := browserResult(t, ctx, "read the legend", chromedp.Evaluate[[]string](`[...document.querySelectorAll("section[aria-labelledby=calls-heading] .legend li")].map(t => t.textContent)`))
	if !slices.Contains(legend, viewerHostile) {
		t.Errorf("the hostile tool is not in the legend as text: %q", legend)
	}
	saveScreenshot(t, ctx, "viewer-usage.png")

	// Filters: ann's failed calls. i even and i%10 == 0: 13 calls.
	submitAndWait(t, ctx, "filter", "Usage",
		chromedp.SendKeys(chromedp.CSS(`#f-user`), "ann@acme.example"),
		chromedp.SetValue(chromedp.CSS(`#f-outcome`), "error"),
		chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)))
	loc := browserResult(t, ctx, "read the URL", chromedp.Evaluate[string](`location.href`))
	if u, err := url.Parse(loc); err != nil || u.Query().Get("erp_user") != "ann@acme.example" || u.Query().Get("outcome") != "error" {
		t.Errorf("the filters are not in the URL: %s", loc)
	}
	rows := browserResult(t, ctx, "read the filtered rows", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#events tbody tr")].map(r => r.children[2].textContent + "|" + r.children[5].textContent + "|" + r.children[6].querySelector("code").textContent)`))
	if len(rows) != 13 {
		t.Errorf("%d of ann's failed calls, want 13", len(rows))
	}
	for _, r := range rows {
		if r != "ann@acme.example|error|PERMISSION_DENIED" {
			t.Errorf("filtered row %q", r)
		}
	}
	saveScreenshot(t, ctx, "viewer-usage-filtered.png")

	// Paging: every event of the last 24 hours once, 50 to a page.
	submitAndWait(t, ctx, "clear the filters", "Usage", chromedp.Click(chromedp.CSS(`form.filters a.button`)))
	seen := map[string]bool{}
	for page := 1; ; page++ {
		if page > 5 {
			t.Fatal("paging does not end")
		}
		ids := browserResult(t, ctx, "read the row ids", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#events tbody tr")].map(r => r.id)`))
		for _, id := range ids {
			if seen[id] {
				t.Errorf("page %d repeats %s", page, id)
			}
			seen[id] = true
		}
		if page == 2 {
			saveScreenshot(t, ctx, "viewer-usage-page-2.png")
		}
		more := browserResult(t, ctx, "look for the next page", chromedp.Evaluate[bool](`document.querySelector("#next-page") !== null`))
		if !more {
			break
		}
		submitAndWait(t, ctx, "next page", "Usage", chromedp.Click(chromedp.CSS(`#next-page`)))
	}
	if len(seen) != viewerCalls {
		t.Errorf("paging showed %d events, want %d", len(seen), viewerCalls)
	}
	browserDo(t, ctx, "find the hostile event", chromedp.Navigate(gw.URL+"/console/usage?erp_user="+url.QueryEscape(viewerHostile)))
	waitForTitle(t, ctx, "Usage")
	if cell := browserResult(t, ctx, "read its user", chromedp.Text(chromedp.CSS(`#events tbody tr td:nth-child(3)`))); cell != viewerHostile {
		t.Errorf("the hostile user shows as %q", cell)
	}
	if title := browserResult(t, ctx, "read the title", chromedp.Evaluate[string](`document.title`)); title == "pwned" {
		t.Fatal("markup in an ERP user or tool name ran on the page")
	}
	if n := browserResult(t, ctx, "count injected images", chromedp.Evaluate[int](`document.querySelectorAll("main img, main script").length`)); n != 0 {
		t.Errorf("%d injected elements on the page", n)
	}
	saveScreenshot(t, ctx, "viewer-usage-hostile.png")

	// Export of a filtered view: acme's get_customer calls (i%4 == 0: 33).
	browserDo(t, ctx, "filter for the export", chromedp.Navigate(gw.URL+"/console/usage?site=acme&tool=get_customer"))
	waitForTitle(t, ctx, "Usage")
	body := downloadExport(t, ctx, "erpgate-usage.csv")
	records, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 1+33 {
		t.Errorf("export: %d lines, want a header and 33", len(records))
	}
	for _, r := range records[1:] {
		if r[3] != "acme" || r[9] != "get_customer" {
			t.Errorf("exported row %q", r)
		}
	}

	// Bad filters are said in sentences, the form kept.
	browserDo(t, ctx, "bad filters", chromedp.Navigate(gw.URL+"/console/usage?from=yesterday&outcome=maybe&site=nosuch"))
	waitForTitle(t, ctx, "Usage")
	problems := browserResult(t, ctx, "read the problems", chromedp.Text(chromedp.CSS(`#problems`)))
	if !strings.Contains(problems, "start time is not a date") || !strings.Contains(problems, "outcome must be one of") {
		t.Errorf("problems %q", problems)
	}
	saveScreenshot(t, ctx, "viewer-usage-bad-filters.png")

	// The audit: the sign-in events and the administration of the site.
	submitAndWait(t, ctx, "open the audit", "Audit", chromedp.Click(chromedp.CSS(`nav a[href$="/console/audit"]`)))
	events := browserResult(t, ctx, "read the audit", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#events tbody tr")].map(r => r.children[1].textContent + "|" + r.children[3].textContent + "|" + r.children[7].textContent)`))
	joined := strings.Join(events, " ")
	for _, want := range []string{"sign-in|Sign-in|success", "sign-in|Sign-in refused|refused", "administration|Site registered|success"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the audit lacks %s: %q", want, events)
		}
	}
	saveScreenshot(t, ctx, "viewer-audit.png")
	// On a desktop's screen every column of the audit, the reason last,
	// is in sight without scrolling the table's box.
	browserDo(t, ctx, "look on a desktop's screen", chromedp.EmulateViewport(desktopWidth, desktopHeight))
	saveScreenshot(t, ctx, "desktop-viewer-audit.png")
	if hidden := browserResult(t, ctx, "measure the audit", chromedp.Evaluate[int](`(w => w.scrollWidth - w.clientWidth)(document.querySelector("#events").parentElement)`)); hidden > 0 {
		t.Errorf("on a %d px screen, %d px of the audit table are scrolled out of sight", desktopWidth, hidden)
	}
	browserDo(t, ctx, "back to the browser's screen", chromedp.ResetViewport())
	submitAndWait(t, ctx, "only refusals", "Audit", chromedp.SetValue(chromedp.CSS(`#f-outcome`), "refused"),
		chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)))
	refused := browserResult(t, ctx, "read the refusals", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#events tbody tr")].map(r => r.children[3].textContent + "|" + r.children[4].textContent + "|" + r.children[8].textContent)`))
	if len(refused) != 1 || refused[0] != "Sign-in refused|eve@acme.example|access to the ERP denied" {
		t.Errorf("refused audit events %q", refused)
	}
	saveScreenshot(t, ctx, "viewer-audit-refused.png")

	// Signed out, the pages and the export send to the sign-in page.
	submitAndWait(t, ctx, "sign out", "Console sign-in", chromedp.Click(chromedp.CSS(`nav form button`)))
	for _, p := range []string{"/console/usage", "/console/usage.csv", "/console/audit.csv?from=" + url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04"))} {
		browserDo(t, ctx, "open "+p+" signed out", chromedp.Navigate(gw.URL+p))
		waitForTitle(t, ctx, "Console sign-in")
	}
}
