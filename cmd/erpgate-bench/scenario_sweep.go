package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"time"
)

var sweepLevels = []int{1, 16, 128, 1000}

type sweepLevel struct {
	Concurrency int     `json:"concurrency"`
	RPS         float64 `json:"rps"`
	P50MS       float64 `json:"p50_ms"`
	P99MS       float64 `json:"p99_ms"`
	Calls       int     `json:"calls"`
	// Errors counts every failed call by outcome; RATE_LIMITED would be
	// the only acceptable one, and the limits are raised so it should not
	// appear either.
	Errors map[string]int `json:"errors,omitempty"`
	// Memory and goroutines of the gateway process.
	IdleRSSMiB    float64 `json:"rss_before_mib"`
	PeakRSSMiB    float64 `json:"peak_rss_mib"`
	Goroutines    int     `json:"peak_goroutines"`
	GatewayCPUUS  float64 `json:"gateway_cpu_us_per_call"`
	PostgresCPUUS float64 `json:"postgres_cpu_us_per_call"`
	MachineCPU    float64 `json:"machine_cpu_utilisation"`
}

type sweepRun struct {
	UpstreamLatencyMS int `json:"upstream_latency_ms"`
	// Upstream is how the gateway reached the simulator: "HTTP/1.1" (plain
	// HTTP) or "HTTPS, HTTP/2"; UpstreamHTTP2Share is the share of the
	// simulator's requests that came over HTTP/2.
	Upstream           string       `json:"upstream"`
	UpstreamHTTP2Share float64      `json:"upstream_http2_share"`
	Levels             []sweepLevel `json:"levels"`
	// MemPerInFlightKiB is the gateway's extra peak RSS per extra call in
	// flight between 128 and 1,000 callers: the marginal cost of a call,
	// free of the process's fixed memory.
	MemPerInFlightKiB float64 `json:"mem_per_in_flight_kib"`
	// GoroutinesPerInFlight is the same slope for goroutines.
	GoroutinesPerInFlight float64 `json:"goroutines_per_in_flight"`
}

type sweepScenario struct {
	Name        string     `json:"name"`
	Machine     machineRef `json:"machine"`
	Concurrency []int      `json:"concurrency"`
	Sites       int        `json:"sites"`
	Users       int        `json:"users"`
	Tool        string     `json:"tool"`
	// Headline: 1,000 callers at 20 ms upstream.
	RPS               float64    `json:"rps"`
	P99MS             float64    `json:"p99_ms"`
	PeakRSSMiB        float64    `json:"peak_rss_mib"`
	PeakGoroutines    int        `json:"peak_goroutines"`
	MemPerInFlightKiB float64    `json:"mem_per_in_flight_kib"`
	Errors            int        `json:"errors"`
	Runs              []sweepRun `json:"runs"`
	Targets           []target   `json:"targets"`
	Notes             []string   `json:"notes,omitempty"`
}

