package usage

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Options configure a Recorder.
type Options struct {
	FlushInterval time.Duration // default 500ms
	BatchSize     int           // default 200
	// MaxBuffered bounds the events kept while Postgres is unreachable.
	// Beyond it the oldest are dropped, with a log line saying how many.
	MaxBuffered int // default 100000
}

// Recorder logs each event at once and stores events in Postgres in
// batches. Events that fail to store are kept and retried, so a database
// outage loses nothing unless it outlasts MaxBuffered events.
type Recorder struct {
	pool *pgxpool.Pool
	log  *zap.Logger
	opts Options

	mu      sync.Mutex
	buf     []Event
	dropped int // dropped since the last report
	trimmed int // dropped in total; lets Flush tell what left the head

	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	closeMu sync.Once
}

// NewRecorder starts a recorder. Call Close to flush and stop it.
func NewRecorder(pool *pgxpool.Pool, log *zap.Logger, opts Options) *Recorder {
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 500 * time.Millisecond
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 200
	}
	if opts.MaxBuffered <= 0 {
		opts.MaxBuffered = 100000
	}
	r := &Recorder{
		pool: pool, log: log, opts: opts,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go r.loop()
	return r
}

// Record logs e and queues it for storage. It never blocks on the database.
func (r *Recorder) Record(e Event) {
	logEvent(r.log, e)
	r.mu.Lock()
	r.buf = append(r.buf, e)
	if over := len(r.buf) - r.opts.MaxBuffered; over > 0 {
		r.buf = append(r.buf[:0:0], r.buf[over:]...)
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
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = r.Flush(ctx)
		cancel()
	}
}

// Flush stores every buffered event. On failure the events stay buffered.
func (r *Recorder) Flush(ctx context.Context) error {
	for {
		r.mu.Lock()
		n := min(len(r.buf), r.opts.BatchSize*10)
		batch := append([]Event(nil), r.buf[:n]...)
		dropped := r.dropped
		r.dropped = 0
		trimmedBefore := r.trimmed
		r.mu.Unlock()
		if dropped > 0 {
			r.log.Error("usage events dropped while the database was unreachable", zap.Int("dropped", dropped))
		}
		if n == 0 {
			return nil
		}
		if err := r.store(ctx, batch); err != nil {
			r.log.Warn("storing usage events failed; they stay buffered", zap.Int("pending", n), zap.Error(err))
			return err
		}
		r.mu.Lock()
		// Record may have trimmed some of the stored events off the head
		// meanwhile; remove only those still there.
		if still := n - (r.trimmed - trimmedBefore); still > 0 {
			r.buf = append(r.buf[:0:0], r.buf[still:]...)
		}
		r.mu.Unlock()
	}
}

func (r *Recorder) store(ctx context.Context, batch []Event) error {
	rows := make([][]any, len(batch))
	for i, e := range batch {
		var site any
		if e.SiteID != [16]byte{} {
			site = e.SiteID
		}
		var erp any
		if e.Method == methodToolsCall {
			erp = max(e.ERPMS, 0)
		}
		rows[i] = []any{e.Timestamp, site, e.SiteSlug, e.AuthType, e.RequestID, e.Method, e.Tool, string(e.Outcome), e.ErrorCode, e.DurationMS, erp}
	}
	_, err := r.pool.CopyFrom(ctx, pgx.Identifier{"usage_events"},
		[]string{"occurred_at", "site_id", "site_slug", "auth_type", "request_id", "method", "tool", "outcome", "error_code", "duration_ms", "erp_ms"},
		pgx.CopyFromRows(rows))
	if err != nil {
		return fmt.Errorf("usage: store %d events: %w", len(batch), err)
	}
	return nil
}

// Close stops the background loop and flushes what is buffered, within ctx.
func (r *Recorder) Close(ctx context.Context) error {
	r.closeMu.Do(func() { close(r.stop) })
	<-r.done
	return r.Flush(ctx)
}
