package usage

import (
	"context"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func event(i int) Event {
	return Event{
		Timestamp: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC), SiteSlug: "acme", AuthType: "service_token",
		RequestID: uuid.NewString(), Method: "tools/call", Tool: "list_customers", Outcome: Success, DurationMS: int64(i),
	}
}

// TestRecorderKeepsEventsWhileTheTableIsUnavailable makes inserts fail,
// records events, restores the table and checks that every event arrives,
// once, and that each was logged at once with only safe fields.
func TestRecorderKeepsEventsWhileTheTableIsUnavailable(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	core, logs := observer.New(zap.InfoLevel)
	// A long interval: the test drives flushes itself.
	r := NewRecorder(pool, zap.New(core), Options{FlushInterval: time.Hour, BatchSize: 1000})

	if _, err := pool.Exec(ctx, `ALTER TABLE usage_events RENAME TO usage_events_away`); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 25; i++ {
		r.Record(event(i))
	}
	if err := r.Flush(ctx); err == nil {
		t.Fatal("flush succeeded without the table")
	}
	if r.Pending() != 25 {
		t.Fatalf("pending = %d after a failed flush, want 25", r.Pending())
	}
	if _, err := pool.Exec(ctx, `ALTER TABLE usage_events_away RENAME TO usage_events`); err != nil {
		t.Fatal(err)
	}
	for i := 25; i < 30; i++ {
		r.Record(event(i))
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var n, distinct int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT request_id) FROM usage_events`).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n != 30 || distinct != 30 {
		t.Fatalf("stored %d events (%d distinct), want 30", n, distinct)
	}
	entries := logs.FilterMessage("MCP list_customers: success").All()
	if len(entries) != 30 {
		t.Fatalf("logged %d events, want 30", len(entries))
	}
	fields := entries[0].ContextMap()
	if fields["event"] != "mcp_request" || fields["site_slug"] != "acme" || fields["outcome"] != "success" {
		t.Errorf("logged fields = %v", fields)
	}
}

func TestRecorderDropsOldestBeyondTheBound(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	r := NewRecorder(pool, zap.NewNop(), Options{FlushInterval: time.Hour, BatchSize: 1000, MaxBuffered: 10})
	if _, err := pool.Exec(ctx, `ALTER TABLE usage_events RENAME TO usage_events_away`); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 15; i++ {
		r.Record(event(i))
	}
	if r.Pending() != 10 {
		t.Fatalf("pending = %d, want the bound 10", r.Pending())
	}
	if _, err := pool.Exec(ctx, `ALTER TABLE usage_events_away RENAME TO usage_events`); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var oldest int64
	if err := pool.QueryRow(ctx, `SELECT min(duration_ms) FROM usage_events`).Scan(&oldest); err != nil {
		t.Fatal(err)
	}
	if oldest != 5 {
		t.Errorf("oldest kept event = %d, want 5 (the first five dropped)", oldest)
	}
}

// TestRecorderStoresTheERPTimeOfToolCallsOnly: erp_ms is stored and logged
// for tools/call events and left NULL (and unlogged) for other methods.
func TestRecorderStoresTheERPTimeOfToolCallsOnly(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	core, logs := observer.New(zap.InfoLevel)
	r := NewRecorder(pool, zap.New(core), Options{FlushInterval: time.Hour, BatchSize: 1000})
	call := event(40)
	call.ERPMS = 37
	list := event(41)
	list.Method, list.Tool, list.ERPMS = "tools/list", "", 12
	r.Record(call)
	r.Record(list)
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	stored := map[string]*int64{}
	rows, err := pool.Query(ctx, `SELECT method, erp_ms FROM usage_events`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var method string
		var erp *int64
		if err := rows.Scan(&method, &erp); err != nil {
			t.Fatal(err)
		}
		stored[method] = erp
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if erp := stored["tools/call"]; erp == nil || *erp != 37 {
		t.Errorf("tools/call erp_ms = %v, want 37", erp)
	}
	if erp, ok := stored["tools/list"]; !ok || erp != nil {
		t.Errorf("tools/list erp_ms = %v (stored %v), want NULL", erp, ok)
	}
	for _, e := range logs.All() {
		_, has := e.ContextMap()["erp_ms"]
		if method := e.ContextMap()["method"]; has != (method == "tools/call") {
			t.Errorf("%s logged with erp_ms: %v", method, has)
		}
	}
}

// TestRecorderStoresWhoCalledWithoutLoggingIt: the ERP user and the MCP
// client are stored for the viewer, and the log line carries neither (an
// ERP user id is often an e-mail address).
func TestRecorderStoresWhoCalledWithoutLoggingIt(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	core, logs := observer.New(zap.InfoLevel)
	r := NewRecorder(pool, zap.New(core), Options{FlushInterval: time.Hour, BatchSize: 1000})
	e := event(7)
	e.AuthType, e.ERPUser, e.ClientID = "oauth", "jane@acme.example", "client-42"
	r.Record(e)
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var user, client string
	if err := pool.QueryRow(ctx, `SELECT erp_user, client_id FROM usage_events`).Scan(&user, &client); err != nil {
		t.Fatal(err)
	}
	if user != "jane@acme.example" || client != "client-42" {
		t.Errorf("stored erp_user %q, client_id %q; want jane@acme.example, client-42", user, client)
	}
	for _, l := range logs.All() {
		for k, v := range l.ContextMap() {
			if s, _ := v.(string); s == "jane@acme.example" || s == "client-42" {
				t.Errorf("log field %s carries %q", k, s)
			}
		}
	}
}

// TestRecorderStoresTheApprovalStage: a write's approval stage is stored
// and logged; other events store ”.
func TestRecorderStoresTheApprovalStage(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	core, logs := observer.New(zap.InfoLevel)
	r := NewRecorder(pool, zap.New(core), Options{FlushInterval: time.Hour, BatchSize: 1000})
	write := event(50)
	write.Approval = "proposed"
	r.Record(write)
	r.Record(event(51))
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var stages []string
	rows, err := pool.Query(ctx, `SELECT approval FROM usage_events ORDER BY approval DESC`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		stages = append(stages, s)
	}
	if len(stages) != 2 || stages[0] != "proposed" || stages[1] != "" {
		t.Fatalf("stored stages %q", stages)
	}
	logged := 0
	for _, e := range logs.All() {
		if e.ContextMap()["approval"] == "proposed" {
			logged++
		}
	}
	if logged != 1 {
		t.Fatalf("%d log lines carry the stage, want 1", logged)
	}
}

// TestRecorderAtItsBoundCostsLittlePerEvent: during a long outage the
// buffer is full and every event recorded drops the oldest. That must
// not cost each call a copy of the whole buffer (MaxBuffered events,
// some 26 MB at the default bound, allocated per call while every replica
// is already struggling): what an event costs must not grow with the
// bound.
func TestRecorderAtItsBoundCostsLittlePerEvent(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	const bound = 10000
	// No flush runs: the interval is long and no batch fills up.
	r := NewRecorder(pool, zap.NewNop(), Options{FlushInterval: time.Hour, BatchSize: 1 << 20, MaxBuffered: bound})
	defer func() { _ = r.Close(ctx) }()
	if _, err := pool.Exec(ctx, `ALTER TABLE usage_events RENAME TO usage_events_away`); err != nil {
		t.Fatal(err)
	}
	events := make([]Event, bound+2000)
	for i := range events {
		events[i] = event(i)
		events[i].ID = uuid.New()
	}
	for _, e := range events[:bound] {
		r.Record(e)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, e := range events[bound:] {
		r.Record(e)
	}
	runtime.ReadMemStats(&after)
	if r.Pending() != bound {
		t.Fatalf("pending = %d, want the bound %d", r.Pending(), bound)
	}
	perEvent := (after.TotalAlloc - before.TotalAlloc) / uint64(len(events)-bound)
	buffer := uint64(bound) * uint64(unsafe.Sizeof(Event{}))
	t.Logf("%d bytes allocated per event recorded at the bound (the buffer: %d bytes)", perEvent, buffer)
	if perEvent > buffer/20 {
		t.Errorf("each event recorded at the bound allocated %d bytes, of the order of the whole buffer (%d)", perEvent, buffer)
	}
	if _, err := pool.Exec(ctx, `ALTER TABLE usage_events_away RENAME TO usage_events`); err != nil {
		t.Fatal(err)
	}
}

// TestRecorderCatchingUpCostsLittlePerEvent: once the database is back, a
// full buffer is written batch by batch. Taking each batch off the head
// must not copy the rest of the buffer each time: what storing an event
// costs must not grow with the backlog.
func TestRecorderCatchingUpCostsLittlePerEvent(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	const backlog = 20000
	r := NewRecorder(pool, zap.NewNop(), Options{FlushInterval: time.Hour, BatchSize: 100, MaxBuffered: backlog})
	defer func() { _ = r.Close(ctx) }()
	if _, err := pool.Exec(ctx, `ALTER TABLE usage_events RENAME TO usage_events_away`); err != nil {
		t.Fatal(err)
	}
	// Flushes kicked by full batches fail meanwhile; the events stay.
	for i := range backlog {
		r.Record(event(i))
	}
	if _, err := pool.Exec(ctx, `ALTER TABLE usage_events_away RENAME TO usage_events`); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM usage_events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != backlog {
		t.Fatalf("stored %d events, want %d", n, backlog)
	}
	perEvent := (after.TotalAlloc - before.TotalAlloc) / backlog
	buffer := uint64(backlog) * uint64(unsafe.Sizeof(Event{}))
	t.Logf("%d bytes allocated per event stored from a backlog of %d (%d bytes)", perEvent, backlog, buffer)
	if perEvent > 16*uint64(unsafe.Sizeof(Event{})) {
		t.Errorf("storing each event of the backlog allocated %d bytes, %d times an event's size", perEvent, perEvent/uint64(unsafe.Sizeof(Event{})))
	}
}
