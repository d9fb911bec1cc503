package main

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/web/viewer"
)

// usageCardMaxHeight bounds a usage event's card on a phone, by the
// screen's width: a call is five lines of 19.6 px (its time beside its
// tool, the request id beside the outcome, the site beside the client,
// the ERP user, the two times) and 13 px between cards, 111 px; 22 px
// more are for the two lines of an error code and its words, which one
// call in ten has. At 360 px an outcome may take a line of its own. With
// one cell a line the 50 events were 13,359 px tall at either width (267
// px a card): at 390 px the bound is under half of that.
var usageCardMaxHeight = map[int64]float64{phoneWidth: 133, 360: 152}

// TestChromiumUsageEventsAreDenseOnAPhone opens the usage page of the
// viewer's seeded calls on a phone: the first page's 50 events are
// cards of usageCardMaxHeight at most on average, each
// headed by its time and tool, no cell's words reach past their cell or
// the card, and no table scrolls sideways.
func TestChromiumUsageEventsAreDenseOnAPhone(t *testing.T) {
	gw, ctx := consoleOfAcme(t, 90*time.Second, seedViewerEvents)
	cardsAreDense(t, ctx, gw, eventCards{path: "/console/usage", title: "Usage", name: "usage", head: 4, headName: "tool", maxHeight: usageCardMaxHeight})
}

// eventCards is a viewer page whose events are cards on a phone: name
// ("usage", "audit") names the page in screenshots and messages; the cell
// head of each event's row, which holds its headName, heads its card
// beside the time; maxHeight bounds a card on average by the screen's
// width; screenOfTheEvents also saves a screenshot of the screen
// scrolled to the events.
type eventCards struct {
	path, title, name string
	head              int
	headName          string
	maxHeight         map[int64]float64
	screenOfTheEvents bool
}

// cardsAreDense opens c's page at a phone's widths (390 and 360 px): it is
// not wider than the screen, the first page's 50 events are cards of
// c.maxHeight at most on average, each headed by its time and its
// c.headName, no cell's words reach past their cell or the card, and no
// table scrolls sideways. At a desktop's width the page is not wider than
// the screen either.
func cardsAreDense(t *testing.T, ctx context.Context, gw *gateway, c eventCards) {
	t.Helper()
	for _, width := range []int64{phoneWidth, 360} {
		viewAt(t, ctx, width, phoneHeight)
		navigate(t, ctx, "open the "+c.name, chromedp.Navigate(gw.URL+c.path))
		waitForNewTitle(t, ctx, c.title)
		saveScreenshot(t, ctx, fmt.Sprintf("%d-%s-events.png", width, c.name))
		if c.screenOfTheEvents {
			browserDo(t, ctx, "scroll to the events", chromedp.Evaluate[chromedp.Void](`document.querySelector('#events').scrollIntoView()`))
			saveScreenshotOfScreen(t, ctx, fmt.Sprintf("%d-%s-events-screen.png", width, c.name))
		}
		what := fmt.Sprintf("the %s page at %d px", c.name, width)
		notWiderThanTheScreen(t, ctx, what)
		if n := browserResult(t, ctx, "count the events", chromedp.Evaluate[int](`document.querySelectorAll('#events tbody tr').length`)); n != viewer.PageSize {
			t.Fatalf("%s: %d events shown, want a page of %d", what, n, viewer.PageSize)
		}
		h := browserResult(t, ctx, "measure the events", chromedp.Evaluate[float64](`document.querySelector('#events').getBoundingClientRect().height`))
		t.Logf("%s: the 50 events are %.0f px tall", what, h)
		if most := c.maxHeight[width] * viewer.PageSize; h > most {
			t.Errorf("%s: the 50 events are %.0f px tall, want at most %.0f px (%.0f px a card)", what, h, most, h/viewer.PageSize)
		}
		problems := browserResult(t, ctx, "measure the cards", chromedp.Evaluate[[]string](`((head, name) => {
  const problems = [];
  for (const w of [...document.querySelectorAll('.table-wrap')].filter(w => !w.closest('details:not([open])'))) {
    if (w.scrollWidth > w.clientWidth) problems.push('a table scrolls sideways, ' + (w.scrollWidth - w.clientWidth) + ' px out of sight');
  }
  const table = document.querySelector('#events'), right = table.getBoundingClientRect().right;
  for (const tr of table.querySelectorAll('tbody tr')) {
    // The heading: the time and the cell head (name), first and side by side.
    const cells = [...tr.children].filter(c => c.getClientRects().length > 0).sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top || a.getBoundingClientRect().left - b.getBoundingClientRect().left);
    const time = tr.children[0], heading = tr.children[head];
    if (cells[0] !== time || cells[1] !== heading || Math.abs(time.getBoundingClientRect().top - heading.getBoundingClientRect().top) > 0.5)
      problems.push(tr.id + ': the time and ' + name + ' do not head the card: ' + cells.slice(0, 2).map(c => '"' + c.innerText.trim().slice(0, 30) + '"').join(', '));
    if (parseInt(getComputedStyle(heading).fontWeight) < 600) problems.push(tr.id + ': the ' + name + ' is not in bold, as the heading');
    for (const c of cells) {
      if (c.scrollWidth > c.clientWidth + 0.5) problems.push(tr.id + ': "' + c.innerText.trim().slice(0, 30) + '" reaches ' + (c.scrollWidth - c.clientWidth) + ' px past its cell');
      if (c.getBoundingClientRect().right > right + 0.5) problems.push(tr.id + ': "' + c.innerText.trim().slice(0, 30) + '" is past the card');
    }
  }
  return problems.slice(0, 10);
})(`+strconv.Itoa(c.head)+`, `+strconv.Quote(c.headName)+`)`))
		for _, p := range problems {
			t.Errorf("%s: %s", what, p)
		}
	}
	viewAt(t, ctx, desktopWidth, desktopHeight)
	saveScreenshot(t, ctx, fmt.Sprintf("1280-%s-events.png", c.name))
	notWiderThanTheScreen(t, ctx, "the "+c.name+" page on a desktop")
}