// concurrencySweep runs 1, 16, 128 and 1,000 callers; call k uses token
// k mod 1,000, so every level spreads over all sites and users. Each
// latency gets a fresh replica so that memory figures are its own.
func (b *bench) concurrencySweep(ctx context.Context, _ *gatewayProc, tab *table) (any, error) {
	sc := &sweepScenario{Name: "concurrency_sweep", Machine: b.machine.ref(), Concurrency: sweepLevels,
		Sites: len(b.sites), Users: len(b.tokens), Tool: overheadTool}
	body := toolCall(1, overheadTool, overheadArgs)
	var errorsSeen int
	type upstream struct {
		latency time.Duration
		sim     *simProcess
		tokens  []string
		name    string
	}
	var upstreams []upstream
	for _, lat := range upstreamLatencies {
		upstreams = append(upstreams, upstream{lat, b.sim, b.tokens, "HTTP/1.1"})
	}
	if b.tlsSim != nil {
		// ERPs are reached over HTTPS in production, and offer HTTP/2
		// there, which carries a site's calls on one connection.
		upstreams = append(upstreams, upstream{20 * time.Millisecond, b.tlsSim, b.tlsTokens, "HTTPS, HTTP/2"})
	}
	for _, up := range upstreams {
		lat := up.latency
		if err := up.sim.setLatency(lat); err != nil {
			return nil, err
		}
		g, err := b.startGateway(ctx, b.bins.pprof, nil)
		if err != nil {
			return nil, err
		}
		if _, err := up.sim.stats(true); err != nil {
			g.stop()
			return nil, err
		}
		run := sweepRun{UpstreamLatencyMS: int(lat.Milliseconds()), Upstream: up.name}
		label := fmt.Sprintf("%d ms upstream", run.UpstreamLatencyMS)
		if up.sim != b.sim {
			label += ", " + up.name
		}
		for _, n := range sweepLevels {
			lvl, err := b.sweepLevel(ctx, g, up.sim, up.tokens, n, body, lat, up.sim != b.sim)
			if err != nil {
				g.stop()
				return nil, err
			}
			for code, c := range lvl.Errors {
				if code != "RATE_LIMITED" {
					errorsSeen += c
				}
			}
			run.Levels = append(run.Levels, lvl)
			tab.add("concurrency_sweep", fmt.Sprintf("%s, c=%d", label, n),
				fmt.Sprintf("%s/s p50 %s p99 %s ms | peak RSS %s MiB | goroutines %d | gateway %s µs + postgres %s µs per call | errors %v",
					f1(lvl.RPS), f2(lvl.P50MS), f2(lvl.P99MS), f1(lvl.PeakRSSMiB), lvl.Goroutines, f1(lvl.GatewayCPUUS), f1(lvl.PostgresCPUUS), lvl.Errors))
		}
		g.stop()
		st, err := up.sim.stats(false)
		if err != nil {
			return nil, err
		}
		if st.Requests > 0 {
			run.UpstreamHTTP2Share = round(float64(st.HTTP2)/float64(st.Requests), 3)
		}
		lo, hi := run.Levels[len(run.Levels)-2], run.Levels[len(run.Levels)-1]
		extra := float64(hi.Concurrency - lo.Concurrency)
		run.MemPerInFlightKiB = round((hi.PeakRSSMiB-lo.PeakRSSMiB)*1024/extra, 1)
		run.GoroutinesPerInFlight = round(float64(hi.Goroutines-lo.Goroutines)/extra, 2)
		tab.add("", label,
			fmt.Sprintf("memory per in-flight call %s KiB, goroutines per in-flight call %s (slope 128 → 1,000 callers)", f1(run.MemPerInFlightKiB), f2(run.GoroutinesPerInFlight)))
		sc.Runs = append(sc.Runs, run)
	}
	for _, up := range upstreams {
		if err := up.sim.setLatency(0); err != nil {
			return nil, err
		}
	}
	head := sc.Runs[len(upstreamLatencies)-1]
	top := head.Levels[len(head.Levels)-1]
	sc.RPS, sc.P99MS, sc.PeakRSSMiB, sc.PeakGoroutines = top.RPS, top.P99MS, top.PeakRSSMiB, top.Goroutines
	sc.MemPerInFlightKiB, sc.Errors = head.MemPerInFlightKiB, errorsSeen
	worst := 0.0
	for _, r := range sc.Runs[:len(upstreamLatencies)] {
		worst = max(worst, r.MemPerInFlightKiB)
	}
	sc.Targets = []target{
		{Target: "memory <= 64 KiB per concurrent in-flight call at 1,000 callers, ERP on plain HTTP/1.1 (worst of 0 ms and 20 ms upstream)", Value: worst, Unit: "KiB", Met: worst <= 64},
	}
	if len(sc.Runs) > len(upstreamLatencies) {
		h2 := sc.Runs[len(sc.Runs)-1]
		sc.Targets = append(sc.Targets, target{Target: "memory <= 64 KiB per concurrent in-flight call at 1,000 callers, ERP on HTTPS speaking HTTP/2 (20 ms upstream)", Value: h2.MemPerInFlightKiB, Unit: "KiB", Met: h2.MemPerInFlightKiB <= 64})
	}
	sc.Targets = append(sc.Targets, target{Target: "no error other than RATE_LIMITED (limits raised so they do not bind)", Value: float64(errorsSeen), Unit: "calls", Met: errorsSeen == 0})
	sc.Notes = []string{
		"100 sites, each on its own simulator port; 10 service tokens per site (1,000 users); call k uses token k mod 1,000",
		"peak RSS is the gateway's VmHWM, reset before each level; goroutines are sampled from the pprof build's goroutine profile every 200 ms",
		"memory per in-flight call is the slope of peak RSS between 128 and 1,000 callers, so the process's fixed memory (binary, caches, pools) does not count",
		"the HTTPS run uses another 100 sites on a simulator serving a self-signed certificate the gateway trusts through SSL_CERT_FILE; upstream_http2_share says how many of its requests came over HTTP/2",
	}
	tab.add("", "targets", metMark(sc.Targets))
	return sc, nil
}

