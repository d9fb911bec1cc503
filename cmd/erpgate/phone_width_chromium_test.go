package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// A phone held upright (390×844 CSS pixels) and a laptop (1280×800): the
// screens erpgate's pages are read on. The approval link in particular is
// often opened on a phone, from the AI client's app.
const (
	phoneWidth, phoneHeight     = 390, 844
	desktopWidth, desktopHeight = 1280, 800
)

// screenProblems lists what on the page shown would make a person scroll
// sideways or read a table column letter by letter: the page wider than
// the screen; a table outside a scrolling box reaching past its card; and,
// when words is true, a word of a table cell that does not fit its column
// and is broken across lines (e-mail addresses and words of 24 characters
// or more may be broken).
func screenProblems(t *testing.T, ctx context.Context, words bool) []string {
	t.Helper()
	return browserResult(t, ctx, "measure the page against the screen", chromedp.Evaluate[[]string](`((words) => {
  const problems = [];
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth) {
    const wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > root.clientWidth + 0.5 && !e.closest('.table-wrap, pre'));
    problems.push('the page is ' + root.scrollWidth + ' px wide on a screen of ' + root.clientWidth + ' px; past the edge: ' +
      wide.slice(0, 4).map(e => e.tagName.toLowerCase() + ' "' + e.textContent.trim().replace(/\s+/g, ' ').slice(0, 50) + '"').join(', '));
  }
  for (const table of document.querySelectorAll('table')) {
    if (table.closest('.table-wrap')) continue;
    const box = table.closest('.card, .box, main');
    if (box && table.getBoundingClientRect().right > box.getBoundingClientRect().right + 0.5) {
      problems.push('a table reaches past its box by ' + Math.round(table.getBoundingClientRect().right - box.getBoundingClientRect().right) + ' px: "' + table.textContent.trim().replace(/\s+/g, ' ').slice(0, 50) + '"');
    }
  }
  const measure = document.createElement('canvas').getContext('2d');
  for (const cell of words ? document.querySelectorAll('td, th') : []) {
    const style = getComputedStyle(cell);
    const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    let broken = '';
    for (let n = texts.nextNode(); n && !broken; n = texts.nextNode()) {
      const parent = n.parentElement;
      if (parent.closest('.sr-only') || parent.getClientRects().length === 0) continue;
      measure.font = getComputedStyle(parent).font;
      for (const word of n.data.split(/[\s\-\/]+/)) {
        if (word.length === 0 || word.length >= 24 || word.includes('@')) continue;
        const need = measure.measureText(word).width;
        if (need > room + 1) {
          broken = 'the word "' + word + '" (' + Math.round(need) + ' px) is broken in a column ' + Math.round(room) + ' px wide';
          break;
        }
      }
    }
    if (broken) problems.push(broken);
  }
  return problems;
})(`+strconv.FormatBool(words)+`)`))
}

// viewAt makes the browser's screen width×height CSS pixels.
func viewAt(t *testing.T, ctx context.Context, width, height int64) {
	t.Helper()
	browserDo(t, ctx, "set the screen's size", chromedp.EmulateViewport(width, height))
}

// fitsTheScreen fails the test with every screenProblems of the page
// shown, named what, words included.
func fitsTheScreen(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	for _, p := range screenProblems(t, ctx, true) {
		t.Errorf("%s: %s", what, p)
	}
}

// notWiderThanTheScreen is fitsTheScreen without the words in tables.
func notWiderThanTheScreen(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	for _, p := range screenProblems(t, ctx, false) {
		t.Errorf("%s: %s", what, p)
	}
}

