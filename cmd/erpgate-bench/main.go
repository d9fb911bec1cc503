// Command erpgate-bench measures erpgate on one machine and writes
// bench/results/<date>.json plus a printed table: `go tool task bench`.
//
// Every part runs as its own process on loopback, so CPU time and memory
// are read per part: the load generator (this process), the Frappe
// simulator and the round-robin proxy (this program started as `sim` and
// `proxy`), the gateway replicas (the real erpgate binary, built here) and
// a private PostgreSQL cluster. Every comparison is a ratio of two runs made
// back to back in the same invocation, because absolute figures on a shared
// machine drift. Load is closed-loop, bounded in callers and in time.
//
// Scenarios (docs/performance.md explains the figures):
//   - gateway_overhead: list_customers through /service/mcp against the
//     same upstream requests made directly, 0 ms and 20 ms upstream latency;
//   - people_path: the same call by service token and by a person signed
//     in through OAuth, each on protocol 2025-11-25 and 2026-07-28, with
//     the gateway on a core of its own, a light load generator and the
//     simulator replaying its answers (as the issue measured);
//   - concurrency_sweep: 1, 16, 128 and 1,000 callers over 100 sites and
//     1,000 service tokens, limits raised so they do not bind;
//   - large_results: a 50,000-row Accounts Receivable report;
//   - cold_start: process start to a green /readyz on a migrated database;
//   - two_replicas: two replicas behind a round-robin proxy against one,
//     and how fast a revocation or credential change reaches the other
//     replica;
//   - noisy_neighbour: other tenants' calls alone and while one tenant
//     holds 1,000 GET streams and 200 bodies sent a byte at a time;
//   - viewer_1m: the console's usage and audit pages over 1,000,000 usage
//     events, per typical filter set.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/erpgate/erpgate/platform/infra/secrets"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "sim":
			os.Exit(runSim(os.Args[2:]))
		case "proxy":
			os.Exit(runProxy(os.Args[2:]))
		}
	}
	var o options
	flag.StringVar(&o.out, "out", "bench/results", "directory for the results file")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "warm-up before each measured window")
	flag.DurationVar(&o.window, "window", 4*time.Second, "length of each measured window")
	flag.StringVar(&o.only, "scenarios", "", "comma-separated scenarios to run (default all)")
	flag.StringVar(&o.profileDir, "profile", "", "save gateway CPU profiles of the overhead runs into this directory")
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch directory (gateway logs, binaries)")
	flag.StringVar(&o.gatewayEnv, "gateway-env", "", "comma-separated NAME=value settings for the gateways only, such as GOGC=100 (recorded in the results)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "erpgate-bench:", err)
		os.Exit(1)
	}
}

type options struct {
	out            string
	warmup, window time.Duration
	only           string
	profileDir     string
	gatewayEnv     string
	keep           bool
}

func (o options) wants(name string) bool {
	return o.only == "" || slices.Contains(strings.Split(o.only, ","), name)
}

// Fixed shape of the benchmark's deployment.
const (
	sweepSites      = 100
	tokensPerSite   = 10
	overheadCallers = 16
	largeReportRows = 50_000
)

var upstreamLatencies = []time.Duration{0, 20 * time.Millisecond}

// bench holds what the scenarios share.
type bench struct {
	opts    options
	root    string
	work    string
	machine machineInfo
	bins    binaries
	pg      *benchPostgres
	env     gatewayEnv
	sim     *simProcess
	sites   []benchSite
	// tokens are ordered so that consecutive tokens belong to different
	// sites: token j is on site j%100.
	tokens []string
	// tlsSim serves another 100 sites over HTTPS (HTTP/2 offered), for
	// the concurrency sweep; tlsTokens are theirs, ordered like tokens.
	tlsSim    *simProcess
	tlsTokens []string
	logs      int
}

