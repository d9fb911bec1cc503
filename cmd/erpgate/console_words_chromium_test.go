package main

import (
	"context"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// storedName is how erpgate stores what it records (an action, an
// event, a connection type, an actor): lower-case words joined by
// underscores. People read plain words on the console's pages.
var storedName = regexp.MustCompile(`\b[a-z]+(_[a-z]+)+\b`)

// storedNamesShown lists the stored names in the visible text of the
// page's main part (links' text included; addresses, input values and
// attributes are not text).
func storedNamesShown(t *testing.T, ctx context.Context) []string {
	t.Helper()
	text := browserResult(t, ctx, "read the page's text", chromedp.Evaluate[string](`document.querySelector("main").innerText`))
	return storedName.FindAllString(text, -1)
}

// TestChromiumConsoleSaysPlainWords opens the console's sites page,
// audit and usage after a site was registered through the admin API
// (create_site, put_api_connection, issue_service_token by the admin
// token), a person was refused at sign-in (login_denied, access_denied),
// a wrong admin token was refused at the console's sign-in
// (invalid_request), the operator signed in to the console
// (console_sign_in, in a console session) and a program called a tool with the site's service token:
// none of these pages shows a stored name; the audit's event filter
// still selects events by the stored action, and a row's link filters
// by it.
func TestChromiumConsoleSaysPlainWords(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "all-companies"))
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	mustSucceed(t, callTool(t, cs, "list_customers", map[string]any{"limit": 2}), "list_customers")
	if _, err := gw.App.pool.Exec(t.Context(), `
		INSERT INTO auth_events (occurred_at, site_id, event, erp_user, client_id, reason)
		SELECT now() - interval '20 minutes', id, 'login_denied', 'eve@acme.example', 'claude', 'access_denied' FROM sites WHERE slug = 'acme'`); err != nil {
		t.Fatal(err)
	}
	ctx := newChromiumWithin(t, 90*time.Second)
	// A sign-in with a wrong token first: refused, and audited.
	browserDo(t, ctx, "open the console", chromedp.Navigate(gw.URL+"/console"))
	waitForTitle(t, ctx, "Console sign-in")
	submitAndWait(t, ctx, "sign in with a wrong token", "Console sign-in",
		chromedp.SendKeys(chromedp.CSS(`#token`), "ega_not_the_token_at_all_0123456789"),
		chromedp.Click(chromedp.CSS(`form button[type="submit"]`)))
	signInToConsole(t, ctx, gw, "/console")
	saveScreenshot(t, ctx, "words-console-sites.png")
	if names := storedNamesShown(t, ctx); len(names) > 0 {
		t.Errorf("the sites page shows stored names: %q", names)
	}
	if text := browserResult(t, ctx, "read the site's row", chromedp.Text(chromedp.CSS("#site-acme"))); !strings.Contains(text, "API credential") || !strings.Contains(text, "Frappe/ERPNext") {
		t.Errorf("the site's row does not name its API credential and kind in words: %q", text)
	}

	// The usage of the service token's call waits for the batch writer.
	waitFor(t, 10*time.Second, "the call's usage event stored", func() bool {
		var n int
		err := gw.App.pool.QueryRow(t.Context(), `SELECT count(*) FROM usage_events WHERE method = 'tools/call'`).Scan(&n)
		return err == nil && n == 1
	})
	navigate(t, ctx, "open the usage", chromedp.Navigate(gw.URL+"/console/usage"))
	waitForNewTitle(t, ctx, "Usage")
	if names := storedNamesShown(t, ctx); len(names) > 0 {
		// Tool names (list_customers) are the tools' names, which people
		// set up and read in their AI clients.
		for _, n := range names {
			if n != "list_customers" {
				t.Errorf("the usage page shows the stored name %q", n)
			}
		}
	}

	navigate(t, ctx, "open the audit", chromedp.Navigate(gw.URL+"/console/audit"))
	waitForNewTitle(t, ctx, "Audit")
	saveScreenshot(t, ctx, "words-console-audit.png")
	if names := storedNamesShown(t, ctx); len(names) > 0 {
		t.Errorf("the audit shows stored names: %q", names)
	}
	events := browserResult(t, ctx, "read the audit", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#events tbody tr")].map(r => r.children[3].innerText + "|" + r.children[6].innerText + "|" + r.children[8].innerText)`))
	joined := strings.Join(events, "\n")
	for _, want := range []string{"Console sign-in|operator, in console session ", "Site registered|operator, with the admin token|", "Sign-in refused||access to the ERP denied",
		"Console sign-in|someone at the console's sign-in|The admin token is not valid."} {
		if !strings.Contains(joined, want) {
			t.Errorf("the audit lacks %q: %q", want, events)
		}
	}

	// The event filter offers the actions in words and selects by the
	// stored name.
	submitAndWait(t, ctx, "filter the console sign-ins", "Audit",
		chromedp.SetValue(chromedp.CSS(`#f-tool`), "console_sign_in"),
		chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)))
	if label := browserResult(t, ctx, "read the chosen event", chromedp.Evaluate[string](`(s => s.options[s.selectedIndex].text)(document.querySelector("#f-tool"))`)); label != "Console sign-in" {
		t.Errorf("the event filter shows %q, want Console sign-in", label)
	}
	loc := browserResult(t, ctx, "read the URL", chromedp.Evaluate[string](`location.href`))
	if u, err := url.Parse(loc); err != nil || u.Query().Get("tool") != "console_sign_in" {
		t.Errorf("the event filter is not the stored action in the URL: %s", loc)
	}
	rows := browserResult(t, ctx, "read the filtered audit", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#events tbody tr")].map(r => r.children[3].innerText)`))
	if len(rows) != 2 || rows[0] != "Console sign-in" || rows[1] != "Console sign-in" {
		t.Errorf("filtered by console sign-in: %q", rows)
	}
	// A row's event links to the events like it.
	submitAndWait(t, ctx, "clear the filters", "Audit", chromedp.Click(chromedp.CSS(`form.filters a.button`)))
	submitAndWait(t, ctx, "follow a refused sign-in's link", "Audit", chromedp.Click(chromedp.CSS(`#events tbody tr a[href*="tool=login_denied"]`)))
	rows = browserResult(t, ctx, "read the refused sign-ins", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#events tbody tr")].map(r => r.children[3].innerText + "|" + r.children[4].innerText)`))
	if len(rows) != 1 || rows[0] != "Sign-in refused|eve@acme.example" {
		t.Errorf("after following the link: %q", rows)
	}
	if names := storedNamesShown(t, ctx); len(names) > 0 {
		t.Errorf("the filtered audit shows stored names: %q", names)
	}
}

// TestChromiumConsoleSwitchesSayOnOrOff opens a new site's settings:
// its switches (read-only, service tokens proposing writes) are off until
// changed (writes are off by default, docs/writes.md), and the page says
// "off" for each, as its form does, never "nothing".
func TestChromiumConsoleSwitchesSayOnOrOff(t *testing.T) {
	gw, ctx := consoleOfAcme(t, time.Minute)
	navigate(t, ctx, "open the site's settings", chromedp.Navigate(gw.URL+"/console/settings?site=acme"))
	waitForNewTitle(t, ctx, "Settings")
	for _, name := range []string{"read_only", "service_writes"} {
		shown := browserResult(t, ctx, "read "+name, chromedp.Evaluate[string](`document.querySelector("#setting-`+name+` td").innerText`))
		if !strings.HasPrefix(shown, "off\n") {
			t.Errorf("the switch %s is in force as %q, want off", name, shown)
		}
	}
}

// TestChromiumConsolePreflightSaysKindAndConnectionInWords runs the
// preflight of a Frappe site with no OAuth client whose ERP has gone
// away: the checks it could not make are "The Frappe/ERPNext checks",
// and the missing OAuth client is said as the console's forms say it,
// never the stored kind (frappe) or connection type (oauth) in a
// sentence. (Check ids, shown as code for the docs' table of checks,
// aside.)
func TestChromiumConsolePreflightSaysKindAndConnectionInWords(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	gw := startGateway(t, "", nil)
	gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "all-companies"))
	sim.Close()
	ctx := newChromium(t)
	signInToConsole(t, ctx, gw, "/console")
	navigate(t, ctx, "open the preflight", chromedp.Navigate(gw.URL+"/console/preflight?site=acme"))
	waitForNewTitle(t, ctx, "Preflight")
	navigate(t, ctx, "run the preflight", chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)))
	waitForNewTitle(t, ctx, "Preflight")
	saveScreenshot(t, ctx, "console-preflight-unreachable.png")
	text := browserResult(t, ctx, "read the checks without their ids", chromedp.Evaluate[string](
		`(t => { t.querySelectorAll("code").forEach(c => c.remove()); return t.innerText; })(document.querySelector("main table").cloneNode(true))`))
	if !strings.Contains(text, "The Frappe/ERPNext checks") {
		t.Errorf("the checks not made for want of the ERP are not named by the kind in words: %q", text)
	}
	if w := regexp.MustCompile(`\b(frappe|oauth)\b`).FindAllString(text, -1); len(w) > 0 {
		t.Errorf("the preflight says %q in its sentences: %q", w, text)
	}
}