// TestChromiumOwnerPageFitsAPhone opens the site owner's page, and the page
// refusing a non-administrator, on a phone and on a desktop: neither is
// wider than the screen, and no table column is too narrow for its words.
func TestChromiumOwnerPageFitsAPhone(t *testing.T) {
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
	nonAdmin := userWithRole(t, sim, frappetest.RoleNonAdministrator)
	// Someone has connected, for the people list.
	connectOAuth(t, site.MCPURL, frappeLogin(userWithRole(t, sim, "all-companies")))
	manageURL := gw.URL + "/sites/acme/manage"

	ctx := newChromiumWithin(t, 90*time.Second)
	viewAt(t, ctx, phoneWidth, phoneHeight)
	navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
	waitForNewTitle(t, ctx, "Manage site acme")
	fitsTheScreen(t, ctx, "the owner's sign-in page on a phone")
	clickAndSignInAtFrappe(t, ctx, `form[action$="/manage/sign-in"] button`, nonAdmin, "Only the ERP's administrators")
	saveScreenshot(t, ctx, "phone-owner-refused.png")
	fitsTheScreen(t, ctx, "the refusal of a non-administrator on a phone")
	clearCookies(t, ctx)

	navigate(t, ctx, "open the owner page again", chromedp.Navigate(manageURL))
	waitForNewTitle(t, ctx, "Manage site acme")
	clickAndSignInAtFrappe(t, ctx, `form[action$="/manage/sign-in"] button`, admin, "Manage Test acme")
	if rows := browserResult(t, ctx, "count the activity", chromedp.Evaluate[int](`document.querySelectorAll('table.log tbody tr').length`)); rows < 3 {
		t.Fatalf("the owner page shows %d events of activity, want the registration's and the sign-ins", rows)
	}
	saveScreenshot(t, ctx, "phone-owner-page.png")
	fitsTheScreen(t, ctx, "the owner's page on a phone")

	viewAt(t, ctx, desktopWidth, desktopHeight)
	saveScreenshot(t, ctx, "desktop-owner-page.png")
	fitsTheScreen(t, ctx, "the owner's page on a desktop")

	// A new service token, shown once: on a phone all of it is on the
	// screen, with a button that copies it.
	viewAt(t, ctx, phoneWidth, phoneHeight)
	navigate(t, ctx, "issue a token",
		chromedp.SendKeys(chromedp.CSS("#token_name"), "nightly report"),
		chromedp.Click(chromedp.CSS(`form[action$="/manage/tokens"] button`)))
	waitForNewTitle(t, ctx, "Service token nightly report")
	saveScreenshot(t, ctx, "phone-owner-token.png")
	fitsTheScreen(t, ctx, "a new service token on a phone")
	token := browserResult(t, ctx, "read the token", chromedp.Evaluate[string](`document.querySelector("#token").value`))
	if !strings.HasPrefix(token, "egs_") {
		t.Fatalf("token %q", token)
	}
	if hidden := browserResult(t, ctx, "measure the token", chromedp.Evaluate[int](
		`(e => Math.max(e.scrollWidth - e.clientWidth, e.scrollHeight - e.clientHeight))(document.querySelector("#token"))`)); hidden > 0 {
		t.Errorf("a new service token on a phone: %d px of the token %s… are out of sight in its box", hidden, token[:10])
	}
	if visible := browserResult(t, ctx, "find the copy button", chromedp.Evaluate[bool](
		`(b => !!b && !b.hidden && b.getClientRects().length > 0)(document.querySelector('button[data-copy="token"]'))`)); !visible {
		t.Error("a new service token on a phone: no button copies it")
	}
}

// TestChromiumApprovalPageFitsAPhone opens a change awaiting approval on a
// phone: the table of fields, with the values to approve, stays inside the
// screen and its card.
func TestChromiumApprovalPageFitsAPhone(t *testing.T) {
	_, _, pageURL, ctx := signedInAtAnApproval(t)
	viewAt(t, ctx, phoneWidth, phoneHeight)
	navigate(t, ctx, "open the approval page again", chromedp.Navigate(pageURL))
	waitForNewTitle(t, ctx, "Approve a change on Test acme")
	if text := pageBody(t, ctx); !strings.Contains(text, "12,500.00") {
		t.Fatalf("the approval page does not show the new credit limit: %s", text)
	}
	saveScreenshot(t, ctx, "phone-approval.png")
	fitsTheScreen(t, ctx, "the approval page on a phone")

	viewAt(t, ctx, desktopWidth, desktopHeight)
	saveScreenshot(t, ctx, "desktop-approval.png")
	fitsTheScreen(t, ctx, "the approval page on a desktop")
}

// TestChromiumConsoleFitsAPhone opens the operator console's pages on a
// phone: none is wider than the screen (wide tables scroll in their own
// box; the console is read mostly on a desktop, so its tables' words are
// not held to the phone's width).
func TestChromiumConsoleFitsAPhone(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "all-companies"))
	ctx := newChromium(t)
	viewAt(t, ctx, phoneWidth, phoneHeight)
	signInToConsole(t, ctx, gw, "/console")
	for _, p := range []struct{ path, title, shot string }{
		{"/console/sites", "Sites", "phone-console-sites.png"},
		{"/console/settings", "Settings", "phone-console-settings.png"},
		{"/console/settings?site=acme", "Settings", "phone-console-site-settings.png"},
		{"/console/usage", "Usage", "phone-console-usage.png"},
		{"/console/audit", "Audit", "phone-console-audit.png"},
	} {
		navigate(t, ctx, "open "+p.path, chromedp.Navigate(gw.URL+p.path))
		waitForNewTitle(t, ctx, p.title)
		saveScreenshot(t, ctx, p.shot)
		notWiderThanTheScreen(t, ctx, p.path+" on a phone")
		// A chart's words (axes, legend) are drawn at least 10 px tall:
		// the chart scales with the screen, and its letters with it.
		if small := browserResult(t, ctx, "measure the charts' text", chromedp.Evaluate[[]string](`[...document.querySelectorAll('svg.chart')].flatMap(svg => {
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * scale).filter(px => px < 10).slice(0, 1).map(px => svg.getAttribute('aria-labelledby').split('-title')[0] + ': ' + px.toFixed(1) + ' px');
})`)); len(small) > 0 {
			t.Errorf("%s on a phone: chart text smaller than 10 px: %v", p.path, small)
		}
	}
}

