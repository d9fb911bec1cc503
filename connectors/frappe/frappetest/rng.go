package frappetest

// rng is a small deterministic generator (SplitMix64). The simulator owns
// its algorithm so that data never changes with the Go version.
type rng struct{ state uint64 }

func newRNG(seed uint64) *rng { return &rng{state: seed} }

func (r *rng) next() uint64 {
	r.state += 0x9E3779B97F4A7C15
	z := r.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// intn returns a value in [0, n).
func (r *rng) intn(n int) int {
	if n <= 0 {
		return 0
	}
	return int(r.next() % uint64(n))
}

// between returns a value in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// chance returns true with probability pct/100.
func (r *rng) chance(pct int) bool { return r.intn(100) < pct }

// hash returns n lowercase hex characters, like frappe.generate_hash.
func (r *rng) hash(n int) string {
	b := make([]byte, 0, n)
	for len(b) < n {
		v := r.next()
		for i := 0; i < 16 && len(b) < n; i++ {
			b = append(b, hexDigits[v&0xF])
			v >>= 4
		}
	}
	return string(b)
}
