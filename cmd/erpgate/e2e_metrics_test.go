package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// scrape reads url's series with Prometheus's own text parser.
func scrape(t *testing.T, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET %s: Content-Type %q, want the text format", url, ct)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return families
}

// series finds the sample of family name whose labels include want; ok is
// false when there is none.
func series(families map[string]*dto.MetricFamily, name string, want map[string]string) (*dto.Metric, bool) {
	f, ok := families[name]
	if !ok {
		return nil, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m, true
	}
	return nil, false
}

// counter is a counter's value, 0 when the series does not exist yet.
func counter(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	m, ok := series(families, name, labels)
	if !ok {
		return 0
	}
	return m.GetCounter().GetValue()
}

// histogramCount is a histogram's sample count, 0 when it does not exist.
func histogramCount(families map[string]*dto.MetricFamily, name string, labels map[string]string) uint64 {
	m, ok := series(families, name, labels)
	if !ok {
		return 0
	}
	return m.GetHistogram().GetSampleCount()
}

func TestMetricsEndpoint(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	bot := userWithRole(t, sim, "service")
	site := gw.registerFrappe(t, "acme", sim, bot)
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	url := gw.URL + "/metrics"

	t.Run("the main address serves /metrics only with the admin token", func(t *testing.T) {
		for _, auth := range []string{"", "Bearer wrong-token", "Basic " + gw.AdminToken, gw.AdminToken} {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("Authorization %q: %s, want 401", auth, resp.Status)
			}
		}
	})

	customers := map[string]string{"kind": "frappe", "tool": "list_customers", "outcome": "success"}
	invalid := map[string]string{"kind": "frappe", "tool": "list_customers", "outcome": "error"}
	codes := map[string]string{"kind": "frappe", "code": "INVALID_ARGUMENT"}
	timed := map[string]string{"kind": "frappe", "tool": "list_customers"}
	erpOK := map[string]string{"kind": "frappe", "status": "200"}

	before := scrape(t, url, gw.AdminToken)
	mustSucceed(t, callTool(t, cs, "list_customers", map[string]any{"limit": 3}), "list_customers")
	if code := callTool(t, cs, "list_customers", map[string]any{"limit": "three"}).errorCode(); code != "INVALID_ARGUMENT" {
		t.Fatalf("list_customers with a text limit: %q, want INVALID_ARGUMENT", code)
	}
	after := scrape(t, url, gw.AdminToken)

	t.Run("a tool call moves its counters", func(t *testing.T) {
		if d := counter(after, "erpgate_tool_calls_total", customers) - counter(before, "erpgate_tool_calls_total", customers); d != 1 {
			t.Errorf("successful list_customers calls rose by %v, want 1", d)
		}
		if d := counter(after, "erpgate_tool_calls_total", invalid) - counter(before, "erpgate_tool_calls_total", invalid); d != 1 {
			t.Errorf("failed list_customers calls rose by %v, want 1", d)
		}
		if d := counter(after, "erpgate_tool_call_errors_total", codes) - counter(before, "erpgate_tool_call_errors_total", codes); d != 1 {
			t.Errorf("INVALID_ARGUMENT errors rose by %v, want 1", d)
		}
		if d := histogramCount(after, "erpgate_tool_call_duration_seconds", timed) - histogramCount(before, "erpgate_tool_call_duration_seconds", timed); d != 2 {
			t.Errorf("list_customers durations observed %d more, want 2", d)
		}
		// The good call's requests to the simulator (the bad one never
		// reached the ERP).
		if d := histogramCount(after, "erpgate_upstream_request_duration_seconds", erpOK) - histogramCount(before, "erpgate_upstream_request_duration_seconds", erpOK); d < 1 {
			t.Errorf("ERP requests with status 200 observed %d more, want at least 1", d)
		}
		if d := histogramCount(after, "erpgate_admission_wait_seconds", nil) - histogramCount(before, "erpgate_admission_wait_seconds", nil); d < 2 {
			t.Errorf("admission waits observed %d more, want at least 2", d)
		}
	})

	t.Run("every series of the issue is there", func(t *testing.T) {
		for _, name := range []string{
			"erpgate_tool_calls_total", "erpgate_tool_call_duration_seconds", "erpgate_tool_call_errors_total",
			"erpgate_upstream_request_duration_seconds", "erpgate_admission_wait_seconds",
			"erpgate_usage_buffer_events", "erpgate_usage_dropped_events_total",
			"erpgate_db_pool_connections", "erpgate_db_pool_max_connections", "erpgate_db_pool_acquires_total",
			"go_goroutines", "process_resident_memory_bytes",
		} {
			if _, ok := after[name]; !ok {
				t.Errorf("series %s missing", name)
			}
		}
		if m, ok := series(after, "erpgate_db_pool_max_connections", nil); !ok || m.GetGauge().GetValue() < 1 {
			t.Errorf("database pool size: %v", m)
		}
		if m, ok := series(after, "erpgate_db_pool_acquires_total", nil); !ok || m.GetCounter().GetValue() < 1 {
			t.Errorf("database pool acquisitions: %v", m)
		}
	})

	t.Run("labels are bounded: no user, token or site", func(t *testing.T) {
		for name, f := range after {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					switch l.GetName() {
					case "user", "erp_user", "site", "token", "client_id":
						t.Errorf("%s has a %s label", name, l.GetName())
					}
					for _, v := range []string{bot.Email, site.ServiceToken, "acme"} {
						if l.GetValue() == v {
							t.Errorf("%s{%s=%q} names the caller or the site", name, l.GetName(), v)
						}
					}
				}
			}
		}
	})
}

