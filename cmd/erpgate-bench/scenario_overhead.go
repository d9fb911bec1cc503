package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// overheadTool is the call the overhead scenario makes: a 20-row page of
// customers, one upstream list request.
const overheadTool = "list_customers"

var overheadArgs = map[string]any{"limit": 20}

// overheadRuns are the measured points: the throughput target's (16
// callers, 0 ms), the same at 20 ms, and the latency target's (20 ms, few
// enough callers that the two-core machine is not saturated, so the p99
// shows what the gateway adds rather than queueing for the CPU). Each run
// alternates direct and gateway rounds; the latency run has many more
// (with a short warm-up after the first, as the connections are warm by
// then), because at four callers a round yields only some 350 calls, and a
// p99 from 2,000 samples rests on 20 of them: it moved by ±1.5 ms between
// runs of the same build. With some 6,000 samples a side it rests on 60,
// and eighteen short rounds rather than six long ones let the interval
// (percentileDiffInterval) see how the figure moves between rounds.
var overheadRuns = []struct {
	latency time.Duration
	callers int
	rounds  int
	// length is each round's measured time in windows.
	length float64
}{{0, overheadCallers, 2, 0.5}, {20 * time.Millisecond, overheadCallers, 2, 0.5}, {20 * time.Millisecond, 4, 18, 0.5}}

// pinnedRounds is how many rounds the latency run measures again with the
// gateway on a core of its own.
const pinnedRounds = 12

// intervalLevel and intervalDraws set the latency run's interval for its
// p99 overhead: the central 90 % of 1,000 bootstrap draws.
const (
	intervalLevel = 0.9
	intervalDraws = 1000
)

// pinnedLatency is the latency run measured again with the gateway and the
// proxy on the last CPU and the load generator, the simulator and
// PostgreSQL on the others.
type pinnedLatency struct {
	Rounds         int           `json:"rounds,omitempty"`
	Gateway        figures       `json:"gateway"`
	Direct         figures       `json:"direct"`
	ThroughProxy   figures       `json:"through_proxy"`
	P50OverheadMS  float64       `json:"p50_overhead_ms"`
	P99OverheadMS  float64       `json:"p99_overhead_ms"`
	P99OverProxyMS float64       `json:"p99_over_proxy_ms"`
	Added          *addedFigures `json:"gateway_added_per_call,omitempty"`
	ProxyAdded     *addedFigures `json:"through_proxy_added_per_call,omitempty"`
	GatewayCPU     cpuPerCall    `json:"gateway_cpu_per_call"`
	// NotMeasured says why the run was skipped (one CPU, or the
	// affinity could not be set).
	NotMeasured string `json:"not_measured,omitempty"`
}

type overheadRun struct {
	ERP               string  `json:"erp"`
	UpstreamLatencyMS int     `json:"upstream_latency_ms"`
	Concurrency       int     `json:"concurrency"`
	Gateway           figures `json:"gateway"`
	Direct            figures `json:"direct"`
	// ThroughProxy is the direct client's requests through a do-nothing
	// reverse proxy (its own process): what one more HTTP hop costs on
	// this machine, measured in the latency run only.
	ThroughProxy *figures `json:"through_proxy,omitempty"`
	// P99OverProxyMS is the gateway's p99 minus the proxy's: what erpgate
	// adds beyond any extra hop.
	P99OverProxyMS *float64 `json:"p99_over_proxy_ms,omitempty"`
	P50OverProxyMS *float64 `json:"p50_over_proxy_ms,omitempty"`
	// Pinned is the latency run again with the gateway on a core of its
	// own (latency run only).
	Pinned        *pinnedLatency `json:"gateway_on_own_core,omitempty"`
	Ratio         float64        `json:"ratio"`
	P50OverheadMS float64        `json:"p50_overhead_ms"`
	P99OverheadMS float64        `json:"p99_overhead_ms"`
	// P99OverheadIntervalMS is how far the p99 overhead moves by chance
	// in this run: the central 90 % of a bootstrap over its paired
	// direct and gateway rounds (latency run only).
	P99OverheadIntervalMS []float64 `json:"p99_overhead_interval_ms,omitempty"`
	// Added is what the gateway added to each call, read per call rather
	// than as a difference of two distributions.
	Added *addedFigures `json:"gateway_added_per_call,omitempty"`
	// ProxyAdded is the same for the do-nothing proxy, which reads each
	// answer whole and says how long it was with the ERP as erpgate does:
	// what any hop adds per call on this machine.
	ProxyAdded        *addedFigures `json:"through_proxy_added_per_call,omitempty"`
	GatewayCPU        cpuPerCall    `json:"gateway_cpu_per_call"`
	DirectCPU         cpuPerCall    `json:"direct_cpu_per_call"`
	GatewayMachineCPU float64       `json:"gateway_machine_cpu_utilisation"`
	DirectMachineCPU  float64       `json:"direct_machine_cpu_utilisation"`
}

