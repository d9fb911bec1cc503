package sourcelimit

import (
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
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

func TestSourceGroupsIPv6By64(t *testing.T) {
	if a, b := Source("2001:db8:1:2::1"), Source("2001:db8:1:2:ffff::9"); a != b || a != "2001:db8:1:2::/64" {
		t.Errorf("one /64 gave %q and %q", a, b)
	}
	if a, b := Source("2001:db8:1:2::1"), Source("2001:db8:1:3::1"); a == b {
		t.Errorf("two /64s share %q", a)
	}
	if got := Source("192.0.2.10"); got != "192.0.2.10" {
		t.Errorf("IPv4 source %q", got)
	}
	if got := Source("::ffff:192.0.2.10"); got != "192.0.2.10" {
		t.Errorf("IPv4-mapped source %q", got)
	}
}
