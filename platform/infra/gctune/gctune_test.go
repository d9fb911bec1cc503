package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		percent        int
		slack, scanned uint64
		want           int
	}{
		{50, 0, 10 << 20, 50},                        // no slack: GOGC as set
		{-1, 32 << 20, 10 << 20, -1},                 // collection off stays off
		{50, 32 << 20, 32 << 20, 150},                // slack equal to the live heap
		{50, 32 << 20, 64 << 20, 100},                // half of it
		{50, 32 << 20, 12 << 20, 317},                // 266.7 rounded up: never less slack than asked
		{50, 1, 8 << 20, 51},                         // the smallest slack still counts
		{50, 32 << 20, 1, 850},                       // under the runtime's minimum: counted as 4 MiB
		{50, 32 << 20, 0, 850},                       // nothing scanned yet
		{50, 32 << 20, 4 << 20, 850},                 // exactly the minimum
		{200, 32 << 20, 1 << 30, 204},                // a large heap: mostly the percentage
		{0, 32 << 20, 32 << 20, 100},                 // GOGC=0 still gets the slack
		{50, 1 << 40, 4 << 20, maxPercent},           // capped
		{maxPercent, 32 << 20, 64 << 20, maxPercent}, // never above the cap
	} {
		if got := Percent(c.percent, c.slack, c.scanned); got != c.want {
			t.Errorf("Percent(%d, %d, %d) = %d, want %d", c.percent, c.slack, c.scanned, got, c.want)
		}
	}
}

// read returns the named runtime metrics.
func read(names ...string) []uint64 {
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	out := make([]uint64, len(s))
	for i := range s {
		out[i] = s[i].Value.Uint64()
	}
	return out
}

// settle runs cycles until the tuner has adjusted to the last one, and
// returns what the runtime then reports.
func settle(t *testing.T, percent int, slack uint64) (live, scanned, goal uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		// The tuner adjusts from a finalizer, after the cycle.
		time.Sleep(5 * time.Millisecond)
		m := read("/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes", "/gc/gogc:percent", "/gc/heap/goal:bytes")
		live, scanned, gogc, goal := m[0], m[0]+m[1]+m[2], m[3], m[4]
		want := Percent(percent, slack, scanned)
		if int(gogc) == want {
			return live, scanned, goal
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC is %d after a cycle with %d bytes scanned, want %d", gogc, scanned, want)
		}
	}
}

// TestTheCollectorsTargetHasTheSlack: after a cycle, the runtime's own
// heap goal is the live heap plus half of what it scanned plus the slack
// (or, for a heap under the runtime's minimum, that minimum plus the
// slack), and stopping restores the percentage set before.
func TestTheCollectorsTargetHasTheSlack(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	const slack = 64 << 20
	stop := Start(50, slack)

	// A tiny heap (this test binary's): the minimum at 50 %, plus slack.
	live, scanned, goal := settle(t, 50, slack)
	if scanned >= runtimeMinHeap {
		t.Fatalf("the test binary scans %d bytes: not a tiny heap", scanned)
	}
	if lo := uint64(runtimeMinHeap/2 + slack); goal < lo || goal > lo+lo/100 {
		t.Errorf("tiny heap (live %d): goal %d, want about %d", live, goal, lo)
	}

	// Some live heap: live + scanned/2 + slack.
	var keep [][]byte
	for range 1000 {
		keep = append(keep, make([]byte, 16<<10))
	}
	live, scanned, goal = settle(t, 50, slack)
	if scanned < 15<<20 {
		t.Fatalf("scanned %d bytes with 16 MB kept", scanned)
	}
	if lo := live + scanned/2 + slack; goal < lo || goal > lo+scanned/100+1 {
		t.Errorf("heap goal %d; live %d, scanned %d: want %d", goal, live, scanned, lo)
	}
	runtime.KeepAlive(keep)

	stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after stop GOGC is %d, want 100, as before Start", got)
	}
	// Stopped: a later cycle changes nothing.
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if got := read("/gc/gogc:percent")[0]; got != 100 {
		t.Errorf("a cycle after stop set GOGC to %d", got)
	}
}

// TestStartReplacesTheRunningTuner: a process has one tuner; stopping a
// replaced one changes nothing, and the last stop restores the
// percentage from before the first start.
func TestStartReplacesTheRunningTuner(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	stop1 := Start(50, 32<<20)
	stop2 := Start(80, 0)
	if got := read("/gc/gogc:percent")[0]; got != 80 {
		t.Errorf("second start without slack: GOGC %d, want 80", got)
	}
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if got := read("/gc/gogc:percent")[0]; got != 80 {
		t.Errorf("the replaced tuner still adjusts: GOGC %d, want 80", got)
	}
	stop1()
	if got := read("/gc/gogc:percent")[0]; got != 80 {
		t.Errorf("stopping the replaced tuner changed GOGC to %d", got)
	}
	stop2()
	if got := read("/gc/gogc:percent")[0]; got != 100 {
		t.Errorf("after the last stop GOGC is %d, want 100", got)
	}
}
