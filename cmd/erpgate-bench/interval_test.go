package main

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// rounds builds n rounds of calls whose latencies are base, base+step, …
// (calls of them), each round shifted by its own offset.
func rounds(offsets []time.Duration, base, step time.Duration, calls int) []loadResult {
	out := make([]loadResult, len(offsets))
	for i, off := range offsets {
		l := make([]time.Duration, calls)
		for j := range l {
			l[j] = base + off + time.Duration(j)*step
		}
		slices.Sort(l)
		out[i] = loadResult{Calls: calls, Latencies: l}
	}
	return out
}

func TestIntervalOfAConstantShiftIsTheShift(t *testing.T) {
	offsets := []time.Duration{0, 3 * time.Millisecond, time.Millisecond, 5 * time.Millisecond, 0, 2 * time.Millisecond}
	a := rounds(offsets, 20*time.Millisecond, time.Microsecond, 500)
	// Every round of b is its partner in a, 1.5 ms later: whichever
	// rounds a draw picks, the difference of the p99s is 1.5 ms.
	shifted := make([]time.Duration, len(offsets))
	for i, o := range offsets {
		shifted[i] = o + 1500*time.Microsecond
	}
	b := rounds(shifted, 20*time.Millisecond, time.Microsecond, 500)
	lo, hi, ok := percentileDiffInterval(a, b, 0.99, 0.9, 400, rand.New(rand.NewPCG(1, 2)))
	if !ok || lo != 1500*time.Microsecond || hi != 1500*time.Microsecond {
		t.Fatalf("interval = [%v, %v] (ok %v), want exactly [1.5ms, 1.5ms]", lo, hi, ok)
	}
}

func TestIntervalWidensWithDriftBetweenRounds(t *testing.T) {
	// Both sides drift together over the rounds, but b's rounds gain
	// 0.5 to 2.5 ms over a's: the p99 difference of the pooled rounds
	// is inside that range, and a draw of different rounds moves it.
	offsets := []time.Duration{0, 4 * time.Millisecond, time.Millisecond, 6 * time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}
	gain := []time.Duration{500 * time.Microsecond, 2500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond, 1500 * time.Microsecond, 700 * time.Microsecond}
	a := rounds(offsets, 20*time.Millisecond, 2*time.Microsecond, 400)
	shifted := make([]time.Duration, len(offsets))
	for i := range offsets {
		shifted[i] = offsets[i] + gain[i]
	}
	b := rounds(shifted, 20*time.Millisecond, 2*time.Microsecond, 400)
	var pa, pb loadResult
	for i := range a {
		if i == 0 {
			pa, pb = a[i], b[i]
		} else {
			pa, pb = pa.merge(a[i]), pb.merge(b[i])
		}
	}
	point := pb.percentile(0.99) - pa.percentile(0.99)
	lo, hi, ok := percentileDiffInterval(a, b, 0.99, 0.9, 1000, rand.New(rand.NewPCG(3, 4)))
	if !ok {
		t.Fatal("no interval")
	}
	if !(lo < point && point < hi) {
		t.Fatalf("interval [%v, %v] does not hold the point %v strictly inside", lo, hi, point)
	}
	if lo < 500*time.Microsecond || hi > 2500*time.Microsecond {
		t.Fatalf("interval [%v, %v] reaches outside the rounds' own gains (0.5 to 2.5 ms)", lo, hi)
	}
	// The same seed gives the same interval: the figure in a results
	// file can be recomputed.
	lo2, hi2, _ := percentileDiffInterval(a, b, 0.99, 0.9, 1000, rand.New(rand.NewPCG(3, 4)))
	if lo2 != lo || hi2 != hi {
		t.Fatalf("same seed, different interval: [%v, %v] then [%v, %v]", lo, hi, lo2, hi2)
	}
}

func TestIntervalNeedsPairedRounds(t *testing.T) {
	two := rounds([]time.Duration{0, 0}, 20*time.Millisecond, time.Microsecond, 10)
	for _, c := range []struct {
		name string
		a, b []loadResult
	}{
		{"unpaired", two, two[:1]},
		{"one round", two[:1], two[:1]},
		{"rounds without calls", []loadResult{{}, {}}, []loadResult{{}, {}}},
	} {
		if _, _, ok := percentileDiffInterval(c.a, c.b, 0.99, 0.9, 100, rand.New(rand.NewPCG(1, 1))); ok {
			t.Errorf("%s: got an interval", c.name)
		}
	}
}
