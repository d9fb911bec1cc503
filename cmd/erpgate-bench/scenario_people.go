package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e/signin"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// The people_path scenario compares the four ways a call reaches the same
// tool at 16 callers and 0 ms upstream, in one run: service tokens and
// OAuth (people signed in through their ERP), each on protocol 2025-11-25
// and 2026-07-28 (its _meta, Mcp-Method and Mcp-Name, no initialize). Every
// figure is a ratio to the service path on 2025-11-25, whose rounds
// alternate with the others'.

// callPath is one way of reaching the tool.
type callPath struct {
	name   string
	oauth  bool
	modern bool
}

var callPaths = []callPath{
	{"service_2025-11-25", false, false},
	{"service_2026-07-28", false, true},
	{"oauth_2025-11-25", true, false},
	{"oauth_2026-07-28", true, true},
}

// peopleRounds is how many rounds each path gets (of half a window each),
// alternating with the others'. Twenty: on a shared machine a round of
// 2 s is sometimes a third slower than the others, and with ten rounds
// one such round moves a ratio by 0.03.
const peopleRounds = 20

type pathRun struct {
	ERP     string     `json:"erp"`
	Path    string     `json:"path"`
	Gateway figures    `json:"gateway"`
	CPU     cpuPerCall `json:"gateway_cpu_per_call"`
	// GatewayPostgresUS is the gateway's CPU per call plus its share of
	// PostgreSQL's.
	GatewayPostgresUS float64 `json:"gateway_plus_postgres_cpu_us_per_call"`
	// RPSRatio and CPURatio compare the path with the service path on
	// 2025-11-25 (calls per second; gateway plus PostgreSQL CPU per call).
	RPSRatio float64 `json:"rps_ratio_to_service_2025"`
	CPURatio float64 `json:"cpu_ratio_to_service_2025"`
	// CPURatioPerSimulator is CPURatio with each side divided by the
	// simulator's CPU per call in the same windows: a rough control for how
	// fast the machine was in each path's windows. The simulator answers
	// the same request on both service paths (with a bearer token on the
	// OAuth ones), but its CPU per call also moves with the rate a path
	// drives. Reported, not a target.
	CPURatioPerSimulator float64 `json:"cpu_ratio_to_service_2025_per_simulator_cpu"`
	// RoundCPURatios are CPURatio per round: the path's window against
	// the service path's window of the same round, a few seconds apart.
	// Their spread is how much one window moves the ratio.
	RoundCPURatios []float64 `json:"cpu_ratio_to_service_2025_per_round"`
	// RoundGatewayUS and RoundPostgresUS are the path's CPU per call in
	// each round, to tell which of the two moved a round's ratio.
	RoundGatewayUS  []float64 `json:"gateway_cpu_us_per_call_per_round"`
	RoundPostgresUS []float64 `json:"postgres_cpu_us_per_call_per_round"`
	// MachineCPU is how busy the whole machine was.
	MachineCPU float64 `json:"machine_cpu_utilisation"`
	// OwnCore says whether the gateway had a core of its own (the
	// issue's layout), which needs two CPUs.
	OwnCore bool `json:"gateway_on_own_core"`
	// Added is what the gateway added to each call beyond its time with
	// the ERP (Server-Timing), to tell erpgate's own time from the ERP's.
	Added *addedFigures `json:"gateway_added_per_call,omitempty"`
}

type peopleScenario struct {
	Name        string     `json:"name"`
	Machine     machineRef `json:"machine"`
	Concurrency int        `json:"concurrency"`
	Runs        []pathRun  `json:"runs"`
	// Hops are the floor: the same ERP requests sent through a do-nothing
	// reverse proxy in the gateway's place, in the same rounds.
	Hops    []hopRun `json:"do_nothing_proxy"`
	Targets []target `json:"targets"`
	Notes   []string `json:"notes,omitempty"`
}

