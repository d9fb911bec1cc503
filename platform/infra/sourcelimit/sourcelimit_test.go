package sourcelimit

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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

// TestNetworkIsA24OrA48: the network of an address is its IPv4 /24 or
// its IPv6 /48, an IPv4-mapped address being IPv4.
func TestNetworkIsA24OrA48(t *testing.T) {
	for ip, want := range map[string]string{
		"192.0.2.10":         "192.0.2.0/24",
		"192.0.2.250":        "192.0.2.0/24",
		"::ffff:192.0.2.10":  "192.0.2.0/24",
		"2001:db8:1:2::1":    "2001:db8:1::/48",
		"2001:db8:1:ffff::9": "2001:db8:1::/48",
		"fe80::1%eth0":       "fe80::/48",
		"not an address":     "not an address",
	} {
		if got := Network(ip); got != want {
			t.Errorf("Network(%q) = %q, want %q", ip, got, want)
		}
	}
}

// TestCheckAndCharge: requests that count only when they fail. Check
// takes nothing; Charge takes one after a failure, into debt when
// requests let through at once all fail, and the debt makes the wait
// longer.
func TestCheckAndCharge(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(Limit{Burst: 2, Every: time.Minute}, func() time.Time { return now })
	const src = "198.51.100.7"
	for i := range 10 {
		now = now.Add(time.Second)
		if ok, _, _ := l.Check(src); !ok {
			t.Fatalf("request %d that did not fail refused", i+1)
		}
	}
	// Five let through at once, all failing.
	for range 5 {
		if ok, _, _ := l.Check(src); !ok {
			t.Fatal("refused before any failure")
		}
	}
	for range 5 {
		l.Charge(src)
	}
	ok, wait, first := l.Check(src)
	if ok || wait != 4*time.Minute || !first {
		t.Fatalf("after 5 failures on a burst of 2: allowed %v, wait %v, first %v; want refused for 4m (3 in debt), first", ok, wait, first)
	}
	if _, _, first := l.Check(src); first {
		t.Error("the second refusal in a row was reported as the first")
	}
	if ok, _, _ := l.Check("198.51.100.8"); !ok {
		t.Error("another source was refused")
	}
	now = now.Add(4 * time.Minute)
	if ok, _, _ := l.Check(src); !ok {
		t.Error("refused once the debt was paid")
	}
}

// TestLookupsChargeEachSourceItsOwn: Lookups tells sources apart by the
// given address function, charges only the lookups said to fail, refuses
// with the wait, and a nil Lookups admits everything.
func TestLookupsChargeEachSourceItsOwn(t *testing.T) {
	g := NewLookups(Limit{Burst: 2, Every: time.Hour}, func(r *http.Request) string { return r.Header.Get("X-Test-Source") })
	from := func(source string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/service/mcp", nil)
		r.Header.Set("X-Test-Source", source)
		return r
	}
	for range 10 { // valid: never charged
		if _, err := g.For(from("192.0.2.1"))(); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		charge, err := g.For(from("192.0.2.1"))()
		if err != nil {
			t.Fatal(err)
		}
		charge()
	}
	_, err := g.For(from("192.0.2.1"))()
	var refused *LookupsRefused
	if !errors.As(err, &refused) || refused.Source != "192.0.2.1" || refused.Wait <= 0 || !refused.First {
		t.Fatalf("after two failures: %v (%+v)", err, refused)
	}
	h := http.Header{}
	if msg := refused.Answer(h); h.Get("Retry-After") != "3600" || !strings.HasSuffix(msg, "retry in 3600 seconds") {
		t.Errorf("answer %q, Retry-After %q", msg, h.Get("Retry-After"))
	}
	if _, err := g.For(from("192.0.2.2"))(); err != nil {
		t.Errorf("another source: %v", err)
	}
	var none *Lookups
	for range 5 {
		charge, err := none.For(from("192.0.2.1"))()
		if err != nil {
			t.Fatal(err)
		}
		charge()
	}
}

