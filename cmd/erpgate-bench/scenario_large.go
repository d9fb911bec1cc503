package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The large report: the General Ledger of one company over a year (the longest range the tool allows)
// on a simulator with 50,000 extra invoices, more than 50,000 rows.
const (
	largeExtraInvoices = 50_000
	largeTool          = "get_general_ledger"
	largeCallers       = 4
	// responseBoundMiB is the gateway's default upstream response bound
	// (ERPGATE_UPSTREAM_MAX_RESPONSE_BYTES).
	responseBoundMiB = 8
)

var largeArgs = map[string]any{"company": "Demo Holdings NZ Ltd", "from_date": "2025-06-16", "to_date": "2026-06-15"}

type largeRun struct {
	ResponseBoundMiB int `json:"response_bound_mib"`
	Concurrency      int `json:"concurrency"`
	// Outcomes counts how the calls ended: RESPONSE_TOO_LARGE, or "paged"
	// for a successful answer carrying one page and the paging meta.
	Outcomes      map[string]int `json:"outcomes"`
	SlowestMS     float64        `json:"slowest_ms"`
	RSSBeforeMiB  float64        `json:"rss_before_mib"`
	PeakRSSMiB    float64        `json:"peak_rss_mib"`
	GrowthMiB     float64        `json:"peak_growth_mib"`
	GrowthPerCall float64        `json:"peak_growth_per_call_mib"`
}

type largeScenario struct {
	Name        string     `json:"name"`
	Machine     machineRef `json:"machine"`
	Concurrency []int      `json:"concurrency"`
	Tool        string     `json:"tool"`
	// ReportRows and UpstreamMiB describe the ERP's answer, read directly.
	ReportRows       int     `json:"report_rows"`
	UpstreamMiB      float64 `json:"upstream_body_mib"`
	ResponseBoundMiB int     `json:"response_bound_mib"`
	Outcome          string  `json:"outcome"`
	// PeakGrowthPerCallMiB is the gateway's peak RSS growth per concurrent
	// call, the worst of the runs.
	PeakGrowthPerCallMiB float64    `json:"peak_growth_per_call_mib"`
	Runs                 []largeRun `json:"runs"`
	Targets              []target   `json:"targets"`
	Notes                []string   `json:"notes,omitempty"`
}

// largeResults asks for a General Ledger of more than 50,000 rows, alone and
// four at once, and records how the calls end and how much the gateway's
// memory grows.
func (b *bench) largeResults(ctx context.Context, main *gatewayProc, tab *table) (any, error) {
	sc := &largeScenario{Name: "large_results", Machine: b.machine.ref(), Concurrency: []int{1, largeCallers},
		Tool: largeTool, ResponseBoundMiB: responseBoundMiB}
	sim, err := startSim(ctx, "frappe", 1, largeExtraInvoices, nil)
	if err != nil {
		return nil, err
	}
	defer sim.stop()
	api := &adminAPI{base: main.URL, token: b.env.adminToken, client: &http.Client{Timeout: time.Minute}}
	sites, err := registerSites(ctx, api, "large", sim, 1)
	if err != nil {
		return nil, err
	}
	token := sites[0].Tokens[0]
	client := &http.Client{Timeout: 5 * time.Minute}
	// The default bound, and a bound raised above the report's size, where
	// the whole report is read, decoded and paged.
	for _, bound := range []int{responseBoundMiB, 64} {
		g, err := b.startGateway(ctx, b.bins.pprof, map[string]string{
			"ERPGATE_UPSTREAM_MAX_RESPONSE_BYTES": fmt.Sprint(bound << 20),
			"ERPGATE_UPSTREAM_BUDGET":             "120s",
		})
		if err != nil {
			return nil, err
		}
		err = b.largeRuns(ctx, sc, g, sim, sites[0], token, client, bound, tab)
		g.stop()
		if err != nil {
			return nil, err
		}
	}
	ok := true
	var outcomes []string
	for _, r := range sc.Runs {
		if r.ResponseBoundMiB == responseBoundMiB {
			sc.PeakGrowthPerCallMiB = max(sc.PeakGrowthPerCallMiB, r.GrowthPerCall)
		}
		for o := range r.Outcomes {
			if o != "RESPONSE_TOO_LARGE" && o != "paged" {
				ok = false
			}
			if !strings.Contains(strings.Join(outcomes, ","), o) {
				outcomes = append(outcomes, o)
			}
		}
	}
	sc.Outcome = strings.Join(outcomes, ",")
	// Bounded: reading at most the bound once, plus decoding what was
	// read, stays within three times the bound per call.
	limit := 3.0 * responseBoundMiB
	sc.Targets = []target{
		{Target: "a 50,000-row report ends with RESPONSE_TOO_LARGE or a paged answer", Value: float64(sc.ReportRows), Unit: "rows", Met: ok && sc.ReportRows >= 50_000},
		{Target: fmt.Sprintf("peak memory bounded: growth per concurrent call <= %.0f MiB (3 x the %d MiB response bound)", limit, responseBoundMiB),
			Value: sc.PeakGrowthPerCallMiB, Unit: "MiB", Met: sc.PeakGrowthPerCallMiB <= limit},
	}
	sc.Notes = []string{
		fmt.Sprintf("simulator with %d extra sales invoices; %s %v", largeExtraInvoices, largeTool, largeArgs),
		"the upstream body size and row count come from replaying the gateway's own report request with a plain client",
		"peak RSS is the gateway's VmHWM, reset before each run; growth is over the RSS just before it",
	}
	tab.add("", "report", fmt.Sprintf("%d rows, %.1f MiB upstream, bound %d MiB", sc.ReportRows, sc.UpstreamMiB, responseBoundMiB))
	tab.add("", "targets", metMark(sc.Targets))
	return sc, nil
}

