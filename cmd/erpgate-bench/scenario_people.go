package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e/signin"
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
// alternating with the others'.
const peopleRounds = 4

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
	// MachineCPU is how busy the whole machine was.
	MachineCPU float64 `json:"machine_cpu_utilisation"`
	// Added is what the gateway added to each call beyond its time with
	// the ERP (Server-Timing), to tell erpgate's own time from the ERP's.
	Added *addedFigures `json:"gateway_added_per_call,omitempty"`
}

type peopleScenario struct {
	Name        string     `json:"name"`
	Machine     machineRef `json:"machine"`
	Concurrency int        `json:"concurrency"`
	Runs        []pathRun  `json:"runs"`
	Targets     []target   `json:"targets"`
	Notes       []string   `json:"notes,omitempty"`
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
}

func (b *bench) peoplePath(ctx context.Context, g *gatewayProc, tab *table) (any, error) {
	sc := &peopleScenario{Name: "people_path", Machine: b.machine.ref(), Concurrency: overheadCallers}
	frappe := peopleTarget{erp: "frappe", sim: b.sim, tool: overheadTool, args: overheadArgs, sites: b.sites[:overheadCallers]}
	for _, s := range frappe.sites {
		frappe.service = append(frappe.service, s.Tokens[0])
	}
	acu, err := b.acumaticaTarget(ctx, g)
	if err != nil {
		return nil, err
	}
	defer acu.sim.stop()
	acumatica := peopleTarget{erp: "acumatica", sim: acu.sim, tool: acu.tool, args: acu.args, sites: acu.sites, service: acu.tokens}
	for _, t := range []*peopleTarget{&frappe, &acumatica} {
		if err := b.signPeopleIn(ctx, g, t); err != nil {
			return nil, fmt.Errorf("%s: %w", t.erp, err)
		}
		runs, err := b.pathRuns(ctx, g, tab, *t)
		if err != nil {
			return nil, err
		}
		sc.Runs = append(sc.Runs, runs...)
		sc.Targets = append(sc.Targets, pathTargets(t.erp, runs)...)
	}
	sc.Notes = append(sc.Notes,
		fmt.Sprintf("16 callers, one site each, 0 ms upstream; Frappe %s and Acumatica %s (20 rows); %d rounds of %s per path, the paths alternating", overheadTool, acu.tool, peopleRounds, time.Duration(0.5*float64(b.opts.window))),
		"oauth: each site got an OAuth application at the simulator, and a person signed in through the real flow (registration, authorization with PKCE, the ERP's login, consent, code exchange) before measuring, so every measured call is a warm call of a signed-in user",
		"2026-07-28: every request carries _meta (protocol version, client info, capabilities) and the Mcp-Method and Mcp-Name headers, with no initialize")
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
			client, err := t.sim.registerClient(g.URL + "/oauth/callback")
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

func (b *bench) pathRuns(ctx context.Context, g *gatewayProc, tab *table, t peopleTarget) ([]pathRun, error) {
	if err := t.sim.setLatency(0); err != nil {
		return nil, err
	}
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
	results := make([]loadResult, len(callPaths))
	warmup := b.opts.warmup
	for round := range peopleRounds {
		for k := range callPaths {
			r := runLoad(ctx, client, loadSpec{
				concurrency: overheadCallers, warmup: warmup, duration: time.Duration(0.5 * float64(b.opts.window)),
				call:   func(seq int64) []step { return calls[k][seq%overheadCallers] },
				check:  checkMCP,
				sample: p.sample,
			})
			if r.failures() > 0 {
				return nil, fmt.Errorf("%s %s: failures %v of %d calls", t.erp, callPaths[k].name, r.Outcomes, r.Calls)
			}
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
			GatewayPostgresUS: round(c.Gateway+c.Postgres, 1),
			RPSRatio:          ratio(r.rps(), base.rps()),
			CPURatio:          ratio(c.Gateway+c.Postgres, baseCPU.Gateway+baseCPU.Postgres),
			MachineCPU:        round(r.CPU.utilisation(), 3), Added: addedOf(r, nil)}
		out = append(out, run)
		added := ""
		if a := run.Added; a != nil {
			added = fmt.Sprintf(" | added per call p50 %s ms, inside the gateway p50 %s ms", f2(a.P50MS), f2(a.InsideP50MS))
		}
		tab.add("people_path", fmt.Sprintf("%s, %s, c=%d", t.erp, path.name, overheadCallers),
			fmt.Sprintf("%s/s p50 %s p99 %s ms | CPU/call gateway %s µs + postgres %s µs | ratio to service 2025-11-25: calls/s %s, CPU %s | machine busy %.0f%%",
				f1(run.Gateway.RPS), f2(run.Gateway.P50MS), f2(run.Gateway.P99MS), f1(c.Gateway), f1(c.Postgres),
				f2(run.RPSRatio), f2(run.CPURatio), run.MachineCPU*100)+added)
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
