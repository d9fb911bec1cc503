package metrics

import (
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

func gather(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range families {
		out[f.GetName()] = f
	}
	return out
}

// A nil *Metrics records nothing and never panics: packages call it
// without checks.
func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	m.Tool("frappe", "list_customers").Call("acme", OutcomeSuccess, "", time.Millisecond)
	m.Upstream("frappe", "acme", 200, time.Millisecond)
	m.TokenRefresh("service", RefreshOK)
	m.LimitRefused("frappe")
	m.AdmissionWait(time.Millisecond)
	m.AdmissionRefused("busy")
	m.SignIn("sign_in", "")
	m.UsageBuffer(func() int { return 0 }, func() int64 { return 0 })
	m.LogDrops(func() uint64 { return 0 })
	m.Pool(nil)
}

// What an ERP or a client sends never becomes a label value of its own.
func TestLabelValuesStayBounded(t *testing.T) {
	m := New(Options{})
	for _, status := range []int{200, 418, 599, 600, 1000, -1} {
		m.Upstream("frappe", "acme", status, time.Millisecond)
	}
	m.Upstream("frappe", "acme", 0, time.Millisecond)
	m.SignIn("login_denied", "erp_whatever_the_erp_said")
	m.SignIn("login_denied", "wrong_browser")
	m.SignIn("login_denied", "wrong_callback")
	m.SignIn("login_denied", "code_reused")
	m.Tool("frappe", "").Call("acme", OutcomeError, "UNKNOWN_TOOL", time.Millisecond)
	f := gather(t, m)
	var statuses []string
	for _, s := range f["erpgate_upstream_request_duration_seconds"].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == "status" {
				statuses = append(statuses, l.GetValue())
			}
			if l.GetName() == "site" {
				t.Error("a site label without the setting")
			}
		}
	}
	if got := strings.Join(statuses, ","); got != "200,418,599,error,other" {
		t.Errorf("statuses %s", got)
	}
	var reasons []string
	for _, s := range f["erpgate_sign_ins_total"].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == "reason" {
				reasons = append(reasons, l.GetValue())
			}
		}
	}
	if got := strings.Join(reasons, ","); got != "code_reused,erp_refused,wrong_browser,wrong_callback" {
		t.Errorf("sign-in reasons %s", got)
	}
	if len(f["erpgate_tool_calls_total"].GetMetric()) != 3 { // unknown's three outcomes, resolved once
		t.Errorf("tool series %v", f["erpgate_tool_calls_total"].GetMetric())
	}
}

// The log's dropped lines are a counter read from the log buffer when
// scraped.
func TestLogDropsIsTheBuffersCount(t *testing.T) {
	m := New(Options{})
	var dropped uint64
	m.LogDrops(func() uint64 { return dropped })
	dropped = 7
	f := gather(t, m)["erpgate_log_dropped_lines_total"]
	if f.GetType() != dto.MetricType_COUNTER || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetCounter().GetValue() != 7 {
		t.Errorf("erpgate_log_dropped_lines_total = %v, want the counter 7", f)
	}
}

// BenchmarkToolCall is what a tool call adds on the hot path: its tool's
// outcome counter and latency histogram, and one ERP request's histogram.
func BenchmarkToolCall(b *testing.B) {
	m := New(Options{})
	tool := m.Tool("frappe", "list_customers")
	b.ReportAllocs()
	for b.Loop() {
		tool.Call("acme", OutcomeSuccess, "", 3*time.Millisecond)
		m.Upstream("frappe", "acme", 200, 2*time.Millisecond)
		m.AdmissionWait(time.Microsecond)
	}
}