// TestChromiumToolReferenceFitsAPhone opens the tool reference on a phone:
// every tool's purpose and every argument's description is on the screen,
// not in a column scrolled out of sight (column headings laid out for
// screen readers only aside), and no column breaks its words.
func TestChromiumToolReferenceFitsAPhone(t *testing.T) {
	needChromium(t)
	gw := startGateway(t, "", nil)
	ctx := newChromium(t)
	viewAt(t, ctx, phoneWidth, phoneHeight)
	navigate(t, ctx, "open the tool reference", chromedp.Navigate(gw.URL+"/docs/tools"))
	waitForNewTitle(t, ctx, "Tool reference")
	// The first tool of the catalogue (docs/tools.md lists them) is on the
	// page with its purpose.
	if text := pageBody(t, ctx); !strings.Contains(text, "acumatica_get_account") || !strings.Contains(text, "Get one GL account from Acumatica") {
		t.Fatalf("the tool reference lacks acumatica_get_account: %.300s", text)
	}
	// The page is too tall for a full screenshot: the screen at its first
	// table, and at the first tool's arguments.
	browserDo(t, ctx, "scroll to the first table", chromedp.Evaluate[chromedp.Void](`document.querySelector('table').scrollIntoView()`))
	saveScreenshotOfScreen(t, ctx, "phone-tools.png")
	browserDo(t, ctx, "scroll to the first arguments", chromedp.Evaluate[chromedp.Void](`document.querySelector('h3').scrollIntoView()`))
	saveScreenshotOfScreen(t, ctx, "phone-tool-arguments.png")
	fitsTheScreen(t, ctx, "the tool reference on a phone")
	off := browserResult(t, ctx, "find cells off the screen", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('td, th')].filter(c => !(c.closest('thead') && getComputedStyle(c.closest('thead')).position === 'absolute')).filter(c => c.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).slice(0, 5).map(c => '"' + c.innerText.trim().slice(0, 40) + '" ends at ' + Math.round(c.getBoundingClientRect().right) + ' px')`))
	for _, c := range off {
		t.Errorf("the tool reference on a phone: a cell is past the screen's edge (%d px): %s", phoneWidth, c)
	}
}

// saveScreenshotOfScreen is saveScreenshot of what the screen shows, for a
// page too tall to be taken whole.
func saveScreenshotOfScreen(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if dir := os.Getenv("ERPGATE_TEST_SCREENSHOTS"); dir != "" {
		png := browserResult(t, ctx, "screenshot "+name, chromedp.CaptureScreenshot())
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChromiumApprovalOfASalesOrderFitsAPhone asks to create a sales order
// through the real Frappe connector and opens its approval link on a
// phone: the order's lines (item, name, quantity, unit, rate, amount) are
// all on the screen, not past its edge.
func TestChromiumApprovalOfASalesOrderFitsAPhone(t *testing.T) {
	f := newFrappeWrite(t, "create_sales_order")
	items := f.sim.Data().List("Item")
	args := map[string]any{"customer": f.sim.Data().List("Customer")[0].Name, "company": "Demo Holdings NZ Ltd", "delivery_date": "2026-12-31",
		"po_no": "PHONE-1", "items": []any{
			map[string]any{"item_code": items[0].Name, "qty": 12, "rate": json.Number("1250.50")},
			map[string]any{"item_code": items[1].Name, "qty": 3, "rate": json.Number("99.95")},
		}}
	first := callTool(t, f.client.cs, "create_sales_order", args)
	if !first.IsError || first.errorCode() != "APPROVAL_REQUIRED" {
		t.Fatalf("the first call: %s", first.Text)
	}
	link := approvalURL.FindString(first.Text)
	ctx := newChromium(t)
	viewAt(t, ctx, phoneWidth, phoneHeight)
	navigate(t, ctx, "open the approval link", chromedp.Navigate(link))
	waitForNewTitle(t, ctx, "Approve a change on Test acme")
	clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, f.user, "Approve a change on Test acme")
	if text := pageBody(t, ctx); !strings.Contains(text, items[0].Name) || !strings.Contains(text, items[1].Name) {
		t.Fatalf("the approval page lacks the order's lines (%s, %s): %s", items[0].Name, items[1].Name, text)
	}
	saveScreenshot(t, ctx, "phone-approval-sales-order.png")
	fitsTheScreen(t, ctx, "the approval of a sales order on a phone")
	off := browserResult(t, ctx, "find cells off the screen", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('td, th')].filter(c => !(c.closest('thead') && getComputedStyle(c.closest('thead')).position === 'absolute')).filter(c => c.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).slice(0, 5).map(c => '"' + c.innerText.trim().slice(0, 40) + '" ends at ' + Math.round(c.getBoundingClientRect().right) + ' px')`))
	for _, c := range off {
		t.Errorf("the approval of a sales order on a phone: a cell is past the screen's edge (%d px): %s", phoneWidth, c)
	}
}

