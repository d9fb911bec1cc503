package redact

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// An ERP answer is at most the response bound (8 MiB), but its shape is
// the ERP's: Apply built the path of every value it visited, so an
// answer nested a thousand arrays deep, with many values to redact at
// the bottom, cost gigabytes for one call: paths of kilobytes each, one
// kept per redacted value and all written on one log line. What Apply
// allocates, and the paths it reports, stay within a few times the
// answer; the count still counts every value.
func TestApplyCostIsBoundedByTheAnswer(t *testing.T) {
	const depth, rows = 1000, 20000
	var b strings.Builder
	b.WriteString(`{"data":`)
	b.WriteString(strings.Repeat("[", depth))
	for i := range rows {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"tax_id":"x","n":1}`)
	}
	b.WriteString(strings.Repeat("]", depth))
	b.WriteString(`}`)
	answer := b.String()
	var doc any
	if err := json.Unmarshal([]byte(answer), &doc); err != nil {
		t.Fatal(err)
	}
	r := New(Rules{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, got := r.Apply(doc)
	runtime.ReadMemStats(&after)
	if got.Count != rows {
		t.Errorf("%d values counted as redacted, want %d", got.Count, rows)
	}
	kept := 0
	for _, p := range got.Paths {
		kept += len(p)
	}
	if kept > len(answer) {
		t.Errorf("%d paths of %d bytes reported for a %d-byte answer", len(got.Paths), kept, len(answer))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*uint64(len(answer)) {
		t.Errorf("Apply allocated %d MiB for a %d KiB answer", alloc>>20, len(answer)>>10)
	}
	// The path names where: its end, with the field.
	if len(got.Paths) == 0 || !strings.HasSuffix(got.Paths[0], "[0].tax_id") {
		t.Errorf("first path = %.80q", got.Paths)
	}
}
