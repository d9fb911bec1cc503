package main

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestChromiumPagesAreKitPages opens erpgate's landing page, the page
// where a person types their ERP's address, an error page and the page of
// an unknown address in real
// headless Chromium and checks what the page kit promises (issue 16):
// the one policy as the browser received it, a language, a label for
// every input, the stylesheet applied under that policy, a skip link the
// keyboard reaches first, and nothing loaded or linked from another
// origin. Screenshots go to ERPGATE_TEST_SCREENSHOTS when it is set.
func TestChromiumPagesAreKitPages(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Chromium is needed for this test and was not found at %s (%v): install Debian's `chromium` package", chromiumPath, err)
	}
	gw := startGateway(t, "", nil)
	clientID := registerPublicClient(t, gw.URL, "erpgate kit client", "http://127.0.0.1:9/callback")
	ctx := newChromium(t)
	docs := recordDocumentResponses(t, ctx)

	for _, tc := range []struct {
		name, path, url, title, screenshot string
	}{
		{"landing page", "/", gw.URL + "/", "AI assistants for your company's ERP", "landing.png"},
		{"address chooser", "/oauth/authorize", authorizeURLFor(t, gw.URL, clientID, "http://127.0.0.1:9/callback", gw.URL+"/mcp"), "Sign in to your ERP", "choose-site.png"},
		{"error page", "/oauth/authorize", authorizeURLFor(t, gw.URL, clientID, "http://127.0.0.1:9/callback", gw.URL+"/sites/nowhere/mcp"), "This connection request cannot be used", "authorize-error-kit.png"},
		{"not-found page", "/no/such/page", gw.URL + "/no/such/page", "There is no page at this address", "not-found.png"},
		{"tool reference", "/docs/tools", gw.URL + "/docs/tools", "Tool reference", "tools.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			browserDo(t, ctx, "open "+tc.name, chromedp.Navigate(tc.url))
			waitForTitle(t, ctx, tc.title)
			saveScreenshot(t, ctx, tc.screenshot)

			h, ok := docs.last(tc.path)
			if !ok {
				t.Fatalf("the browser saw no response for %s", tc.path)
			}
			csp := h.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "style-src 'self'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "script-src") {
				t.Errorf("CSP %q allows scripts or inline styles", csp)
			}
			if lang := browserResult(t, ctx, "read the language", chromedp.Evaluate[string](`document.documentElement.lang`)); lang != "en" {
				t.Errorf("lang = %q", lang)
			}
			unlabelled := browserResult(t, ctx, "find inputs without a label", chromedp.Evaluate[[]string](
				`[...document.querySelectorAll('input:not([type=hidden]), select, textarea')].filter(i => !i.labels || i.labels.length === 0 || !i.labels[0].innerText.trim()).map(i => i.name || i.outerHTML)`))
			if len(unlabelled) > 0 {
				t.Errorf("inputs without a label: %v", unlabelled)
			}
			// Every address on the page, loaded or linked, is erpgate's own.
			foreign := browserResult(t, ctx, "find other origins", chromedp.Evaluate[[]string](
				`[...document.querySelectorAll('[href], [src], [action]')].map(e => e.href || e.src || e.action).concat(performance.getEntriesByType('resource').map(r => r.name)).filter(u => new URL(u, location.href).origin !== location.origin)`))
			if len(foreign) > 0 {
				t.Errorf("the page refers to other origins: %v", foreign)
			}
			styled := browserResult(t, ctx, "read the page's style", chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
			if styled != "rgb(244, 246, 250)" {
				t.Errorf("the stylesheet did not apply under the policy: body background %q", styled)
			}
			if tc.path == "/docs/tools" {
				// The descriptions' `code` spans show as code, never as
				// backticks.
				if raw := browserResult(t, ctx, "count backticks", chromedp.Evaluate[int](`(document.querySelector('main').innerText.match(/`+"`"+`/g) || []).length`)); raw != 0 {
					t.Errorf("the tool reference shows %d backticks", raw)
				}
				if code := browserResult(t, ctx, "count code", chromedp.Evaluate[int](`document.querySelectorAll('main p code, main td code').length`)); code == 0 {
					t.Errorf("the tool reference shows no code in its descriptions")
				}
			}
			browserDo(t, ctx, "press Tab", chromedp.KeyEvent(kb.Tab))
			if focused := browserResult(t, ctx, "read the focus", chromedp.Evaluate[string](`document.activeElement.textContent`)); focused != "Skip to content" {
				t.Errorf("the first Tab focuses %q, not the skip link", focused)
			}
		})
	}

	t.Run("the landing page says what erpgate is and how to connect", func(t *testing.T) {
		browserDo(t, ctx, "open the landing page", chromedp.Navigate(gw.URL+"/"))
		waitForTitle(t, ctx, "AI assistants")
		text := browserResult(t, ctx, "read the page", chromedp.Text(chromedp.CSS("main")))
		for _, want := range []string{
			"connects AI assistants", "own ERP account",
			gw.URL + "/sites/<slug>/mcp", "claude mcp add --transport http erp " + gw.URL + "/sites/<slug>/mcp",
			"Claude", "ChatGPT", "Codex", "VS Code", "[mcp_servers.erp]", gw.URL + "/service/mcp", gw.URL + "/api/v1/openapi.json",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the landing page does not say %q", want)
			}
		}
	})
}

// authorizeURLFor is authorizeURL without its state.
func authorizeURLFor(t *testing.T, base, clientID, redirectURI, resource string) string {
	t.Helper()
	_, u := authorizeURL(t, base, clientID, redirectURI, resource)
	if _, err := url.Parse(u); err != nil {
		t.Fatal(err)
	}
	return u
}