// TestOneIPv6SiteGetsSixteenSourcesWorth: a /48 is one organisation's
// network, and anyone can get one (tunnel brokers give them away), so
// grouping by /64 alone gave one holder 65,536 sources, each with its own
// burst: bounds per source meant nothing, and 100,000 new sources also
// made the limiter forget every bucket. Every /64 of a /48 also draws on
// the /48's bucket, which holds sixteen sources' worth; a /64 refused
// there gets no bucket of its own, and another /48 is unaffected.
func TestOneIPv6SiteGetsSixteenSourcesWorth(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(Limit{Burst: 2, Every: time.Minute}, func() time.Time { return now })
	allowed := 0
	for i := range 1000 {
		if ok, _, _ := l.Allow(Source(fmt.Sprintf("2001:db8:7:%x::1", i))); ok {
			allowed++
		}
	}
	if allowed != 2*siteShare {
		t.Errorf("1,000 /64s of one /48 were allowed %d requests, want %d", allowed, 2*siteShare)
	}
	if n := len(l.buckets); n > 2*siteShare+1 {
		t.Errorf("the refused /64s left %d buckets", n)
	}
	if ok, _, _ := l.Allow(Source("2001:db8:8::1")); !ok {
		t.Error("a /64 of another /48 was refused")
	}
	// The /48 refills sixteen times as fast as one source.
	now = now.Add(time.Minute)
	allowed = 0
	for i := range 1000 {
		if ok, _, _ := l.Allow(Source(fmt.Sprintf("2001:db8:7:%x::1", 1000+i))); ok {
			allowed++
		}
	}
	if allowed != siteShare {
		t.Errorf("after a minute the /48 was allowed %d more, want %d", allowed, siteShare)
	}

	// Check and Charge (lookups charged only when they fail) draw on the
	// /48 too.
	c := New(Limit{Burst: 1, Every: time.Hour}, func() time.Time { return now })
	charged := 0
	for i := range 100 {
		src := Source(fmt.Sprintf("2001:db8:9:%x::1", i))
		if ok, _, _ := c.Check(src); ok {
			c.Charge(src)
			charged++
		}
	}
	if charged > siteShare {
		t.Errorf("100 /64s of one /48 had %d failed lookups let through, want at most %d", charged, siteShare)
	}
}

// TestChargeWaitAndHold: ChargeWait charges like Charge and says how long
// the source must wait; Hold makes Check refuse a source for at least the
// time asked, however full its bucket, and no longer once it has passed.
func TestChargeWaitAndHold(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(Limit{Burst: 2, Every: 10 * time.Second}, func() time.Time { return now })
	if w := l.ChargeWait("shared"); w != 0 {
		t.Errorf("first charge of a burst of two: wait %v, want 0", w)
	}
	if w := l.ChargeWait("shared"); w != 10*time.Second {
		t.Errorf("second charge: wait %v, want 10s", w)
	}
	if w := l.ChargeWait("shared"); w != 20*time.Second {
		t.Errorf("third charge, into debt: wait %v, want 20s", w)
	}
	if ok, _, _ := l.Check("held"); !ok {
		t.Fatal("a source never charged was refused")
	}
	l.Hold("held", 95*time.Second)
	ok, wait, first := l.Check("held")
	if ok || wait < 95*time.Second || wait > 105*time.Second || !first {
		t.Errorf("held for 95s: allowed %v, wait %v, first %v; want refused for 95 to 105s", ok, wait, first)
	}
	now = now.Add(94 * time.Second)
	if ok, _, _ := l.Check("held"); ok {
		t.Error("allowed before its hold was over")
	}
	now = now.Add(11 * time.Second)
	if ok, _, _ := l.Check("held"); !ok {
		t.Error("refused once its hold was over")
	}
	l.Hold("held", 0)
	if ok, _, _ := l.Check("held"); !ok {
		t.Error("a hold of nothing refused the source")
	}
}

// TestChargeWaitGoesNoDeeperThanABurstInDebt: ChargeWait put a source
// (a site's budget of refused tool calls) in debt without bound, and the
// engine holds each caller it charges for the wait it reports: a site's
// many tokens drove the wait to an hour, for which any caller of the site
// refused once more was held, its valid calls too. A source already a
// full burst in debt is not charged further, so its wait stays within
// what its bucket takes to fill from empty (Burst times Every).
func TestChargeWaitGoesNoDeeperThanABurstInDebt(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(Limit{Burst: 3, Every: 10 * time.Second}, func() time.Time { return now })
	for range 3 {
		l.ChargeWait("site")
	}
	var last time.Duration
	for i := range 100 {
		last = l.ChargeWait("site")
		if last > 30*time.Second {
			t.Fatalf("charge %d past the burst: wait %v; want at most 30s (a burst of 3, one every 10s)", i+1, last)
		}
	}
	if last != 30*time.Second {
		t.Errorf("a source kept a burst in debt: wait %v, want 30s", last)
	}
	// A burst in debt is paid off in Burst times Every, and the bucket
	// takes requests again.
	now = now.Add(30 * time.Second)
	if w := l.ChargeWait("site"); w != 10*time.Second {
		t.Errorf("30s later, a charge: wait %v, want 10s", w)
	}
}
