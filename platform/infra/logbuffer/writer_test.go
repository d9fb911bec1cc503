package logbuffer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// never is a flush interval no test waits for: only a full half buffer,
// Sync or Stop flushes.
const never = time.Hour

func encoder() zapcore.Encoder {
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "time"
	return zapcore.NewJSONEncoder(enc)
}

// reader is a log reader: it keeps what it is given, and tells batches
// (on got) and their start (on entered) to a test that listens; gate, when
// set, holds every batch until it is closed.
type reader struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	gate    chan struct{}
	entered chan struct{}
	got     chan int
}

func (r *reader) Write(p []byte) (int, error) {
	if r.entered != nil {
		select {
		case r.entered <- struct{}{}:
		default:
		}
	}
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	r.buf.Write(p)
	n := r.buf.Len()
	r.mu.Unlock()
	if r.got != nil {
		r.got <- n
	}
	return len(p), nil
}

func (r *reader) Sync() error { return nil }

// entry is what a test reads back of a line.
type entry struct {
	Level   string `json:"level"`
	Msg     string `json:"msg"`
	Seq     *int   `json:"seq"`
	Dropped uint64 `json:"dropped"`
}

func (r *reader) entries(t *testing.T) []entry {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []entry
	s := bufio.NewScanner(bytes.NewReader(r.buf.Bytes()))
	for s.Scan() {
		var e entry
		if err := json.Unmarshal(s.Bytes(), &e); err != nil {
			t.Fatalf("not a JSON line: %q", s.Text())
		}
		out = append(out, e)
	}
	return out
}

// line is the seq-th test line, 100 bytes or so.
func line(seq int) []byte {
	return fmt.Appendf(nil, `{"level":"info","msg":"mcp_request","seq":%d,"pad":"%s"}`+"\n", seq, strings.Repeat("x", 50))
}

// seqs checks that the lines read are 0, 1, … in order, with nothing but
// them, and returns how many.
func seqs(t *testing.T, es []entry) int {
	t.Helper()
	for i, e := range es {
		if e.Seq == nil || *e.Seq != i {
			t.Fatalf("line %d is %+v, not the test's line %d", i, e, i)
		}
	}
	return len(es)
}

// A reader that keeps up gets every line, in order, and no line about
// dropped ones, at whatever rate lines come: here the writer hands over
// sixteen buffers' worth, each time waiting only until the reader has the
// batch that a half-full buffer makes the flusher write (no timer: the
// flush interval is an hour).
func TestReaderThatKeepsUpGetsEveryLineInOrder(t *testing.T) {
	r := &reader{got: make(chan int, 1)}
	const size = 4 << 10
	w := New(r, encoder(), Options{Size: size, FlushInterval: never})
	t.Cleanup(w.Stop)

	written, sent := 0, 0
	for written < 16*size {
		for pending := 0; pending < size/2; {
			l := line(sent)
			_, _ = w.Write(l)
			pending += len(l)
			written += len(l)
			sent++
		}
		for n := 0; n < written; {
			select {
			case n = <-r.got:
			case <-time.After(30 * time.Second): // generous: the batch comes or never does
				t.Fatalf("a half-full buffer of %d bytes was not written to the reader", size)
			}
		}
	}
	if got := seqs(t, r.entries(t)); got != sent {
		t.Errorf("the reader got %d lines of %d", got, sent)
	}
	if w.Dropped() != 0 {
		t.Errorf("%d lines dropped for a reader that kept up", w.Dropped())
	}
}

