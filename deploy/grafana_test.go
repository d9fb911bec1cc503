package deploy_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/metrics"
)

// dashboardPath is the Grafana dashboard of erpgate's series.
const dashboardPath = "grafana/erpgate-dashboard.json"

type dashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Title      string `json:"title"`
		Type       string `json:"type"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		GridPos struct{ H, W, X, Y int } `json:"gridPos"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// servedSeries are the names erpgate's /metrics serves, histograms with
// their _bucket, _sum and _count: every series recorded once through
// platform/infra/metrics, as the gateway records them.
func servedSeries(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New(metrics.Options{})
	m.Tool("frappe", "list_customers").Call("acme", metrics.OutcomeError, "INVALID_ARGUMENT", time.Millisecond)
	m.Upstream("frappe", "acme", 200, time.Millisecond)
	m.TokenRefresh("service", metrics.RefreshOK)
	m.LimitRefused("frappe")
	m.AdmissionWait(time.Millisecond)
	m.AdmissionRefused("busy")
	m.SignIn("sign_in", "")
	m.UsageBuffer(func() int { return 0 }, func() int64 { return 0 })
	m.LogDrops(func() uint64 { return 0 })
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
		if f.GetType().String() == "HISTOGRAM" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[f.GetName()+s] = true
			}
		}
	}
	// The database pool's series come from a live pool
	// (cmd/erpgate's TestMetricsEndpoint scrapes them).
	for _, n := range []string{"erpgate_db_pool_connections", "erpgate_db_pool_max_connections", "erpgate_db_pool_acquires_total",
		"erpgate_db_pool_empty_acquires_total", "erpgate_db_pool_canceled_acquires_total", "erpgate_db_pool_acquire_wait_seconds_total"} {
		names[n] = true
	}
	return names
}

var seriesName = regexp.MustCompile(`\b((?:erpgate|go|process)_[a-z_]+)\b`)

func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	var d dashboard
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	if d.Title == "" || d.UID == "" {
		t.Errorf("the dashboard needs a title and a uid: %q %q", d.Title, d.UID)
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	if !slices.Contains(vars, "datasource") || !slices.Contains(vars, "job") {
		t.Errorf("template variables %v, want datasource and job", vars)
	}
	served := servedSeries(t)
	charted := map[string]bool{}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Datasource.UID != "${datasource}" || p.Type == "" || p.GridPos.W == 0 || p.GridPos.H == 0 || len(p.Targets) == 0 {
			t.Errorf("panel %q: data source %q, type %q, size %dx%d, %d queries", p.Title, p.Datasource.UID, p.Type, p.GridPos.W, p.GridPos.H, len(p.Targets))
		}
		for _, q := range p.Targets {
			if strings.Count(q.Expr, "(") != strings.Count(q.Expr, ")") || strings.Count(q.Expr, "{") != strings.Count(q.Expr, "}") {
				t.Errorf("panel %q: unbalanced query %s", p.Title, q.Expr)
			}
			found := seriesName.FindAllString(q.Expr, -1)
			if len(found) == 0 {
				t.Errorf("panel %q: query names no series: %s", p.Title, q.Expr)
			}
			for _, name := range found {
				if !served[name] {
					t.Errorf("panel %q charts %s, which erpgate does not serve", p.Title, name)
				}
				charted[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")] = true
			}
			if strings.Contains(q.Expr, "erpgate_") && !strings.Contains(q.Expr, `job=~"$job"`) {
				t.Errorf("panel %q: query ignores the job variable: %s", p.Title, q.Expr)
			}
		}
	}
	// Every series the issue asks for has a chart.
	for _, name := range []string{
		"erpgate_tool_calls_total", "erpgate_tool_call_duration_seconds", "erpgate_tool_call_errors_total",
		"erpgate_upstream_request_duration_seconds", "erpgate_upstream_token_refreshes_total",
		"erpgate_limit_refusals_total", "erpgate_admission_wait_seconds", "erpgate_admission_refusals_total",
		"erpgate_usage_buffer_events", "erpgate_usage_dropped_events_total",
		"erpgate_db_pool_connections", "erpgate_sign_ins_total", "erpgate_log_dropped_lines_total",
	} {
		if !charted[name] {
			t.Errorf("no panel charts %s", name)
		}
	}
}
