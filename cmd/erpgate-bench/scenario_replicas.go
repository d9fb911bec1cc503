package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

const replicaCallers = 64

// replicaQuotaCores is each replica's CPU quota in the quota run, as a
// container's CPU limit would set it: small enough that two replicas and
// everything else on this two-core machine leave it about a third idle,
// so that the replicas, not the machine, limit throughput.
const replicaQuotaCores = 0.2

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
	// The quota run only: each replica's CPU quota in cores, what limited
	// the one-replica half, and the share of their quota the replicas
	// used in each half.
	ReplicaCPUQuota float64 `json:"replica_cpu_quota_cores,omitempty"`
	OneBottleneck   string  `json:"one_replica_bottleneck,omitempty"`
	OneQuotaUsed    float64 `json:"one_replica_quota_used,omitempty"`
	TwoQuotaUsed    float64 `json:"two_replicas_quota_used,omitempty"`
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
	one, err := startProxy(ctx, []string{r1.URL}, false)
	if err != nil {
		return nil, err
	}
	defer one.stop()
	two, err := startProxy(ctx, []string{r1.URL, r2.URL}, false)
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
		r.Bottleneck = bottleneck(t.CPU, b.machine.Cores, 0, 0)
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
	// The quota run: each replica in a cgroup of its own with a CPU
	// quota, so that the replicas are what limits throughput, as when
	// each runs on cores of its own. When it can be measured, the scale
	// target is judged on it.
	qr, err := b.quotaRun(ctx, load, one, two, r1, r2)
	switch {
	case err != nil:
		sc.Notes = append(sc.Notes, "quota run not measured: "+err.Error())
		if !scaleTarget.Met {
			scaleTarget.Note += "; the quota run, where the replicas are the bottleneck, was not measured: " + err.Error()
		}
	default:
		sc.Runs = append(sc.Runs, qr)
		tab.add("two_replicas", fmt.Sprintf("0 ms upstream, c=%d, CPU quota %.2g core each", qr.Concurrency, qr.ReplicaCPUQuota),
			fmt.Sprintf("one %s/s p99 %s ms | two %s/s p99 %s ms | ratio %s | bottleneck: one %s; two %s",
				f1(qr.One.RPS), f2(qr.One.P99MS), f1(qr.Two.RPS), f2(qr.Two.P99MS), f2(qr.Ratio), qr.OneBottleneck, qr.Bottleneck))
		limited := strings.HasPrefix(qr.OneBottleneck, quotaBottleneck) && strings.HasPrefix(qr.Bottleneck, quotaBottleneck)
		scaleTarget.Value, scaleTarget.Met = qr.Ratio, limited && qr.Ratio >= 1.6
		scaleTarget.Note = fmt.Sprintf("measured with each replica held to %.2g core (a cgroup CPU quota), 0 ms upstream; bottleneck: one replica: %s; two: %s", qr.ReplicaCPUQuota, qr.OneBottleneck, qr.Bottleneck)
		if !limited {
			scaleTarget.Note += "; the replicas were not the only limit, so the condition does not hold"
		}
	}
	slowest := max(sc.Invalidation.RevocationMS, sc.Invalidation.RotationMS)
	sc.Targets = []target{
		scaleTarget,
		{Target: "token revocation and credential rotation reach every replica within 1 s", Value: slowest, Unit: "ms", Met: slowest <= 1000},
	}
	sc.Notes = []string{
		"both runs go through the same round-robin reverse proxy (its own process), so the ratio compares like with like",
		"bottleneck: the machine's CPU when its busy share is >= 90 %, else the process with the largest share; shares are of the CPU the run used",
		fmt.Sprintf("quota run: at 0 ms upstream, each replica in a cgroup of its own with a CPU quota of %.2g core (CFS bandwidth, %d ms period), as a container limit would set it, so that the replicas limit throughput as they would on cores of their own; its bottleneck is the replicas' quota when they used at least 85 %% of it and the machine was under 90 %% busy", replicaQuotaCores, quotaPeriodMicros/1000),
		"revocation: DELETE a service token through replica A, then poll replica B every 2 ms until it answers 401; rotation: PUT another ERP user's API credential through A, then poll get_current_user on B until it names that user",
	}
	tab.add("", "invalidation", fmt.Sprintf("revocation reached the other replica in %s ms, credential rotation in %s ms", f1(sc.Invalidation.RevocationMS), f1(sc.Invalidation.RotationMS)))
	tab.add("", "targets", metMark(sc.Targets))
	return sc, nil
}

