package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// siteWithBothConnections registers acme (an API credential, a service
// token) and gives it an OAuth client: the widest row of the sites page.
func siteWithBothConnections(t *testing.T, gw *gateway, sim *frappetest.Server) {
	t.Helper()
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "all-companies"))
	client := sim.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(context.Background(), site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
}

// preflightThenSites runs acme's preflight in the console and opens the
// sites page.
func preflightThenSites(t *testing.T, ctx context.Context, gw *gateway) {
	t.Helper()
	navigate(t, ctx, "open the preflight", chromedp.Navigate(gw.URL+"/console/preflight?site=acme"))
	waitForNewTitle(t, ctx, "Preflight")
	navigate(t, ctx, "run the preflight", chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)))
	waitForNewTitle(t, ctx, "Preflight")
	navigate(t, ctx, "open the sites", chromedp.Navigate(gw.URL+"/console/sites"))
	waitForNewTitle(t, ctx, "Sites")
}

// TestChromiumConsoleSitesFitEveryWidth opens the sites page, for a site
// with both connections and its preflight run, in windows from a phone's
// to a desktop's: at none does the table scroll sideways in its box, and
// the row's actions (Disable, Settings, Delete) are in sight.
func TestChromiumConsoleSitesFitEveryWidth(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	siteWithBothConnections(t, gw, sim)
	ctx := newChromiumWithin(t, 90*time.Second)
	signInToConsole(t, ctx, gw, "/console")
	preflightThenSites(t, ctx, gw)
	if text := pageBody(t, ctx); !strings.Contains(text, "OAuth client") || !strings.Contains(text, "API credential") {
		t.Fatalf("the site's row lacks its two connections: %s", text)
	}
	for _, width := range []int64{360, 390, 600, 768, 900, 1024, 1100, 1280, 1400} {
		viewAt(t, ctx, width, desktopHeight)
		saveScreenshot(t, ctx, fmt.Sprintf("console-sites-%d.png", width))
		notWiderThanTheScreen(t, ctx, fmt.Sprintf("the sites page at %d px", width))
		problems := browserResult(t, ctx, "measure the sites table", chromedp.Evaluate[[]string](`(() => {
  const problems = [];
  const table = document.querySelector('main table'), wrap = table.closest('.table-wrap');
  if (table.scrollWidth > table.clientWidth) problems.push('the table is ' + table.scrollWidth + ' px wide in ' + table.clientWidth + ' px');
  if (wrap && wrap.scrollWidth > wrap.clientWidth) problems.push('the table scrolls sideways: ' + (wrap.scrollWidth - wrap.clientWidth) + ' px out of sight');
  const box = (wrap || table).getBoundingClientRect(), screen = document.documentElement.clientWidth;
  for (const [what, el] of [['Disable', document.querySelector('#site-acme button')], ['Settings', [...document.querySelectorAll('#site-acme a')].find(a => a.textContent === 'Settings')], ['Delete', [...document.querySelectorAll('#site-acme summary')].find(s => s.textContent === 'Delete')]]) {
    if (!el) { problems.push('no ' + what); continue; }
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right > Math.min(box.right, screen) + 0.5 || r.left < box.left - 0.5) problems.push(what + ' is out of sight (' + Math.round(r.left) + ' to ' + Math.round(r.right) + ' px, its box ' + Math.round(box.left) + ' to ' + Math.round(Math.min(box.right, screen)) + ' px)');
  }
  return problems;
})()`))
		for _, p := range problems {
			t.Errorf("the sites page at %d px: %s", width, p)
		}
	}
}

