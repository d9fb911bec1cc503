package main

import (
	"testing"
	"time"
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
	cardsAreDense(t, ctx, gw, eventCards{path: "/console/audit", title: "Audit", name: "audit", head: 3, headName: "event", maxHeight: auditCardMaxHeight,
		screenOfTheEvents: true})
}
