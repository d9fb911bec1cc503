package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

const replicaCallers = 64

type replicaRun struct {
	UpstreamLatencyMS int     `json:"upstream_latency_ms"`
	Concurrency       int     `json:"concurrency"`
	One               figures `json:"one_replica"`
	Two               figures `json:"two_replicas"`
	Ratio             float64 `json:"ratio"`
	// CPU per call by process, and the machine's busy share, for each.
	OneCPU        cpuPerCall `json:"one_replica_cpu_per_call"`
	TwoCPU        cpuPerCall `json:"two_replicas_cpu_per_call"`
	OneMachineCPU float64    `json:"one_replica_machine_cpu_utilisation"`
	TwoMachineCPU float64    `json:"two_replicas_machine_cpu_utilisation"`
	Bottleneck    string     `json:"bottleneck"`
	MachineShares cpuShares  `json:"two_replicas_cpu_shares"`
}

// cpuShares is each process's share of the CPU time the run used.
type cpuShares struct {
	LoadGenerator float64 `json:"load_generator"`
	Proxy         float64 `json:"proxy"`
	Simulator     float64 `json:"simulator"`
	Postgres      float64 `json:"postgres"`
	Gateways      float64 `json:"gateways"`
}

type invalidation struct {
	RevocationMS float64 `json:"token_revocation_ms"`
	RotationMS   float64 `json:"credential_rotation_ms"`
}

type replicasScenario struct {
	Name        string     `json:"name"`
	Machine     machineRef `json:"machine"`
	Concurrency int        `json:"concurrency"`
	// Headline: 0 ms upstream.
	OneReplicaRPS float64 `json:"one_replica_rps"`
	TwoReplicaRPS float64 `json:"two_replicas_rps"`
	Ratio         float64 `json:"ratio"`
	Bottleneck    string  `json:"bottleneck"`
	// Invalidation is how long a change made through one replica took to
	// take effect on the other (from the admin request's start).
	Invalidation invalidation `json:"invalidation"`
	Runs         []replicaRun `json:"runs"`
	Targets      []target     `json:"targets"`
	Notes        []string     `json:"notes,omitempty"`
}

