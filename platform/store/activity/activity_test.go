package activity

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/requestid"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var (
	siteA = uuid.MustParse("00000000-0000-4000-8000-00000000000a")
	siteB = uuid.MustParse("00000000-0000-4000-8000-00000000000b")
	t0    = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
)

// seeded is one usage event the tests insert, with its id.
type seeded struct {
	id                          int64
	at                          time.Time
	site                        uuid.UUID
	user, client, tool, outcome string
	code                        string
	duration                    int
	erp                         *int
}

func ms(v int) *int { return &v }

// seedUsage inserts the events with explicit ids, so that ties in time are
// broken by an id the test knows.
func seedUsage(t *testing.T, pool *pgxpool.Pool, events []seeded) {
	t.Helper()
	for _, e := range events {
		slug := "site-a"
		if e.site == siteB {
			slug = "site-b"
		}
		if _, err := pool.Exec(context.Background(), `
			INSERT INTO usage_events (id, occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome,
			                          error_code, duration_ms, erp_ms, erp_user, client_id)
			VALUES ($1, $2, $3, $4, 'oauth', 'r', 'tools/call', $5, $6, $7, $8, $9, $10, $11)`,
			e.id, e.at, e.site, slug, e.tool, e.outcome, e.code, e.duration, e.erp, e.user, e.client); err != nil {
			t.Fatal(err)
		}
	}
}

// fixture is 30 events over three hours on two sites, with ties in time.
func fixture() []seeded {
	var out []seeded
	for i := range 30 {
		e := seeded{
			id: int64(100 + i), at: t0.Add(time.Duration(i/2) * 10 * time.Minute), // pairs share an instant
			site: siteA, user: "jane@a.example", client: "claude", tool: "list_customers", outcome: "success",
			duration: 10 + i, erp: ms(5 + i),
		}
		if i%3 == 0 {
			e.site, e.user, e.client = siteB, "bob@b.example", "cursor"
		}
		if i%5 == 0 {
			e.tool = "get_invoice"
		}
		if i%7 == 0 {
			e.outcome, e.code = "error", "PERMISSION_DENIED"
		}
		out = append(out, e)
	}
	return out
}

// newestFirst is the seeded ids matching keep, in the viewer's order.
func newestFirst(events []seeded, keep func(seeded) bool) []int64 {
	var sel []seeded
	for _, e := range events {
		if keep(e) {
			sel = append(sel, e)
		}
	}
	slices.SortFunc(sel, func(a, b seeded) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return int(b.id - a.id)
	})
	ids := make([]int64, len(sel))
	for i, e := range sel {
		ids[i] = e.id
	}
	return ids
}

// walkUsage reads every page of f by size and returns the ids in order.
func walkUsage(t *testing.T, s *Store, f Filter, size int) []int64 {
	t.Helper()
	var ids []int64
	var after *Cursor
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("paging does not end")
		}
		p, err := s.Usage(context.Background(), f, after, size)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Events) > size {
			t.Fatalf("page of %d rows, asked for %d", len(p.Events), size)
		}
		for _, e := range p.Events {
			ids = append(ids, e.ID)
		}
		if p.Next == nil {
			return ids
		}
		// The cursor goes through its text form, as in a link.
		c, ok, err := ParseCursor(p.Next.String())
		if err != nil || !ok {
			t.Fatalf("cursor %q does not parse: %v", p.Next.String(), err)
		}
		after = &c
	}
}

