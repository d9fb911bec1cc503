// Package metrics holds erpgate's Prometheus series (issue 17) and serves
// them in the Prometheus text format.
//
// Every series has bounded labels: the site kind, the tool (a name from
// the connectors' catalogues, or "unknown"), an outcome or status class
// from a fixed list. No series has a per-user label. A per-site label
// (the site's slug) is added to the tool-call and ERP-request series only
// when Options.SiteLabel is set, at the cost of multiplying those series by
// the number of sites (docs/operations.md#metrics).
//
// A nil *Metrics records nothing, so packages take one optionally and
// call it without checks; the hot path's work is a few atomic additions on
// series resolved when the engine is built.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options configure Metrics.
type Options struct {
	// SiteLabel adds a "site" label (the site's slug) to the tool-call and
	// ERP-request series (ERPGATE_METRICS_SITE_LABEL).
	SiteLabel bool
}

// Metrics is one replica's set of series.
type Metrics struct {
	reg       *prometheus.Registry
	siteLabel bool

	calls        *prometheus.CounterVec
	callErrors   *prometheus.CounterVec
	callSeconds  *prometheus.HistogramVec
	upstream     *prometheus.HistogramVec
	refreshes    *prometheus.CounterVec
	limitRefused *prometheus.CounterVec
	admitWait    prometheus.Histogram
	admitRefused *prometheus.CounterVec
	signIns      *prometheus.CounterVec

	mu    sync.Mutex
	tools map[toolKey]*Tool
}

// Outcomes of a tool call, as the usage events name them.
const (
	OutcomeSuccess   = "success"
	OutcomeError     = "error"
	OutcomeCancelled = "cancelled"
)

// latencyBuckets span a fast cached call (a few ms) to the 50 s budget.
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 25, 50}

// New registers every series, with the Go runtime's and the process's.
func New(opts Options) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{reg: reg, siteLabel: opts.SiteLabel, tools: map[toolKey]*Tool{}}
	callLabels := []string{"kind", "tool", "outcome"}
	timeLabels := []string{"kind", "tool"}
	upstreamLabels := []string{"kind", "status"}
	if opts.SiteLabel {
		callLabels = append(callLabels, "site")
		timeLabels = append(timeLabels, "site")
		upstreamLabels = append(upstreamLabels, "site")
	}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "erpgate_tool_calls_total",
		Help: "Tool calls answered, by site kind, tool and outcome (success, error, cancelled).",
	}, callLabels)
	m.callErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "erpgate_tool_call_errors_total",
		Help: "Failed tool calls by site kind and stable error code.",
	}, []string{"kind", "code"})
	m.callSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "erpgate_tool_call_duration_seconds",
		Help:    "Time to answer a tool call, from having read the request to the reply.",
		Buckets: latencyBuckets,
	}, timeLabels)
	m.upstream = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "erpgate_upstream_request_duration_seconds",
		Help:    "Requests to ERPs, by site kind and status (the HTTP status, or \"error\" when no answer came), until the answer's headers.",
		Buckets: latencyBuckets,
	}, upstreamLabels)
	m.refreshes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "erpgate_upstream_token_refreshes_total",
		Help: "Renewals of ERP tokens, by connection (service or user) and outcome (ok, failed, dead).",
	}, []string{"connection", "outcome"})
	m.limitRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "erpgate_limit_refusals_total",
		Help: "Tool calls refused by the per-user or per-site call limits (RATE_LIMITED), by site kind.",
	}, []string{"kind"})
	m.admitWait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "erpgate_admission_wait_seconds",
		Help:    "Time an MCP request waited at this replica's door for a call slot and a work slot (reading its body included).",
		Buckets: []float64{.0001, .001, .005, .01, .05, .1, .5, 1, 5, 10, 50},
	})
	m.admitRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "erpgate_admission_refusals_total",
		Help: "MCP requests refused at this replica's door (503; 429 for caller_requests and site_requests), by reason (busy, caller_share, site_share, caller_requests, site_requests).",
	}, []string{"reason"})
	m.signIns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "erpgate_sign_ins_total",
		Help: "User sign-in events at the OAuth front doors, by event (sign_in, consent, login_denied) and, for a denial, its reason.",
	}, []string{"event", "reason"})
	reg.MustRegister(m.calls, m.callErrors, m.callSeconds, m.upstream, m.refreshes,
		m.limitRefused, m.admitWait, m.admitRefused, m.signIns)
	return m
}

// Registry is where the series are registered, for tests and for
// collectors of other packages (usage buffer, database pool).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the series in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

type toolKey struct{ kind, tool string }

// Tool is a tool's series, resolved once (Metrics.Tool), so that a call
// costs no label lookup.
type Tool struct {
	m          *Metrics
	kind, tool string
	success    prometheus.Counter
	failed     prometheus.Counter
	cancelled  prometheus.Counter
	seconds    prometheus.Observer
}

