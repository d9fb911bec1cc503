package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// focusProblem describes what is wrong with how the element the keyboard
// focused shows it, or is empty: WCAG 2.2 asks a focus indicator for a
// contrast of at least 3:1 against what is next to it (1.4.11), and erpgate
// draws it as an outline at least 2 px thick, outside the element, on the
// background of what holds it.
const focusProblem = `(() => {
  const e = document.activeElement;
  if (!e || e === document.body) return 'nothing has the focus';
  const s = getComputedStyle(e);
  const name = e.tagName.toLowerCase() + ' "' + (e.textContent || e.name || e.id).trim().slice(0, 30) + '"';
  const rgb = c => (c.match(/[\d.]+/g) || []).slice(0, 4).map(Number);
  let behind = 'rgb(255, 255, 255)';
  for (let p = e.parentElement; p; p = p.parentElement) {
    const c = rgb(getComputedStyle(p).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] > 0)) { behind = getComputedStyle(p).backgroundColor; break; }
  }
  const lum = c => { const [r, g, b] = rgb(c).slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const a = lum(s.outlineColor), b = lum(behind);
  const contrast = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  if (s.outlineStyle === 'none' || parseFloat(s.outlineWidth) < 2) return name + ': no outline of 2 px or more (' + s.outlineStyle + ' ' + s.outlineWidth + ')';
  if (contrast < 3) return name + ': its focus outline ' + s.outlineColor + ' has a contrast of ' + contrast.toFixed(2) + ':1 on ' + behind + ', under 3:1';
  return '';
})()`

// TestChromiumKeyboardFocusIsVisible presses Tab through the page where a
// person types their ERP's address (links, a text field, a button) and
// the landing page (links, copy buttons): every element the keyboard
// reaches shows an outline that stands out from the page.
func TestChromiumKeyboardFocusIsVisible(t *testing.T) {
	needChromium(t)
	gw := startGateway(t, "", nil)
	clientID := registerPublicClient(t, gw.URL, "erpgate focus client", "http://127.0.0.1:9/callback")
	ctx := newChromium(t)
	for _, p := range []struct {
		name, url, title string
		stops            int // what Tab reaches before it leaves the page, or as many
	}{
		{"the address chooser", authorizeURLFor(t, gw.URL, clientID, "http://127.0.0.1:9/callback", gw.URL+"/mcp"), "Sign in to your ERP", 4},
		{"the landing page", gw.URL + "/", "AI assistants for your company's ERP", 8},
	} {
		navigate(t, ctx, "open "+p.name, chromedp.Navigate(p.url))
		waitForNewTitle(t, ctx, p.title)
		for i := range p.stops {
			browserDo(t, ctx, "press Tab", chromedp.KeyEvent(kb.Tab))
			saveScreenshot(t, ctx, fmt.Sprintf("focus-%s-%d.png", strings.ReplaceAll(p.name, " ", "-"), i+1))
			if problem := browserResult(t, ctx, "read the focus", chromedp.Evaluate[string](focusProblem)); problem != "" {
				t.Errorf("%s: %s", p.name, problem)
			}
		}
	}
}
