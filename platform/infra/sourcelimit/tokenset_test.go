package sourcelimit

import (
	"encoding/binary"
	"testing"
)

// A TokenSet holds what was added and not removed, and at its bound starts
// again empty rather than grow: a key already in a full set stays without
// emptying it.
func TestTokenSetIsBounded(t *testing.T) {
	key := func(i int) (k [32]byte) {
		binary.BigEndian.PutUint64(k[:], uint64(i))
		return k
	}
	var s TokenSet
	if s.Has(key(0)) {
		t.Fatal("an empty set has a key")
	}
	s.Add(key(0))
	s.Remove(key(1))
	if !s.Has(key(0)) {
		t.Fatal("an added key is missing")
	}
	s.Remove(key(0))
	if s.Has(key(0)) {
		t.Fatal("a removed key is still there")
	}
	for i := range maxTokens {
		s.Add(key(i))
	}
	s.Add(key(0)) // already there: the full set stays
	if !s.Has(key(maxTokens - 1)) {
		t.Fatal("adding a key the full set holds emptied it")
	}
	s.Add(key(maxTokens))
	if s.Has(key(0)) || !s.Has(key(maxTokens)) || len(s.m) != 1 {
		t.Fatalf("past the bound: %d keys, want only the new one", len(s.m))
	}
}
