package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: the collector's target is 50 % unless GOGC is set.
func TestTuneGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	tuneGC(func(string) (string, bool) { return "", false })
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("GC percent without GOGC = %d, want %d", got, defaultGCPercent)
	}
	tuneGC(func(k string) (string, bool) { return "200", k == "GOGC" })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent with GOGC set = %d, want it left alone (100)", got)
	}
}