// addedFigures are percentiles of what the gateway added to each call: the
// call's latency at the load generator minus the time the gateway says
// (Server-Timing erp) the call was with the ERP, its requests sent and
// their answers read. That is the hop to the gateway and the gateway's own
// work, per call, without the ERP's own variation, which dominates both
// sides' p99 in the difference of two distributions.
type addedFigures struct {
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	Calls int     `json:"calls"`
	// Inside is the part spent in the gateway after it had read the
	// request (Server-Timing total minus erp); the rest is the hop to the
	// gateway, reading the request and sending the reply.
	InsideP50MS float64 `json:"inside_p50_ms"`
	InsideP99MS float64 `json:"inside_p99_ms"`
	// Rounds are the p99s of each round alone, for the spread.
	RoundP99MS []float64 `json:"round_p99_ms,omitempty"`
}

func addedOf(r loadResult, rounds []loadResult) *addedFigures {
	if len(r.Added) == 0 {
		return nil
	}
	a := &addedFigures{P50MS: ms(percentileOf(r.Added, 0.5)), P99MS: ms(percentileOf(r.Added, 0.99)), Calls: len(r.Added),
		InsideP50MS: ms(percentileOf(r.Inside, 0.5)), InsideP99MS: ms(percentileOf(r.Inside, 0.99))}
	for _, rd := range rounds {
		if len(rd.Added) > 0 {
			a.RoundP99MS = append(a.RoundP99MS, ms(percentileOf(rd.Added, 0.99)))
		}
	}
	return a
}

type overheadScenario struct {
	Name        string     `json:"name"`
	Machine     machineRef `json:"machine"`
	Concurrency int        `json:"concurrency"`
	Tool        string     `json:"tool"`
	Rows        int        `json:"rows"`
	// UpstreamRequests is how many ERP requests one call makes; the
	// direct client replays exactly those.
	UpstreamRequests int `json:"upstream_requests_per_call"`
	// Headline figures: 0 ms upstream latency.
	GatewayRPS float64 `json:"gateway_rps"`
	DirectRPS  float64 `json:"direct_rps"`
	Ratio      float64 `json:"ratio"`
	// CPU time per call: in the gateway process alone, and in the gateway
	// plus Postgres (what the gateway adds to the machine).
	GatewayCPUUSPerCall         float64       `json:"gateway_cpu_us_per_call"`
	GatewayPostgresCPUUSPerCall float64       `json:"gateway_plus_postgres_cpu_us_per_call"`
	DirectCPUUSPerCall          float64       `json:"direct_cpu_us_per_call"`
	P99OverheadMS20             float64       `json:"p99_overhead_ms_at_20ms"`
	Runs                        []overheadRun `json:"runs"`
	Targets                     []target      `json:"targets"`
	Notes                       []string      `json:"notes,omitempty"`
}

// overheadTarget is one ERP's call in the overhead scenario: a 20-row list
// of customers, one upstream request.
type overheadTarget struct {
	erp  string
	sim  *simProcess
	tool string
	args map[string]any
	// rowsKey is the result's array of rows.
	rowsKey string
	sites   []benchSite
	tokens  []string // token i belongs to site i
}

