package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/freeport"
	"github.com/erpgate/erpgate/platform/infra/pgcluster"
)

// devSummaryEnd is the last line of the summary `erpgate dev` prints once
// everything is registered.
const devSummaryEnd = "Press Ctrl-C to stop."

// devTestRun builds erpgate with -tags dev and returns the binary, a
// scratch folder to run it in (one the private cluster's server user can
// reach, for .data/postgres) and this process's environment without its
// DATABASE_URL and ERPGATE_ settings.
func devTestRun(t *testing.T) (bin, dir string, env []string) {
	t.Helper()
	bin = filepath.Join(t.TempDir(), "erpgate-dev")
	if out, err := exec.Command("go", "build", "-tags", "dev", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags dev: %v: %s", err, out)
	}
	dir, err := pgcluster.NewScratchDir("erpgate-devtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "ERPGATE_") {
			env = append(env, kv)
		}
	}
	return bin, dir, env
}

// devKinds are the kinds this build registers: `erpgate dev` brings a
// demo site of each (every connector brings a demo, connector.Demoer).
func devKinds(t *testing.T) (*connector.Registry, []string) {
	t.Helper()
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	return reg, reg.Kinds()
}

// devAddrs are free addresses for the gateway and for each kind's demo
// simulator and registration simulator, by the variables that move them.
func devAddrs(t *testing.T, kinds []string) map[string]string {
	t.Helper()
	addrs := map[string]string{"ERPGATE_LISTEN_ADDR": freeport.Loopback(t)}
	for _, kind := range kinds {
		addrs[devAddrEnv(kind, "")] = freeport.Loopback(t)
		addrs[devAddrEnv(kind, "REGISTER_")] = freeport.Loopback(t)
	}
	return addrs
}

// TestDevCommand builds erpgate with -tags dev and runs `erpgate dev` as a
// real process on its private Postgres under .data/: the demo site of
// every registered kind is registered through the admin API; the summary
// comes after the start-up log lines and gives the DATABASE_URL, the
// simulators' API credentials (enough to register a second site by hand)
// and the variables that move the ports; .data/dev.json holds the same;
// an interrupt stops it with exit status 0 and no error line; a second run
// reuses the data and the tokens. Kinds with a seed (dev_seeds_test.go)
// are checked against their simulators' seeded data as well.
func TestDevCommand(t *testing.T) {
	bin, dir, env := devTestRun(t)
	reg, kinds := devKinds(t)
	addrs := devAddrs(t, kinds)
	pgAddr := freeport.Loopback(t)
	pgPort := pgAddr[strings.LastIndexByte(pgAddr, ':')+1:]
	for k, v := range addrs {
		env = append(env, k+"="+v)
	}
	env = append(env, "ERPGATE_DEV_POSTGRES_PORT="+pgPort)
	seeds := devSeeds(t)

	var createdClients map[string]string // kind -> client id made on the registration simulator
	runOnce := func(round int) devState {
		t.Helper()
		cmd, out, exited := startDev(t, bin, dir, env, devSummaryEnd, "printed no summary", 20*time.Millisecond)
		state := readDevState(filepath.Join(dir, devDataDir, devStateFile))
		checkDevSummary(t, out.String(), state, addrs, pgPort, seeds)
		checkDevSites(t, reg, kinds, state, seeds)
		if round == 1 {
			registerSecondSitesByHand(t, reg, state)
			createdClients = createRegistrationClients(t, state, seeds)
		} else {
			checkRegistrationClientsKept(t, state, seeds, createdClients)
		}
		checkDevDatabase(t, state)

		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("dev exited with %v after an interrupt, want status 0:\n%s", err, out)
			}
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			t.Fatalf("dev did not stop within 60 s of an interrupt:\n%s", out)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "erpgate:") || strings.Contains(line, `"level":"error"`) {
				t.Errorf("dev printed an error line when interrupted: %s", line)
			}
		}
		return state
	}

	first := runOnce(1)
	second := runOnce(2)
	for i := range first.Sites {
		if first.Sites[i].ID != second.Sites[i].ID || first.Sites[i].ServiceToken != second.Sites[i].ServiceToken {
			t.Errorf("%s: the second run did not reuse the site and its token", first.Sites[i].Slug)
		}
	}
	if first.AdminToken != second.AdminToken {
		t.Error("the admin token changed between runs")
	}
}