// A reader that keeps up loses nothing even while the flusher waits for a
// CPU: with one (GOMAXPROCS=1) and a caller that logs without pause, the
// flusher runs only when the caller lets it, so a full buffer must wait
// for the flusher to take it (a wait for the scheduler, not the reader)
// rather than drop lines. No allocation in the loop, so no collection
// interleaves.
func TestReaderThatKeepsUpLosesNothingWhileTheFlusherWaitsForACPU(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const size = 16 << 10
	lines := make([][]byte, 8*size/len(line(0)))
	total := 0
	for i := range lines {
		lines[i] = line(i)
		total += len(lines[i])
	}
	r := &reader{}
	r.buf.Grow(total + 4096)
	w := New(r, encoder(), Options{Size: size, FlushInterval: never})
	t.Cleanup(w.Stop)
	for _, l := range lines {
		_, _ = w.Write(l)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if w.Dropped() != 0 {
		t.Errorf("%d of %d lines dropped for a reader that never made the flusher wait", w.Dropped(), len(lines))
	}
	if got := seqs(t, r.entries(t)); got != len(lines) {
		t.Errorf("the reader got %d lines of %d", got, len(lines))
	}
}

// Sync and Stop write what the buffer holds: the lines logged just before
// the process exits ("stopped") reach the reader.
func TestSyncAndStopWriteEveryBufferedLine(t *testing.T) {
	for _, end := range []struct {
		name string
		do   func(*Writer)
	}{{"Sync", func(w *Writer) { _ = w.Sync() }}, {"Stop", (*Writer).Stop}} {
		t.Run(end.name, func(t *testing.T) {
			r := &reader{}
			w := New(r, encoder(), Options{Size: 64 << 10, FlushInterval: never})
			t.Cleanup(w.Stop)
			n := 0
			for ; n*len(line(n)) < 16<<10; n++ { // under half: nothing flushes by itself
				_, _ = w.Write(line(n))
			}
			end.do(w)
			if got := seqs(t, r.entries(t)); got != n {
				t.Errorf("%s wrote %d lines of %d", end.name, got, n)
			}
		})
	}
}

// The attack: a reader that stops reading. Log calls return at once, the
// lines that do not fit are dropped and counted, error lines still find
// room in their share of the buffer (until it is full too), and once the
// reader reads again it gets every line kept, in order, followed by one
// line counting exactly those dropped.
func TestStalledReaderDropsAndCountsWithoutBlocking(t *testing.T) {
	r := &reader{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	const size = 8 << 10
	w := New(r, encoder(), Options{Size: size, FlushInterval: never})
	t.Cleanup(w.Stop)
	log := zap.New(w.Core(zapcore.InfoLevel))

	done := make(chan struct{})
	var sent, dropped, errorsKept int
	go func() {
		defer close(done)
		// Half a buffer wakes the flusher, which takes that batch to the
		// reader and is stuck there.
		for filled := 0; filled < size/2; filled += len(line(sent)) {
			log.Info("mcp_request", zap.Int("seq", sent), zap.String("pad", strings.Repeat("x", 50)))
			sent++
		}
		<-r.entered
		// The next buffer fills up to the ordinary share; then lines drop.
		for w.Dropped() == 0 {
			log.Info("mcp_request", zap.Int("seq", sent), zap.String("pad", strings.Repeat("x", 50)))
			sent++
		}
		dropped = 1
		// An error line, longer than the ordinary line that did not fit,
		// still fits, in the share kept for errors.
		log.Error("database unreachable", zap.Int("seq", sent), zap.String("pad", strings.Repeat("x", 50)))
		sent++
		if w.Dropped() == 1 {
			errorsKept++
		}
		// An ordinary one does not.
		log.Info("mcp_request", zap.Int("seq", sent), zap.String("pad", strings.Repeat("x", 50)))
		sent++
		dropped++
		// Error lines fill the rest of the buffer, and then drop too.
		for before := w.Dropped(); w.Dropped() == before; {
			log.Error("database unreachable", zap.Int("seq", sent))
			sent++
		}
		dropped++
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // generous: the calls either return or never do
		close(r.gate)
		t.Fatal("log calls are blocked on a reader that does not read")
	}
	if errorsKept != 1 {
		t.Error("an error line was dropped while the buffer had room in its share for errors")
	}
	if w.Dropped() != uint64(dropped) {
		t.Errorf("Dropped() = %d, want %d", w.Dropped(), dropped)
	}

	close(r.gate)
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	es := r.entries(t)
	last := es[len(es)-1]
	if last.Msg != DroppedMessage || last.Level != "warn" || last.Dropped != uint64(dropped) {
		t.Errorf("last line %+v, want a warning that %d lines were dropped", last, dropped)
	}
	kept := es[:len(es)-1]
	next := 0
	for _, e := range kept {
		if e.Seq == nil || *e.Seq < next {
			t.Fatalf("line %+v out of order or not the test's", e)
		}
		next = *e.Seq + 1
	}
	if len(kept)+dropped != sent {
		t.Errorf("%d lines read and %d dropped; %d were written", len(kept), dropped, sent)
	}
	// The count is written once: a later batch does not repeat it.
	log.Info("after", zap.Int("seq", sent))
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if es := r.entries(t); es[len(es)-1].Msg != "after" {
		t.Errorf("the line after the count is %+v", es[len(es)-1])
	}
}
