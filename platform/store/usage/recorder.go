package usage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Options configure a Recorder.
type Options struct {
	FlushInterval time.Duration // default 500ms
	// BatchSize is the most events one statement writes, and the number of
	// buffered events that starts a flush before the interval. Default 200.
	BatchSize int
	// StatementTimeout bounds each statement. Default 5s.
	StatementTimeout time.Duration
	// MaxBuffered bounds the events kept while Postgres is unreachable.
	// Beyond it the oldest are dropped, with a log line saying how many.
	MaxBuffered int // default 100000
}

// Recorder logs each event at once and stores events in Postgres in
// batches of at most BatchSize rows, each statement under its own deadline.
// Events that fail to store are kept and retried, so a database outage
// loses nothing unless it outlasts MaxBuffered events; a retried batch whose
// first write did commit adds nothing (every event has an id: the COPY of
// such a batch fails on the ids already stored, and an insert that skips
// them takes its place). A row Postgres refuses is logged and dropped
// alone, so it never holds back the events of other sites.
type Recorder struct {
	pool *pgxpool.Pool
	log  *zap.Logger
	opts Options

	// flushMu lets one flush at a time take events off the buffer's head.
	flushMu sync.Mutex

	mu      sync.Mutex
	buf     []Event
	dropped int // dropped since the last report
	trimmed int // dropped in total; lets Flush tell what left the head
	// refusedTotal counts the events Postgres refused, dropped alone.
	refusedTotal int64

	kick       chan struct{}
	stop       chan struct{}
	done       chan struct{}
	cancelLoop context.CancelFunc
	loopCtx    context.Context
	closeMu    sync.Once
}

// NewRecorder starts a recorder. Call Close to flush and stop it.
func NewRecorder(pool *pgxpool.Pool, log *zap.Logger, opts Options) *Recorder {
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 500 * time.Millisecond
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 200
	}
	if opts.StatementTimeout <= 0 {
		opts.StatementTimeout = 5 * time.Second
	}
	if opts.MaxBuffered <= 0 {
		opts.MaxBuffered = 100000
	}
	r := &Recorder{
		pool: pool, log: log, opts: opts,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	r.loopCtx, r.cancelLoop = context.WithCancel(context.Background())
	go r.loop()
	return r
}

// Record logs e and queues it for storage. It never blocks on the database.
// An event without an ID gets one here: it makes storing it idempotent.
func (r *Recorder) Record(e Event) {
	if e.ID == uuid.Nil {
		e.ID = uuid.Must(uuid.NewV7())
	}
	logEvent(r.log, e)
	r.mu.Lock()
	r.buf = append(r.buf, e)
	if over := len(r.buf) - r.opts.MaxBuffered; over > 0 {
		// The head slides on: no copy of the buffer per event (append
		// moves it, now and then, when its array is full).
		clear(r.buf[:over])
		r.buf = r.buf[over:]
		r.dropped += over
		r.trimmed += over
	}
	full := len(r.buf) >= r.opts.BatchSize
	r.mu.Unlock()
	if full {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// Pending returns how many events wait to be stored.
func (r *Recorder) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.buf)
}

// Dropped returns how many events were dropped in total: over the
// buffer's bound while Postgres was unreachable, or refused by it.
func (r *Recorder) Dropped() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(r.trimmed) + r.refusedTotal
}

func (r *Recorder) loop() {
	defer close(r.done)
	t := time.NewTicker(r.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		case <-r.kick:
		}
		// Each statement has its own deadline; Close cancels a flush in
		// progress, and its own flush writes the rest.
		_, _ = r.flush(r.loopCtx)
	}
}

// Flush stores the events buffered when it starts, in batches; events
// recorded meanwhile wait for the next flush, so a flush ends under any
// load. On failure the unstored events stay buffered.
func (r *Recorder) Flush(ctx context.Context) error {
	_, err := r.flush(ctx)
	return err
}