// TestChromiumConsoleReasonFilterInWords follows a refused sign-in's
// reason link on the audit and a failed call's code link on the usage
// page: the filter then says the reason in words (a choice valued by the
// stored code, as the event filter is), the URL keeps the stored code,
// and a URL with a code erpgate does not know still filters by it.
func TestChromiumConsoleReasonFilterInWords(t *testing.T) {
	gw, ctx := consoleOfAcme(t, 90*time.Second, seedViewerEvents)
	navigate(t, ctx, "open the audit", chromedp.Navigate(gw.URL+"/console/audit"))
	waitForNewTitle(t, ctx, "Audit")
	chosen := func() (string, string) {
		return browserResult(t, ctx, "read the reason filter", chromedp.Evaluate[string](`(f => f.tagName === 'SELECT' ? f.options[f.selectedIndex].text : f.value)(document.querySelector('#f-code'))`)),
			browserResult(t, ctx, "read the URL", chromedp.Evaluate[string](`new URL(location.href).searchParams.get('error_code') || ''`))
	}
	submitAndWait(t, ctx, "follow a refused sign-in's reason", "Audit", chromedp.Click(chromedp.CSS(`#events tbody a[href*="error_code=access_denied"]`)))
	if label, code := chosen(); label != "access to the ERP denied" || code != "access_denied" {
		t.Errorf("after the reason's link the filter shows %q (URL %q), want the reason in words", label, code)
	}
	rows := browserResult(t, ctx, "read the audit", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#events tbody tr")].map(r => r.children[8].innerText)`))
	if len(rows) != 1 || rows[0] != "access to the ERP denied" {
		t.Errorf("filtered by access_denied: %q", rows)
	}
	if names := storedNamesShown(t, ctx); len(names) > 0 {
		t.Errorf("the filtered audit shows stored names: %q", names)
	}
	// Sent again as it shows, the form keeps the filter.
	submitAndWait(t, ctx, "send the filters again", "Audit", chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)))
	if label, code := chosen(); label != "access to the ERP denied" || code != "access_denied" {
		t.Errorf("sent again, the filter shows %q (URL %q)", label, code)
	}
	// A reason erpgate has no words for, typed in a URL.
	navigate(t, ctx, "open a reason erpgate does not know", chromedp.Navigate(gw.URL+"/console/audit?error_code=made_up_reason"))
	waitForNewTitle(t, ctx, "Audit")
	if label, code := chosen(); label != "made up reason" || code != "made_up_reason" {
		t.Errorf("an unknown reason: the filter shows %q (URL %q)", label, code)
	}

	navigate(t, ctx, "open the usage", chromedp.Navigate(gw.URL+"/console/usage"))
	waitForNewTitle(t, ctx, "Usage")
	submitAndWait(t, ctx, "follow a failed call's code", "Usage", chromedp.Click(chromedp.CSS(`#events tbody a[href*="error_code=PERMISSION_DENIED"]`)))
	label, code := chosen()
	if code != "PERMISSION_DENIED" || !strings.Contains(label, "PERMISSION_DENIED") || !strings.Contains(label, "refused") {
		t.Errorf("after the code's link the filter shows %q (URL %q), want the code with its words", label, code)
	}
	if n := browserResult(t, ctx, "count the calls", chromedp.Evaluate[int](`document.querySelectorAll("#events tbody tr").length`)); n != viewerAcmeCalls/10 {
		t.Errorf("filtered by PERMISSION_DENIED: %d calls, want %d", n, viewerAcmeCalls/10)
	}
	// Each code in the events table has its words beside it.
	words := browserResult(t, ctx, "read the codes", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#events tbody tr")].map(r => r.children[6].innerText.replace(/\s+/g, ' ').trim())`))
	for _, w := range words {
		if !strings.HasPrefix(w, "PERMISSION_DENIED ") || !strings.Contains(w, "refused") {
			t.Errorf("a failed call's code is not told in words: %q", w)
			break
		}
	}
	saveScreenshot(t, ctx, "console-usage-permission-denied.png")
}

// preflightForbidden are words of Go's libraries and protocols that an
// operator cannot act on.
var preflightForbidden = []string{"dial", "tcp", "x509", "EOF", "context deadline", "connection refused", "lookup"}

// TestChromiumConsolePreflightSaysSentences runs the preflight of a site
// nothing answers for, of one with a certificate erpgate does not trust and
// of one whose name does not resolve: every finding and every fix is a
// sentence (a capital, a full stop) without a library's words.
func TestChromiumConsolePreflightSaysSentences(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	siteWithBothConnections(t, gw, sim)
	untrusted := httptest.NewTLSServer(http.NotFoundHandler())
	defer untrusted.Close()
	for slug, base := range map[string]string{"closed": closedAddress(t), "untrusted": untrusted.URL, "nowhere": "https://erp.invalid"} {
		var site siteResponse
		if err := gw.admin.do(context.Background(), http.MethodPost, "/sites",
			map[string]any{"slug": slug, "kind": "frappe", "display_name": "Test " + slug, "base_url": base}, &site); err != nil {
			t.Fatal(err)
		}
	}
	ctx := newChromiumWithin(t, 120*time.Second)
	signInToConsole(t, ctx, gw, "/console")
	for _, slug := range []string{"acme", "closed", "untrusted", "nowhere"} {
		navigate(t, ctx, "open the preflight of "+slug, chromedp.Navigate(gw.URL+"/console/preflight?"+url.Values{"site": {slug}}.Encode()))
		waitForNewTitle(t, ctx, "Preflight")
		navigate(t, ctx, "run the preflight of "+slug, chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)))
		waitForNewTitle(t, ctx, "Preflight")
		saveScreenshot(t, ctx, "console-preflight-"+slug+".png")
		cells := browserResult(t, ctx, "read the findings", chromedp.Evaluate[[]string](
			`[...document.querySelectorAll("tbody tr[id^='check-'] td:nth-child(3), tbody tr[id^='check-'] td:nth-child(4)")].map(c => c.innerText.trim()).filter(s => s !== '')`))
		if len(cells) < 4 {
			t.Fatalf("%s: %d findings shown: %s", slug, len(cells), currentPage(ctx))
		}
		for _, c := range cells {
			for _, word := range preflightForbidden {
				if strings.Contains(strings.ToLower(c), strings.ToLower(word)) {
					t.Errorf("%s: a finding has a library's words (%q): %q", slug, word, c)
				}
			}
			first := c[:1]
			if first != strings.ToUpper(first) && !strings.HasPrefix(c, "erpgate") || !strings.HasSuffix(c, ".") {
				t.Errorf("%s: a finding is not a sentence: %q", slug, c)
			}
		}
	}
}

