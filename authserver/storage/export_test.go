package storage

import "time"

// SetNow replaces the store's clock: the clock of the replica it runs on.
func (s *Store) SetNow(now func() time.Time) { s.now = now }