// TestUsagePagesWalkEveryRowOnceNewestFirst: keyset pages of every size
// give each matching row once, in (time, id) order newest first, ties in
// time included, for each filter.
func TestUsagePagesWalkEveryRowOnceNewestFirst(t *testing.T) {
	pool := pgtest.NewPool(t)
	events := fixture()
	seedUsage(t, pool, events)
	s := NewStore(pool)
	cases := []struct {
		name string
		f    Filter
		keep func(seeded) bool
	}{
		{"all", Filter{}, func(seeded) bool { return true }},
		{"site", Filter{SiteID: siteB}, func(e seeded) bool { return e.site == siteB }},
		{"user", Filter{ERPUser: "jane@a.example"}, func(e seeded) bool { return e.user == "jane@a.example" }},
		{"tool", Filter{Tool: "get_invoice"}, func(e seeded) bool { return e.tool == "get_invoice" }},
		{"outcome", Filter{Outcome: "error"}, func(e seeded) bool { return e.outcome == "error" }},
		{"code", Filter{ErrorCode: "PERMISSION_DENIED"}, func(e seeded) bool { return e.code == "PERMISSION_DENIED" }},
		{"client", Filter{Client: "cursor"}, func(e seeded) bool { return e.client == "cursor" }},
		{"range", Filter{From: t0.Add(30 * time.Minute), To: t0.Add(90 * time.Minute)}, func(e seeded) bool {
			return !e.at.Before(t0.Add(30*time.Minute)) && e.at.Before(t0.Add(90*time.Minute))
		}},
		{"site and tool", Filter{SiteID: siteA, Tool: "list_customers"}, func(e seeded) bool {
			return e.site == siteA && e.tool == "list_customers"
		}},
	}
	for _, c := range cases {
		want := newestFirst(events, c.keep)
		if len(want) == 0 {
			t.Fatalf("%s: the fixture has no matching rows", c.name)
		}
		for _, size := range []int{1, 2, 3, 7, 500} {
			if got := walkUsage(t, s, c.f, size); !slices.Equal(got, want) {
				t.Errorf("%s, pages of %d: ids %v, want %v", c.name, size, got, want)
			}
		}
	}
}