// TestChromiumConsoleSignInNoteStandsApart opens the console's sign-in:
// the note under the form (how long a session lasts) stands apart from
// the Sign in button, a line's height or more below it, not against it.
func TestChromiumConsoleSignInNoteStandsApart(t *testing.T) {
	needChromium(t)
	gw := startGateway(t, "", nil)
	ctx := newChromium(t)
	for _, size := range [][2]int64{{desktopWidth, desktopHeight}, {phoneWidth, phoneHeight}} {
		viewAt(t, ctx, size[0], size[1])
		navigate(t, ctx, "open the console", chromedp.Navigate(gw.URL+"/console"))
		waitForNewTitle(t, ctx, "Console sign-in")
		gap := browserResult(t, ctx, "measure the gap", chromedp.Evaluate[float64](
			`document.querySelector("main .card > p:last-child").getBoundingClientRect().top - document.querySelector("main form button[type=submit]").getBoundingClientRect().bottom`))
		if gap < 12 {
			t.Errorf("at %d px wide the note under the sign-in form is %.0f px below the button, want a gap of 12 px or more", size[0], gap)
		}
	}
}

// TestChromiumConsoleSiteSettingsSayWhatElseApplies opens a site's
// settings: a redaction list the site adds to says, in a sentence, that
// the deployment's list is in force as well, and what it holds.
func TestChromiumConsoleSiteSettingsSayWhatElseApplies(t *testing.T) {
	gw, ctx := consoleOfAcme(t, time.Minute)
	navigate(t, ctx, "open the site's settings", chromedp.Navigate(gw.URL+"/console/settings?site=acme"))
	waitForNewTitle(t, ctx, "Settings")
	// The test deployment sets no redaction patterns of its own.
	shown := browserResult(t, ctx, "read the redaction patterns", chromedp.Evaluate[string](`document.querySelector("#setting-redaction_add td").innerText`))
	if !strings.Contains(shown, "The deployment's patterns apply as well: none.") {
		t.Errorf("the site's redaction patterns say %q, want the deployment's said to apply as well", shown)
	}
	// Two patterns of the deployment's, one a line in its form.
	navigate(t, ctx, "open the deployment's settings", chromedp.Navigate(gw.URL+"/console/settings"))
	waitForNewTitle(t, ctx, "Settings")
	submitAndWait(t, ctx, "add two patterns", "Settings",
		chromedp.SetValue(chromedp.CSS(`#value-redaction_add`), "payroll\nsalary"),
		chromedp.Click(chromedp.CSS(`#setting-redaction_add button[type="submit"]`)))
	navigate(t, ctx, "open the site's settings again", chromedp.Navigate(gw.URL+"/console/settings?site=acme"))
	waitForNewTitle(t, ctx, "Settings")
	shown = browserResult(t, ctx, "read the redaction patterns again", chromedp.Evaluate[string](`document.querySelector("#setting-redaction_add td").innerText`))
	if !strings.Contains(shown, "The deployment's patterns apply as well: payroll, salary.") {
		t.Errorf("the site's redaction patterns say %q, want the deployment's two", shown)
	}
}

