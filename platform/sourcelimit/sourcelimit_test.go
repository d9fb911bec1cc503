package sourcelimit

import (
	"testing"
	"time"
)

func TestSourceLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(Limit{Burst: 3, Every: 10 * time.Second}, func() time.Time { return now })
	for i := range 3 {
		if ok, _, _ := l.Allow("198.51.100.7"); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, wait, first := l.Allow("198.51.100.7")
	if ok || wait != 10*time.Second || !first {
		t.Fatalf("fourth request: allowed %v, wait %v, first refusal %v; want refused for 10s, first", ok, wait, first)
	}
	if _, _, first := l.Allow("198.51.100.7"); first {
		t.Error("the second refusal in a row was reported as the first")
	}
	if ok, _, _ := l.Allow("198.51.100.8"); !ok {
		t.Error("another source was refused")
	}
	now = now.Add(10 * time.Second)
	if ok, _, _ := l.Allow("198.51.100.7"); !ok {
		t.Error("refused after the bucket refilled by one")
	}
	if ok, _, _ := l.Allow("198.51.100.7"); ok {
		t.Error("allowed a second request after one refill")
	}
}
