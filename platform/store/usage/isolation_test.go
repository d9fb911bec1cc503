package usage

import (
	"context"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// addSite registers a site row for events to name.
func addSite(t *testing.T, pool *pgxpool.Pool, slug string) uuid.UUID {
	t.Helper()
	id := uuid.New()
	if _, err := pool.Exec(context.Background(),
		`INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, $2, 'frappe', $3, $2)`,
		id, slug, "https://"+slug+".example"); err != nil {
		t.Fatal(err)
	}
	return id
}

func siteEvent(i int, site uuid.UUID, slug string) Event {
	e := event(i)
	e.SiteID, e.SiteSlug = site, slug
	return e
}

func countRows(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRecorderStoresEventsOfADeletedSiteAndEveryOtherSite: an admin deletes
// a site while its events are still buffered. Every event is stored: the
// deleted site's keep its id and slug, and the other site's are not held
// back (issue 14, item 4: the foreign key failed every batch from then on).
func TestRecorderStoresEventsOfADeletedSiteAndEveryOtherSite(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	r := NewRecorder(pool, zap.NewNop(), Options{FlushInterval: time.Hour, BatchSize: 1000})
	gone := addSite(t, pool, "gone")
	kept := addSite(t, pool, "kept")
	for i := range 10 {
		r.Record(siteEvent(i, gone, "gone"))
		r.Record(siteEvent(i, kept, "kept"))
	}
	if _, err := pool.Exec(ctx, `DELETE FROM sites WHERE id = $1`, gone); err != nil {
		t.Fatal(err)
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatalf("flush after a site was deleted: %v", err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM usage_events WHERE site_id = $1 AND site_slug = 'kept'`, kept); n != 10 {
		t.Errorf("stored %d events of the remaining site, want 10", n)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM usage_events WHERE site_id = $1 AND site_slug = 'gone'`, gone); n != 10 {
		t.Errorf("stored %d events of the deleted site with its id and slug, want 10", n)
	}
	if r.Pending() != 0 {
		t.Errorf("pending = %d after the flush, want 0", r.Pending())
	}
}

// TestRecorderDropsOnlyARowThePostgresRefuses: one event that Postgres
// refuses (an outcome outside the CHECK, text that is not UTF-8) is logged
// and dropped with a count; every other event of the batch is stored.
func TestRecorderDropsOnlyARowThePostgresRefuses(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	core, logs := observer.New(zap.InfoLevel)
	r := NewRecorder(pool, zap.New(core), Options{FlushInterval: time.Hour, BatchSize: 1000})
	var want []string
	for i := range 40 {
		e := event(i)
		switch i {
		case 7:
			e.Outcome = "exploded"
		case 31:
			e.SiteSlug = "bad\xffslug"
		default:
			want = append(want, e.RequestID)
		}
		r.Record(e)
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatalf("flush with two bad rows: %v", err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM usage_events WHERE request_id = ANY($1)`, want); n != len(want) {
		t.Errorf("stored %d of the %d good events", n, len(want))
	}
	if n := countRows(t, pool, `SELECT count(*) FROM usage_events`); n != len(want) {
		t.Errorf("stored %d events in all, want %d", n, len(want))
	}
	if r.Pending() != 0 {
		t.Errorf("pending = %d, want 0: the bad rows must not stay buffered", r.Pending())
	}
	dropped := 0
	for _, e := range logs.FilterMessage("usage event refused by the database; dropped").All() {
		dropped++
		if _, ok := e.ContextMap()["request_id"]; !ok {
			t.Errorf("drop logged without the event's request id: %v", e.ContextMap())
		}
	}
	if dropped != 2 {
		t.Errorf("logged %d dropped events, want 2", dropped)
	}
}

// TestRecorderBoundsEachStatement: a flush writes at most BatchSize rows
// per statement, however many are buffered. A statement-level trigger with
// a transition table records each statement's row count.
func TestRecorderBoundsEachStatement(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE statement_rows (n integer NOT NULL)`,
		`CREATE FUNCTION count_statement_rows() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN INSERT INTO statement_rows SELECT count(*) FROM new_rows; RETURN NULL; END $$`,
		`CREATE TRIGGER usage_statement_rows AFTER INSERT ON usage_events
		 REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_statement_rows()`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	r := NewRecorder(pool, zap.NewNop(), Options{FlushInterval: time.Hour, BatchSize: 25, MaxBuffered: 1000})
	// Recording more than BatchSize kicks the background flush; hold its
	// result until all are recorded by counting only at the end.
	for i := range 260 {
		r.Record(event(i))
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM usage_events`); n != 260 {
		t.Fatalf("stored %d events, want 260", n)
	}
	if most := countRows(t, pool, `SELECT max(n) FROM statement_rows`); most > 25 {
		t.Errorf("a statement wrote %d rows, want at most the batch size 25", most)
	}
}

// TestRecorderFlushWritesWhatWasBufferedWhenItBegan: events recorded
// while a flush is writing wait for the next flush; the flush does not
// chase the buffer until it is empty (issue 14, item 4: under sustained
// load one flush ran on into its deadline and its write was broken off).
// A statement trigger holds the flush's insert until the test has recorded
// more events.
func TestRecorderFlushWritesWhatWasBufferedWhenItBegan(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, q := range []string{
		`CREATE FUNCTION hold_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN PERFORM pg_advisory_xact_lock_shared(4242); RETURN NULL; END $$`,
		`CREATE TRIGGER usage_hold BEFORE INSERT ON usage_events
		 FOR EACH STATEMENT EXECUTE FUNCTION hold_usage_insert()`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	holder, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock(4242)`); err != nil {
		t.Fatal(err)
	}

	r := NewRecorder(pool, zap.NewNop(), Options{FlushInterval: time.Hour, BatchSize: 1000})
	for i := range 100 {
		r.Record(event(i))
	}
	done := make(chan error, 1)
	go func() { done <- r.Flush(ctx) }()
	// Wait until the flush's insert waits for the lock, then record more.
	for waiting := 0; waiting == 0; {
		select {
		case err := <-done:
			t.Fatalf("the flush ended while its insert was held: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
		if err := holder.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	for i := 100; i < 150; i++ {
		r.Record(event(i))
	}
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock(4242)`); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := r.Pending(); n != 50 {
		t.Errorf("pending = %d after the flush, want the 50 events recorded while it wrote", n)
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM usage_events`); n != 150 {
		t.Errorf("stored %d events, want 150", n)
	}
}

// TestRecorderRetriesALostAnswerWithoutDuplicates: the write commits but
// its answer never reaches erpgate (the connection breaks right after), so
// the batch stays buffered and is written again, with events recorded
// since. The retry stores only those: every event is stored exactly once.
func TestRecorderRetriesALostAnswerWithoutDuplicates(t *testing.T) {
	url := pgtest.NewDatabase(t)
	proxy := newCuttingProxy(t, url)
	cfg, err := pgxpool.ParseConfig(proxy.url)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx := context.Background()
	r := NewRecorder(pool, zap.NewNop(), Options{FlushInterval: time.Hour, BatchSize: 1000})
	for i := range 30 {
		r.Record(event(i))
	}
	proxy.cutAfterInsert.Store(true)
	if err := r.Flush(ctx); err == nil {
		t.Fatal("the flush whose answer was lost reported success")
	}
	if !proxy.cut.Load() {
		t.Fatal("the proxy never saw the insert's answer")
	}
	if r.Pending() != 30 {
		t.Fatalf("pending = %d after a lost answer, want 30", r.Pending())
	}
	for i := 30; i < 40; i++ {
		r.Record(event(i))
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM usage_events`); n != 40 {
		t.Errorf("stored %d events after the retry, want 40", n)
	}
	if n := countRows(t, pool, `SELECT count(DISTINCT event_id) FROM usage_events`); n != 40 {
		t.Errorf("stored %d distinct events after the retry, want 40, each once", n)
	}
}

// TestRecorderCloseLogsHowManyEventsItCouldNotWrite: when the database
// cannot take the last events at shutdown, Close says exactly how many are
// lost.
func TestRecorderCloseLogsHowManyEventsItCouldNotWrite(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	core, logs := observer.New(zap.InfoLevel)
	r := NewRecorder(pool, zap.New(core), Options{FlushInterval: time.Hour, BatchSize: 1000})
	if _, err := pool.Exec(ctx, `ALTER TABLE usage_events RENAME TO usage_events_away`); err != nil {
		t.Fatal(err)
	}
	for i := range 17 {
		r.Record(event(i))
	}
	if err := r.Close(ctx); err == nil {
		t.Error("Close reported success without storing the events")
	}
	lost := logs.FilterMessage("usage events lost at shutdown").All()
	if len(lost) != 1 {
		t.Fatalf("logged %d shutdown losses, want 1", len(lost))
	}
	if n := lost[0].ContextMap()["lost"]; n != int64(17) {
		t.Errorf("lost = %v, want 17", n)
	}
}

// cuttingProxy forwards a Postgres connection and, once armed, drops the
// connection instead of passing on the server's answer to an INSERT or
// COPY: the statement committed, the client never hears so.
type cuttingProxy struct {
	url            string
	cutAfterInsert atomic.Bool
	cut            atomic.Bool
}

func newCuttingProxy(t *testing.T, dbURL string) *cuttingProxy {
	t.Helper()
	p := &cuttingProxy{}
	p.url = pgtest.Forward(t, dbURL, func(client, server net.Conn) {
		go func() { _, _ = io.Copy(server, client); server.Close() }()
		go p.forwardAnswers(client, server)
	})
	return p
}

// forwardAnswers copies the server's bytes to the client, cutting both
// connections at an INSERT or COPY command tag once armed.
func (p *cuttingProxy) forwardAnswers(client, server net.Conn) {
	defer client.Close()
	defer server.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			chunk := string(buf[:n])
			if p.cutAfterInsert.Load() && (strings.Contains(chunk, "INSERT 0 ") || strings.Contains(chunk, "COPY ")) {
				p.cutAfterInsert.Store(false)
				p.cut.Store(true)
				return
			}
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
