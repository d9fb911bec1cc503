package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/web/viewer"
)

// seedAuditEvents adds 30 sign-ins at the ERP (every third one refused,
// access_denied) and 30 site-administration actions (every fifth one
// refused, with its sentence) of site acme, the newest first a minute
// apart: with the events of registering the site, more than a page.
func seedAuditEvents(t *testing.T, gw *gateway) {
	t.Helper()
	if _, err := gw.App.pool.Exec(t.Context(), `
		INSERT INTO auth_events (occurred_at, site_id, event, erp_user, client_id, reason)
		SELECT now() - (i * 2 + 1) * interval '1 minute', s.id,
		       CASE WHEN i % 3 = 0 THEN 'login_denied' ELSE 'sign_in' END,
		       CASE WHEN i % 2 = 0 THEN 'ann@acme.example' ELSE 'bob@acme.example' END,
		       CASE WHEN i % 2 = 0 THEN 'claude' ELSE 'cursor' END,
		       CASE WHEN i % 3 = 0 THEN 'access_denied' ELSE '' END
		FROM sites s, generate_series(0, 29) i WHERE s.slug = 'acme'`); err != nil {
		t.Fatal(err)
	}
	if _, err := gw.App.pool.Exec(t.Context(), `
		INSERT INTO admin_events (occurred_at, site_id, site_slug, actor_kind, actor, action, outcome, reason)
		SELECT now() - (i * 2 + 2) * interval '1 minute', s.id, 'acme',
		       CASE WHEN i % 2 = 0 THEN 'erp_admin' ELSE 'operator' END,
		       CASE WHEN i % 2 = 0 THEN 'ann@acme.example' ELSE 'operator' END,
		       CASE WHEN i % 3 = 0 THEN 'issue_service_token' ELSE 'update_site' END,
		       CASE WHEN i % 5 = 0 THEN 'refused' ELSE 'success' END,
		       CASE WHEN i % 5 = 0 THEN 'your erpgate operator disabled this site, so it cannot be changed until they enable it again; nothing was changed' ELSE '' END
		FROM sites s, generate_series(0, 29) i WHERE s.slug = 'acme'`); err != nil {
		t.Fatal(err)
	}
}

// auditCardMaxHeight bounds an audit event's card on a phone, by the
// screen's width: an event is three lines of 19.6 px (its time beside
// its event, its kind beside its outcome, its site beside its client)
// and one to three across (the ERP user, the actor, a reason, which may
// take two), and 13 px between cards; some 111 px on average for the
// seeded events. At 360 px an outcome takes two lines and an event's
// name often does (136 px). With one cell a line the 50 events were
// 10,490 px tall at 390 px (210 px a card) and 10,751 px at 360.
var auditCardMaxHeight = map[int64]float64{phoneWidth: 120, 360: 145}

// TestChromiumAuditEventsAreDenseOnAPhone opens the audit page of 60
// seeded events on a phone: the first page's 50 events are cards of
// auditCardMaxHeight at most on average, each headed by its time and its
// event, no cell's words reach past their cell or the card, and no table
// scrolls sideways.
func TestChromiumAuditEventsAreDenseOnAPhone(t *testing.T) {
	gw, ctx := consoleOfAcme(t, 90*time.Second, seedAuditEvents)
	for _, width := range []int64{phoneWidth, 360} {
		viewAt(t, ctx, width, phoneHeight)
		navigate(t, ctx, "open the audit", chromedp.Navigate(gw.URL+"/console/audit"))
		waitForNewTitle(t, ctx, "Audit")
		saveScreenshot(t, ctx, fmt.Sprintf("%d-audit-events.png", width))
		browserDo(t, ctx, "scroll to the events", chromedp.Evaluate[chromedp.Void](`document.querySelector('#events').scrollIntoView()`))
		saveScreenshotOfScreen(t, ctx, fmt.Sprintf("%d-audit-events-screen.png", width))
		what := fmt.Sprintf("the audit page at %d px", width)
		notWiderThanTheScreen(t, ctx, what)
		if n := browserResult(t, ctx, "count the events", chromedp.Evaluate[int](`document.querySelectorAll('#events tbody tr').length`)); n != viewer.PageSize {
			t.Fatalf("%s: %d events shown, want a page of %d", what, n, viewer.PageSize)
		}
		h := browserResult(t, ctx, "measure the events", chromedp.Evaluate[float64](`document.querySelector('#events').getBoundingClientRect().height`))
		t.Logf("%s: the 50 events are %.0f px tall", what, h)
		if most := auditCardMaxHeight[width] * viewer.PageSize; h > most {
			t.Errorf("%s: the 50 events are %.0f px tall, want at most %.0f px (%.0f px a card)", what, h, most, h/viewer.PageSize)
		}
		problems := browserResult(t, ctx, "measure the cards", chromedp.Evaluate[[]string](`(() => {
  const problems = [];
  for (const w of [...document.querySelectorAll('.table-wrap')].filter(w => !w.closest('details:not([open])'))) {
    if (w.scrollWidth > w.clientWidth) problems.push('a table scrolls sideways, ' + (w.scrollWidth - w.clientWidth) + ' px out of sight');
  }
  const table = document.querySelector('#events'), right = table.getBoundingClientRect().right;
  for (const tr of table.querySelectorAll('tbody tr')) {
    // The heading: the time and the event, first and side by side.
    const cells = [...tr.children].filter(c => c.getClientRects().length > 0).sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top || a.getBoundingClientRect().left - b.getBoundingClientRect().left);
    const time = tr.children[0], event = tr.children[3];
    if (cells[0] !== time || cells[1] !== event || Math.abs(time.getBoundingClientRect().top - event.getBoundingClientRect().top) > 0.5)
      problems.push(tr.id + ': the time and event do not head the card: ' + cells.slice(0, 2).map(c => '"' + c.innerText.trim().slice(0, 30) + '"').join(', '));
    if (parseInt(getComputedStyle(event).fontWeight) < 600) problems.push(tr.id + ': the event is not in bold, as the heading');
    for (const c of cells) {
      if (c.scrollWidth > c.clientWidth + 0.5) problems.push(tr.id + ': "' + c.innerText.trim().slice(0, 30) + '" reaches ' + (c.scrollWidth - c.clientWidth) + ' px past its cell');
      if (c.getBoundingClientRect().right > right + 0.5) problems.push(tr.id + ': "' + c.innerText.trim().slice(0, 30) + '" is past the card');
    }
  }
  return problems.slice(0, 10);
})()`))
		for _, p := range problems {
			t.Errorf("%s: %s", what, p)
		}
	}
	viewAt(t, ctx, desktopWidth, desktopHeight)
	saveScreenshot(t, ctx, "1280-audit-events.png")
	notWiderThanTheScreen(t, ctx, "the audit page on a desktop")
}
