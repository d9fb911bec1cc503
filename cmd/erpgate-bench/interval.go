package main

import (
	"math/rand/v2"
	"slices"
	"time"
)

// A p99 difference from one run is a point on a spread: on a shared
// machine the tail moves with whatever else runs, and a run's figure moves
// by about as much as the margin to its target. percentileDiffInterval
// says how far the figure could move by chance, from the run's own rounds.
//
// The rounds are paired: round i of a and round i of b were measured back
// to back, under the same conditions. A bootstrap draw picks len(a) round
// indices with replacement, pools the chosen rounds of each side and takes
// the difference of their percentiles; the interval is the central level
// share of the draws. Resampling whole rounds, not single calls, keeps what
// makes calls in one round alike (the machine's load while it ran), so the
// interval covers drift between rounds, the noise that dominates here.
func percentileDiffInterval(a, b []loadResult, q, level float64, draws int, rng *rand.Rand) (lo, hi time.Duration, ok bool) {
	n := len(a)
	if n < 2 || len(b) != n || draws < 2 {
		return 0, 0, false
	}
	diffs := make([]time.Duration, draws)
	var pa, pb []time.Duration
	for d := range diffs {
		pa, pb = pa[:0], pb[:0]
		for range n {
			i := rng.IntN(n)
			pa = append(pa, a[i].Latencies...)
			pb = append(pb, b[i].Latencies...)
		}
		if len(pa) == 0 || len(pb) == 0 {
			return 0, 0, false
		}
		slices.Sort(pa)
		slices.Sort(pb)
		diffs[d] = loadResult{Latencies: pb}.percentile(q) - loadResult{Latencies: pa}.percentile(q)
	}
	slices.Sort(diffs)
	tail := (1 - level) / 2
	return loadResult{Latencies: diffs}.percentile(tail), loadResult{Latencies: diffs}.percentile(1 - tail), true
}