// TestChromiumConsoleSaysShortNameNotSlug: the console's form for a new
// site calls the site's slug its short name; the pages that refuse a
// short name that names no site, and a deletion confirmed with the wrong
// one, say so in the same words, never "slug".
func TestChromiumConsoleSaysShortNameNotSlug(t *testing.T) {
	gw, ctx := consoleOfAcme(t, time.Minute)
	for _, path := range []string{"/console/settings?site=nowhere", "/console/preflight?site=nowhere"} {
		navigate(t, ctx, "open "+path, chromedp.Navigate(gw.URL+path))
		waitForNewTitle(t, ctx, "There is no such site")
		if text := pageBody(t, ctx); strings.Contains(text, "slug") || !strings.Contains(text, "short name") {
			t.Errorf("%s says: %q", path, text)
		}
	}
	navigate(t, ctx, "open the sites", chromedp.Navigate(gw.URL+"/console/sites"))
	waitForNewTitle(t, ctx, "Sites")
	submitAndWait(t, ctx, "delete with the wrong short name", "Sites",
		chromedp.Click(chromedp.CSS(`#site-acme details:last-of-type summary`)),
		chromedp.SendKeys(chromedp.CSS(`#confirm-acme`), "acne"),
		chromedp.Click(chromedp.CSS(`#site-acme button.danger`)))
	if text := browserResult(t, ctx, "read the refusal", chromedp.Text(chromedp.CSS(`p.flash`))); strings.Contains(text, "slug") || !strings.Contains(text, "short name") {
		t.Errorf("a deletion with the wrong short name says: %q", text)
	}
}