// flush is Flush, also returning how many events it stored.
func (r *Recorder) flush(ctx context.Context) (int, error) {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	todo := len(r.buf)
	dropped := r.dropped
	r.dropped = 0
	r.mu.Unlock()
	if dropped > 0 {
		r.log.Error("usage events dropped while the database was unreachable", zap.Int("dropped", dropped))
	}
	var stored, refused int
	defer func() {
		if refused > 0 {
			r.log.Error("usage events refused by the database were dropped", zap.Int("dropped", refused))
		}
	}()
	for todo > 0 {
		r.mu.Lock()
		n := min(len(r.buf), r.opts.BatchSize, todo)
		batch := append([]Event(nil), r.buf[:n]...)
		trimmedBefore := r.trimmed
		r.mu.Unlock()
		if n == 0 {
			break
		}
		written, bad, err := r.write(ctx, batch)
		refused += bad
		if err != nil {
			if ctx.Err() == nil { // else the caller (Close) reports
				r.log.Warn("storing usage events failed; they stay buffered", zap.Int("pending", r.Pending()), zap.Error(err))
			}
			return stored, err
		}
		stored += written
		r.mu.Lock()
		// Record may have trimmed some of the written events off the head
		// meanwhile; remove only those still there.
		if still := n - (r.trimmed - trimmedBefore); still > 0 {
			clear(r.buf[:still])
			r.buf = r.buf[still:]
		}
		if len(r.buf) == 0 {
			r.buf = nil // lets the array go
		}
		r.mu.Unlock()
		todo -= n
	}
	return stored, nil
}