// hopRun is the ERP requests of one call sent at 16 callers through a
// do-nothing reverse proxy (its own process, reading each answer whole as
// erpgate does): the CPU any Go net/http hop spends on the call on this
// machine, with no gateway logic at all.
type hopRun struct {
	ERP   string  `json:"erp"`
	RPS   float64 `json:"rps"`
	CPUUS float64 `json:"proxy_cpu_us_per_call"`
	// GatewayShare is the proxy's CPU per call over the service path's
	// gateway CPU per call (2025-11-25) in the same run.
	GatewayShare float64 `json:"share_of_service_2025_gateway_cpu"`
	OwnCore      bool    `json:"proxy_on_own_core"`
}

// peopleTarget is one ERP's sites, with a service token and a signed-in
// person's access token on each.
type peopleTarget struct {
	erp     string
	sim     *simProcess
	tool    string
	args    map[string]any
	sites   []benchSite
	service []string
	people  []string
	// rowsKey is the result's array of rows.
	rowsKey string
}

// overhead is t as the overhead scenario's probe calls see it.
func (t peopleTarget) overhead() overheadTarget {
	return overheadTarget{erp: t.erp, sim: t.sim, tool: t.tool, args: t.args, rowsKey: t.rowsKey, sites: t.sites, tokens: t.service}
}

func (b *bench) peoplePath(ctx context.Context, g *gatewayProc, tab *table) (any, error) {
	sc := &peopleScenario{Name: "people_path", Machine: b.machine.ref(), Concurrency: overheadCallers}
	frappe := peopleTarget{erp: "frappe", sim: b.sim, tool: overheadTool, args: overheadArgs, rowsKey: "data", sites: b.sites[:overheadCallers]}
	for _, s := range frappe.sites {
		frappe.service = append(frappe.service, s.Tokens[0])
	}
	acu, err := b.acumaticaTarget(ctx, g, "acup")
	if err != nil {
		return nil, err
	}
	defer acu.sim.stop()
	acumatica := peopleTarget{erp: "acumatica", sim: acu.sim, tool: acu.tool, args: acu.args, sites: acu.sites, service: acu.tokens, rowsKey: acu.rowsKey}
	for _, t := range []*peopleTarget{&frappe, &acumatica} {
		if err := b.signPeopleIn(ctx, g, t); err != nil {
			return nil, fmt.Errorf("%s: %w", t.erp, err)
		}
		runs, hop, err := b.pathRuns(ctx, g, tab, *t)
		if err != nil {
			return nil, err
		}
		sc.Runs = append(sc.Runs, runs...)
		sc.Hops = append(sc.Hops, hop)
		sc.Targets = append(sc.Targets, pathTargets(t.erp, runs)...)
	}
	sc.Notes = append(sc.Notes,
		fmt.Sprintf("16 callers, one site each, 0 ms upstream; Frappe %s and Acumatica %s (20 rows); %d rounds of %s per path, the paths alternating", overheadTool, acu.tool, peopleRounds, time.Duration(0.5*float64(b.opts.window))),
		"oauth: each site got an OAuth application at the simulator, and a person signed in through the real flow (registration, authorization with PKCE, the ERP's login, consent, code exchange) before measuring, so every measured call is a warm call of a signed-in user",
		"2026-07-28: every request carries _meta (protocol version, client info, capabilities) and the Mcp-Method and Mcp-Name headers, with no initialize",
		"do_nothing_proxy: the ERP requests one service call makes (captured from a gateway call), sent by the same callers through httputil.ReverseProxy in its own process, which reads each answer whole; its rounds alternate with the paths' rounds",
		"layout, as the issue measured: the gateway (and the proxy) alone on the last CPU; the load generator, the simulator and PostgreSQL on the others. The load generator writes each request's bytes on a keep-alive connection and reads the answer with http.ReadResponse (wireCaller); the simulator answers each request as it did the first time, from the bytes it kept (replay mode), so that their core keeps up and the gateway bounds the rate")
	tab.add("", "targets", metMark(sc.Targets))
	return sc, nil
}