// gatewayOverhead compares a 20-row customer list through the gateway with
// the same upstream requests sent by a plain Go HTTP client, at 0 ms and
// 20 ms upstream latency, 16 callers over 16 sites each way: on the Frappe
// simulator (the headline figures and targets) and on the Acumatica
// simulator.
func (b *bench) gatewayOverhead(ctx context.Context, g *gatewayProc, tab *table) (any, error) {
	sc := &overheadScenario{Name: "gateway_overhead", Machine: b.machine.ref(), Concurrency: overheadCallers, Tool: overheadTool}
	frappe := overheadTarget{erp: "frappe", sim: b.sim, tool: overheadTool, args: overheadArgs, rowsKey: "data", sites: b.sites, tokens: b.tokens}
	runs, rows, requests, err := b.overheadRuns(ctx, g, tab, frappe)
	if err != nil {
		return nil, err
	}
	sc.Rows, sc.UpstreamRequests, sc.Runs = rows, requests, runs
	zero, busy, twenty := sc.Runs[0], sc.Runs[1], sc.Runs[2]
	sc.GatewayRPS, sc.DirectRPS, sc.Ratio = zero.Gateway.RPS, zero.Direct.RPS, zero.Ratio
	sc.GatewayCPUUSPerCall = zero.GatewayCPU.Gateway
	sc.GatewayPostgresCPUUSPerCall = round(zero.GatewayCPU.Gateway+zero.GatewayCPU.Postgres, 1)
	sc.DirectCPUUSPerCall = zero.DirectCPU.Total
	sc.P99OverheadMS20 = twenty.P99OverheadMS
	sc.Targets = overheadTargets("", zero, busy, twenty)

	acu, err := b.acumaticaTarget(ctx, g, "acu")
	if err != nil {
		return nil, err
	}
	defer acu.sim.stop()
	runs, rows, requests, err = b.overheadRuns(ctx, g, tab, acu)
	if err != nil {
		return nil, err
	}
	sc.Runs = append(sc.Runs, runs...)
	sc.Targets = append(sc.Targets, overheadTargets("acumatica: ", runs[0], runs[1], runs[2])...)
	sc.Notes = append(sc.Notes,
		"direct: a plain Go net/http client sends the upstream requests one call makes (captured from a gateway call) to the same simulator sites",
		"CPU per call is read from /proc for each process over the measured window: load generator, simulator, gateway, Postgres (all backends)",
		fmt.Sprintf("rounds alternate direct and gateway (and, in the latency run, the proxy): two of %s each in the throughput runs, eighteen of %s each in the latency run; the latency run's p99 overhead has a %.0f%% interval from %d bootstrap draws of its paired rounds", time.Duration(0.5*float64(b.opts.window)), time.Duration(0.5*float64(b.opts.window)), intervalLevel*100, intervalDraws),
		fmt.Sprintf("headline figures and the first targets: Frappe, %s (%d rows, %d upstream request per call); runs with erp acumatica: %s (%d rows, %d upstream request per call, the bot's OAuth token obtained before measuring)",
			overheadTool, sc.Rows, sc.UpstreamRequests, acu.tool, rows, requests))
	tab.add("", "targets", metMark(sc.Targets))
	return sc, nil
}