// TestChromiumConsolePagesAtThreeWidths opens every console page on a
// phone, a laptop's narrow window and a desktop: none is wider than the
// screen, and no table scrolls sideways in its box. ERPGATE_TEST_SCREENSHOTS keeps each, for a person to look at.
func TestChromiumConsolePagesAtThreeWidths(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	siteWithBothConnections(t, gw, sim)
	seedViewerEvents(t, gw)
	var closed siteResponse
	if err := gw.admin.do(context.Background(), http.MethodPost, "/sites",
		map[string]any{"slug": "closed", "kind": "frappe", "display_name": "Test closed", "base_url": closedAddress(t)}, &closed); err != nil {
		t.Fatal(err)
	}
	runPreflight(t, gw, closed.ID)
	ctx := newChromiumWithin(t, 180*time.Second)
	viewAt(t, ctx, 1280, desktopHeight)
	browserDo(t, ctx, "open the console", chromedp.Navigate(gw.URL+"/console"))
	waitForTitle(t, ctx, "Console sign-in")
	for _, w := range []int64{390, 900, 1280} {
		viewAt(t, ctx, w, desktopHeight)
		saveScreenshot(t, ctx, fmt.Sprintf("%d-console-sign-in.png", w))
	}
	signInToConsole(t, ctx, gw, "/console")
	navigate(t, ctx, "open the preflight", chromedp.Navigate(gw.URL+"/console/preflight?site=acme"))
	waitForNewTitle(t, ctx, "Preflight")
	navigate(t, ctx, "run the preflight", chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)))
	waitForNewTitle(t, ctx, "Preflight")
	for _, p := range []struct{ path, title, shot string }{
		{"/console/sites", "Sites", "sites"},
		{"/console/sites/new", "Add a site", "new-site"},
		{"/console/sites/new?kind=frappe", "Add a site", "new-site-frappe"},
		{"/console/preflight?site=acme", "Preflight", "preflight"},
		{"/console/preflight?site=closed", "Preflight", "preflight-closed"},
		{"/console/settings", "Settings", "settings"},
		{"/console/settings?site=acme", "Settings", "site-settings"},
		{"/console/usage", "Usage", "usage"},
		{"/console/audit", "Audit", "audit"},
	} {
		navigate(t, ctx, "open "+p.path, chromedp.Navigate(gw.URL+p.path))
		waitForNewTitle(t, ctx, p.title)
		for _, w := range []int64{390, 900, 1280} {
			viewAt(t, ctx, w, desktopHeight)
			saveScreenshot(t, ctx, fmt.Sprintf("%d-console-%s.png", w, p.shot))
			notWiderThanTheScreen(t, ctx, fmt.Sprintf("%s at %d px", p.path, w))
			// No table shown hides columns in a box scrolled sideways:
			// the audit's outcome and reason, a call's code and times.
			hidden := browserResult(t, ctx, "measure the tables' boxes", chromedp.Evaluate[[]string](
				`[...document.querySelectorAll('.table-wrap')].filter(w => !w.closest('details:not([open])') && w.scrollWidth > w.clientWidth).map(w => (w.scrollWidth - w.clientWidth) + ' px of "' + w.innerText.trim().replace(/\s+/g, ' ').slice(0, 40) + '"')`))
			for _, h := range hidden {
				t.Errorf("%s at %d px: a table scrolls sideways, %s out of sight", p.path, w, h)
			}
		}
	}
}