// signPeopleIn gives each site an OAuth application at the simulator and
// signs a person in to each site through erpgate.
func (b *bench) signPeopleIn(ctx context.Context, g *gatewayProc, t *peopleTarget) error {
	api := &adminAPI{base: g.URL, token: b.env.adminToken, client: newLoadClient(8)}
	// One MCP client, as one person's AI client, signs in to every site.
	clientID, err := signin.Register(ctx, g.URL)
	if err != nil {
		return err
	}
	t.people = make([]string, len(t.sites))
	errs := make(chan error, len(t.sites))
	var wg sync.WaitGroup
	for i, s := range t.sites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client, err := t.sim.registerClient(g.URL + sites.SiteCallbackPath(s.Slug))
			if err == nil {
				err = api.do(ctx, http.MethodPut, "/sites/"+s.ID+"/connections/oauth",
					map[string]any{"credentials": map[string]string{"client_id": client.ID, "client_secret": client.Secret}}, nil)
			}
			var tok signin.Tokens
			if err == nil {
				tok, err = signin.SignIn(ctx, g.URL, clientID, g.URL+"/sites/"+s.Slug+"/mcp", t.sim.Person)
			}
			if err != nil {
				errs <- fmt.Errorf("sign in to %s: %w", s.Slug, err)
				return
			}
			t.people[i] = tok.AccessToken
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// pathCall is caller i's request on path p.
func (t peopleTarget) pathCall(g *gatewayProc, p callPath, i int) step {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	url := g.URL + "/service/mcp"
	if p.oauth {
		url = g.URL + "/sites/" + t.sites[i].Slug + "/mcp"
		h.Set("Authorization", "Bearer "+t.people[i])
	} else {
		h.Set("X-Erpgate-Service-Token", t.service[i])
	}
	params := map[string]any{"name": t.tool, "arguments": t.args}
	if p.modern {
		const version = "2026-07-28"
		h.Set("Mcp-Protocol-Version", version)
		h.Set("Mcp-Method", "tools/call")
		h.Set("Mcp-Name", t.tool)
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    version,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "erpgate-bench", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
	} else {
		h.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	return step{method: http.MethodPost, url: url, header: h, body: body}
}

func (b *bench) pathRuns(ctx context.Context, g *gatewayProc, tab *table, t peopleTarget) ([]pathRun, hopRun, error) {
	if err := t.sim.setLatency(0); err != nil {
		return nil, hopRun{}, err
	}
	hop, err := b.hopSteps(ctx, g, t)
	if err != nil {
		return nil, hopRun{}, err
	}
	px, err := startProxy(ctx, siteURLs(t.sites), true)
	if err != nil {
		return nil, hopRun{}, err
	}
	defer px.stop()
	for i := range hop {
		hop[i] = viaProxy(hop[i], t.sites[i].BaseURL, px.URL)
	}
	hp := parts{sim: t.sim.pid(), proxy: px.pid()}
	p := b.parts(g)
	p.sim = t.sim.pid()
	client := newLoadClient(overheadCallers)
	defer client.CloseIdleConnections()
	calls := make([][][]step, len(callPaths))
	for k, path := range callPaths {
		calls[k] = make([][]step, overheadCallers)
		for i := range overheadCallers {
			calls[k][i] = []step{t.pathCall(g, path, i)}
		}
	}
	// results[len(callPaths)] is the proxy's.
	results := make([]loadResult, len(callPaths)+1)
	// rounds[k][j] is path k's window in round j.
	rounds := make([][]loadResult, len(callPaths)+1)
	warmup := b.opts.warmup
	// The layout: the gateway (and the proxy, in its rounds) on
	// a core of its own; the load generator, the simulator and PostgreSQL
	// on the other. The load generator is the light one (wireCaller) and
	// the simulator replays its first answer to each request, so that
	// their core keeps up and the gateway is what bounds the rate: CPU per
	// call is then what a busy gateway spends, not what wake-ups of an
	// idle one cost.
	alone := false
	if undo, err := ownCore([]int{g.PID(), px.pid()}, []int{t.sim.pid()}, b.pg.pid()); err == nil {
		defer undo()
		alone = true
	} else {
		fmt.Println("people_path: the gateway shares the CPUs:", err)
	}
	if err := t.sim.replaying(true); err != nil {
		return nil, hopRun{}, err
	}
	defer func() { _ = t.sim.replaying(false) }()
	// Each round runs the paths and the proxy in turn, starting one later
	// each round: a window that follows another differs from one that
	// follows the proxy's (the gateway idle, its deferred work done), and
	// rotating the order spreads that over every path alike.
	for round := range peopleRounds {
		for _, k := range roundOrder(round, len(results)) {
			spec := loadSpec{
				concurrency: overheadCallers, warmup: warmup, duration: time.Duration(0.5 * float64(b.opts.window)),
				call:   func(seq int64) []step { return calls[k][seq%overheadCallers] },
				check:  sampledCheck(checkMCP, 16),
				sample: p.sample,
				wire:   true,
			}
			name := "do-nothing proxy"
			if k == len(callPaths) {
				spec.call = func(seq int64) []step { return hop[seq%overheadCallers] }
				spec.check, spec.sample = checkDirect, hp.sample
			} else {
				name = callPaths[k].name
				if b.opts.profileDir != "" {
					// Every round: `go tool pprof` merges a path's files,
					// long enough to compare two paths' profiles.
					path := filepath.Join(b.opts.profileDir, fmt.Sprintf("people-%s-%s-round%d.pprof", t.erp, name, round))
					spec.onWindow = func(wctx context.Context) {
						if err := g.profile(wctx, max(spec.duration-time.Second, time.Second), path); err != nil {
							fmt.Println("profile:", err)
						}
					}
				}
			}
			r := runLoad(ctx, client, spec)
			if r.failures() > 0 {
				return nil, hopRun{}, fmt.Errorf("%s %s: failures %v of %d calls", t.erp, name, r.Outcomes, r.Calls)
			}
			rounds[k] = append(rounds[k], r)
			if round == 0 {
				results[k] = r
			} else {
				results[k] = results[k].merge(r)
			}
		}
		warmup = min(b.opts.warmup, 250*time.Millisecond)
	}
	base := results[0]
	baseCPU := cpuPerCallOf(base)
	var out []pathRun
	for k, path := range callPaths {
		r := results[k]
		c := cpuPerCallOf(r)
		run := pathRun{ERP: t.erp, Path: path.name, Gateway: figuresOf(r), CPU: c,
			GatewayPostgresUS:    round(c.Gateway+c.Postgres, 1),
			RPSRatio:             ratio(r.rps(), base.rps()),
			CPURatio:             ratio(c.Gateway+c.Postgres, baseCPU.Gateway+baseCPU.Postgres),
			CPURatioPerSimulator: ratio((c.Gateway+c.Postgres)*baseCPU.Simulator, (baseCPU.Gateway+baseCPU.Postgres)*c.Simulator),
			MachineCPU:           round(r.CPU.utilisation(), 3), Added: addedOf(r, nil), OwnCore: alone}
		for j, w := range rounds[k] {
			wc, bc := cpuPerCallOf(w), cpuPerCallOf(rounds[0][j])
			run.RoundCPURatios = append(run.RoundCPURatios, ratio(wc.Gateway+wc.Postgres, bc.Gateway+bc.Postgres))
			run.RoundGatewayUS = append(run.RoundGatewayUS, wc.Gateway)
			run.RoundPostgresUS = append(run.RoundPostgresUS, wc.Postgres)
		}
		out = append(out, run)
		added := ""
		if a := run.Added; a != nil {
			added = fmt.Sprintf(" | added per call p50 %s ms, inside the gateway p50 %s ms", f2(a.P50MS), f2(a.InsideP50MS))
		}
		tab.add("people_path", fmt.Sprintf("%s, %s, c=%d", t.erp, path.name, overheadCallers),
			fmt.Sprintf("%s/s p50 %s p99 %s ms | CPU/call gateway %s µs + postgres %s µs | ratio to service 2025-11-25: calls/s %s, CPU %s (%s per simulator CPU) | machine busy %.0f%%",
				f1(run.Gateway.RPS), f2(run.Gateway.P50MS), f2(run.Gateway.P99MS), f1(c.Gateway), f1(c.Postgres),
				f2(run.RPSRatio), f2(run.CPURatio), f2(run.CPURatioPerSimulator), run.MachineCPU*100)+added)
	}
	hopResult := results[len(callPaths)]
	hc := cpuPerCallOf(hopResult)
	h := hopRun{ERP: t.erp, RPS: round(hopResult.rps(), 1), CPUUS: hc.Proxy, GatewayShare: ratio(hc.Proxy, baseCPU.Gateway), OwnCore: alone}
	tab.add("people_path", fmt.Sprintf("%s, do-nothing proxy, c=%d", t.erp, overheadCallers),
		fmt.Sprintf("%s/s | CPU/call proxy %s µs: %s of the service path's gateway CPU | machine busy %.0f%%",
			f1(h.RPS), f1(h.CPUUS), f2(h.GatewayShare), hopResult.CPU.utilisation()*100))
	return out, h, nil
}

// roundOrder is the order of n runs in a round: starting one later each
// round, so that over n rounds each run has each place once.
func roundOrder(round, n int) []int {
	out := make([]int, n)
	for j := range n {
		out[j] = (round + j) % n
	}
	return out
}

// hopSteps are the ERP requests one service call on each site makes,
// captured at the simulator from a call through the gateway.
func (b *bench) hopSteps(ctx context.Context, g *gatewayProc, t peopleTarget) ([][]step, error) {
	out := make([][]step, overheadCallers)
	for i := range overheadCallers {
		captured, err := t.sim.capture(func() error {
			_, err := b.probeRows(ctx, g.URL, t.overhead(), t.service[i])
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(captured) == 0 {
			return nil, fmt.Errorf("a %s call made no upstream request", t.tool)
		}
		out[i] = replaySteps(captured, t.sites[i].BaseURL)
	}
	return out, nil
}

// pathTargets are the issue's: the 2026-07-28 path within 10 % of the
// 2025-11-25 path for service tokens and for OAuth, the OAuth path within
// 10 % of the service path, and at most 140 µs of CPU per call (gateway
// plus its share of PostgreSQL) on each.
func pathTargets(erp string, runs []pathRun) []target {
	by := map[string]pathRun{}
	for _, r := range runs {
		by[r.Path] = r
	}
	var ts []target
	within := func(name, of, than string) {
		a, b := by[of], by[than]
		rps := ratio(a.Gateway.RPS, b.Gateway.RPS)
		cpu := ratio(a.GatewayPostgresUS, b.GatewayPostgresUS)
		ts = append(ts,
			target{Target: fmt.Sprintf("%s: %s calls/s >= 0.9 x %s", erp, name, than), Value: rps, Unit: "ratio", Met: rps >= 0.9},
			target{Target: fmt.Sprintf("%s: %s CPU per call (gateway + postgres) <= 1.1 x %s", erp, name, than), Value: cpu, Unit: "ratio", Met: cpu <= 1.1})
	}
	within("2026-07-28, service tokens", "service_2026-07-28", "service_2025-11-25")
	within("2026-07-28, OAuth", "oauth_2026-07-28", "oauth_2025-11-25")
	within("OAuth, 2025-11-25", "oauth_2025-11-25", "service_2025-11-25")
	within("OAuth, 2026-07-28", "oauth_2026-07-28", "service_2026-07-28")
	for _, r := range runs {
		ts = append(ts, target{Target: fmt.Sprintf("%s: %s CPU per call <= 140 µs (gateway %.1f + postgres %.1f)", erp, r.Path, r.CPU.Gateway, r.CPU.Postgres),
			Value: r.GatewayPostgresUS, Unit: "µs", Met: r.GatewayPostgresUS <= 140})
	}
	return ts
}