// largeRuns measures the report alone and four at once on g.
func (b *bench) largeRuns(ctx context.Context, sc *largeScenario, g *gatewayProc, sim *simProcess, site benchSite, token string, client *http.Client, bound int, tab *table) error {
	if sc.ReportRows == 0 {
		// The ERP's answer, read directly: its size and rows.
		var first string
		captured, err := sim.capture(func() error {
			first = b.largeCall(ctx, client, g.URL, token)
			return nil
		})
		if err != nil {
			return err
		}
		var report *capturedRequest
		for i := range captured {
			if strings.Contains(captured[i].RequestURI, "query_report.run") {
				report = &captured[i]
			}
		}
		if report == nil {
			return fmt.Errorf("%s made no report request (first call: %s)", largeTool, first)
		}
		if sc.ReportRows, sc.UpstreamMiB, err = readReportDirectly(ctx, client, site.BaseURL, *report); err != nil {
			return err
		}
	}
	for _, n := range sc.Concurrency {
		runtimeGC(g)
		rss, _ := memStatus(g.PID())
		resetPeakRSS(g.PID())
		r := largeRun{ResponseBoundMiB: bound, Concurrency: n, Outcomes: map[string]int{}, RSSBeforeMiB: mib(rss)}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				out := b.largeCall(ctx, client, g.URL, token)
				mu.Lock()
				r.Outcomes[out]++
				r.SlowestMS = max(r.SlowestMS, ms(time.Since(start)))
				mu.Unlock()
			}()
		}
		wg.Wait()
		_, peak := memStatus(g.PID())
		r.PeakRSSMiB = mib(peak)
		r.GrowthMiB = round(r.PeakRSSMiB-r.RSSBeforeMiB, 1)
		r.GrowthPerCall = round(r.GrowthMiB/float64(n), 1)
		sc.Runs = append(sc.Runs, r)
		tab.add("large_results", fmt.Sprintf("bound %d MiB, c=%d", bound, n),
			fmt.Sprintf("%v | slowest %.0f ms | peak RSS %s MiB (%+.1f MiB, %s MiB per call)", r.Outcomes, r.SlowestMS, f1(r.PeakRSSMiB), r.GrowthMiB, f1(r.GrowthPerCall)))
	}
	return nil
}

// largeCall makes one large report call and names its outcome.
func (b *bench) largeCall(ctx context.Context, client *http.Client, gatewayURL, token string) string {
	args := map[string]any{}
	for k, v := range largeArgs {
		args[k] = v
	}
	raw, err := mcpCall(ctx, client, gatewayURL+"/service/mcp", token, largeTool, args)
	var te *toolError
	switch {
	case errors.As(err, &te):
		return te.Code
	case err != nil:
		return "error: " + err.Error()
	}
	// Lists page under meta; reports at the top level (row_count,
	// returned, next_offset).
	var page struct {
		Meta *struct {
			NextOffset *int `json:"next_offset"`
		} `json:"meta"`
		RowCount *int `json:"row_count"`
		Returned *int `json:"returned"`
	}
	if json.Unmarshal(raw, &page) == nil && (page.Meta != nil || (page.RowCount != nil && page.Returned != nil && *page.Returned < *page.RowCount)) {
		return "paged"
	}
	return "unpaged"
}

// readReportDirectly sends the captured report request to the simulator
// and returns the rows and size of its answer.
func readReportDirectly(ctx context.Context, client *http.Client, baseURL string, c capturedRequest) (int, float64, error) {
	req, err := http.NewRequestWithContext(ctx, c.Method, baseURL+c.RequestURI, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", c.Authorization)
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	var body struct {
		Message struct {
			Result []json.RawMessage `json:"result"`
		} `json:"message"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return 0, 0, fmt.Errorf("report answer: %w", err)
	}
	return len(body.Message.Result), round(float64(len(raw))/(1<<20), 1), nil
}

// runtimeGC asks the gateway for a garbage collection (the pprof heap
// endpoint with gc=1), so runs start from the same live heap.
func runtimeGC(g *gatewayProc) {
	if g.pprofURL == "" {
		return
	}
	if resp, err := http.Get(g.pprofURL + "/debug/pprof/heap?gc=1"); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}