func run(ctx context.Context, o options) error {
	started := time.Now()
	b := &bench{opts: o}
	var err error
	if o.profileDir != "" {
		// Profiles are saved while the load runs; a missing directory
		// would lose them all.
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return err
		}
	}
	if b.root, err = moduleRoot(); err != nil {
		return err
	}
	if b.work, err = os.MkdirTemp("", "erpgate-bench-run-"); err != nil {
		return err
	}
	defer func() {
		if o.keep {
			fmt.Println("scratch directory kept:", b.work)
			return
		}
		_ = os.RemoveAll(b.work)
	}()
	b.machine = describeMachine(ctx, b.root)
	step := func(msg string) { fmt.Printf("[%5.1fs] %s\n", time.Since(started).Seconds(), msg) }

	step("building erpgate")
	if b.bins, err = buildGateway(ctx, b.root, b.work); err != nil {
		return err
	}
	step("starting PostgreSQL")
	if b.pg, err = startPostgres(ctx); err != nil {
		return err
	}
	defer b.pg.remove(context.Background())
	b.machine.PostgresSettings = b.pg.Settings
	dbURL, err := b.pg.createDatabase(ctx, "erpgate_bench")
	if err != nil {
		return err
	}
	admin, err := secrets.NewToken("ega")
	if err != nil {
		return err
	}
	keys, err := secrets.GenerateKeySpec("bench1")
	if err != nil {
		return err
	}
	b.env = gatewayEnv{dbURL: dbURL, adminToken: admin.Value.Reveal(), keys: keys, extra: raisedLimits()}
	for kv := range strings.SplitSeq(o.gatewayEnv, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			b.env.extra[k] = v
			b.machine.GatewayEnv = append(b.machine.GatewayEnv, kv)
		} else if kv != "" {
			return fmt.Errorf("-gateway-env: %q is not NAME=value", kv)
		}
	}

	step("starting the Frappe simulator on 100 ports")
	if b.sim, err = startSim(ctx, "frappe", sweepSites, 0, nil); err != nil {
		return err
	}
	defer b.sim.stop()
	if o.wants("concurrency_sweep") {
		step("starting the Frappe simulator on 100 more ports, over HTTPS")
		cert, err := writeLoopbackCert(b.work)
		if err != nil {
			return err
		}
		b.env.extra["SSL_CERT_FILE"] = cert.cert
		if b.tlsSim, err = startSim(ctx, "frappe", sweepSites, 0, cert); err != nil {
			return err
		}
		defer b.tlsSim.stop()
	}

	step("registering 100 sites and 1,000 service tokens")
	g, err := b.startGateway(ctx, b.bins.pprof, nil)
	if err != nil {
		return err
	}
	api := &adminAPI{base: g.URL, token: b.env.adminToken, client: newLoadClient(8)}
	if b.sites, err = registerSites(ctx, api, "bench", b.sim, tokensPerSite); err != nil {
		g.stop()
		return err
	}
	b.tokens = interleaveTokens(b.sites)
	if b.tlsSim != nil {
		tlsSites, err := registerSites(ctx, api, "benchtls", b.tlsSim, tokensPerSite)
		if err != nil {
			g.stop()
			return err
		}
		b.tlsTokens = interleaveTokens(tlsSites)
	}

	rep := &report{Machine: b.machine, Started: started.UTC()}
	tab := &table{}
	type scenario struct {
		name string
		run  func(context.Context, *gatewayProc, *table) (any, error)
	}
	scenarios := []scenario{
		{"cold_start", b.coldStart},
		{"gateway_overhead", b.gatewayOverhead},
		{"people_path", b.peoplePath},
		{"concurrency_sweep", b.concurrencySweep},
		{"large_results", b.largeResults},
		{"two_replicas", b.twoReplicas},
		{"noisy_neighbour", b.noisyNeighbour},
		{"viewer_1m", b.viewer},
	}
	var failed []string
	for _, s := range scenarios {
		if !o.wants(s.name) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		step(s.name)
		res, err := s.run(ctx, g, tab)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", s.name, err))
			fmt.Fprintf(os.Stderr, "scenario %s failed: %v\n", s.name, err)
			continue
		}
		rep.Scenarios = append(rep.Scenarios, res)
	}
	g.stop()
	rep.Seconds = round(time.Since(started).Seconds(), 1)

	fmt.Println()
	fmt.Printf("erpgate benchmark — %d cores, %d MiB, %s, %s\n\n", b.machine.Cores, b.machine.MemoryMiB, b.machine.CPUModel, b.machine.Postgres)
	tab.print(os.Stdout)
	out := o.out
	if !filepath.IsAbs(out) {
		out = filepath.Join(b.root, out)
	}
	path, err := writeReport(out, rep)
	if err != nil {
		return err
	}
	fmt.Printf("\nresults: %s (%.0f s)\n", path, rep.Seconds)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	return nil
}

// interleaveTokens orders the sites' tokens so that consecutive tokens
// belong to different sites: token j is on site j%len(sites).
func interleaveTokens(sites []benchSite) []string {
	var out []string
	for t := range tokensPerSite {
		for _, s := range sites {
			out = append(out, s.Tokens[t])
		}
	}
	return out
}

// raisedLimits lifts the call limits so that they never bind: the
// benchmark measures the gateway, not the limits (the limits have their own
// tests, which also prove they hold across replicas).
func raisedLimits() map[string]string {
	return map[string]string{
		"ERPGATE_LIMIT_USER_CONCURRENCY": "1000000",
		"ERPGATE_LIMIT_USER_PER_MINUTE":  "100000000",
		"ERPGATE_LIMIT_SITE_CONCURRENCY": "1000000",
		"ERPGATE_LIMIT_SITE_PER_MINUTE":  "100000000",
	}
}

// startGateway starts a replica of bin on the benchmark database, its log
// in the scratch directory.
func (b *bench) startGateway(ctx context.Context, bin string, extra map[string]string) (*gatewayProc, error) {
	env := b.env
	if extra != nil {
		env.extra = map[string]string{}
		for k, v := range b.env.extra {
			env.extra[k] = v
		}
		for k, v := range extra {
			env.extra[k] = v
		}
	}
	b.logs++
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return startGatewayProc(ctx, bin, env, filepath.Join(b.work, fmt.Sprintf("gateway-%02d.log", b.logs)))
}

// parts are the processes a run through replicas gws accounts for.
func (b *bench) parts(gws ...*gatewayProc) parts {
	p := parts{sim: b.sim.pid(), pg: b.pg.pid()}
	for _, g := range gws {
		p.gateways = append(p.gateways, g.PID())
	}
	return p
}