// twoReplicas compares two replicas behind a round-robin proxy with one
// replica behind the same proxy, on one Postgres, then measures how fast a
// token revocation and a credential rotation made through one replica
// reach the other.
func (b *bench) twoReplicas(ctx context.Context, _ *gatewayProc, tab *table) (any, error) {
	sc := &replicasScenario{Name: "two_replicas", Machine: b.machine.ref(), Concurrency: replicaCallers}
	r1, err := b.startGateway(ctx, b.bins.plain, nil)
	if err != nil {
		return nil, err
	}
	defer r1.stop()
	r2, err := b.startGateway(ctx, b.bins.plain, nil)
	if err != nil {
		return nil, err
	}
	defer r2.stop()
	one, err := startProxy(ctx, []string{r1.URL})
	if err != nil {
		return nil, err
	}
	defer one.stop()
	two, err := startProxy(ctx, []string{r1.URL, r2.URL})
	if err != nil {
		return nil, err
	}
	defer two.stop()

	body := toolCall(1, overheadTool, overheadArgs)
	// The last token of each site is kept out of the load: the
	// invalidation measurement revokes one.
	tokens := b.tokens[:len(b.tokens)-len(b.sites)]
	load := func(proxy *proxyProcess, gws ...*gatewayProc) loadResult {
		steps := make([][]step, len(tokens))
		for i, tok := range tokens {
			steps[i] = []step{{method: http.MethodPost, url: proxy.URL + "/service/mcp", header: mcpHeader(tok), body: body}}
		}
		p := b.parts(gws...)
		p.proxy = proxy.pid()
		client := newLoadClient(replicaCallers)
		defer client.CloseIdleConnections()
		return runLoad(ctx, client, loadSpec{
			concurrency: replicaCallers, warmup: b.opts.warmup, duration: b.opts.window,
			call:   func(seq int64) []step { return steps[seq%int64(len(steps))] },
			check:  checkMCP,
			sample: p.sample,
		})
	}
	for _, lat := range upstreamLatencies {
		if err := b.sim.setLatency(lat); err != nil {
			return nil, err
		}
		o := load(one, r1)
		t := load(two, r1, r2)
		r := replicaRun{
			UpstreamLatencyMS: int(lat.Milliseconds()), Concurrency: replicaCallers,
			One: figuresOf(o), Two: figuresOf(t), Ratio: ratio(t.rps(), o.rps()),
			OneCPU: cpuPerCallOf(o), TwoCPU: cpuPerCallOf(t),
			OneMachineCPU: round(o.CPU.utilisation(), 3), TwoMachineCPU: round(t.CPU.utilisation(), 3),
			MachineShares: sharesOf(t.CPU),
		}
		r.Bottleneck = bottleneck(t.CPU, b.machine.Cores)
		sc.Runs = append(sc.Runs, r)
		tab.add("two_replicas", fmt.Sprintf("%d ms upstream, c=%d", r.UpstreamLatencyMS, r.Concurrency),
			fmt.Sprintf("one %s/s p99 %s ms | two %s/s p99 %s ms | ratio %s | bottleneck: %s",
				f1(r.One.RPS), f2(r.One.P99MS), f1(r.Two.RPS), f2(r.Two.P99MS), f2(r.Ratio), r.Bottleneck))
		if o.failures() > 0 || t.failures() > 0 {
			return nil, fmt.Errorf("%d ms: failures: one replica %v, two replicas %v", r.UpstreamLatencyMS, o.Outcomes, t.Outcomes)
		}
	}
	if err := b.sim.setLatency(0); err != nil {
		return nil, err
	}
	if sc.Invalidation, err = b.measureInvalidation(ctx, r1, r2); err != nil {
		return nil, err
	}
	head := sc.Runs[0]
	sc.OneReplicaRPS, sc.TwoReplicaRPS, sc.Ratio, sc.Bottleneck = head.One.RPS, head.Two.RPS, head.Ratio, head.Bottleneck
	best := slices.MaxFunc(sc.Runs, func(a, b replicaRun) int { return int((a.Ratio - b.Ratio) * 1000) })
	scaleTarget := target{Target: "two replicas >= 1.6 x one replica when the load generator and simulator are not the bottleneck",
		Value: best.Ratio, Unit: "ratio", Met: best.Ratio >= 1.6}
	if !scaleTarget.Met {
		scaleTarget.Note = "best of both latencies; bottleneck: " + best.Bottleneck
	}
	slowest := max(sc.Invalidation.RevocationMS, sc.Invalidation.RotationMS)
	sc.Targets = []target{
		scaleTarget,
		{Target: "token revocation and credential rotation reach every replica within 1 s", Value: slowest, Unit: "ms", Met: slowest <= 1000},
	}
	sc.Notes = []string{
		"both runs go through the same round-robin reverse proxy (its own process), so the ratio compares like with like",
		"bottleneck: the machine's CPU when its busy share is >= 90 %, else the process with the largest share; shares are of the CPU the run used",
		"revocation: DELETE a service token through replica A, then poll replica B every 2 ms until it answers 401; rotation: PUT another ERP user's API credential through A, then poll get_current_user on B until it names that user",
	}
	tab.add("", "invalidation", fmt.Sprintf("revocation reached the other replica in %s ms, credential rotation in %s ms", f1(sc.Invalidation.RevocationMS), f1(sc.Invalidation.RotationMS)))
	tab.add("", "targets", metMark(sc.Targets))
	return sc, nil
}

func sharesOf(u cpuUse) cpuShares {
	total := float64(u.client + u.proxy + u.sim + u.pg + u.gateways)
	if total == 0 {
		return cpuShares{}
	}
	s := func(d time.Duration) float64 { return round(float64(d)/total, 3) }
	return cpuShares{LoadGenerator: s(u.client), Proxy: s(u.proxy), Simulator: s(u.sim), Postgres: s(u.pg), Gateways: s(u.gateways)}
}

