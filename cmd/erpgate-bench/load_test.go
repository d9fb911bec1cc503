package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// TestTimingEntry reads the gateway's Server-Timing header as the engine
// writes it, and anything else as "not said" (-1), never as zero.
func TestTimingEntry(t *testing.T) {
	for _, c := range []struct {
		header string
		want   time.Duration
	}{
		{"erp;dur=20.134, total;dur=21.002", 20134 * time.Microsecond},
		{"total;dur=21.002, erp;dur=0.000", 0},
		{`erp;desc="the ERP";dur=3.5`, 3500 * time.Microsecond},
		{"", -1},
		{"total;dur=21.002", -1},
		{"erp", -1},
		{"erp;dur=", -1},
		{"erp;dur=abc", -1},
		{"erp;dur=-2", -1},
		{"erpx;dur=2", -1},
	} {
		if got := timingEntry(c.header, "erp"); got != c.want {
			t.Errorf("timingEntry(%q, erp) = %v, want %v", c.header, got, c.want)
		}
	}
	if got := timingEntry("erp;dur=20.134, total;dur=21.002", "total"); got != 21002*time.Microsecond {
		t.Errorf("total: %v", got)
	}
}

// TestAddedFiguresArePerCall: the added time is each call's latency minus
// its own time with the ERP; calls without the header, and failed calls,
// are left out; rounds merge.
func TestAddedFiguresArePerCall(t *testing.T) {
	msec := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	a := loadResult{Calls: 3, Latencies: []time.Duration{msec(21), msec(22), msec(40)}, Added: []time.Duration{msec(1), msec(1.5), msec(2)}}
	b := loadResult{Calls: 1, Latencies: []time.Duration{msec(25)}, Added: []time.Duration{msec(0.5)}}
	merged := a.merge(b)
	got := addedOf(merged, []loadResult{a, b})
	if got == nil || got.Calls != 4 || got.P50MS != 1 || got.P99MS != 2 {
		t.Fatalf("added %+v, want 4 calls, p50 1 ms, p99 2 ms", got)
	}
	if len(got.RoundP99MS) != 2 || got.RoundP99MS[0] != 2 || got.RoundP99MS[1] != 0.5 {
		t.Errorf("round p99s %v, want [2 0.5]", got.RoundP99MS)
	}
	if addedOf(loadResult{Calls: 2, Latencies: []time.Duration{msec(1), msec(2)}}, nil) != nil {
		t.Error("a run without Server-Timing has added figures")
	}
}

// TestSummariseSubtractsEachCallsERPTime: the added time is each
// successful call's own latency minus its own time with the ERP; failed
// calls, calls whose reply did not say, and calls outside the window have
// none.
func TestSummariseSubtractsEachCallsERPTime(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	erp := func(d time.Duration) serverTiming { return serverTiming{erp: d, total: d + 400*time.Microsecond} }
	records := []callRecord{
		{at(100), at(21_100), "", erp(20 * time.Millisecond)},                  // 21 ms, 1 ms added
		{at(200), at(23_700), "", erp(20 * time.Millisecond)},                  // 23.5 ms, 3.5 ms added
		{at(300), at(20_600), "", serverTiming{20_100 * time.Microsecond, -1}}, // 20.3 ms, 0.2 ms added, no total
		{at(400), at(30_400), "UPSTREAM_TIMEOUT", erp(29 * time.Millisecond)},  // failed: no added time
		{at(500), at(22_500), "", noTiming},                                    // no header
		{at(-50), at(21_000), "", erp(20 * time.Millisecond)},                  // began before the window
		{at(900), at(60_000), "", erp(20 * time.Millisecond)},                  // ended after it
	}
	res := summarise(records, t0, at(50_000))
	if res.Calls != 5 || res.Outcomes["UPSTREAM_TIMEOUT"] != 1 || len(res.Outcomes) != 1 {
		t.Fatalf("%d calls, outcomes %v; want 5 and one UPSTREAM_TIMEOUT", res.Calls, res.Outcomes)
	}
	want := []time.Duration{200 * time.Microsecond, time.Millisecond, 3500 * time.Microsecond}
	if !slices.Equal(res.Added, want) {
		t.Errorf("added %v, want %v", res.Added, want)
	}
	if inside := []time.Duration{400 * time.Microsecond, 400 * time.Microsecond}; !slices.Equal(res.Inside, inside) {
		t.Errorf("inside %v, want %v", res.Inside, inside)
	}
}

// TestDoCallReadsTheLastReplysTiming: a call's ERP time is what its reply
// says; a failed call has none.
func TestDoCallReadsTheLastReplysTiming(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.Header().Set("Server-Timing", "erp;dur=9.000, total;dur=9.500")
			http.Error(w, "no", http.StatusBadGateway)
			return
		}
		w.Header().Set("Server-Timing", "erp;dur=3.250, total;dur=3.400")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	check := func(status int, _ http.Header, _ []byte) string {
		if status != http.StatusOK {
			return "http_502"
		}
		return ""
	}
	client := newLoadClient(1)
	if out, timing := doCall(context.Background(), clientSender{client}, []step{{method: http.MethodGet, url: srv.URL + "/ok"}}, check); out != "" || timing != (serverTiming{3250 * time.Microsecond, 3400 * time.Microsecond}) {
		t.Errorf("ok: %q, timing %+v", out, timing)
	}
	if out, timing := doCall(context.Background(), clientSender{client}, []step{{method: http.MethodGet, url: srv.URL + "/fail"}}, check); out != "http_502" || timing != noTiming {
		t.Errorf("fail: %q, timing %+v", out, timing)
	}
}