// checkDevSites checks dev.json's demo sites, one of each registered kind,
// through their service tokens: every write tool of the kind's catalogue
// is enabled and offered; for a kind with a seed, its users are the
// simulator's, a read call succeeds and the seeded proposal waits for the
// demo administrator's approval.
func checkDevSites(t *testing.T, reg *connector.Registry, kinds []string, state devState, seeds map[string]devSeed) {
	t.Helper()
	var got []string
	for _, site := range state.Sites {
		got = append(got, site.Kind)
	}
	if slices.Sort(got); !slices.Equal(got, kinds) {
		t.Fatalf("dev.json lists demo sites of the kinds %v, want one of each registered kind %v", got, kinds)
	}
	for _, site := range state.Sites {
		if site.ServiceToken == "" || len(site.Users) == 0 || site.MCPURL == "" || site.ERPURL == "" {
			t.Errorf("%s: incomplete entry %+v", site.Slug, site)
		}
		seed, seeded := seeds[site.Kind]
		if seeded {
			for _, u := range site.Users {
				if admin, known := seed.users[u.Username]; !known || admin != u.Admin {
					t.Errorf("%s: user %s (admin %v) is not so on the simulator", site.Slug, u.Username, u.Admin)
				}
			}
			if len(site.Users) != len(seed.users) {
				t.Errorf("%s: %d demo users, want the simulator's %d", site.Slug, len(site.Users), len(seed.users))
			}
		}
		if want := writeToolNames(reg, site.Kind); !slices.Equal(site.WriteTools, want) {
			t.Errorf("%s: dev.json has write tools %v, want every one of the catalogue %v", site.Slug, site.WriteTools, want)
		}
		cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
		if seeded {
			tool, args := seed.read(t, site)
			if r := callTool(t, cs, tool, args); r.IsError {
				t.Errorf("%s: %s failed: %s", site.Slug, tool, r.Text)
			}
		}
		if link := checkDevWrites(t, cs, site, seed); link != "" {
			if got := queryString(t, state.DatabaseURL, `SELECT approver FROM pending_actions WHERE id = $1`, actionID(t, link)); got != site.ServiceWriteApprover {
				t.Errorf("%s: the service token's proposal waits for %q, want the demo administrator %q", site.Slug, got, site.ServiceWriteApprover)
			}
		}
		_ = cs.Close()
	}
}