// write stores batch. It first copies the batch in (COPY, the cheapest
// write for Postgres). When Postgres refuses that for the rows' data (a
// refused row, or an event already stored because an earlier write of the
// batch committed and its answer was lost), the batch goes through
// writeEach. Any other failure is returned, the batch to be written again.
func (r *Recorder) write(ctx context.Context, batch []Event) (stored, refused int, err error) {
	err = r.copyIn(ctx, batch)
	if err == nil {
		return len(batch), 0, nil
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || !rowRefused(pgErr.Code) {
		return 0, 0, err
	}
	return r.writeEach(ctx, batch)
}

// writeEach stores batch with the insert that skips events already stored.
// When Postgres refuses the batch because of its data, writeEach halves it
// until the refused rows are alone, logs and drops those, and stores the
// rest: it returns how many it stored and how many it dropped.
func (r *Recorder) writeEach(ctx context.Context, batch []Event) (stored, refused int, err error) {
	err = r.insert(ctx, batch)
	if err == nil {
		return len(batch), 0, nil
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || !rowRefused(pgErr.Code) {
		return 0, 0, err
	}
	if len(batch) == 1 {
		e := batch[0]
		r.log.Error("usage event refused by the database; dropped",
			zap.String("request_id", e.RequestID), zap.String("site_id", e.SiteID.String()),
			zap.String("sqlstate", pgErr.Code), zap.String("constraint", pgErr.ConstraintName))
		r.mu.Lock()
		r.refusedTotal++
		r.mu.Unlock()
		return 0, 1, nil
	}
	mid := len(batch) / 2
	for _, half := range [][]Event{batch[:mid], batch[mid:]} {
		s, f, err := r.writeEach(ctx, half)
		stored, refused = stored+s, refused+f
		if err != nil {
			return stored, refused, err
		}
	}
	return stored, refused, nil
}

// rowRefused reports whether an SQLSTATE says the rows were refused for
// what they hold: a data exception (class 22, text that is not UTF-8, a
// number out of range) or a violated constraint (class 23).
func rowRefused(code string) bool {
	return len(code) == 5 && (code[:2] == "22" || code[:2] == "23")
}

// eventColumns are the columns of usage_events an event fills, in the
// order of row's values.
var eventColumns = []string{"event_id", "occurred_at", "site_id", "site_slug", "auth_type", "request_id", "method", "tool",
	"outcome", "error_code", "duration_ms", "erp_ms", "erp_user", "client_id", "approval", "redacted_count", "redacted_fields"}

// row is e's values for eventColumns.
func row(e Event) []any {
	return []any{idColumn(e), e.Timestamp, siteColumn(e), e.SiteSlug, e.AuthType, e.RequestID, e.Method, e.Tool,
		string(e.Outcome), e.ErrorCode, clampInt32(e.DurationMS), erpColumn(e), e.ERPUser, e.ClientID, e.Approval,
		clampInt32(int64(e.RedactedCount)), e.RedactedFields}
}

// idColumn is e's event_id. As pgtype.UUID pgx writes it in binary as it
// is; a uuid.UUID would take pgx's driver.Valuer path (its text, parsed
// back): a quarter of this process's CPU per event (BenchmarkWriteBatch).
func idColumn(e Event) pgtype.UUID {
	return pgtype.UUID{Bytes: e.ID, Valid: true}
}

// siteColumn is e's site_id: NULL when the event has no site.
func siteColumn(e Event) pgtype.UUID {
	return pgtype.UUID{Bytes: e.SiteID, Valid: e.SiteID != uuid.Nil}
}

// erpColumn is e's erp_ms: stored for tools/call only, NULL otherwise.
func erpColumn(e Event) pgtype.Int4 {
	if e.Method != methodToolsCall {
		return pgtype.Int4{}
	}
	return pgtype.Int4{Int32: clampInt32(max(e.ERPMS, 0)), Valid: true}
}

// copyIn writes batch in one COPY under the statement timeout. It stores
// all of the batch or none of it.
func (r *Recorder) copyIn(ctx context.Context, batch []Event) error {
	ctx, cancel := context.WithTimeout(ctx, r.opts.StatementTimeout)
	defer cancel()
	if _, err := r.pool.CopyFrom(ctx, pgx.Identifier{"usage_events"}, eventColumns,
		pgx.CopyFromSlice(len(batch), func(i int) ([]any, error) { return row(batch[i]), nil })); err != nil {
		return fmt.Errorf("usage: copy %d events: %w", len(batch), err)
	}
	return nil
}

const insertEvents = `INSERT INTO usage_events
  (event_id, occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, error_code, duration_ms, erp_ms, erp_user, client_id, approval,
   redacted_count, redacted_fields)
SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::uuid[], $4::text[], $5::text[], $6::text[],
                     $7::text[], $8::text[], $9::text[], $10::text[], $11::integer[], $12::integer[],
                     $13::text[], $14::text[], $15::text[], $16::integer[], $17::text[])
ON CONFLICT (event_id) DO NOTHING`

// insert writes batch in one statement under the statement timeout.
func (r *Recorder) insert(ctx context.Context, batch []Event) error {
	n := len(batch)
	var (
		ids      = make([]pgtype.UUID, n)
		at       = make([]time.Time, n)
		siteIDs  = make([]pgtype.UUID, n)
		slugs    = make([]string, n)
		auth     = make([]string, n)
		requests = make([]string, n)
		methods  = make([]string, n)
		tools    = make([]string, n)
		outcomes = make([]string, n)
		codes    = make([]string, n)
		duration = make([]int32, n)
		erp      = make([]pgtype.Int4, n)
		users    = make([]string, n)
		clients  = make([]string, n)
		stages   = make([]string, n)
		rcounts  = make([]int32, n)
		rfields  = make([]string, n)
	)
	for i, e := range batch {
		ids[i], at[i] = idColumn(e), e.Timestamp
		siteIDs[i], erp[i] = siteColumn(e), erpColumn(e)
		slugs[i], auth[i], requests[i], methods[i] = e.SiteSlug, e.AuthType, e.RequestID, e.Method
		tools[i], outcomes[i], codes[i] = e.Tool, string(e.Outcome), e.ErrorCode
		users[i], clients[i], stages[i] = e.ERPUser, e.ClientID, e.Approval
		duration[i] = clampInt32(e.DurationMS)
		rcounts[i], rfields[i] = clampInt32(int64(e.RedactedCount)), e.RedactedFields
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.StatementTimeout)
	defer cancel()
	if _, err := r.pool.Exec(ctx, insertEvents, ids, at, siteIDs, slugs, auth, requests, methods, tools, outcomes, codes, duration, erp, users, clients, stages, rcounts, rfields); err != nil {
		return fmt.Errorf("usage: store %d events: %w", n, err)
	}
	return nil
}

// clampInt32 keeps a millisecond count within the integer column: no real
// call lasts 24 days, and a value the column cannot hold must not make the
// whole batch fail before it reaches Postgres.
func clampInt32(v int64) int32 {
	return int32(min(max(v, math.MinInt32), math.MaxInt32))
}

// Close stops the background loop and flushes what is buffered, within ctx.
// It logs how many events it stored, or exactly how many it could not.
func (r *Recorder) Close(ctx context.Context) error {
	r.closeMu.Do(func() {
		close(r.stop)
		r.cancelLoop()
	})
	<-r.done
	stored, err := r.flush(ctx)
	if err != nil {
		lost := r.Pending()
		r.log.Error("usage events lost at shutdown", zap.Int("lost", lost), zap.Int("stored", stored), zap.Error(err))
		return fmt.Errorf("usage: %d events could not be stored at shutdown: %w", lost, err)
	}
	if stored > 0 {
		r.log.Info("usage events stored at shutdown", zap.Int("stored", stored))
	}
	return nil
}
