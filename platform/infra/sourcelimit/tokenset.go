package sourcelimit

import "sync"

// TokenSet is a bounded set of token hashes, safe for concurrent use: the
// tokens a replica has found valid, or found failing, which the bound on
// a source's lookups treats apart from tokens it has never seen. Only
// tokens that reached a lookup enter it, so it grows with the tokens in
// use, not with an attack; past maxTokens it starts again empty (its
// tokens are then treated as unseen until they are looked up again). The
// zero value is an empty set.
type TokenSet struct {
	mu sync.Mutex
	m  map[[32]byte]struct{}
}

// maxTokens bounds a TokenSet.
const maxTokens = 100_000

// Has reports whether key is in the set.
func (s *TokenSet) Has(key [32]byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[key]
	return ok
}

// Add puts key in the set, first emptying a full set that lacks it.
func (s *TokenSet) Add(key [32]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[key]; ok {
		return
	}
	if s.m == nil {
		s.m = map[[32]byte]struct{}{}
	} else if len(s.m) >= maxTokens {
		clear(s.m)
	}
	s.m[key] = struct{}{}
}

// Remove takes key out of the set.
func (s *TokenSet) Remove(key [32]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}
