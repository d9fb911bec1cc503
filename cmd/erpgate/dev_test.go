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

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
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

// TestDevCommand builds erpgate with -tags dev and runs `erpgate dev` as a
// real process on its private Postgres under .data/: both demo sites are
// registered through the admin API; the summary comes after the start-up
// log lines and gives the DATABASE_URL, the simulators' API credentials
// (enough to register a second site by hand) and the variables that move
// the ports; .data/dev.json holds the same; an interrupt stops it with exit
// status 0 and no error line; a second run reuses the data and the tokens.
func TestDevCommand(t *testing.T) {
	bin, dir, env := devTestRun(t)
	addrs := map[string]string{
		"ERPGATE_LISTEN_ADDR":        freeAddr(t),
		"ERPGATE_DEV_FRAPPE_ADDR":    freeAddr(t),
		"ERPGATE_DEV_ACUMATICA_ADDR": freeAddr(t),
		// The simulators no site uses, to walk registration by hand.
		"ERPGATE_DEV_FRAPPE_REGISTER_ADDR":    freeAddr(t),
		"ERPGATE_DEV_ACUMATICA_REGISTER_ADDR": freeAddr(t),
	}
	pgAddr := freeAddr(t)
	pgPort := pgAddr[strings.LastIndexByte(pgAddr, ':')+1:]
	for k, v := range addrs {
		env = append(env, k+"="+v)
	}
	env = append(env, "ERPGATE_DEV_POSTGRES_PORT="+pgPort)

	// Seeded simulator credentials, from fresh simulators.
	frappeSim := frappetest.NewHandler(frappetest.Options{})
	frappeBot := frappeSim.User("service")
	acuSim := acumaticatest.NewHandler(acumaticatest.Options{})
	acuLogin := acuSim.ServiceLogin()
	// A sales order of seeded records, which the service token proposes.
	proposals := map[string]map[string]any{
		"frappe": {"customer": frappeSim.Data().List("Customer")[0].Name, "company": "Demo Holdings NZ Ltd", "delivery_date": "2026-12-31",
			"items": []any{map[string]any{"item_code": frappeSim.Data().List("Item")[0].Name, "qty": 1}}},
		"acumatica": {"CustomerID": acuSim.Data().Records("Customer")[0].String("CustomerID"),
			"Details": []any{map[string]any{"InventoryID": acuSim.Data().Records("StockItem")[0].String("InventoryID"), "OrderQty": 1}}},
	}
	acuSim.Close()
	wantCredentials := map[string]map[string]string{
		"frappe": {"api_key": frappeBot.APIKey, "api_secret": frappeBot.APISecret},
		"acumatica": {"client_id": acuLogin.ClientID, "client_secret": acuLogin.ClientSecret,
			"username": acuLogin.Username, "password": acuLogin.Password, "tenant": acuLogin.Tenant},
	}

	var createdClients map[string]string // kind -> client id made on the registration simulator
	runOnce := func(round int) devState {
		t.Helper()
		cmd, out, exited := startDev(t, bin, dir, env, devSummaryEnd, "printed no summary", 20*time.Millisecond)
		state := readDevState(filepath.Join(dir, devDataDir, devStateFile))
		checkDevSummary(t, out.String(), state, addrs, pgPort, wantCredentials)
		if len(state.Sites) != 2 {
			t.Fatalf("dev.json lists %d sites, want the Frappe and Acumatica demo sites", len(state.Sites))
		}
		for _, site := range state.Sites {
			if site.ServiceToken == "" || len(site.Users) < 3 || site.MCPURL == "" {
				t.Errorf("%s: incomplete entry %+v", site.Slug, site)
			}
			cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
			tool := "get_current_user"
			args := map[string]any{}
			if site.Kind == "acumatica" {
				tool, args = "acumatica_get_customer", map[string]any{"CustomerID": firstAcumaticaCustomer(t, site)}
			}
			if r := callTool(t, cs, tool, args); r.IsError {
				t.Errorf("%s: %s failed: %s", site.Slug, tool, r.Text)
			}
			if link := checkDevWrites(t, cs, site, proposals[site.Kind]); link != "" {
				if got := queryString(t, state.DatabaseURL, `SELECT approver FROM pending_actions WHERE id = $1`, actionID(t, link)); got != site.ServiceWriteApprover {
					t.Errorf("%s: the service token's proposal waits for %q, want the demo administrator %q", site.Slug, got, site.ServiceWriteApprover)
				}
			}
			_ = cs.Close()
		}
		if round == 1 {
			registerSecondSitesByHand(t, state)
			createdClients = createRegistrationClients(t, state)
		} else {
			checkRegistrationClientsKept(t, state, createdClients)
		}
		checkDevDatabase(t, state.DatabaseURL)

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

// checkDevSummary checks that the summary is one block after the last
// start-up log line and that it and dev.json carry the same values.
func checkDevSummary(t *testing.T, out string, state devState, addrs map[string]string, pgPort string,
	wantCredentials map[string]map[string]string) {
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
	for env, addr := range map[string]string{
		"ERPGATE_LISTEN_ADDR":                 addrs["ERPGATE_LISTEN_ADDR"],
		"ERPGATE_DEV_FRAPPE_ADDR":             addrs["ERPGATE_DEV_FRAPPE_ADDR"],
		"ERPGATE_DEV_ACUMATICA_ADDR":          addrs["ERPGATE_DEV_ACUMATICA_ADDR"],
		"ERPGATE_DEV_FRAPPE_REGISTER_ADDR":    addrs["ERPGATE_DEV_FRAPPE_REGISTER_ADDR"],
		"ERPGATE_DEV_ACUMATICA_REGISTER_ADDR": addrs["ERPGATE_DEV_ACUMATICA_REGISTER_ADDR"],
		"ERPGATE_DEV_POSTGRES_PORT":           "127.0.0.1:" + pgPort,
	} {
		if !strings.Contains(summary, addr) || !strings.Contains(summary, env) {
			t.Errorf("the summary does not name %s for %s:\n%s", env, addr, summary)
		}
		found := false
		for _, p := range state.Ports {
			found = found || (p.Env == env && p.Addr == addr)
		}
		if !found {
			t.Errorf("dev.json's ports %+v lack %s=%s", state.Ports, env, addr)
		}
	}
	checkRegistrationSummary(t, summary, state, addrs)
	for _, site := range state.Sites {
		for k, v := range wantCredentials[site.Kind] {
			if site.ERPCredentials[k] != v {
				t.Errorf("%s: dev.json has %s=%q, want the simulator's %q", site.Slug, k, site.ERPCredentials[k], v)
			}
			if !strings.Contains(summary, fmt.Sprintf("%s=%s", k, v)) {
				t.Errorf("%s: the summary does not give %s=%s:\n%s", site.Slug, k, v, summary)
			}
		}
	}
}

// registerSecondSitesByHand registers a second site on each simulator with
// only what dev.json gives, as docs/operations.md describes.
func registerSecondSitesByHand(t *testing.T, state devState) {
	t.Helper()
	admin := &adminClient{base: state.BaseURL, token: state.AdminToken}
	for _, site := range state.Sites {
		c := site.ERPCredentials
		// One site per ERP base URL: reach the same simulator by name.
		erpURL := strings.Replace(site.ERPURL, "127.0.0.1", "localhost", 1)
		var second devSite
		var err error
		if site.Kind == "acumatica" {
			svc := acumaticaService{Tenant: c["tenant"], ClientID: c["client_id"], ClientSecret: c["client_secret"],
				Username: c["username"], Password: c["password"]}
			second, err = registerAcumaticaService(context.Background(), admin, devState{}, svc, "second-acumatica", "Second Acumatica", erpURL)
		} else {
			second, err = admin.ensureSite(context.Background(), devState{}, siteRequest{
				Slug: "second-frappe", Kind: "frappe", DisplayName: "Second Frappe", BaseURL: erpURL,
				Credentials: map[string]string{"api_key": c["api_key"], "api_secret": c["api_secret"]},
			})
		}
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
func checkDevDatabase(t *testing.T, dbURL string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect with the summary's DATABASE_URL: %v", err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM sites WHERE slug IN ('demo-frappe', 'demo-acumatica')").Scan(&n); err != nil {
		t.Fatalf("count the demo sites: %v", err)
	}
	if n != 2 {
		t.Errorf("the DATABASE_URL's database has %d demo sites, want 2", n)
	}
}

func firstAcumaticaCustomer(t *testing.T, site devSite) string {
	t.Helper()
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	defer cs.Close()
	r := callTool(t, cs, "acumatica_list_customers", map[string]any{})
	if r.IsError {
		t.Fatalf("acumatica_list_customers: %s", r.Text)
	}
	results, _ := r.Structured["results"].([]any)
	if len(results) == 0 {
		t.Fatalf("no customers: %v", r.Structured)
	}
	id, _ := results[0].(map[string]any)["CustomerID"].(string)
	if id == "" {
		t.Fatalf("first customer has no CustomerID: %v", results[0])
	}
	return id
}

// TestDevInterruptedDuringStartUp interrupts `erpgate dev` as soon as its
// private Postgres is up, before the gateway listens: it still exits with
// status 0 and prints no error line.
func TestDevInterruptedDuringStartUp(t *testing.T) {
	bin, dir, env := devTestRun(t)
	env = append(env, "ERPGATE_LISTEN_ADDR="+freeAddr(t), "ERPGATE_DEV_FRAPPE_ADDR="+freeAddr(t), "ERPGATE_DEV_ACUMATICA_ADDR="+freeAddr(t),
		"ERPGATE_DEV_FRAPPE_REGISTER_ADDR="+freeAddr(t), "ERPGATE_DEV_ACUMATICA_REGISTER_ADDR="+freeAddr(t))
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
// token (write_tools holds every one), and the token's proposal of a sales
// order (service_writes is on) waits for the demo administrator's approval
// on the gateway's page, whose link it returns.
func checkDevWrites(t *testing.T, cs *mcp.ClientSession, site devSite, proposal map[string]any) string {
	t.Helper()
	want, approver := "create_sales_order", "it.admin@demo.example"
	if site.Kind == "acumatica" {
		want, approver = "acumatica_create_sales_order", "admin@"+site.ERPCredentials["tenant"]
	}
	if !slices.Contains(site.WriteTools, want) || site.ServiceWriteApprover != approver {
		t.Errorf("%s: dev.json has write tools %v approved by %q, want %s among them approved by %s",
			site.Slug, site.WriteTools, site.ServiceWriteApprover, want, approver)
	}
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
	r := callTool(t, cs, want, proposal)
	link := approvalURLPattern.FindString(errorMessage(r))
	if r.errorCode() != "APPROVAL_REQUIRED" || !strings.Contains(link, "/approve/") {
		t.Errorf("%s: the service token's %s: %s", site.Slug, want, r.Text)
		return ""
	}
	return link
}
