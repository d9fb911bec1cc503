package main

import "testing"

// Over n rounds every run has every place in the round exactly once, and
// each round runs every run once.
func TestRoundOrderGivesEachRunEachPlace(t *testing.T) {
	const n = 5
	places := map[[2]int]int{}
	for round := range n {
		seen := map[int]bool{}
		for place, k := range roundOrder(round, n) {
			if seen[k] {
				t.Fatalf("round %d runs %d twice: %v", round, k, roundOrder(round, n))
			}
			seen[k] = true
			places[[2]int{k, place}]++
		}
		if len(seen) != n {
			t.Fatalf("round %d runs %d of %d", round, len(seen), n)
		}
	}
	for k := range n {
		for place := range n {
			if places[[2]int{k, place}] != 1 {
				t.Errorf("run %d had place %d %d times", k, place, places[[2]int{k, place}])
			}
		}
	}
}