// TestChromiumConsoleSitesKeepNumbersWhole opens the sites page in a
// laptop's window 900 px wide for a site with both connections, its preflight run: the
// calls column's heading keeps "24 h" on one line, and the preflight's
// date is not broken at its dashes ("2026-" on one line, "12-07" on the
// next).
func TestChromiumConsoleSitesKeepNumbersWhole(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	siteWithBothConnections(t, gw, sim)
	ctx := newChromium(t)
	viewAt(t, ctx, 900, desktopHeight)
	signInToConsole(t, ctx, gw, "/console")
	preflightThenSites(t, ctx, gw)
	saveScreenshot(t, ctx, "console-sites-900.png")
	// lines counts the lines the first text of what in the element
	// found by find is drawn on.
	lines := func(find, what string) int {
		return browserResult(t, ctx, "measure "+what, chromedp.Evaluate[int](`((el, what) => {
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const at = n.data.indexOf(what);
    if (at < 0) continue;
    const r = document.createRange();
    r.setStart(n, at);
    r.setEnd(n, at + what.length);
    return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size;
  }
  return -1;
})(`+find+`, `+strconv.Quote(what)+`)`))
	}
	// From "24" to the heading's end: "24 h)".
	heading := browserResult(t, ctx, "measure the calls heading", chromedp.Evaluate[int](`(th => {
  const text = th.firstChild, r = document.createRange();
  r.setStart(text, text.data.indexOf("24"));
  r.setEnd(text, text.data.length);
  return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size;
})([...document.querySelectorAll("thead th")].find(th => th.textContent.includes("Calls")))`))
	if heading != 1 {
		t.Errorf("the calls heading's '24 h)' is drawn on %d lines", heading)
	}
	preflight := `document.querySelector('#site-acme a[href*="/console/preflight"]')`
	day := regexp.MustCompile(`\d{4}-\d{2}-\d{2}`).FindString(browserResult(t, ctx, "read the preflight", chromedp.Evaluate[string](preflight+`.textContent`)))
	if day == "" {
		t.Fatalf("the sites page does not give the preflight's day: %s", currentPage(ctx))
	}
	if n := lines(preflight, day); n != 1 {
		t.Errorf("the preflight's day %s is drawn on %d lines", day, n)
	}
}