// bottleneck names what limited a run: the machine's CPU when it was
// (nearly) all busy, else the busiest process.
func bottleneck(u cpuUse, cores int) string {
	sh := sharesOf(u)
	parts := []struct {
		name  string
		share float64
	}{{"load generator", sh.LoadGenerator}, {"proxy", sh.Proxy}, {"simulator", sh.Simulator}, {"postgres", sh.Postgres}, {"gateways", sh.Gateways}}
	slices.SortFunc(parts, func(a, b struct {
		name  string
		share float64
	}) int {
		return int((b.share - a.share) * 1e6)
	})
	var desc []string
	for _, p := range parts {
		desc = append(desc, fmt.Sprintf("%s %.0f%%", p.name, p.share*100))
	}
	if util := u.utilisation(); util >= 0.9 {
		return fmt.Sprintf("machine CPU (%d cores %.0f%% busy; %s)", cores, util*100, strings.Join(desc, ", "))
	}
	return fmt.Sprintf("%s (machine %.0f%% busy; %s)", parts[0].name, u.utilisation()*100, strings.Join(desc, ", "))
}

// measureInvalidation revokes a token and rotates a credential through a,
// and times how long b keeps using the old ones.
func (b *bench) measureInvalidation(ctx context.Context, a, other *gatewayProc) (invalidation, error) {
	var inv invalidation
	api := &adminAPI{base: a.URL, token: b.env.adminToken, client: &http.Client{Timeout: 30 * time.Second}}
	client := &http.Client{Timeout: 30 * time.Second}

	// Revocation: the last token of the last site, cached on b first.
	site := b.sites[len(b.sites)-1]
	tok := site.Tokens[len(site.Tokens)-1]
	if _, err := mcpCall(ctx, client, other.URL+"/service/mcp", tok, "get_current_user", map[string]any{}); err != nil {
		return inv, err
	}
	var list struct {
		Tokens []struct {
			ID     string `json:"id"`
			Prefix string `json:"prefix"`
		} `json:"service_tokens"`
	}
	if err := api.do(ctx, http.MethodGet, "/sites/"+site.ID+"/service-tokens", nil, &list); err != nil {
		return inv, err
	}
	id := ""
	for _, t := range list.Tokens {
		if t.Prefix != "" && strings.HasPrefix(tok, t.Prefix) {
			id = t.ID
		}
	}
	if id == "" {
		return inv, fmt.Errorf("token to revoke not listed")
	}
	start := time.Now()
	if err := api.do(ctx, http.MethodDelete, "/sites/"+site.ID+"/service-tokens/"+id, nil, nil); err != nil {
		return inv, err
	}
	d, err := pollUntil(ctx, start, func() (bool, error) {
		_, err := mcpCall(ctx, client, other.URL+"/service/mcp", tok, "get_current_user", map[string]any{})
		return err != nil && strings.Contains(err.Error(), "HTTP 401"), nil
	})
	if err != nil {
		return inv, fmt.Errorf("revocation: %w", err)
	}
	inv.RevocationMS = ms(d)

	// Rotation: another site's credential becomes another ERP user's.
	site = b.sites[len(b.sites)-2]
	tok = site.Tokens[0]
	user := func() (string, error) {
		raw, err := mcpCall(ctx, client, other.URL+"/service/mcp", tok, "get_current_user", map[string]any{})
		if err != nil {
			return "", err
		}
		var u struct {
			User string `json:"user"`
		}
		return u.User, json.Unmarshal(raw, &u)
	}
	if u, err := user(); err != nil || u != b.sim.User {
		return inv, fmt.Errorf("before rotation: user %q, %v", u, err)
	}
	start = time.Now()
	if err := api.do(ctx, http.MethodPut, "/sites/"+site.ID+"/connections/api_token", map[string]any{
		"credentials": map[string]string{"api_key": b.sim.AltAPIKey, "api_secret": b.sim.AltSecret},
	}, nil); err != nil {
		return inv, err
	}
	d, err = pollUntil(ctx, start, func() (bool, error) {
		u, err := user()
		return u == b.sim.AltUser, err
	})
	if err != nil {
		return inv, fmt.Errorf("rotation: %w", err)
	}
	inv.RotationMS = ms(d)
	return inv, nil
}

// pollUntil calls done every 2 ms until it reports true, and returns the
// time since start; it gives up after 30 s.
func pollUntil(ctx context.Context, start time.Time, done func() (bool, error)) (time.Duration, error) {
	deadline := start.Add(30 * time.Second)
	for {
		ok, err := done()
		if err != nil {
			return 0, err
		}
		if ok {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no effect after 30 s")
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}