func (b *bench) sweepLevel(ctx context.Context, g *gatewayProc, sim *simProcess, tokens []string, n int, body []byte, latency time.Duration, tls bool) (sweepLevel, error) {
	steps := make([][]step, len(tokens))
	for i, tok := range tokens {
		steps[i] = []step{{method: http.MethodPost, url: g.URL + "/service/mcp", header: mcpHeader(tok), body: body}}
	}
	rss, _ := memStatus(g.PID())
	resetPeakRSS(g.PID())
	var peakRSS, peakG atomic.Int64
	sampler := func(wctx context.Context) {
		if b.opts.profileDir != "" && n == sweepLevels[len(sweepLevels)-1] {
			// Mid-window: what the gateway holds with every caller in flight.
			go func() {
				time.Sleep(b.opts.window / 2)
				name := fmt.Sprintf("sweep-%dms-c%d", latency.Milliseconds(), n)
				if tls {
					name += "-https"
				}
				prefix := filepath.Join(b.opts.profileDir, name)
				_ = g.snapshot(wctx, "heap", "", prefix+"-heap.pprof")
				_ = g.snapshot(wctx, "goroutine", "?debug=1", prefix+"-goroutines.txt")
				_ = g.snapshot(wctx, "heap", "?debug=1", prefix+"-memstats.txt")
				_ = g.profile(wctx, time.Second, prefix+"-cpu.pprof")
			}()
		}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			if r, _ := memStatus(g.PID()); r > peakRSS.Load() {
				peakRSS.Store(r)
			}
			if i%4 == 0 {
				if n := int64(g.goroutines()); n > peakG.Load() {
					peakG.Store(n)
				}
			}
			select {
			case <-wctx.Done():
				return
			case <-tick.C:
			}
		}
	}
	client := newLoadClient(n)
	res := runLoad(ctx, client, loadSpec{
		concurrency: n, warmup: b.opts.warmup, duration: b.opts.window,
		call:     func(seq int64) []step { return steps[seq%int64(len(steps))] },
		check:    checkMCP,
		onWindow: sampler,
		sample:   b.sweepParts(g, sim).sample,
	})
	client.CloseIdleConnections()
	if _, hwm := memStatus(g.PID()); hwm > peakRSS.Load() {
		peakRSS.Store(hwm)
	}
	f := figuresOf(res)
	return sweepLevel{
		Concurrency: n, RPS: f.RPS, P50MS: f.P50MS, P99MS: f.P99MS, Calls: f.Calls, Errors: f.Errors,
		IdleRSSMiB: mib(rss), PeakRSSMiB: mib(peakRSS.Load()), Goroutines: int(peakG.Load()),
		GatewayCPUUS:  round(float64(res.perCall(res.CPU.gateways))/1e3, 1),
		PostgresCPUUS: round(float64(res.perCall(res.CPU.pg))/1e3, 1),
		MachineCPU:    round(res.CPU.utilisation(), 3),
	}, nil
}

func mib(b int64) float64 { return round(float64(b)/(1<<20), 1) }

// sweepParts are the processes a sweep level through g against sim
// accounts for.
func (b *bench) sweepParts(g *gatewayProc, sim *simProcess) parts {
	p := b.parts(g)
	p.sim = sim.pid()
	return p
}