// TestUsageSiteFilterNeverShowsAnotherSite: with a site given, no page of
// any filter holds another site's row, even with a cursor taken from the
// other site's rows.
func TestUsageSiteFilterNeverShowsAnotherSite(t *testing.T) {
	pool := pgtest.NewPool(t)
	seedUsage(t, pool, fixture())
	s := NewStore(pool)
	other, err := s.Usage(context.Background(), Filter{SiteID: siteB}, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{{SiteID: siteA}, {SiteID: siteA, ERPUser: "bob@b.example"}, {SiteID: siteA, Client: "cursor"}} {
		p, err := s.Usage(context.Background(), f, other.Next, MaxPage)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Events {
			if e.SiteID != siteA {
				t.Errorf("filter %+v returned event %d of site %s", f, e.ID, e.SiteID)
			}
		}
	}
}

// TestBadInputIsRefusedPlainly: a cursor this viewer did not make and a
// reversed range are refused with a plain sentence.
func TestBadInputIsRefusedPlainly(t *testing.T) {
	for _, s := range []string{"x", "1.2", "1.2.3.4", "1.5.3", "1.0.-3", "99999999999999999999.0.1", "-999999999999999999.0.1"} {
		if _, _, err := ParseCursor(s); !errors.Is(err, ErrBadCursor) {
			t.Errorf("ParseCursor(%q) = %v, want ErrBadCursor", s, err)
		}
	}
	s := NewStore(pgtest.NewPool(t))
	if _, err := s.Usage(context.Background(), Filter{From: t0, To: t0.Add(-time.Hour)}, nil, 10); !errors.Is(err, ErrBadRange) {
		t.Errorf("reversed range: %v, want ErrBadRange", err)
	}
	if _, err := s.Stats(context.Background(), Filter{From: t0, To: t0.Add(500 * time.Hour)}, time.Hour); !errors.Is(err, ErrTooManyBuckets) {
		t.Errorf("500 hourly buckets: %v, want ErrTooManyBuckets", err)
	}
}

// TestStatsCountsAndPercentilesPerBucket: the seeded hours give their
// counts per tool, error rate and nearest-rank percentiles.
func TestStatsCountsAndPercentilesPerBucket(t *testing.T) {
	pool := pgtest.NewPool(t)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	var events []seeded
	// Hour 0: ten calls of list_customers with durations 10..100 and ERP
	// times 1..10, the last two failing; one get_invoice without ERP time.
	for i := 1; i <= 10; i++ {
		e := seeded{id: int64(i), at: at(i), site: siteA, client: "c", tool: "list_customers", outcome: "success", duration: 10 * i, erp: ms(i)}
		if i > 8 {
			e.outcome, e.code = "error", "UPSTREAM_TIMEOUT"
		}
		events = append(events, e)
	}
	events = append(events, seeded{id: 11, at: at(30), site: siteA, client: "c", tool: "get_invoice", outcome: "success", duration: 7})
	// Hour 2: one call. Hour 1 stays empty.
	events = append(events, seeded{id: 12, at: at(125), site: siteA, client: "c", tool: "get_invoice", outcome: "error", code: "NOT_FOUND", duration: 40, erp: ms(30)})
	seedUsage(t, pool, events)
	ctx := context.Background()
	store := NewStore(pool)
	chart := Filter{From: t0, To: t0.Add(3 * time.Hour)}
	// Nothing is rolled up yet: the chart counts the events.
	fromEvents, err := store.Stats(ctx, chart, time.Hour)
	if err != nil || fromEvents.FromRollup {
		t.Fatalf("before any roll-up: rollup %v, %v", fromEvents.FromRollup, err)
	}
	// Hours 0 and 1 are rolled up; hour 2 is still within its grace, so
	// the chart reads it from the events.
	if n, err := store.RollUp(ctx, t0.Add(3*time.Hour+RollUpGrace-time.Second)); err != nil || n != 2 {
		t.Fatalf("first roll-up: %d hours, %v; want 2", n, err)
	}
	mixed, err := store.Stats(ctx, chart, time.Hour)
	if err != nil || !mixed.FromRollup || !reflect.DeepEqual(mixed.Buckets, fromEvents.Buckets) || !reflect.DeepEqual(mixed.Tools, fromEvents.Tools) {
		t.Errorf("rollup and events %+v (%v)\nevents only %+v", mixed.Buckets, err, fromEvents.Buckets)
	}
	if n, err := store.RollUp(ctx, t0.Add(3*time.Hour+RollUpGrace)); err != nil || n != 1 {
		t.Fatalf("second roll-up: %d hours, %v; want 1", n, err)
	}
	if n, err := store.RollUp(ctx, t0.Add(3*time.Hour+RollUpGrace)); err != nil || n != 0 {
		t.Fatalf("third roll-up: %d hours, %v; want none", n, err)
	}
	st, err := store.Stats(ctx, chart, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Buckets, fromEvents.Buckets) {
		t.Errorf("from the rollup %+v\nfrom the events %+v", st.Buckets, fromEvents.Buckets)
	}
	if len(st.Buckets) != 3 {
		t.Fatalf("%d buckets, want 3", len(st.Buckets))
	}
	b0, b1, b2 := st.Buckets[0], st.Buckets[1], st.Buckets[2]
	if !b0.Start.Equal(t0) || b0.Calls != 11 || b0.Errors != 2 || b0.Timed != 10 {
		t.Errorf("hour 0: %+v", b0)
	}
	if want := []ToolCount{{"list_customers", 10, 2}, {"get_invoice", 1, 0}}; !slices.Equal(b0.Tools, want) {
		t.Errorf("hour 0 tools %v, want %v", b0.Tools, want)
	}
	// Nearest rank over 10 values: p50 is the 5th, p95 the 10th, each
	// read as its slot's bound: ERP 5 and 10 are bounds; erpgate's 45 and
	// 90 fall in the slots up to 50 and 100.
	if b0.P50ERP != 5 || b0.P95ERP != 10 || b0.P50Gate != 50 || b0.P95Gate != 100 {
		t.Errorf("hour 0 percentiles erp %d/%d gate %d/%d", b0.P50ERP, b0.P95ERP, b0.P50Gate, b0.P95Gate)
	}
	if b1.Calls != 0 || len(b1.Tools) != 0 || !b1.Start.Equal(t0.Add(time.Hour)) {
		t.Errorf("hour 1: %+v, want empty", b1)
	}
	if b2.Calls != 1 || b2.Errors != 1 || b2.ErrorRate() != 1 || b2.P50Gate != 10 {
		t.Errorf("hour 2: %+v", b2)
	}
	if want := []ToolCount{{"list_customers", 10, 2}, {"get_invoice", 2, 1}}; !slices.Equal(st.Tools, want) {
		t.Errorf("tools %v, want %v", st.Tools, want)
	}
	if !st.FromRollup {
		t.Error("an unfiltered chart did not read the rollup")
	}
	// The events themselves (a filter every call matches) give the same,
	// and so do the client's rollup rows.
	raw, err := NewStore(pool).Stats(context.Background(), Filter{From: t0, To: t0.Add(3 * time.Hour), Client: "c", SiteID: siteA}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if raw.FromRollup || !reflect.DeepEqual(raw.Buckets, st.Buckets) || !reflect.DeepEqual(raw.Tools, st.Tools) {
		t.Errorf("from the events %+v\nfrom the rollup %+v", raw.Buckets, st.Buckets)
	}
	client, err := NewStore(pool).Stats(context.Background(), Filter{From: t0, To: t0.Add(3 * time.Hour), Client: "c"}, time.Hour)
	if err != nil || !client.FromRollup || !reflect.DeepEqual(client.Buckets, st.Buckets) {
		t.Errorf("the client's chart (rollup %v) %+v, %v", client.FromRollup, client.Buckets, err)
	}
	none, err := NewStore(pool).Stats(context.Background(), Filter{From: t0, To: t0.Add(3 * time.Hour), Client: "other"}, time.Hour)
	if err != nil || len(none.Tools) != 0 {
		t.Errorf("another client's chart %+v, %v", none.Tools, err)
	}
	// The site's rollup rows hold the same; another site has none.
	site, err := NewStore(pool).Stats(context.Background(), Filter{From: t0, To: t0.Add(3 * time.Hour), SiteID: siteA}, time.Hour)
	if err != nil || !reflect.DeepEqual(site.Buckets, st.Buckets) {
		t.Errorf("site A's chart %+v, %v", site.Buckets, err)
	}
	other, err := NewStore(pool).Stats(context.Background(), Filter{From: t0, To: t0.Add(3 * time.Hour), SiteID: siteB}, time.Hour)
	if err != nil || len(other.Tools) != 0 || other.Buckets[0].Calls != 0 {
		t.Errorf("site B's chart %+v, %v", other.Buckets, err)
	}
	days, err := NewStore(pool).Stats(context.Background(), Filter{From: t0, To: t0.Add(3 * time.Hour)}, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(days.Buckets) != 1 || days.Buckets[0].Calls != 12 || !days.Buckets[0].Start.Equal(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("by day: %+v", days.Buckets)
	}
}

// seedAudit inserts sign-in and administration events.
func seedAudit(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	for _, id := range []uuid.UUID{siteA, siteB} {
		slug := map[uuid.UUID]string{siteA: "site-a", siteB: "site-b"}[id]
		if _, err := pool.Exec(ctx, `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, $2, 'frappe', 'https://' || $2 || '.example', $2)`, id, slug); err != nil {
			t.Fatal(err)
		}
	}
	auth := []struct {
		id             int64
		at             time.Time
		site           uuid.UUID
		event, user    string
		client, reason string
	}{
		{1, t0, siteA, "sign_in", "jane@a.example", "claude", ""},
		{2, t0.Add(time.Minute), siteA, "consent", "jane@a.example", "claude", ""},
		{3, t0.Add(2 * time.Minute), siteB, "login_denied", "eve@b.example", "cursor", "access_denied"},
		{4, t0.Add(3 * time.Minute), siteA, "sign_in", "=HYPERLINK(\"http://evil\")", "claude", ""},
	}
	for _, a := range auth {
		if _, err := pool.Exec(ctx, `INSERT INTO auth_events (id, occurred_at, site_id, event, erp_user, client_id, reason) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			a.id, a.at, a.site, a.event, a.user, a.client, a.reason); err != nil {
			t.Fatal(err)
		}
	}
	admin := []struct {
		id     int64
		at     time.Time
		site   uuid.UUID
		action string
		user   string
	}{
		{1, t0.Add(time.Minute), siteA, "revoke_person", "jane@a.example"}, // same instant as auth 2
		{2, t0.Add(4 * time.Minute), siteB, "disable_site", ""},
	}
	for _, a := range admin {
		details := "{}"
		if a.user != "" {
			details = fmt.Sprintf(`{"erp_user": %q}`, a.user)
		}
		slug := map[uuid.UUID]string{siteA: "site-a", siteB: "site-b"}[a.site]
		if _, err := pool.Exec(ctx, `INSERT INTO admin_events (id, occurred_at, site_id, site_slug, actor_kind, actor, action, outcome, details) VALUES ($1, $2, $3, $4, 'operator', 'admin_token', $5, 'success', $6)`,
			a.id, a.at, a.site, slug, a.action, details); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAuditMergesSignInAndAdministration: both tables in one newest-first
// order, administration first at the same instant, paged by keyset
// across the two, with each filter.
func TestAuditMergesSignInAndAdministration(t *testing.T) {
	pool := pgtest.NewPool(t)
	seedAudit(t, pool)
	s := NewStore(pool)
	type ref struct {
		src int
		id  int64
	}
	walk := func(f Filter, size int) []ref {
		var out []ref
		var after *Cursor
		for range 20 {
			p, err := s.Audit(context.Background(), f, after, size)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range p.Events {
				out = append(out, ref{e.Source, e.ID})
			}
			if p.Next == nil {
				return out
			}
			c, _, err := ParseCursor(p.Next.String())
			if err != nil {
				t.Fatal(err)
			}
			after = &c
		}
		t.Fatal("paging does not end")
		return nil
	}
	A, S := SourceAdmin, SourceSignIn
	cases := []struct {
		name string
		f    Filter
		want []ref
	}{
		{"all", Filter{}, []ref{{A, 2}, {S, 4}, {S, 3}, {A, 1}, {S, 2}, {S, 1}}},
		{"site", Filter{SiteID: siteA}, []ref{{S, 4}, {A, 1}, {S, 2}, {S, 1}}},
		{"user", Filter{ERPUser: "jane@a.example"}, []ref{{A, 1}, {S, 2}, {S, 1}}},
		{"refused", Filter{Outcome: "refused"}, []ref{{S, 3}}},
		{"reason", Filter{ErrorCode: "access_denied"}, []ref{{S, 3}}},
		{"client", Filter{Client: "claude"}, []ref{{S, 4}, {S, 2}, {S, 1}}},
		{"event", Filter{Tool: "disable_site"}, []ref{{A, 2}}},
	}
	for _, c := range cases {
		for _, size := range []int{1, 2, 500} {
			if got := walk(c.f, size); !slices.Equal(got, c.want) {
				t.Errorf("%s, pages of %d: %v, want %v", c.name, size, got, c.want)
			}
		}
	}
	p, err := s.Audit(context.Background(), Filter{SiteID: siteB, Outcome: "refused"}, nil, 10)
	if err != nil || len(p.Events) != 1 {
		t.Fatalf("refused sign-in: %v, %v", p.Events, err)
	}
	if e := p.Events[0]; e.SiteSlug != "site-b" || e.Event != "login_denied" || e.ERPUser != "eve@b.example" || e.Reason != "access_denied" {
		t.Errorf("refused sign-in read as %+v", e)
	}
}

// TestExportNeutralisesFormulas is the attack: an ERP user chosen to be a
// spreadsheet formula reaches the export as text, not as a formula.
func TestExportNeutralisesFormulas(t *testing.T) {
	pool := pgtest.NewPool(t)
	seedAudit(t, pool)
	events := fixture()
	events[0].user = "=HYPERLINK(\"http://evil\")"
	events[1].client = "+cmd|' /C calc'!A0"
	seedUsage(t, pool, events)
	s := NewStore(pool)
	var usage, audit bytes.Buffer
	if err := s.ExportUsage(context.Background(), Filter{}, &usage); err != nil {
		t.Fatal(err)
	}
	if err := s.ExportAudit(context.Background(), Filter{}, &audit); err != nil {
		t.Fatal(err)
	}
	for name, buf := range map[string]*bytes.Buffer{"usage": &usage, "audit": &audit} {
		records, err := csv.NewReader(buf).ReadAll()
		kept := false
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"usage": 1 + len(events), "audit": 1 + 6}[name]
		if len(records) != want {
			t.Errorf("%s export: %d lines, want %d", name, len(records), want)
		}
		for _, r := range records[1:] {
			for _, cell := range r {
				if cell != "" && (cell[0] == '=' || cell[0] == '+' || cell[0] == '@') {
					t.Errorf("%s export cell %q starts a formula", name, cell)
				}
				kept = kept || cell == `'=HYPERLINK("http://evil")`
			}
		}
		if !kept {
			t.Errorf("%s export: the formula user is not kept as text", name)
		}
	}
}

// TestRedactedFilterFindsOnlyCallsWithRedactions: the redaction filter
// pages, counts and exports only the calls whose results had values
// redacted, within the site filter, even over hours the rollup (which
// does not know of redactions) already holds.
func TestRedactedFilterFindsOnlyCallsWithRedactions(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	events := fixture()
	seedUsage(t, pool, events)
	redacted := func(e seeded) bool { return (e.id-100)%4 == 1 }
	for _, e := range events {
		if redacted(e) {
			if _, err := pool.Exec(ctx, `UPDATE usage_events SET redacted_count = 2, redacted_fields = 'data[].tax_id' WHERE id = $1`, e.id); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := NewStore(pool)
	if _, err := s.RollUp(ctx, t0.Add(4*time.Hour+RollUpGrace)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{{Redacted: true}, {Redacted: true, SiteID: siteA}} {
		want := newestFirst(events, func(e seeded) bool { return redacted(e) && (f.SiteID == uuid.Nil || e.site == f.SiteID) })
		if got := walkUsage(t, s, f, 2); !slices.Equal(got, want) {
			t.Errorf("filter %+v: ids %v, want %v", f, got, want)
		}
		f.From, f.To = t0, t0.Add(3*time.Hour)
		st, err := s.Stats(ctx, f, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		var calls int64
		for _, b := range st.Buckets {
			calls += b.Calls
		}
		if calls != int64(len(want)) || st.FromRollup {
			t.Errorf("filter %+v: charts count %d calls (from the rollup: %v), want %d from the events", f, calls, st.FromRollup, len(want))
		}
	}
	var out bytes.Buffer
	if err := s.ExportUsage(ctx, Filter{Redacted: true, SiteID: siteB}, &out); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := newestFirst(events, func(e seeded) bool { return redacted(e) && e.site == siteB })
	if len(records) != 1+len(want) || records[0][len(records[0])-2] != "redacted_count" {
		t.Fatalf("export: %d lines (header %q), want %d", len(records), records[0], 1+len(want))
	}
	for _, r := range records[1:] {
		if r[len(r)-2] != "2" || r[len(r)-1] != "data[].tax_id" {
			t.Errorf("exported row %q: want 2 values in data[].tax_id", r)
		}
	}
}

// FuzzParseCursor: any text either is refused or round-trips.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"", "1764496800000000.0.42", "0.1.0", "1.2.3.4", "-1.0.0", "x.y.z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok, err := ParseCursor(s)
		if err != nil || !ok {
			return
		}
		again, ok2, err2 := ParseCursor(c.String())
		if err2 != nil || !ok2 || !again.At.Equal(c.At) || again.ID != c.ID || again.Source != c.Source {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, c, c.String(), again, err2)
		}
	})
}

// TestLatencyBoundsMatchTheDatabase: the slot of each bound is its own,
// and one millisecond more is the next slot's.
func TestLatencyBoundsMatchTheDatabase(t *testing.T) {
	pool := pgtest.NewPool(t)
	for i, b := range LatencyBounds {
		var at, after int
		if err := pool.QueryRow(context.Background(), `SELECT erpgate_latency_slot($1), erpgate_latency_slot($1 + 1)`, b).Scan(&at, &after); err != nil {
			t.Fatal(err)
		}
		if at != i || after != i+1 {
			t.Errorf("bound %d ms: slots %d and %d, want %d and %d", b, at, after, i, i+1)
		}
	}
	var neg int
	if err := pool.QueryRow(context.Background(), `SELECT erpgate_latency_slot(-5)`).Scan(&neg); err != nil || neg != 0 {
		t.Errorf("a negative time is slot %d (%v), want 0", neg, err)
	}
}

// TestRollupCountsEachInsertOnce: rows written again by a retried batch
// (ON CONFLICT DO NOTHING) are not counted again, rows without a site
// count for every site only, and a replica that finds the roll-up taken by
// another does nothing.
func TestRollupCountsEachInsertOnce(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	insert := `INSERT INTO usage_events (event_id, occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, duration_ms, erp_ms, client_id)
		SELECT ('00000000-0000-4000-8000-' || lpad(i::text, 12, '0'))::uuid, $1, CASE WHEN i = 3 THEN NULL ELSE $2::uuid END,
		       'site-a', 'oauth', 'r', 'tools/call', 'x', 'success', 10, 5, 'k'
		FROM generate_series(1, 3) i ON CONFLICT (event_id) DO NOTHING`
	for range 2 {
		if _, err := pool.Exec(ctx, insert, t0, siteA); err != nil {
			t.Fatal(err)
		}
	}
	store := NewStore(pool)
	other, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(ctx, `SELECT pg_advisory_lock($1)`, rollUpLock); err != nil {
		t.Fatal(err)
	}
	if n, err := store.RollUp(ctx, t0.Add(time.Hour+RollUpGrace)); err != nil || n != 0 {
		t.Errorf("roll-up while another replica holds it: %d hours, %v; want none", n, err)
	}
	if _, err := other.Exec(ctx, `SELECT pg_advisory_unlock($1)`, rollUpLock); err != nil {
		t.Fatal(err)
	}
	other.Release()
	if n, err := store.RollUp(ctx, t0.Add(time.Hour+RollUpGrace)); err != nil || n != 1 {
		t.Fatalf("roll-up: %d hours, %v; want 1", n, err)
	}
	counts := map[uuid.UUID]int64{}
	rows, err := pool.Query(ctx, `SELECT site_id, calls FROM usage_rollup WHERE client_id = ''`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		counts[id] = n
	}
	if len(counts) != 2 || counts[siteA] != 2 || counts[AllSites] != 3 {
		t.Errorf("rollup calls %v, want site A 2 and every site 3", counts)
	}
	var clientCalls int64
	if err := pool.QueryRow(ctx, `SELECT sum(calls) FROM usage_rollup WHERE client_id = 'k' AND site_id = $1`, AllSites).Scan(&clientCalls); err != nil || clientCalls != 3 {
		t.Errorf("client k's rollup calls %d (%v), want 3", clientCalls, err)
	}
}

// TestPruneDeletesOnlyWhatTheRollupCounts: retention deletes the events
// before its cutoff that the chart rollup already counts, in several
// statements when there are many, and the charts of those hours keep their
// figures; events of hours not rolled up yet stay, however old.
func TestPruneDeletesOnlyWhatTheRollupCounts(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	events := fixture()
	seedUsage(t, pool, events)
	const many = 12000 // more than two statements' worth
	if _, err := pool.Exec(ctx, `
		INSERT INTO usage_events (id, occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, duration_ms, erp_ms)
		SELECT 1000 + i, $1::timestamptz + i * interval '1 millisecond', $2, 'site-a', 'oauth', 'r', 'tools/call', 'list_customers', 'success', 10, 5
		FROM generate_series(1, $3) i`, t0.Add(30*time.Minute), siteA, many); err != nil {
		t.Fatal(err)
	}
	s := NewStore(pool)
	// The hours of t0 and t0+1h are over; t0+2h is not.
	if n, err := s.RollUp(ctx, t0.Add(2*time.Hour+RollUpGrace)); err != nil || n != 2 {
		t.Fatalf("roll-up: %d hours, %v; want 2", n, err)
	}
	deleted, err := s.Prune(ctx, t0.Add(3*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	kept := func(e seeded) bool { return !e.at.Before(t0.Add(2 * time.Hour)) }
	old := 0
	for _, e := range events {
		if !kept(e) {
			old++
		}
	}
	if deleted != int64(old+many) {
		t.Errorf("deleted %d events, want the %d before the rollup's end", deleted, old+many)
	}
	if got, want := walkUsage(t, s, Filter{}, MaxPage), newestFirst(events, kept); !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
	st, err := s.Stats(ctx, Filter{From: t0, To: t0.Add(3 * time.Hour)}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var calls int64
	for _, b := range st.Buckets {
		calls += b.Calls
	}
	if calls != int64(len(events)+many) {
		t.Errorf("the charts count %d calls after pruning, want every one of the %d", calls, len(events)+many)
	}
	if again, err := s.Prune(ctx, t0.Add(3*time.Hour)); err != nil || again != 0 {
		t.Errorf("a second run deleted %d (%v), want 0", again, err)
	}
}

// TestRequestIDFilterFindsTheOneCall: the request id erpgate sends every
// MCP reply as X-Request-Id is what a person quotes when a call went
// wrong; request_id (the viewer's and the admin API's parameter) finds
// that call's event, in the list, the charts and the export, and only on
// its own site.
func TestRequestIDFilterFindsTheOneCall(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	events := fixture()
	seedUsage(t, pool, events)
	if _, err := pool.Exec(ctx, `UPDATE usage_events SET request_id = 'req-' || id`); err != nil {
		t.Fatal(err)
	}
	s := NewStore(pool)
	if _, err := s.RollUp(ctx, t0.Add(4*time.Hour+RollUpGrace)); err != nil {
		t.Fatal(err)
	}
	target := events[len(events)/2]
	requestID := fmt.Sprintf("req-%d", target.id)
	p, err := ParseQuery(url.Values{ParamRequestID: {" " + requestID + " "}, ParamFrom: {t0.Format(time.RFC3339)}, ParamTo: {t0.Add(3 * time.Hour).Format(time.RFC3339)}}, t0, UsageOutcomes)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := ParseQuery(Values(p.Filter, p.Site), t0, UsageOutcomes); err != nil || again.Filter != p.Filter {
		t.Fatalf("the filter does not read back from its own link: %+v, %v", again.Filter, err)
	}
	f := p.Filter
	if got := walkUsage(t, s, f, 2); !slices.Equal(got, []int64{target.id}) {
		t.Errorf("request %s: ids %v, want [%d]", requestID, got, target.id)
	}
	page, err := s.Usage(ctx, f, nil, 10)
	if err != nil || len(page.Events) != 1 || page.Events[0].RequestID != requestID {
		t.Fatalf("request %s: %+v, %v", requestID, page.Events, err)
	}
	st, err := s.Stats(ctx, f, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var calls int64
	for _, b := range st.Buckets {
		calls += b.Calls
	}
	if calls != 1 || st.FromRollup {
		t.Errorf("charts count %d calls (from the rollup: %v), want the one call, from the events", calls, st.FromRollup)
	}
	other := siteA
	if target.site == siteA {
		other = siteB
	}
	f.SiteID = other
	if got := walkUsage(t, s, f, 2); len(got) != 0 {
		t.Errorf("request %s found on the other site: %v", requestID, got)
	}
	var out bytes.Buffer
	if err := s.ExportUsage(ctx, p.Filter, &out); err != nil {
		t.Fatal(err)
	}
	if records, err := csv.NewReader(&out).ReadAll(); err != nil || len(records) != 2 {
		t.Errorf("export: %d lines, %v; want the header and the one call", len(records), err)
	}
	if _, err := ParseQuery(url.Values{ParamRequestID: {strings.Repeat("r", 400)}}, t0, UsageOutcomes); !IsQueryError(err) {
		t.Errorf("a request id of 400 characters: %v, want a plain refusal", err)
	}
}

// TestRequestIDIsLookedForAfterItsTime: usage_events has no index of
// request ids; an id made by requestid carries its time, and its event is
// looked for in the minutes after it. The same id stored an hour later
// (which erpgate never does) is outside that search, which shows the
// search is narrowed; an id from before ids carried their time, whose
// digits read as an instant outside the range asked for, is still found
// in the whole range.
func TestRequestIDIsLookedForAfterItsTime(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	events := fixture()
	seedUsage(t, pool, events)
	target, later := events[4], events[4+12] // two hours apart
	timed := requestid.New(target.at.Add(-2 * time.Second))
	const legacy = "00aa5b1c0d2e3f4a5b6c7d8e" // random digits from an older erpgate: 1970 as a time
	if _, err := pool.Exec(ctx, `UPDATE usage_events SET request_id = $1 WHERE id = ANY($2)`, timed, []int64{target.id, later.id}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE usage_events SET request_id = $1 WHERE id = $2`, legacy, events[20].id); err != nil {
		t.Fatal(err)
	}
	s := NewStore(pool)
	whole := Filter{From: t0, To: t0.Add(6 * time.Hour)}
	for _, tc := range []struct {
		id   string
		want []int64
	}{
		{timed, []int64{target.id}},
		{legacy, []int64{events[20].id}},
	} {
		f := whole
		f.RequestID = tc.id
		if got := walkUsage(t, s, f, 2); !slices.Equal(got, tc.want) {
			t.Errorf("request %s: ids %v, want %v", tc.id, got, tc.want)
		}
	}
}