// quotaRun measures one replica and two under a CPU quota each, through
// the same proxies as the other runs.
func (b *bench) quotaRun(ctx context.Context, load func(*proxyProcess, ...*gatewayProc) loadResult, one, two *proxyProcess, r1, r2 *gatewayProc) (replicaRun, error) {
	run := replicaRun{Concurrency: replicaCallers, ReplicaCPUQuota: replicaQuotaCores}
	var quotas []*cpuQuota
	defer func() {
		for _, q := range quotas {
			_ = q.remove()
		}
	}()
	for i, g := range []*gatewayProc{r1, r2} {
		q, err := newCPUQuota(fmt.Sprintf("erpgate-bench-%d-%d", os.Getpid(), i), replicaQuotaCores)
		if err != nil {
			return run, err
		}
		quotas = append(quotas, q)
		if err := q.add(g.PID()); err != nil {
			return run, err
		}
	}
	if err := b.sim.setLatency(0); err != nil {
		return run, err
	}
	o := load(one, r1)
	t := load(two, r1, r2)
	if o.failures() > 0 || t.failures() > 0 {
		return run, fmt.Errorf("failures: one replica %v, two replicas %v", o.Outcomes, t.Outcomes)
	}
	run.One, run.Two, run.Ratio = figuresOf(o), figuresOf(t), ratio(t.rps(), o.rps())
	run.OneCPU, run.TwoCPU = cpuPerCallOf(o), cpuPerCallOf(t)
	run.OneMachineCPU, run.TwoMachineCPU = round(o.CPU.utilisation(), 3), round(t.CPU.utilisation(), 3)
	run.MachineShares = sharesOf(t.CPU)
	run.OneQuotaUsed, run.TwoQuotaUsed = quotaUsed(o.CPU, 1), quotaUsed(t.CPU, 2)
	run.OneBottleneck = bottleneck(o.CPU, b.machine.Cores, replicaQuotaCores, 1)
	run.Bottleneck = bottleneck(t.CPU, b.machine.Cores, replicaQuotaCores, 2)
	return run, nil
}

// quotaUsed is the share of n replicas' CPU quota they used.
func quotaUsed(u cpuUse, n int) float64 {
	if u.wall <= 0 {
		return 0
	}
	return round(float64(u.gateways)/(replicaQuotaCores*float64(n)*float64(u.wall)), 3)
}

// quotaBottleneck begins the bottleneck of a run limited by the replicas'
// CPU quota.
const quotaBottleneck = "the replicas' CPU quota"

func sharesOf(u cpuUse) cpuShares {
	total := float64(u.client + u.proxy + u.sim + u.pg + u.gateways)
	if total == 0 {
		return cpuShares{}
	}
	s := func(d time.Duration) float64 { return round(float64(d)/total, 3) }
	return cpuShares{LoadGenerator: s(u.client), Proxy: s(u.proxy), Simulator: s(u.sim), Postgres: s(u.pg), Gateways: s(u.gateways)}
}

// bottleneck names what limited a run: the machine's CPU when it was
// (nearly) all busy; else, for n replicas under a CPU quota of quota cores
// each, the quota when they used at least 85 % of it; else the busiest
// process.
func bottleneck(u cpuUse, cores int, quota float64, n int) string {
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
	if quota > 0 && u.wall > 0 {
		if used := float64(u.gateways) / (quota * float64(n) * float64(u.wall)); used >= 0.85 {
			return fmt.Sprintf("%s (%.0f%% of %d × %.2g core used; machine %.0f%% busy; %s)", quotaBottleneck, used*100, n, quota, u.utilisation()*100, strings.Join(desc, ", "))
		}
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