// checkDevSummary checks that the summary is one block after the last
// start-up log line and that it and dev.json carry the same values.
func checkDevSummary(t *testing.T, out string, state devState, addrs map[string]string, pgPort string, seeds map[string]devSeed) {
	t.Helper()
	start := strings.Index(out, "erpgate is running at ")
	end := strings.Index(out, devSummaryEnd)
	if start < 0 || end < start {
		t.Fatalf("no summary in the output:\n%s", out)
	}
	summary := out[start:end]
	if strings.Contains(summary, `{"level"`) {
		t.Errorf("log lines are mixed into the summary:\n%s", out)
	}
	if after := out[end:]; strings.Contains(after, `"msg":"listening"`) || strings.Contains(after, `"msg":"migrations`) {
		t.Errorf("start-up log lines come after the summary:\n%s", out)
	}
	if !strings.Contains(out[:start], `"msg":"listening"`) {
		t.Errorf("the start-up log lines are not before the summary:\n%s", out)
	}
	if state.DatabaseURL == "" || !strings.Contains(summary, "DATABASE_URL: "+state.DatabaseURL+"\n") {
		t.Errorf("the summary does not give dev.json's DATABASE_URL %q:\n%s", state.DatabaseURL, summary)
	}
	if !strings.Contains(summary, state.AdminToken) {
		t.Error("the summary does not give the admin token")
	}
	if want := "console:      " + state.BaseURL + "/console  (sign in with the admin token)\n"; !strings.Contains(summary, want) {
		t.Errorf("the summary does not say where the console is:\n%s", summary)
	}
	if want := "metrics:      " + state.BaseURL + "/metrics  (Authorization: Bearer " + state.AdminToken + ")\n"; state.MetricsURL != state.BaseURL+"/metrics" || !strings.Contains(summary, want) {
		t.Errorf("the summary does not say how to reach /metrics (%q in dev.json, want the line %q):\n%s", state.MetricsURL, want, summary)
	}
	want := map[string]string{
		"ERPGATE_LISTEN_ADDR":       addrs["ERPGATE_LISTEN_ADDR"],
		"ERPGATE_DEV_POSTGRES_PORT": "127.0.0.1:" + pgPort,
	}
	for _, site := range state.Sites {
		env := devAddrEnv(site.Kind, "")
		want[env] = addrs[env]
	}
	for _, erp := range state.Registration {
		env := devAddrEnv(erp.Kind, "REGISTER_")
		want[env] = addrs[env]
	}
	for env, addr := range want {
		if addr == "" || !strings.Contains(summary, addr) || !strings.Contains(summary, env) {
			t.Errorf("the summary does not name %s for %q:\n%s", env, addr, summary)
		}
		found := false
		for _, p := range state.Ports {
			found = found || (p.Env == env && p.Addr == addr)
		}
		if !found {
			t.Errorf("dev.json's ports %+v lack %s=%s", state.Ports, env, addr)
		}
	}
	checkRegistrationSummary(t, summary, state, addrs, seeds)
	for _, site := range state.Sites {
		for k, v := range seeds[site.Kind].credentials {
			if site.ERPCredentials[k] != v {
				t.Errorf("%s: dev.json has %s=%q, want the simulator's %q", site.Slug, k, site.ERPCredentials[k], v)
			}
		}
		for k, v := range site.ERPCredentials {
			if !strings.Contains(summary, fmt.Sprintf("%s=%s", k, v)) {
				t.Errorf("%s: the summary does not give %s=%s:\n%s", site.Slug, k, v, summary)
			}
		}
	}
}

// registerSecondSitesByHand registers a second site on each simulator with
// only what dev.json gives, as docs/operations.md describes: of its
// erp_credentials, the connector's credential fields are the connection,
// the rest its settings.
func registerSecondSitesByHand(t *testing.T, reg *connector.Registry, state devState) {
	t.Helper()
	admin := &adminClient{base: state.BaseURL, token: state.AdminToken}
	for _, site := range state.Sites {
		c, _ := reg.Get(site.Kind)
		credentials, settings := map[string]string{}, map[string]any{}
		for k, v := range site.ERPCredentials {
			if slices.ContainsFunc(c.APICredentialFields(), func(f connector.CredentialField) bool { return f.Name == k }) {
				credentials[k] = v
			} else {
				settings[k] = v
			}
		}
		if len(settings) == 0 {
			settings = nil
		}
		// One site per ERP base URL: reach the same simulator by name.
		erpURL := strings.Replace(site.ERPURL, "127.0.0.1", "localhost", 1)
		second, err := admin.ensureSite(context.Background(), devState{}, siteRequest{
			Slug: "second-" + site.Kind, Kind: site.Kind, DisplayName: "Second " + site.Kind, BaseURL: erpURL,
			Settings: settings, Credentials: credentials,
		})
		if err != nil {
			t.Fatalf("register a second %s site with dev.json's credentials: %v", site.Kind, err)
		}
		if second.ServiceToken == "" {
			t.Errorf("second %s site: no service token", site.Kind)
		}
	}
}