func TestMetricsSiteLabelAndOwnAddress(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gw := startGateway(t, "", map[string]string{
		"ERPGATE_METRICS_ADDR":       ln.Addr().String(),
		"ERPGATE_METRICS_SITE_LABEL": "true",
		// Two calls a minute: the third is refused by the call limits.
		"ERPGATE_LIMIT_USER_PER_MINUTE": "2",
	})
	go func() { _ = gw.App.ServeMetrics(ln) }()
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	awayFromTheMinuteTurn(t, gw.DBURL)
	for range 2 {
		mustSucceed(t, callTool(t, cs, "get_current_user", nil), "get_current_user")
	}
	if code := callTool(t, cs, "get_current_user", nil).errorCode(); code != "RATE_LIMITED" {
		t.Fatalf("third call in a minute: %q, want RATE_LIMITED", code)
	}

	t.Run("the main address has no /metrics", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, gw.URL+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+gw.AdminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /metrics on the main address: %s, want 404", resp.Status)
		}
	})

	// The metrics address serves without a token.
	got := scrape(t, "http://"+ln.Addr().String()+"/metrics", "")

	t.Run("the site label is there when asked for", func(t *testing.T) {
		ok := map[string]string{"kind": "frappe", "tool": "get_current_user", "outcome": "success", "site": "acme"}
		if v := counter(got, "erpgate_tool_calls_total", ok); v != 2 {
			t.Errorf("get_current_user successes on acme: %v, want 2", v)
		}
		refused := map[string]string{"kind": "frappe", "tool": "get_current_user", "outcome": "error", "site": "acme"}
		if v := counter(got, "erpgate_tool_calls_total", refused); v != 1 {
			t.Errorf("get_current_user failures on acme: %v, want 1", v)
		}
		if _, ok := series(got, "erpgate_upstream_request_duration_seconds", map[string]string{"site": "acme", "status": "200"}); !ok {
			t.Error("no ERP request series for acme")
		}
	})

	t.Run("a limit refusal is counted", func(t *testing.T) {
		if v := counter(got, "erpgate_limit_refusals_total", map[string]string{"kind": "frappe"}); v != 1 {
			t.Errorf("limit refusals: %v, want 1", v)
		}
		if v := counter(got, "erpgate_tool_call_errors_total", map[string]string{"kind": "frappe", "code": "RATE_LIMITED"}); v != 1 {
			t.Errorf("RATE_LIMITED errors: %v, want 1", v)
		}
	})
}

// Sign-ins and ERP token renewals are counted: a person's sign-in and
// consent, the refresh of their ERP token, and an Acumatica service
// connection's token.
func TestMetricsSignInsAndTokenRefreshes(t *testing.T) {
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	acu := acumaticatest.NewServer(acumaticatest.Options{})
	defer acu.Close()
	url := gw.URL + "/metrics"
	signIn := map[string]string{"event": "sign_in", "reason": ""}
	consent := map[string]string{"event": "consent", "reason": ""}
	userOK := map[string]string{"connection": "user", "outcome": "ok"}
	serviceOK := map[string]string{"connection": "service", "outcome": "ok"}

	before := scrape(t, url, gw.AdminToken)
	alex := connectOAuth(t, site.MCPURL, frappeLogin(userWithRole(t, sim, "all-companies")))
	mustSucceed(t, callTool(t, alex.cs, "get_current_user", nil), "get_current_user")
	signedIn := scrape(t, url, gw.AdminToken)
	if d := counter(signedIn, "erpgate_sign_ins_total", signIn) - counter(before, "erpgate_sign_ins_total", signIn); d != 1 {
		t.Errorf("sign-ins rose by %v, want 1", d)
	}
	if d := counter(signedIn, "erpgate_sign_ins_total", consent) - counter(before, "erpgate_sign_ins_total", consent); d != 1 {
		t.Errorf("consents rose by %v, want 1", d)
	}

	sim.ExpireTokens()
	expireUpstreamTokens(t, gw.DBURL)
	mustSucceed(t, callTool(t, alex.cs, "get_current_user", nil), "get_current_user after expiry")
	refreshed := scrape(t, url, gw.AdminToken)
	if d := counter(refreshed, "erpgate_upstream_token_refreshes_total", userOK) - counter(signedIn, "erpgate_upstream_token_refreshes_total", userOK); d != 1 {
		t.Errorf("user token refreshes rose by %v, want 1", d)
	}

	acuSite, err := registerAcumaticaService(context.Background(), gw.admin, devState{}, acumaticaService(acu.ServiceLogin()), "acu", "Test Acumatica", acu.URL)
	if err != nil {
		t.Fatal(err)
	}
	registered := scrape(t, url, gw.AdminToken)
	cs := connect(t, acuSite.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": acuSite.ServiceToken})
	mustSucceed(t, callTool(t, cs, "acumatica_list_customers", map[string]any{"top": 2}), "acumatica_list_customers")
	after := scrape(t, url, gw.AdminToken)
	// Verifying the credential at registration signed the API user in
	// once; the call reuses that token.
	if r, a := counter(registered, "erpgate_upstream_token_refreshes_total", serviceOK), counter(after, "erpgate_upstream_token_refreshes_total", serviceOK); r != 1 || a != 1 {
		t.Errorf("service token renewals: %v after registration, %v after the call; want 1 and 1", r, a)
	}
}

// awayFromTheMinuteTurn waits until the database's clock is at most 45 s
// into its minute: the calls limits count per minute of that clock, so a
// few calls made next all fall in one minute, even on a loaded machine.
func awayFromTheMinuteTurn(t *testing.T, dbURL string) {
	t.Helper()
	for {
		secs := queryInt(t, dbURL, `SELECT floor(extract(second FROM clock_timestamp()))::int`)
		if secs <= 45 {
			return
		}
		time.Sleep(time.Duration(60-secs) * time.Second)
	}
}
