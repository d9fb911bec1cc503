package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestTuneGC: the collector's percentage is 50 unless GOGC is set, "off"
// stays off, and the slack, when configured, raises the percentage after
// each cycle; stop restores what was in force before.
func TestTuneGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	unset := func(string) (string, bool) { return "", false }

	stop := tuneGC(unset, 0)
	if got := debug.SetGCPercent(defaultGCPercent); got != defaultGCPercent {
		t.Errorf("GC percent without GOGC = %d, want %d", got, defaultGCPercent)
	}
	stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after stop: GC percent %d, want 100 as before", got)
	}

	// GOGC=200 in the environment: the runtime already applied it.
	debug.SetGCPercent(200)
	stop = tuneGC(func(k string) (string, bool) { return "200", k == "GOGC" }, 0)
	if got := debug.SetGCPercent(200); got != 200 {
		t.Errorf("GC percent with GOGC set = %d, want it left at 200", got)
	}
	stop()

	debug.SetGCPercent(-1)
	stop = tuneGC(func(k string) (string, bool) { return "off", k == "GOGC" }, 32<<20)
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("GOGC=off with a slack: GC percent %d, want collection left off", got)
	}
	stop()

	debug.SetGCPercent(100)
	stop = tuneGC(unset, 32<<20)
	defer stop()
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		p := s[0].Value.Uint64()
		if p > 2*defaultGCPercent {
			break // the slack is in force
		}
		if time.Now().After(deadline) {
			t.Fatalf("with a 32 MiB slack the GC percent is %d after a cycle", p)
		}
	}
}
