// Package gctune gives the garbage collector a fixed slack on top of its
// proportional target.
//
// Go's collector starts a cycle when the heap has grown by GOGC percent of
// the live heap (plus goroutine stacks and globals). A replica's live heap
// is small when it holds few calls (about 12 MiB under steady load from 16
// callers), so at GOGC=50 it collects every few megabytes allocated, which
// was about a third of its CPU per call. Raising GOGC would make every
// held call cost more memory. Instead, after each cycle the tuner sets the
// percentage so that the next target is
//
//	live + (live + stacks + globals) × GOGC/100 + slack
//
// The memory one more in-flight call costs is unchanged; a replica pays a
// fixed slack, at most, for collecting rarely when its heap is small.
package gctune

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// maxPercent caps the percentage the tuner sets.
const maxPercent = 100_000

// runtimeMinHeap is the runtime's minimum heap target at GOGC=100; the
// runtime scales it by GOGC/100 and never sets a smaller target.
const runtimeMinHeap = 4 << 20

// Percent is the GC percentage that makes the collector's next target
// grow by percent of scanned bytes plus slack, where scanned is the live
// heap plus the stacks and globals the last cycle scanned (the base the
// runtime multiplies the percentage by).
//
// The runtime's minimum target grows with the percentage too (4 MiB ×
// GOGC/100), so a scanned size under 4 MiB counts as 4 MiB: the target is
// then that minimum at the plain percentage plus the slack, not a minimum
// inflated by a percentage meant for a tiny heap.
func Percent(percent int, slack, scanned uint64) int {
	if percent < 0 || slack == 0 {
		return percent
	}
	scanned = max(scanned, runtimeMinHeap)
	extra := math.Ceil(100 * float64(slack) / float64(scanned))
	return int(min(float64(percent)+extra, maxPercent))
}

var (
	mu      sync.Mutex
	current *tuner
)

type tuner struct {
	percent int
	slack   uint64
	stopped bool
	before  int
	samples []metrics.Sample
}

// Start sets the collector's percentage now and after every cycle, until
// the returned stop is called, which restores the percentage in force
// before. A process has one tuner: starting another stops the one running.
// A negative percent (collection off) or zero slack sets percent and
// nothing more.
func Start(percent int, slack uint64) (stop func()) {
	mu.Lock()
	defer mu.Unlock()
	before := debug.SetGCPercent(percent)
	if current != nil {
		before = current.before
		current.stopped = true
		current = nil
	}
	t := &tuner{percent: percent, slack: slack, before: before, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
	}}
	current = t
	if percent >= 0 && slack > 0 {
		t.adjustLocked()
		t.arm()
	}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if current == t {
			current = nil
			t.stopped = true
			debug.SetGCPercent(t.before)
		}
	}
}

// sentinel is garbage the tuner leaves behind so that its finalizer runs
// after each cycle. Large enough not to share a tiny-allocator block.
type sentinel struct{ _ [32]byte }

func (t *tuner) arm() {
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		mu.Lock()
		defer mu.Unlock()
		if t.stopped {
			return
		}
		t.adjustLocked()
		t.arm()
	})
}

func (t *tuner) adjustLocked() {
	metrics.Read(t.samples)
	var scanned uint64
	for _, s := range t.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			scanned += s.Value.Uint64()
		}
	}
	debug.SetGCPercent(Percent(t.percent, t.slack, scanned))
}
