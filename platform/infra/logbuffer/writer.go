// Package logbuffer holds erpgate's log lines for a log reader that may
// fall behind (a stalled standard error pipe, a slow journald, a full
// disk), so that no log call ever waits for it.
//
// A line is appended to a buffer under a mutex; a flusher goroutine swaps
// the buffer for a spare one under that mutex and writes the full one to
// the reader outside it (double buffering). When the buffer is full while
// the previous batch is still being written (the reader is behind), the
// line is dropped and counted, and the next batch the reader gets ends with
// one line saying how many were dropped; when it is full only because the
// flusher has not had a CPU yet, the line waits for the flusher to take the
// buffer, so a reader that keeps up loses nothing.
// zapcore.BufferedWriteSyncer, which this replaces, wrote to the reader
// itself once its buffer was full and held its mutex while writing, so one
// stalled reader held up every tool call of every tenant.
package logbuffer

import (
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Options size a Writer.
type Options struct {
	// Size bounds the bytes of lines waiting for the reader, besides the
	// batch being written to it. Default 256 KiB.
	Size int
	// FlushInterval is the longest a line waits for the flusher. Default
	// 200 ms.
	FlushInterval time.Duration
}

// DroppedMessage is the message of the line that counts dropped lines (its
// field "dropped").
const DroppedMessage = "log lines dropped: the log reader fell behind"

// Writer buffers log lines for out. Build it with New; use it through its
// Core (or as a zapcore.WriteSyncer, whose lines are all ordinary).
type Writer struct {
	out zapcore.WriteSyncer
	// enc encodes the line that counts dropped lines, in the logger's
	// format.
	enc zapcore.Encoder
	// size bounds an error line; ordinary lines leave urgentReserve of it
	// free (Core).
	size, ordinary, kickAt int

	mu      sync.Mutex
	buf     []byte
	pending uint64 // lines dropped since the last count was written
	kicked  bool
	// writing: a batch is on its way to the reader, so a full buffer
	// means the reader is behind. Set under mu with the swap; cleared
	// without it, so that the flusher cannot be parked on mu, a batch
	// written, while a caller fills the buffer and drops lines.
	writing atomic.Bool
	stopped bool
	// swapped is signalled when the flusher takes the buffer.
	swapped sync.Cond

	// writeMu is held while a batch goes to out, never together with a
	// log call's mu; it keeps batches in order.
	writeMu sync.Mutex
	spare   []byte

	dropped atomic.Uint64
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// urgentShare is the part of the buffer that only lines at error level or
// above may fill: a flood of ordinary lines (a usage line per tool call)
// while the reader is stalled must not crowd out the line that says what
// went wrong, and error lines are rare enough that an eighth holds many.
const urgentShare = 8

// noticeRoom is kept beyond Size for the dropped-lines line, so that
// adding it to a full batch does not grow the batch.
const noticeRoom = 512

// New starts a Writer of lines for out, encoded by enc (the logger's
// encoder, also used for the dropped-lines line). Stop ends its flusher.
func New(out zapcore.WriteSyncer, enc zapcore.Encoder, opts Options) *Writer {
	if opts.Size <= 0 {
		opts.Size = 256 << 10
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 200 * time.Millisecond
	}
	w := &Writer{
		out: out, enc: enc,
		size: opts.Size, ordinary: opts.Size - opts.Size/urgentShare, kickAt: opts.Size / 2,
		buf:   make([]byte, 0, opts.Size+noticeRoom),
		spare: make([]byte, 0, opts.Size+noticeRoom),
		kick:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	w.swapped.L = &w.mu
	go w.flushLoop(opts.FlushInterval)
	return w
}

// Write buffers p, one whole ordinary line, or drops it when the buffer is
// full while the reader is behind (a line longer than the buffer always
// is). It never waits for the reader, and never fails: an error would make
// zap write to its error output, the very reader that may be stalled.
func (w *Writer) Write(p []byte) (int, error) {
	w.write(p, false)
	return len(p), nil
}

// write is Write; an urgent line may use the buffer's reserved share.
func (w *Writer) write(p []byte, urgent bool) {
	limit := w.ordinary
	if urgent {
		limit = w.size
	}
	w.mu.Lock()
	for len(w.buf)+len(p) > limit {
		// While a batch is being written, the reader is behind: drop.
		// Otherwise the flusher has not taken the full buffer yet because
		// it has not had a CPU since it was woken (a caller logging without
		// pause, all CPUs busy): wait for it to, which waits for the
		// scheduler, never for the reader (it takes the buffer before it
		// writes).
		if w.writing.Load() || w.stopped || len(p) > limit {
			w.pending++
			w.mu.Unlock()
			w.dropped.Add(1)
			return
		}
		w.wake()
		w.swapped.Wait()
	}
	w.buf = append(w.buf, p...)
	// Past half the buffer, wake the flusher, so that a reader that keeps
	// up rarely finds a caller waiting.
	if len(w.buf) >= w.kickAt {
		w.wake()
	}
	w.mu.Unlock()
}

// wake wakes the flusher, once per batch; w.mu is held.
func (w *Writer) wake() {
	if w.kicked {
		return
	}
	w.kicked = true
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Sync writes every buffered line, and the count of those dropped, to the
// reader and syncs it. Unlike a log call it waits for the reader: serve
// calls it on the way out.
func (w *Writer) Sync() error {
	if err := w.flush(); err != nil {
		return err
	}
	return w.out.Sync()
}

// Dropped is the number of lines dropped since the Writer was made.
func (w *Writer) Dropped() uint64 { return w.dropped.Load() }

// Stop ends the flusher after a last flush. Lines written afterwards wait
// for Sync.
func (w *Writer) Stop() {
	w.once.Do(func() {
		w.mu.Lock()
		w.stopped = true
		w.swapped.Broadcast()
		w.mu.Unlock()
		close(w.stop)
	})
	<-w.done
}

func (w *Writer) flushLoop(interval time.Duration) {
	defer close(w.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-w.kick:
		case <-w.stop:
			_ = w.flush()
			return
		}
		// An error is the reader's (a closed pipe): nothing to tell but
		// the log itself. Sync returns it.
		_ = w.flush()
	}
}

// flush swaps the buffer for the spare one and writes the full one, and
// the count of lines dropped meanwhile, to the reader.
func (w *Writer) flush() error {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	w.mu.Lock()
	batch, lost := w.buf, w.pending
	w.buf, w.pending, w.kicked = w.spare[:0], 0, false
	w.writing.Store(true)
	w.swapped.Broadcast()
	w.mu.Unlock()
	if lost > 0 {
		batch = w.appendDropped(batch, lost)
	}
	var err error
	if len(batch) > 0 {
		_, err = w.out.Write(batch)
	}
	w.spare = batch[:0]
	w.writing.Store(false)
	return err
}

// appendDropped appends the line that says lost lines were dropped.
func (w *Writer) appendDropped(batch []byte, lost uint64) []byte {
	line, err := w.enc.EncodeEntry(zapcore.Entry{Level: zapcore.WarnLevel, Time: time.Now(), Message: DroppedMessage},
		[]zapcore.Field{zap.Uint64("dropped", lost)})
	if err != nil {
		return batch
	}
	batch = append(batch, line.Bytes()...)
	line.Free()
	return batch
}
