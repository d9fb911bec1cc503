package main

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestChromiumUsageDaysNameTheirYear charts 390 days by day (the viewer
// takes up to 398 buckets): the range holds the same day of two years,
// and each row of the table, and each label of the chart, names one day
// only; the chart's labels do not run into each other.
func TestChromiumUsageDaysNameTheirYear(t *testing.T) {
	needChromium(t)
	gw := startGateway(t, "", nil)
	ctx := newChromium(t)
	signInToConsole(t, ctx, gw, "/console")
	from := time.Now().UTC().Add(-390 * 24 * time.Hour).Format("2006-01-02T15:04")
	navigate(t, ctx, "chart 390 days", chromedp.Navigate(gw.URL+"/console/usage?step=day&from="+url.QueryEscape(from)))
	waitForNewTitle(t, ctx, "Usage")
	saveScreenshot(t, ctx, "usage-390-days.png")
	days := browserResult(t, ctx, "read the days", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#calls-table tbody th")].map(th => th.textContent)`))
	if len(days) < 390 {
		t.Fatalf("%d days charted, want 390 or more: %s", len(days), currentPage(ctx))
	}
	seen := map[string]bool{}
	for _, d := range days {
		if seen[d] {
			t.Errorf("two days of the table are both %q", d)
		}
		seen[d] = true
	}
	// The days under the chart are apart from each other.
	overlaps := browserResult(t, ctx, "measure the chart's days", chromedp.Evaluate[[]string](`(() => {
  const svg = document.querySelectorAll("svg.chart")[0];
  const axis = [...svg.querySelectorAll("text")].filter(t => /^[0-9]+ [A-Z][a-z]{2}/.test(t.textContent)).map(t => [t.textContent, t.getBBox()]);
  const out = [];
  for (let i = 1; i < axis.length; i++) {
    if (axis[i][1].x < axis[i-1][1].x + axis[i-1][1].width + 4) out.push(axis[i-1][0] + " and " + axis[i][0]);
  }
  return out;
})()`))
	for _, o := range overlaps {
		t.Errorf("the chart's days %s are drawn over each other", o)
	}
	labels := browserResult(t, ctx, "read the chart's days", chromedp.Evaluate[[]string](`[...document.querySelectorAll("svg.chart")[0].querySelectorAll("text")].map(t => t.textContent)`))
	for _, l := range labels {
		if len(l) > 4 && !seen[l] && l[0] >= '0' && l[0] <= '9' && strings.Contains(l, " ") {
			t.Errorf("the chart labels a day %q, not as the table does", l)
		}
	}
}
