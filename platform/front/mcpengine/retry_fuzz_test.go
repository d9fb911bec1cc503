package mcpengine

import (
	"math/big"
	"testing"
	"time"
)

// FuzzRetryAfterSeconds: the wait a tool error tells the client is the
// ERP's (or the limiter's) wait in whole seconds rounded up, whatever its
// size: an ERP's Retry-After can be as long as a Duration holds.
func FuzzRetryAfterSeconds(f *testing.F) {
	for _, d := range []int64{1, 999_999_999, 1_000_000_000, 1_500_000_000, int64(time.Hour), 1<<63 - 1, 9_223_372_036_000_000_000} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, d int64) {
		if d <= 0 {
			return // not told
		}
		want := new(big.Int).Add(big.NewInt(d), big.NewInt(999_999_999))
		want.Quo(want, big.NewInt(1_000_000_000))
		if got := retryAfterSeconds(time.Duration(d)); int64(got) != want.Int64() {
			t.Fatalf("retryAfterSeconds(%v) = %d, want %s", time.Duration(d), got, want)
		}
	})
}
