package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestChromiumConsoleLongWordsStayInTheTables: a site whose display name
// is one long word (200 characters, the most allowed) on the console's
// sites page, and a person whose ERP user is one (an e-mail address of
// 120 characters) on its audit: at a laptop's width and a phone's,
// neither table scrolls sideways in its box, and the site's Disable
// button is in sight. A word that long must not widen its column.
func TestChromiumConsoleLongWordsStayInTheTables(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	siteWithBothConnections(t, gw, sim)
	execSQL(t, gw.DBURL, `UPDATE sites SET display_name = $1 WHERE slug = 'acme'`, strings.Repeat("Acmeholdings", 17)[:200])
	const domain = "@mail.example.com"
	user := strings.Repeat("accountspayable.", 8)
	user = user[:120-len(domain)] + domain
	execSQL(t, gw.DBURL, `
		INSERT INTO auth_events (occurred_at, site_id, event, erp_user, client_id, reason)
		SELECT now() - interval '20 minutes', id, 'login_denied', $1, 'claude', 'access_denied' FROM sites WHERE slug = 'acme'`, user)
	ctx := newChromiumWithin(t, 90*time.Second)
	signInToConsole(t, ctx, gw, "/console")
	for _, page := range []struct{ path, title, button string }{{"/console/sites", "Sites", "#site-acme button"}, {"/console/audit", "Audit", ""}} {
		navigate(t, ctx, "open "+page.path, chromedp.Navigate(gw.URL+page.path))
		waitForNewTitle(t, ctx, page.title)
		for _, width := range []int64{desktopWidth, phoneWidth} {
			viewAt(t, ctx, width, desktopHeight)
			saveScreenshot(t, ctx, fmt.Sprintf("console-long-words%s-%d.png", strings.ReplaceAll(page.path, "/", "-"), width))
			problems := browserResult(t, ctx, "measure the table", chromedp.Evaluate[[]string](`(() => {
  const problems = [];
  const table = document.querySelector('main table'), wrap = table.closest('.table-wrap');
  if (table.scrollWidth > table.clientWidth) problems.push('the table is ' + table.scrollWidth + ' px wide in ' + table.clientWidth + ' px');
  if (wrap && wrap.scrollWidth > wrap.clientWidth) problems.push('the table scrolls sideways: ' + (wrap.scrollWidth - wrap.clientWidth) + ' px out of sight');
  const sel = `+jsString(page.button)+`;
  if (sel) {
    const box = (wrap || table).getBoundingClientRect(), screen = document.documentElement.clientWidth, el = document.querySelector(sel);
    if (!el) problems.push('no ' + sel);
    else { const r = el.getBoundingClientRect(); if (r.right > Math.min(box.right, screen) + 0.5) problems.push(sel + ' ends at ' + Math.round(r.right) + ' px, out of sight'); }
  }
  return problems;
})()`))
			for _, p := range problems {
				t.Errorf("%s at %d px: %s", page.path, width, p)
			}
		}
	}
}