func overheadTargets(prefix string, zero, busy, twenty overheadRun) []target {
	note := fmt.Sprintf("at concurrency %d the machine is %.0f%% busy and the p99 overhead is %.2f ms: queueing for the CPU, not the gateway's own latency", busy.Concurrency, busy.GatewayMachineCPU*100, busy.P99OverheadMS)
	if iv := twenty.P99OverheadIntervalMS; len(iv) == 2 {
		note += fmt.Sprintf("; at concurrency %d the p99 overhead's %.0f%% interval over this run's rounds is %.2f to %.2f ms", twenty.Concurrency, intervalLevel*100, iv[0], iv[1])
	}
	if twenty.P99OverProxyMS != nil {
		note += fmt.Sprintf("; at concurrency %d a do-nothing reverse proxy in the same place adds p99 %.2f ms over direct, and the gateway adds p99 %.2f ms over that proxy",
			twenty.Concurrency, twenty.ThroughProxy.P99MS-twenty.Direct.P99MS, *twenty.P99OverProxyMS)
	}
	if p := twenty.Pinned; p != nil && p.NotMeasured == "" {
		note += fmt.Sprintf("; with the gateway on a core of its own (the rest on the others) the p99 overhead is %.2f ms", p.P99OverheadMS)
	}
	if a, pa := twenty.Added, twenty.ProxyAdded; a != nil && pa != nil {
		note += fmt.Sprintf("; read per call (latency minus the time with the ERP that the reply states), the gateway adds p50 %.2f p99 %.2f ms (inside the gateway, after reading the request: p99 %.2f ms) and a do-nothing proxy p50 %.2f p99 %.2f ms",
			a.P50MS, a.P99MS, a.InsideP99MS, pa.P50MS, pa.P99MS)
	}
	return []target{
		{Target: prefix + "gateway throughput >= 0.5 x direct at concurrency 16, 0 ms upstream", Value: zero.Ratio, Unit: "ratio", Met: zero.Ratio >= 0.5},
		{Target: fmt.Sprintf("%sp99 overhead <= 2 ms with 20 ms upstream (concurrency %d, machine not saturated)", prefix, twenty.Concurrency),
			Value: twenty.P99OverheadMS, Unit: "ms", Met: twenty.P99OverheadMS <= 2, Note: note},
	}
}

func siteURLs(sites []benchSite) []string {
	out := make([]string, len(sites))
	for i, s := range sites {
		out[i] = s.BaseURL
	}
	return out
}

// acumaticaTarget starts an Acumatica simulator on overheadCallers ports
// and registers a site with a service token on each. prefix names their
// slugs, which must differ between scenarios that share the gateway.
func (b *bench) acumaticaTarget(ctx context.Context, g *gatewayProc, prefix string) (overheadTarget, error) {
	sim, err := startSim(ctx, "acumatica", overheadCallers, 0, nil)
	if err != nil {
		return overheadTarget{}, err
	}
	api := &adminAPI{base: g.URL, token: b.env.adminToken, client: newLoadClient(8)}
	sites, err := registerSites(ctx, api, prefix, sim, 1)
	if err != nil {
		sim.stop()
		return overheadTarget{}, err
	}
	t := overheadTarget{erp: "acumatica", sim: sim, tool: "acumatica_list_customers", args: map[string]any{"top": 20}, rowsKey: "results", sites: sites}
	for _, s := range sites {
		t.tokens = append(t.tokens, s.Tokens[0])
	}
	return t, nil
}

// replaySteps are the captured upstream requests, sent to baseURL with the
// credentials and Accept header they had.
func replaySteps(captured []capturedRequest, baseURL string) []step {
	out := make([]step, 0, len(captured))
	for _, c := range captured {
		h := http.Header{"Authorization": {c.Authorization}}
		if c.Accept != "" {
			h.Set("Accept", c.Accept)
		}
		out = append(out, step{method: c.Method, url: baseURL + c.RequestURI, header: h})
	}
	return out
}

// viaProxy is steps addressed to baseURL, sent through the proxy at
// proxyURL instead.
func viaProxy(steps []step, baseURL, proxyURL string) []step {
	out := make([]step, len(steps))
	for i, st := range steps {
		st.url = proxyURL + strings.TrimPrefix(st.url, baseURL)
		out[i] = st
	}
	return out
}