// TestChromiumTablesOfTheNumbersFitAPhone opens every <details> of the
// usage page (the charts' tables of the numbers) and of the audit page on
// a phone: no box in one scrolls sideways, and no table reaches past its
// box.
func TestChromiumTablesOfTheNumbersFitAPhone(t *testing.T) {
	gw, ctx := consoleOfAcme(t, 90*time.Second, seedViewerEvents)
	for _, p := range []struct {
		path, title string
		details     int
	}{{"/console/usage", "Usage", 3}, {"/console/audit", "Audit", 0}} {
		for _, width := range []int64{phoneWidth, 360} {
			viewAt(t, ctx, width, phoneHeight)
			navigate(t, ctx, "open "+p.path, chromedp.Navigate(gw.URL+p.path))
			waitForNewTitle(t, ctx, p.title)
			what := fmt.Sprintf("%s at %d px", p.path, width)
			opened := browserResult(t, ctx, "open the details", chromedp.Evaluate[int](`(() => { const ds = document.querySelectorAll('main details'); ds.forEach(d => d.open = true); return ds.length; })()`))
			if opened != p.details {
				t.Fatalf("%s: %d <details>, want %d", what, opened, p.details)
			}
			saveScreenshot(t, ctx, fmt.Sprintf("%d-%s-details-open.png", width, p.title))
			notWiderThanTheScreen(t, ctx, what)
			problems := browserResult(t, ctx, "measure the opened details", chromedp.Evaluate[[]string](`[...document.querySelectorAll('main details')].flatMap(d => {
  const out = [], name = d.closest('section') ? d.closest('section').querySelector('h2').innerText : d.querySelector('summary').innerText;
  for (const box of [d, ...d.querySelectorAll('.table-wrap')]) {
    if (box.scrollWidth > box.clientWidth) out.push(name + ': ' + (box.scrollWidth - box.clientWidth) + ' px scroll sideways (' + box.scrollWidth + ' in ' + box.clientWidth + ' px)');
  }
  for (const table of d.querySelectorAll('table')) {
    if (table.getBoundingClientRect().right > d.getBoundingClientRect().right + 0.5) out.push(name + ': its table reaches past its box');
    for (const c of table.querySelectorAll('td, tbody th')) {
      if (c.getClientRects().length > 0 && c.scrollWidth > c.clientWidth + 0.5) { out.push(name + ': "' + c.innerText.trim().slice(0, 30) + '" reaches past its cell'); break; }
    }
  }
  return out;
})`))
			for _, pr := range problems {
				t.Errorf("%s: %s", what, pr)
			}
		}
	}
	viewAt(t, ctx, desktopWidth, desktopHeight)
	navigate(t, ctx, "open the usage", chromedp.Navigate(gw.URL+"/console/usage"))
	waitForNewTitle(t, ctx, "Usage")
	browserDo(t, ctx, "open the details", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('main details').forEach(d => d.open = true)`))
	saveScreenshot(t, ctx, "1280-Usage-details-open.png")
	notWiderThanTheScreen(t, ctx, "the usage page on a desktop")
}

// TestChromiumUsageEventsAreReadableAtALaptopsWidth opens the usage and
// audit pages of the viewer's seeded events in a laptop's window 900 px
// wide (and at 768 and 1024 px), where their events are cards of named
// cells side by side: neither page is wider than the screen, no table
// scrolls sideways, no cell's words reach past their cell or its card,
// and no word of a cell (a time, a tool, an ERP user's address) is broken
// across lines. (fitsTheScreen measures words split at hyphens and
// leaves addresses out, so it does not see a time or an address broken.)
func TestChromiumUsageEventsAreReadableAtALaptopsWidth(t *testing.T) {
	gw, ctx := consoleOfAcme(t, 90*time.Second, seedViewerEvents, seedAuditEvents)
	for _, p := range []struct{ path, title string }{{"/console/usage", "Usage"}, {"/console/audit", "Audit"}} {
		navigate(t, ctx, "open "+p.path, chromedp.Navigate(gw.URL+p.path))
		waitForNewTitle(t, ctx, p.title)
		for _, width := range []int64{768, 900, 1024} {
			viewAt(t, ctx, width, desktopHeight)
			what := fmt.Sprintf("%s at %d px", p.path, width)
			if width == 900 {
				saveScreenshot(t, ctx, fmt.Sprintf("900-%s-events.png", p.title))
				browserDo(t, ctx, "scroll to the events", chromedp.Evaluate[chromedp.Void](`document.querySelector('#events').scrollIntoView()`))
				saveScreenshotOfScreen(t, ctx, fmt.Sprintf("900-%s-events-screen.png", p.title))
			}
			if n := browserResult(t, ctx, "count the events", chromedp.Evaluate[int](`document.querySelectorAll('#events tbody tr').length`)); n != viewer.PageSize {
				t.Fatalf("%s: %d events shown, want a page of %d", what, n, viewer.PageSize)
			}
			fitsTheScreen(t, ctx, what)
			problems := browserResult(t, ctx, "measure the cards", chromedp.Evaluate[[]string](`(() => {
  const problems = [];
  for (const w of [...document.querySelectorAll('.table-wrap')].filter(w => !w.closest('details:not([open])'))) {
    if (w.scrollWidth > w.clientWidth) problems.push('a table scrolls sideways, ' + (w.scrollWidth - w.clientWidth) + ' px out of sight');
  }
  const table = document.querySelector('#events'), right = table.getBoundingClientRect().right;
  for (const c of table.querySelectorAll('tbody td')) {
    if (c.getClientRects().length === 0) continue;
    if (c.scrollWidth > c.clientWidth + 0.5) problems.push(c.closest('tr').id + ': "' + c.innerText.trim().slice(0, 30) + '" reaches ' + (c.scrollWidth - c.clientWidth) + ' px past its cell');
    if (c.getBoundingClientRect().right > right + 0.5) problems.push(c.closest('tr').id + ': "' + c.innerText.trim().slice(0, 30) + '" is past the card');
    // A word (a time, a tool, an address) on two lines; words of 24
    // characters or more may be broken.
    const texts = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
    for (let n = texts.nextNode(); n; n = texts.nextNode()) {
      for (const m of n.data.matchAll(/\S+/g)) {
        if (m[0].length >= 24) continue;
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        if (new Set([...r.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top))).size > 1)
          problems.push(c.closest('tr').id + ': the word "' + m[0] + '" is broken across lines in a cell ' + Math.round(c.clientWidth) + ' px wide');
      }
    }
  }
  return problems.slice(0, 10);
})()`))
			for _, pr := range problems {
				t.Errorf("%s: %s", what, pr)
			}
		}
	}
}