// checkDevDatabase connects with the summary's DATABASE_URL and finds the
// demo sites there.
func checkDevDatabase(t *testing.T, state devState) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, state.DatabaseURL)
	if err != nil {
		t.Fatalf("connect with the summary's DATABASE_URL: %v", err)
	}
	defer conn.Close(ctx)
	var slugs []string
	for _, site := range state.Sites {
		slugs = append(slugs, site.Slug)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM sites WHERE slug = ANY($1)", slugs).Scan(&n); err != nil {
		t.Fatalf("count the demo sites: %v", err)
	}
	if n != len(slugs) {
		t.Errorf("the DATABASE_URL's database has %d of the demo sites %v", n, slugs)
	}
}

// TestDevInterruptedDuringStartUp interrupts `erpgate dev` as soon as its
// private Postgres is up, before the gateway listens: it still exits with
// status 0 and prints no error line.
func TestDevInterruptedDuringStartUp(t *testing.T) {
	bin, dir, env := devTestRun(t)
	_, kinds := devKinds(t)
	for k, v := range devAddrs(t, kinds) {
		env = append(env, k+"="+v)
	}
	// Polled often, so that the interrupt lands before the gateway listens.
	cmd, out, exited := startDev(t, bin, dir, env, `"msg":"postgres: started"`, "did not start its private Postgres", 5*time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("dev exited with %v when interrupted during start-up, want status 0:\n%s", err, out)
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("dev did not stop within 60 s of an interrupt:\n%s", out)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "erpgate:") {
			t.Errorf("dev printed an error line when interrupted during start-up: %s", line)
		}
	}
}

// startDev starts bin dev and waits, polling its output every poll, until
// it prints marker; it fails the test if dev stops first or takes over
// 120 s (saying that dev "<what>"). It returns the running command, its
// output so far and the channel its exit arrives on.
func startDev(t *testing.T, bin, dir string, env []string, marker, what string, poll time.Duration) (*exec.Cmd, *syncBuffer, chan error) {
	t.Helper()
	cmd := exec.Command(bin, "dev")
	cmd.Dir, cmd.Env = dir, env
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(120 * time.Second)
	for !strings.Contains(out.String(), marker) {
		select {
		case err := <-exited:
			t.Fatalf("dev stopped early: %v\n%s", err, out)
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("dev %s within 120 s:\n%s", what, out)
		case <-time.After(poll):
		}
	}
	return cmd, out, exited
}

// checkDevWrites: the demo site offers its write tools to its service
// token, and, for a kind with a seed, dev.json names the demo
// administrator as the approver and the token's proposal of the seeded
// sales order (service_writes is on) waits for that approval on the
// gateway's page, whose link it returns.
func checkDevWrites(t *testing.T, cs *mcp.ClientSession, site devSite, seed devSeed) string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tool := range res.Tools {
		listed[tool.Name] = true
	}
	for _, name := range site.WriteTools {
		if !listed[name] {
			t.Errorf("%s: the service token is not offered the write tool %s", site.Slug, name)
		}
	}
	if seed.write == "" {
		return ""
	}
	if !slices.Contains(site.WriteTools, seed.write) || site.ServiceWriteApprover != seed.approver {
		t.Errorf("%s: dev.json has write tools %v approved by %q, want %s among them approved by %s",
			site.Slug, site.WriteTools, site.ServiceWriteApprover, seed.write, seed.approver)
	}
	r := callTool(t, cs, seed.write, seed.proposal)
	link := approvalURLPattern.FindString(errorMessage(r))
	if r.errorCode() != "APPROVAL_REQUIRED" || !strings.Contains(link, "/approve/") {
		t.Errorf("%s: the service token's %s: %s", site.Slug, seed.write, r.Text)
		return ""
	}
	return link
}