// TestChromiumConsoleTablesFitAPhone opens the console's sites page, a
// site's preflight, run, and the settings on a phone: no table scrolls
// sideways in its box, every cell with something to read is on the screen, and no column
// is too narrow for its words.
func TestChromiumConsoleTablesFitAPhone(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "all-companies"))
	ctx := newChromium(t)
	viewAt(t, ctx, phoneWidth, phoneHeight)
	signInToConsole(t, ctx, gw, "/console")
	navigate(t, ctx, "open the preflight", chromedp.Navigate(gw.URL+"/console/preflight?site=acme"))
	waitForNewTitle(t, ctx, "Preflight")
	navigate(t, ctx, "run the preflight", chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)))
	waitForNewTitle(t, ctx, "Preflight")
	// The Frappe preflight's nine checks (TestChromiumConsole).
	if n := browserResult(t, ctx, "count the checks", chromedp.Evaluate[int](`document.querySelectorAll("tbody tr[id^='check-']").length`)); n != 9 {
		t.Fatalf("%d checks shown, want 9: %s", n, currentPage(ctx))
	}
	saveScreenshot(t, ctx, "phone-console-preflight.png")
	tablesFitAPhone(t, ctx, "the preflight")
	navigate(t, ctx, "open the sites", chromedp.Navigate(gw.URL+"/console/sites"))
	waitForNewTitle(t, ctx, "Sites")
	if text := pageBody(t, ctx); !strings.Contains(text, "Test acme") || !strings.Contains(text, "passed") {
		t.Fatalf("the sites page lacks the site or its preflight: %s", text)
	}
	saveScreenshot(t, ctx, "phone-console-sites-table.png")
	tablesFitAPhone(t, ctx, "the sites page")
	// The settings, each with the form that changes it.
	for _, path := range []string{"/console/settings", "/console/settings?site=acme"} {
		navigate(t, ctx, "open "+path, chromedp.Navigate(gw.URL+path))
		waitForNewTitle(t, ctx, "Settings")
		tablesFitAPhone(t, ctx, path)
	}
	saveScreenshot(t, ctx, "phone-console-site-settings-table.png")
}

// tablesFitAPhone fails the test if a table of the page shown scrolls
// sideways in its box, or has a cell with text past the screen's edge,
// or a column too narrow for its words.
func tablesFitAPhone(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	fitsTheScreen(t, ctx, what+" on a phone")
	hidden := browserResult(t, ctx, "measure the tables' boxes", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('.table-wrap')].filter(w => w.scrollWidth > w.clientWidth).map(w => (w.scrollWidth - w.clientWidth) + ' px of "' + w.innerText.trim().replace(/\s+/g, ' ').slice(0, 40) + '"')`))
	for _, h := range hidden {
		t.Errorf("%s on a phone: a table scrolls sideways: %s are out of sight", what, h)
	}
	off := browserResult(t, ctx, "find cells off the screen", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('td, th')].filter(c => c.innerText.trim() !== '' && !(c.closest('thead') && getComputedStyle(c.closest('thead')).position === 'absolute')).filter(c => c.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).slice(0, 5).map(c => '"' + c.innerText.trim().slice(0, 40) + '" ends at ' + Math.round(c.getBoundingClientRect().right) + ' px')`))
	for _, c := range off {
		t.Errorf("%s on a phone: a cell is past the screen's edge (%d px): %s", what, phoneWidth, c)
	}
	// A table's caption is read across the table, not a word a line.
	narrow := browserResult(t, ctx, "measure the captions", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('caption')].filter(c => c.getBoundingClientRect().width < c.closest('table').getBoundingClientRect().width * 0.9).map(c => '"' + c.innerText.trim().slice(0, 40) + '" is ' + Math.round(c.getBoundingClientRect().width) + ' px wide under a table of ' + Math.round(c.closest('table').getBoundingClientRect().width) + ' px')`))
	for _, c := range narrow {
		t.Errorf("%s on a phone: a caption is squeezed: %s", what, c)
	}
}
