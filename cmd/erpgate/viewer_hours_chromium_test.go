package main

import (
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestChromiumUsageHoursReadNewestWhereExpected opens the usage page with
// the viewer's seeded calls (all within the last five hours, none a day
// ago). The charts run oldest left to newest right; the tables of their
// numbers, like the events under them, start with the newest hour; and on
// a phone, where a chart scrolls in its box, the box opens on the newest
// hours, not on yesterday's empty ones.
func TestChromiumUsageHoursReadNewestWhereExpected(t *testing.T) {
	needChromium(t)
	frappe := frappetest.NewServer(frappetest.Options{})
	defer frappe.Close()
	gw := startGateway(t, "", nil)
	gw.registerFrappe(t, "acme", frappe, userWithRole(t, frappe, "all-companies"))
	seedViewerEvents(t, gw)
	ctx := newChromium(t)
	viewAt(t, ctx, desktopWidth, desktopHeight)
	signInToConsole(t, ctx, gw, "/console")
	navigate(t, ctx, "open the usage", chromedp.Navigate(gw.URL+"/console/usage"))
	waitForNewTitle(t, ctx, "Usage")

	// The calls chart: its bars with calls are at its right end.
	bars := browserResult(t, ctx, "find the bars", chromedp.Evaluate[[]float64](
		`(svg => { const w = svg.viewBox.baseVal.width; return [...svg.querySelectorAll('rect[height]')].filter(r => r.getAttribute('fill') !== 'none' && parseFloat(r.getAttribute('height')) > 0 && r.querySelector('title')).map(r => parseFloat(r.getAttribute('x')) / w); })(document.querySelector('svg.chart'))`))
	if len(bars) == 0 {
		t.Fatalf("the calls chart draws no bars: %s", currentPage(ctx))
	}
	for _, x := range bars {
		if x < 0.6 {
			t.Errorf("a bar of calls is drawn at %.0f%% of the chart's width; the seeded calls are of the last five of 25 hours, at the right", 100*x)
		}
	}

	// The tables: the hours with calls come first, a day ago last.
	for _, id := range []string{"calls", "errors", "latency"} {
		counts := browserResult(t, ctx, "read the "+id+" table", chromedp.Evaluate[[]string](
			`[...document.querySelectorAll("#`+id+`-table tbody tr")].map(r => r.children[1].textContent)`))
		if len(counts) < 24 {
			t.Fatalf("the %s table has %d hours, want a day's", id, len(counts))
		}
		last := -1
		for i, c := range counts {
			// calls: the first tool's calls; errors and latency: calls, timed.
			if n, err := strconv.Atoi(c); err == nil && n > 0 {
				last = i
			}
		}
		// Five hours of calls, and the hour begun when the page was asked.
		if last < 0 || last > 6 {
			t.Errorf("the %s table's hours with calls end at row %d of %d: %q; the newest hours come first", id, last+1, len(counts), counts)
		}
	}

	browserDo(t, ctx, "open the tables", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("section.chart-box details").forEach(d => d.open = true)`))
	saveScreenshot(t, ctx, "desktop-usage-tables.png")

	// On a phone the charts' boxes show their right end, the newest hour.
	viewAt(t, ctx, phoneWidth, phoneHeight)
	navigate(t, ctx, "open the usage on a phone", chromedp.Navigate(gw.URL+"/console/usage"))
	waitForNewTitle(t, ctx, "Usage")
	saveScreenshot(t, ctx, "phone-usage-charts.png")
	hidden := browserResult(t, ctx, "measure the charts' boxes", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('.chart-scroll')].map(b => [b, b.querySelector('svg.chart')]).filter(([b, svg]) => svg.getBoundingClientRect().right > b.getBoundingClientRect().right + 1).map(([b, svg]) => svg.getAttribute('aria-labelledby').split('-title')[0] + ': ' + Math.round(svg.getBoundingClientRect().right - b.getBoundingClientRect().right) + ' px of its newest end out of sight')`))
	for _, h := range hidden {
		t.Errorf("the usage page on a phone: %s", h)
	}
}
