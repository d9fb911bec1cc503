package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestChromiumAuditShowsCountedRefusals: refusals of anonymous visitors
// (wrong admin tokens at the console, refused registration starts) are
// counted in one audit row a minute, and the console's audit says how
// many in plain words, on a phone's screen and on a desktop's.
func TestChromiumAuditShowsCountedRefusals(t *testing.T) {
	gw := startGateway(t, "", nil)
	const guesses, starts = 3, 4
	for range guesses {
		if status, _, _ := newConsoleBrowser(t, gw.URL).signIn("not-the-admin-token"); status != http.StatusUnauthorized {
			t.Fatalf("a wrong token: HTTP %d", status)
		}
	}
	for range starts {
		b := newRegistrationClient(t, gw.URL)
		form := url.Values{"csrf": {b.csrf("/register")}, "kind": {"frappe"}, "display_name": {"Target Ltd"}, "base_url": {"ftp://erp.example.com"}}
		if status, _, page := b.do(http.MethodPost, "/register", form, nil); status != http.StatusBadRequest {
			t.Fatalf("a refused start: %d %s", status, pageText(page))
		}
	}
	ctx := newChromium(t)
	signInToConsole(t, ctx, gw, "/console/audit?outcome=refused")
	browserDo(t, ctx, "open the refusals", chromedp.Navigate(gw.URL+"/console/audit?outcome=refused"))
	waitForTitle(t, ctx, "Audit")
	rows := browserResult(t, ctx, "read the refusals", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#events tbody tr")].map(r => r.children[3].textContent + "|" + r.children[7].textContent)`))
	var guessed, started int
	for _, r := range rows {
		switch {
		case strings.HasPrefix(r, "Console sign-in|refused"):
			guessed++
		case strings.HasPrefix(r, "Registration started|refused"):
			started++
		default:
			t.Errorf("an unexpected refusal %q", r)
		}
	}
	// Requests that straddle a minute make two rows; the words then count
	// each part.
	joined := strings.Join(rows, "\n")
	if guessed < 1 || guessed > 2 || started < 1 || started > 2 || !strings.Contains(joined, "times in this minute") {
		t.Errorf("refusals shown %q; want the guesses and the starts each counted in a row a minute", rows)
	}
	if guessed == 1 && !strings.Contains(joined, "Console sign-in|refused, 3 times in this minute") {
		t.Errorf("the guesses' row does not say 3 times: %q", rows)
	}
	if started == 1 && !strings.Contains(joined, "Registration started|refused, 4 times in this minute") {
		t.Errorf("the starts' row does not say 4 times: %q", rows)
	}
	saveScreenshot(t, ctx, "viewer-audit-counted-refusals.png")
	browserDo(t, ctx, "look on a desktop's screen", chromedp.EmulateViewport(desktopWidth, desktopHeight))
	saveScreenshot(t, ctx, "desktop-viewer-audit-counted-refusals.png")
	if hidden := browserResult(t, ctx, "measure the audit", chromedp.Evaluate[int](`(w => w.scrollWidth - w.clientWidth)(document.querySelector("#events").parentElement)`)); hidden > 0 {
		t.Errorf("on a %d px screen, %d px of the audit table are scrolled out of sight", desktopWidth, hidden)
	}
}