// Tool returns the series of kind's tool; "" names no tool ("unknown").
func (m *Metrics) Tool(kind, tool string) *Tool {
	if m == nil {
		return nil
	}
	if tool == "" {
		tool = "unknown"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := toolKey{kind, tool}
	if t, ok := m.tools[k]; ok {
		return t
	}
	t := &Tool{m: m, kind: kind, tool: tool}
	if !m.siteLabel {
		t.success = m.calls.WithLabelValues(kind, tool, OutcomeSuccess)
		t.failed = m.calls.WithLabelValues(kind, tool, OutcomeError)
		t.cancelled = m.calls.WithLabelValues(kind, tool, OutcomeCancelled)
		t.seconds = m.callSeconds.WithLabelValues(kind, tool)
	}
	m.tools[k] = t
	return t
}

// Call records one answered call of the tool: its outcome, its error code
// when it failed, and its time.
func (t *Tool) Call(site, outcome, code string, d time.Duration) {
	if t == nil {
		return
	}
	secs := d.Seconds()
	if t.m.siteLabel {
		t.m.calls.WithLabelValues(t.kind, t.tool, outcome, site).Inc()
		t.m.callSeconds.WithLabelValues(t.kind, t.tool, site).Observe(secs)
	} else {
		switch outcome {
		case OutcomeSuccess:
			t.success.Inc()
		case OutcomeCancelled:
			t.cancelled.Inc()
		default:
			t.failed.Inc()
		}
		t.seconds.Observe(secs)
	}
	if outcome == OutcomeError && code != "" {
		t.m.callErrors.WithLabelValues(t.kind, code).Inc()
	}
}

// Upstream records one request to an ERP: status is its HTTP status, or
// 0 when no answer came.
func (m *Metrics) Upstream(kind, site string, status int, d time.Duration) {
	if m == nil {
		return
	}
	s := "error"
	if status > 0 {
		s = statusText(status)
	}
	if m.siteLabel {
		m.upstream.WithLabelValues(kind, s, site).Observe(d.Seconds())
		return
	}
	m.upstream.WithLabelValues(kind, s).Observe(d.Seconds())
}

// statusText names a status without allocating for the common ones; any
// status outside 100-599 is "other", so an ERP cannot add series.
func statusText(code int) string {
	switch code {
	case 200:
		return "200"
	case 401:
		return "401"
	case 403:
		return "403"
	case 404:
		return "404"
	case 500:
		return "500"
	}
	if code < 100 || code > 599 {
		return "other"
	}
	return strconv.Itoa(code)
}

// Token refresh outcomes.
const (
	RefreshOK     = "ok"
	RefreshFailed = "failed"
	// RefreshDead: the ERP refused the refresh token; the user must sign
	// in again.
	RefreshDead = "dead"
)

// TokenRefresh records one renewal of an ERP token; connection is
// "service" or "user".
func (m *Metrics) TokenRefresh(connection, outcome string) {
	if m == nil {
		return
	}
	m.refreshes.WithLabelValues(connection, outcome).Inc()
}

// LimitRefused records a call refused by the call limits.
func (m *Metrics) LimitRefused(kind string) {
	if m == nil {
		return
	}
	m.limitRefused.WithLabelValues(kind).Inc()
}

// AdmissionWait records how long a request waited at the door.
func (m *Metrics) AdmissionWait(d time.Duration) {
	if m == nil {
		return
	}
	m.admitWait.Observe(d.Seconds())
}

// AdmissionRefused records a request refused at the door; reason is
// "busy", "caller_share", "site_share", "caller_requests" or
// "site_requests".
func (m *Metrics) AdmissionRefused(reason string) {
	if m == nil {
		return
	}
	m.admitRefused.WithLabelValues(reason).Inc()
}

// signInReasons are the reasons of a denied sign-in kept as a label;
// any other (an ERP's own error code, "erp_…") is "erp_refused".
var signInReasons = map[string]bool{
	"": true, "access_denied": true, "access_check_misconfigured": true,
	"wrong_browser": true, "consent_declined": true,
	// erpgate's own refusals of an answer at the callback, not the ERP's.
	"wrong_callback": true, "code_reused": true,
}

// SignIn records a sign-in audit event: its kind (sign_in, consent,
// login_denied) and, for a denial, its reason.
func (m *Metrics) SignIn(event, reason string) {
	if m == nil {
		return
	}
	if !signInReasons[reason] {
		reason = "erp_refused"
	}
	m.signIns.WithLabelValues(event, reason).Inc()
}

// UsageBuffer exposes the usage recorder's buffer: the events waiting to
// be stored, and those dropped in total.
func (m *Metrics) UsageBuffer(pending func() int, dropped func() int64) {
	if m == nil {
		return
	}
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "erpgate_usage_buffer_events",
			Help: "Usage events waiting in this replica's buffer to be stored in Postgres.",
		}, func() float64 { return float64(pending()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "erpgate_usage_dropped_events_total",
			Help: "Usage events dropped: over the buffer's bound while Postgres was unreachable, or refused by Postgres.",
		}, func() float64 { return float64(dropped()) }),
	)
}

// LogDrops exposes the count of log lines dropped because the log reader
// (standard error) fell behind, read from the log buffer when scraped.
func (m *Metrics) LogDrops(dropped func() uint64) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "erpgate_log_dropped_lines_total",
		Help: "Log lines dropped because the log reader (standard error) fell behind; when it catches up, a log line says how many.",
	}, func() float64 { return float64(dropped()) }))
}