// overheadRuns measures overheadRuns for one ERP and returns them, with
// the rows one call returns and the upstream requests it makes.
func (b *bench) overheadRuns(ctx context.Context, g *gatewayProc, tab *table, t overheadTarget) ([]overheadRun, int, int, error) {
	// One call through the gateway shows which upstream requests a call
	// makes; the direct client replays them on the same sites. A first
	// call, not captured, signs the bot in where the ERP needs it.
	if err := t.sim.setLatency(0); err != nil {
		return nil, 0, 0, err
	}
	if _, err := b.probeRows(ctx, g.URL, t, t.tokens[0]); err != nil {
		return nil, 0, 0, err
	}
	var rows int
	captured, err := t.sim.capture(func() error {
		var err error
		rows, err = b.probeRows(ctx, g.URL, t, t.tokens[0])
		return err
	})
	if err != nil {
		return nil, 0, 0, err
	}
	if len(captured) == 0 {
		return nil, 0, 0, fmt.Errorf("a %s call made no upstream request", t.tool)
	}
	direct := make([][]step, overheadCallers)
	gateway := make([][]step, overheadCallers)
	body := toolCall(1, t.tool, t.args)
	for i := range overheadCallers {
		direct[i] = replaySteps(captured, t.sites[i].BaseURL)
		gateway[i] = []step{{method: http.MethodPost, url: g.URL + "/service/mcp", header: mcpHeader(t.tokens[i]), body: body}}
	}
	// The gateway signs the bot in once per site (Acumatica): call every
	// other site once too, so that no measured call waits for a token.
	for i := 1; i < overheadCallers; i++ {
		if _, err := b.probeRows(ctx, g.URL, t, t.tokens[i]); err != nil {
			return nil, 0, 0, err
		}
	}
	p := b.parts(g)
	p.sim = t.sim.pid()

	var out []overheadRun
	for _, run := range overheadRuns {
		if err := t.sim.setLatency(run.latency); err != nil {
			return nil, 0, 0, err
		}
		warmup := b.opts.warmup
		spec := func(calls [][]step, check checkFunc) loadSpec {
			return loadSpec{
				concurrency: run.callers, warmup: warmup, duration: time.Duration(run.length * float64(b.opts.window)),
				call:   func(seq int64) []step { return calls[seq%int64(run.callers)] },
				check:  check,
				sample: p.sample,
			}
		}
		client := newLoadClient(run.callers)
		// The latency run also sends the direct requests through a
		// do-nothing reverse proxy, to tell what any extra hop costs here
		// from what erpgate adds.
		var proxied [][]step
		var px *proxyProcess
		if run.rounds > 2 {
			var err error
			px, err = startProxy(ctx, siteURLs(t.sites[:run.callers]), true)
			if err != nil {
				return nil, 0, 0, err
			}
			defer px.stop()
			proxied = make([][]step, len(direct))
			for i, steps := range direct {
				proxied[i] = viaProxy(steps, t.sites[i].BaseURL, px.URL)
			}
		}
		// Direct, proxied and gateway alternate, so that drift in the
		// machine's background load hits all alike.
		var d, gw, pr loadResult
		// Each side's rounds, kept apart for the interval.
		var dRounds, gwRounds, prRounds []loadResult
		measure := func(rounds int, profile bool) {
			dRounds, gwRounds, prRounds = nil, nil, nil
			for round := range rounds {
				if proxied != nil {
					r := runLoad(ctx, client, spec(proxied, checkDirect))
					prRounds = append(prRounds, r)
					if round == 0 {
						pr = r
					} else {
						pr = pr.merge(r)
					}
				}
				dr := runLoad(ctx, client, spec(direct, checkDirect))
				gs := spec(gateway, checkMCP)
				if profile && b.opts.profileDir != "" && round == 0 {
					path := filepath.Join(b.opts.profileDir, fmt.Sprintf("gateway-overhead-%s-%dms-c%d.pprof", t.erp, run.latency.Milliseconds(), run.callers))
					gs.onWindow = func(wctx context.Context) {
						secs := max(gs.duration-time.Second, time.Second)
						if err := g.profile(wctx, secs, path); err != nil {
							fmt.Println("profile:", err)
						}
					}
				}
				gr := runLoad(ctx, client, gs)
				dRounds, gwRounds = append(dRounds, dr), append(gwRounds, gr)
				if round == 0 {
					d, gw = dr, gr
				} else {
					d, gw = d.merge(dr), gw.merge(gr)
				}
				if run.rounds > 2 {
					warmup = min(b.opts.warmup, 250*time.Millisecond)
				}
			}
		}
		measure(run.rounds, true)
		added, proxyAdded := addedOf(gw, gwRounds), addedOf(pr, prRounds)
		var interval []float64
		if run.rounds > 2 {
			rng := rand.New(rand.NewPCG(uint64(run.latency), uint64(run.callers)))
			if lo, hi, ok := percentileDiffInterval(dRounds, gwRounds, 0.99, intervalLevel, intervalDraws, rng); ok {
				interval = []float64{ms(lo), ms(hi)}
			}
		}
		// The latency run again with the gateway (and the proxy, for
		// its rounds) on a core of its own and everything else on the
		// others: what erpgate adds when it does not wait for a core
		// behind the load generator, the simulator and PostgreSQL.
		var pinned *pinnedLatency
		if run.rounds > 2 {
			sd, sg, sp := d, gw, pr
			undo, err := ownCore([]int{g.PID(), px.pid()}, []int{t.sim.pid()}, b.pg.pid())
			if err == nil {
				warmup = b.opts.warmup
				measure(pinnedRounds, false)
				undo()
				if gw.failures() > 0 || d.failures() > 0 || pr.failures() > 0 {
					return nil, 0, 0, fmt.Errorf("%s, gateway on its own core: failures: gateway %v, direct %v, proxy %v", t.erp, gw.Outcomes, d.Outcomes, pr.Outcomes)
				}
				pinned = &pinnedLatency{Rounds: pinnedRounds, Gateway: figuresOf(gw), Direct: figuresOf(d), ThroughProxy: figuresOf(pr),
					P50OverheadMS:  round(ms(gw.percentile(0.5))-ms(d.percentile(0.5)), 2),
					P99OverheadMS:  round(ms(gw.percentile(0.99))-ms(d.percentile(0.99)), 2),
					P99OverProxyMS: round(ms(gw.percentile(0.99))-ms(pr.percentile(0.99)), 2),
					Added:          addedOf(gw, gwRounds),
					ProxyAdded:     addedOf(pr, prRounds),
					GatewayCPU:     cpuPerCallOf(gw),
				}
			} else {
				pinned = &pinnedLatency{NotMeasured: err.Error()}
			}
			d, gw, pr = sd, sg, sp
		}
		client.CloseIdleConnections()
		r := overheadRun{
			ERP:               t.erp,
			UpstreamLatencyMS: int(run.latency.Milliseconds()), Concurrency: run.callers,
			Gateway: figuresOf(gw), Direct: figuresOf(d),
			Ratio:                 ratio(gw.rps(), d.rps()),
			P50OverheadMS:         round(ms(gw.percentile(0.5))-ms(d.percentile(0.5)), 2),
			P99OverheadMS:         round(ms(gw.percentile(0.99))-ms(d.percentile(0.99)), 2),
			P99OverheadIntervalMS: interval,
			Added:                 added,
			ProxyAdded:            proxyAdded,
			GatewayCPU:            cpuPerCallOf(gw), DirectCPU: cpuPerCallOf(d),
			GatewayMachineCPU: round(gw.CPU.utilisation(), 3), DirectMachineCPU: round(d.CPU.utilisation(), 3),
			Pinned: pinned,
		}
		hop, spread, perCall := "", "", ""
		if a := r.Added; a != nil {
			perCall = fmt.Sprintf(" | added per call (latency minus the gateway's time with the ERP) p50 %s p99 %s ms, of which inside the gateway p50 %s p99 %s ms", f2(a.P50MS), f2(a.P99MS), f2(a.InsideP50MS), f2(a.InsideP99MS))
		}
		if a := r.ProxyAdded; a != nil {
			perCall += fmt.Sprintf("; a do-nothing proxy adds per call p50 %s p99 %s ms", f2(a.P50MS), f2(a.P99MS))
		}
		if iv := r.P99OverheadIntervalMS; len(iv) == 2 {
			spread = fmt.Sprintf(" (%.0f%% interval %s to %s)", intervalLevel*100, f2(iv[0]), f2(iv[1]))
		}
		if proxied != nil {
			f := figuresOf(pr)
			over99, over50 := round(ms(gw.percentile(0.99))-ms(pr.percentile(0.99)), 2), round(ms(gw.percentile(0.5))-ms(pr.percentile(0.5)), 2)
			r.ThroughProxy, r.P99OverProxyMS, r.P50OverProxyMS = &f, &over99, &over50
			hop = fmt.Sprintf(" | through a do-nothing proxy p50 %s p99 %s ms: the gateway adds p50 %s p99 %s ms beyond the extra hop",
				f2(f.P50MS), f2(f.P99MS), f2(over50), f2(over99))
			if pr.failures() > 0 {
				return nil, 0, 0, fmt.Errorf("%s, %d ms: failures through the proxy: %v", t.erp, r.UpstreamLatencyMS, pr.Outcomes)
			}
		}
		out = append(out, r)
		tab.add("gateway_overhead", fmt.Sprintf("%s, %d ms upstream, c=%d", t.erp, r.UpstreamLatencyMS, r.Concurrency),
			fmt.Sprintf("gateway %s/s p50 %s p99 %s ms | direct %s/s p50 %s p99 %s ms | ratio %s | p99 overhead %s ms%s | CPU/call gateway %s µs + postgres %s µs | machine busy %.0f%%",
				f1(r.Gateway.RPS), f2(r.Gateway.P50MS), f2(r.Gateway.P99MS), f1(r.Direct.RPS), f2(r.Direct.P50MS), f2(r.Direct.P99MS),
				f2(r.Ratio), f2(r.P99OverheadMS), spread, f1(r.GatewayCPU.Gateway), f1(r.GatewayCPU.Postgres), r.GatewayMachineCPU*100)+hop+perCall)
		if p := r.Pinned; p != nil && p.NotMeasured != "" {
			tab.add("", "gateway on its own core", "not measured: "+p.NotMeasured)
		} else if p != nil {
			pinnedAdded := ""
			if a := p.Added; a != nil {
				pinnedAdded = fmt.Sprintf(" | added per call p50 %s p99 %s ms, inside the gateway p50 %s p99 %s ms", f2(a.P50MS), f2(a.P99MS), f2(a.InsideP50MS), f2(a.InsideP99MS))
			}
			if a := p.ProxyAdded; a != nil {
				pinnedAdded += fmt.Sprintf("; the proxy adds per call p50 %s p99 %s ms", f2(a.P50MS), f2(a.P99MS))
			}
			tab.add("", fmt.Sprintf("%s, gateway on its own core", t.erp),
				fmt.Sprintf("gateway p50 %s p99 %s ms | direct p50 %s p99 %s ms | p99 overhead %s ms | through the proxy (on that core too) p99 %s ms: the gateway adds p99 %s ms beyond the hop | CPU/call gateway %s µs",
					f2(p.Gateway.P50MS), f2(p.Gateway.P99MS), f2(p.Direct.P50MS), f2(p.Direct.P99MS), f2(p.P99OverheadMS), f2(p.ThroughProxy.P99MS), f2(p.P99OverProxyMS), f1(p.GatewayCPU.Gateway))+pinnedAdded)
		}
		if n := r.Gateway.Calls; gw.failures() > 0 || d.failures() > 0 {
			return nil, 0, 0, fmt.Errorf("%s, %d ms: failures: gateway %v of %d, direct %v", t.erp, r.UpstreamLatencyMS, gw.Outcomes, n, d.Outcomes)
		}
	}
	if err := t.sim.setLatency(0); err != nil {
		return nil, 0, 0, err
	}
	return out, rows, len(captured), nil
}

// probeRows makes one overhead call and returns how many rows it returned.
func (b *bench) probeRows(ctx context.Context, gatewayURL string, t overheadTarget, token string) (int, error) {
	raw, err := mcpCall(ctx, http.DefaultClient, gatewayURL+"/service/mcp", token, t.tool, t.args)
	if err != nil {
		return 0, err
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return 0, err
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(out[t.rowsKey], &rows); err != nil || len(rows) == 0 {
		return 0, fmt.Errorf("%s returned no rows under %q: %s", t.tool, t.rowsKey, raw)
	}
	return len(rows), nil
}
