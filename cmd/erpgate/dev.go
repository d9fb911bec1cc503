//go:build dev

// `erpgate dev` is built only with -tags dev (go run ./cmd/erpgate-dev does
// this), so the release binary links neither simulator nor the 3 MB of
// Acumatica's OpenAPI document that only the simulator needs.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/config"
	"github.com/erpgate/erpgate/platform/infra/pgcluster"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// Dev-mode defaults. Each can be overridden by the usual environment
// variable (ERPGATE_LISTEN_ADDR, ERPGATE_PUBLIC_BASE_URL, DATABASE_URL, …);
// each connector's simulators' addresses by ERPGATE_DEV_<KIND>_ADDR and
// ERPGATE_DEV_<KIND>_REGISTER_ADDR (ERPGATE_DEV_FRAPPE_ADDR, …; the
// defaults are the connector's, see its demo_dev.go), the private
// cluster's port by ERPGATE_DEV_POSTGRES_PORT. ERPGATE_DEV_ANY_PORTS=1
// puts every simulator not given an address on a free port (dev.json
// says where), so that several dev processes run side by side, as the
// end-to-end kit (platform/connector/connectortest/e2e) runs them.
const (
	devListenAddr  = "127.0.0.1:8080"
	devDatabase    = "erpgate"
	devSecretsFile = "dev-secrets.json"
)

func init() {
	devCommand = func(ctx context.Context, args []string) error {
		err := runDev(ctx, args)
		if err != nil && ctx.Err() != nil {
			// Ctrl-C during start-up: what failed after it is no error.
			return nil
		}
		return err
	}
}

// devSecrets are generated on the first run and reused afterwards, so the
// stored credentials stay readable and the admin token stays the same.
type devSecrets struct {
	AdminToken     string `json:"admin_token"`
	EncryptionKeys string `json:"encryption_keys"`
}

// runDev is `erpgate dev`: a private Postgres under .data/ (unless
// DATABASE_URL is set), the ERP simulators with demo data, the gateway on
// 127.0.0.1:8080, and demo sites registered through the admin API.
func runDev(ctx context.Context, args []string) error {
	if len(args) != 0 {
		return usageError{"dev takes no arguments"}
	}
	log := newLogger(zapcore.InfoLevel, nil)
	defer syncLog(log, logSyncLimit)
	dataDir, err := filepath.Abs(devDataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dataDir, err)
	}
	sec, err := loadDevSecrets(filepath.Join(dataDir, devSecretsFile))
	if err != nil {
		return err
	}

	var ports []devPort
	dbURL, hasDB := os.LookupEnv("DATABASE_URL")
	shownDBURL := redactURL(dbURL)
	if !hasDB || dbURL == "" {
		pgPort := 0
		if v := os.Getenv("ERPGATE_DEV_POSTGRES_PORT"); v != "" {
			if pgPort, err = strconv.Atoi(v); err != nil || pgPort < 1 || pgPort > 65535 {
				return fmt.Errorf("ERPGATE_DEV_POSTGRES_PORT is %q; it must be a TCP port number between 1 and 65535", v)
			}
		}
		cluster, err := pgcluster.Start(ctx, pgcluster.Options{Dir: filepath.Join(dataDir, "postgres"), Logger: log, Port: pgPort})
		if err != nil {
			return fmt.Errorf("start the private Postgres cluster under %s: %w", dataDir, err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := cluster.Stop(sctx); err != nil {
				log.Error("stopping Postgres", zap.Error(err))
			}
		}()
		if err := ensureDatabase(ctx, cluster.URL("postgres"), devDatabase); err != nil {
			return err
		}
		dbURL = cluster.URL(devDatabase)
		// The private cluster's password is the dev's own, under .data/.
		shownDBURL = dbURL
		ports = append(ports, devPort{Name: "PostgreSQL", Addr: fmt.Sprintf("127.0.0.1:%d", cluster.Port()), Env: "ERPGATE_DEV_POSTGRES_PORT"})
	}

	overlay := map[string]string{
		"ERPGATE_LISTEN_ADDR":     devListenAddr,
		"DATABASE_URL":            dbURL,
		"ERPGATE_ADMIN_TOKEN":     sec.AdminToken,
		"ERPGATE_ENCRYPTION_KEYS": sec.EncryptionKeys,
	}
	lookup := func(key string) (string, bool) {
		if v, ok := os.LookupEnv(key); ok && v != "" {
			return v, true
		}
		if key == "ERPGATE_PUBLIC_BASE_URL" {
			return "http://" + envOr("ERPGATE_LISTEN_ADDR", devListenAddr), true
		}
		v, ok := overlay[key]
		return v, ok
	}
	cfg, err := config.Load(lookup, os.Getenv(config.FileEnv))
	if err != nil {
		return err
	}
	reg, err := newRegistry()
	if err != nil {
		return err
	}
	demos, stopDemos, err := startDemos(ctx, dataDir, func(slug string) string { return cfg.PublicURL(sites.SiteCallbackPath(slug)) })
	if err != nil {
		return err
	}
	defer stopDemos()

	listening := make(chan string, 1)
	served := make(chan error, 1)
	go func() {
		served <- serveUntilDone(ctx, cfg, log, func(addr string) { listening <- addr })
	}()
	var gatewayAddr string
	select {
	case err := <-served:
		return err
	case gatewayAddr = <-listening:
	}
	// Ctrl-C while the demo sites are being registered is a clean stop too.
	stopped := func(err error) error {
		if ctx.Err() != nil {
			return <-served
		}
		return err
	}

	statePath := filepath.Join(dataDir, devStateFile)
	previous := readDevState(statePath)
	admin := &adminClient{base: cfg.PublicBaseURL, token: sec.AdminToken}
	var sites []devSite
	var demoPorts, registrationPorts []devPort
	var registration []devRegistrationERP
	for _, d := range demos {
		site, err := registerDemo(ctx, admin, reg, previous, d)
		if err != nil {
			return stopped(err)
		}
		sites = append(sites, site)
		demoPorts = append(demoPorts, devPort{Name: d.Name + " simulator", Addr: hostPort(d.URL), Env: devAddrEnv(d.kind, "")})
		if r := d.Registration; r != nil {
			registration = append(registration, devRegistrationERP{Kind: d.kind, ERPURL: r.URL, Tenant: r.Tenant,
				SignInURL: r.SignInURL, OAuthClientURL: r.OAuthClientURL, Users: devUsers(r.Users)})
			registrationPorts = append(registrationPorts, devPort{Name: d.Name + " for registration", Addr: hostPort(r.URL), Env: devAddrEnv(d.kind, "REGISTER_")})
		}
	}
	ports = slices.Concat([]devPort{{Name: "gateway", Addr: gatewayAddr, Env: "ERPGATE_LISTEN_ADDR"}}, demoPorts, registrationPorts, ports)
	state := devState{BaseURL: cfg.PublicBaseURL, AdminToken: sec.AdminToken, DatabaseURL: shownDBURL,
		MetricsURL: devMetricsURL(cfg), Ports: ports, Sites: sites,
		RegisterURL: cfg.PublicURL("/register"), Registration: registration}
	if err := writeJSONFile(statePath, state, 0o600); err != nil {
		return err
	}
	// The start-up lines sit in the logger's buffer for up to
	// logFlushInterval: flush them, so the summary comes after them.
	syncLog(log, logSyncLimit)
	printDevSummary(os.Stdout, state, statePath)

	return <-served
}

func hostPort(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return u.Host
	}
	return rawURL
}

// redactURL hides the password of a DATABASE_URL the developer supplied.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	return raw
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func loadDevSecrets(path string) (devSecrets, error) {
	var s devSecrets
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &s); err != nil {
			return s, fmt.Errorf("read %s: %w (delete it to start over)", path, err)
		}
		return s, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return s, fmt.Errorf("read %s: %w", path, err)
	}
	tok, err := secrets.NewToken("ega")
	if err != nil {
		return s, err
	}
	keys, err := secrets.GenerateKeySpec("dev1")
	if err != nil {
		return s, err
	}
	s = devSecrets{AdminToken: tok.Value.Reveal(), EncryptionKeys: keys}
	return s, writeJSONFile(path, s, 0o600)
}

func writeJSONFile(path string, v any, mode os.FileMode) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// ensureDatabase creates the database on first use.
func ensureDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect to the private cluster: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("look up database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// devMetricsURL is where dev serves /metrics: on the gateway's address
// behind the admin token, or on ERPGATE_METRICS_ADDR.
func devMetricsURL(cfg *config.Config) string {
	if cfg.Metrics.ListenAddr == "" {
		return cfg.PublicBaseURL + metricsPath
	}
	host, port, _ := net.SplitHostPort(cfg.Metrics.ListenAddr)
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + metricsPath
}

func printDevSummary(w io.Writer, s devState, path string) {
	var b bytes.Buffer
	rule := "------------------------------------------------------------------------"
	fmt.Fprintf(&b, "\n%s\nerpgate is running at %s\n", rule, s.BaseURL)
	fmt.Fprintf(&b, "  admin API:    %s/api/v1  (Authorization: Bearer %s)\n", s.BaseURL, s.AdminToken)
	fmt.Fprintf(&b, "  console:      %s/console  (sign in with the admin token)\n", s.BaseURL)
	if s.MetricsURL == s.BaseURL+metricsPath {
		fmt.Fprintf(&b, "  metrics:      %s  (Authorization: Bearer %s)\n", s.MetricsURL, s.AdminToken)
	} else if s.MetricsURL != "" {
		fmt.Fprintf(&b, "  metrics:      %s  (ERPGATE_METRICS_ADDR, no token)\n", s.MetricsURL)
	}
	fmt.Fprintf(&b, "  DATABASE_URL: %s\n", s.DatabaseURL)
	for _, site := range s.Sites {
		fmt.Fprintf(&b, "  site %s (%s, ERP simulator at %s)\n", site.Slug, site.Kind, site.ERPURL)
		fmt.Fprintf(&b, "    MCP (OAuth):  %s\n", site.MCPURL)
		fmt.Fprintf(&b, "    owner's page: %s/sites/%s/manage  (sign in as its administrator)\n", s.BaseURL, site.Slug)
		fmt.Fprintf(&b, "    service MCP:  %s  (X-Erpgate-Service-Token: %s)\n", site.ServiceMCPURL, site.ServiceToken)
		if len(site.WriteTools) > 0 {
			fmt.Fprintf(&b, "    writes:       %s (each waits for a person's approval; the service token's for %s)\n",
				strings.Join(site.WriteTools, ", "), site.ServiceWriteApprover)
		}
		fmt.Fprintf(&b, "    ERP API credentials:")
		for _, k := range slices.Sorted(maps.Keys(site.ERPCredentials)) {
			fmt.Fprintf(&b, " %s=%s", k, site.ERPCredentials[k])
		}
		fmt.Fprintln(&b)
		for _, u := range site.Users {
			fmt.Fprintf(&b, "    demo user %-28s password %-16s %s\n", u.Username, u.Password, userRole(u))
		}
	}
	if len(s.Registration) > 0 {
		fmt.Fprintf(&b, "  walk registration at %s with these simulators, which no site uses yet:\n", s.RegisterURL)
		for _, erp := range s.Registration {
			fmt.Fprintf(&b, "    %s at %s", erp.Kind, erp.ERPURL)
			if erp.Tenant != "" {
				fmt.Fprintf(&b, " (tenant %s)", erp.Tenant)
			}
			fmt.Fprintf(&b, "\n      sign in at %s as the administrator, then create the OAuth client at %s\n", erp.SignInURL, erp.OAuthClientURL)
			for _, u := range erp.Users {
				who := "non-administrator"
				if u.Admin {
					who = "administrator"
				}
				fmt.Fprintf(&b, "      %-17s %-28s password %-16s %s\n", who, u.Username, u.Password, u.Role)
			}
		}
	}
	fmt.Fprintf(&b, "  ports (set the variable to move one):\n")
	for _, p := range s.Ports {
		fmt.Fprintf(&b, "    %-28s %-16s %s\n", p.Name, p.Addr, p.Env)
	}
	fmt.Fprintf(&b, "All of this is in %s. Press Ctrl-C to stop.\n%s\n", path, rule)
	_, _ = w.Write(b.Bytes())
}

// userRole is a demo user's persona, marked when they administer the ERP.
func userRole(u devUser) string {
	if u.Admin && u.Role != "administrator" {
		return u.Role + " (administrator)"
	}
	return u.Role
}

// devDemo is the running demo of a registered connector.
type devDemo struct {
	kind string
	*connector.Demo
}

// startDemos starts the demo of every registered connector that brings
// one (connector.Demoer), in the order of connectorList, on the addresses
// ERPGATE_DEV_<KIND>_ADDR and ERPGATE_DEV_<KIND>_REGISTER_ADDR or the
// connector's defaults, with what each saved in earlier runs.
func startDemos(ctx context.Context, dataDir string, callbackURL func(slug string) string) ([]devDemo, func(), error) {
	saved, err := loadDemoSaved(filepath.Join(dataDir, devRegistrationClientsFile))
	if err != nil {
		return nil, nil, err
	}
	var demos []devDemo
	stop := func() {
		for i := len(demos) - 1; i >= 0; i-- {
			demos[i].Close()
		}
	}
	for _, newConnector := range connectorList {
		c := newConnector(connectorDeps{})
		demoer, ok := c.(connector.Demoer)
		if !ok {
			continue
		}
		kind := c.Kind()
		d, err := demoer.Demo(ctx, connector.DemoEnv{
			Addr: devDemoAddr(kind, ""), RegistrationAddr: devDemoAddr(kind, "REGISTER_"),
			CallbackURL: callbackURL, Saved: saved.of(kind), Save: saved.saver(kind),
		})
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("the %s demo: %w", kind, err)
		}
		if d.Name == "" {
			d.Name = kind
		}
		if d.Close == nil {
			d.Close = func() {}
		}
		demos = append(demos, devDemo{kind: kind, Demo: d})
	}
	return demos, stop, nil
}

// devDemoAddr is where a kind's simulator listens: its variable's
// address, else any free port under ERPGATE_DEV_ANY_PORTS, else ""
// (the connector's default).
func devDemoAddr(kind, infix string) string {
	if addr := os.Getenv(devAddrEnv(kind, infix)); addr != "" {
		return addr
	}
	if os.Getenv("ERPGATE_DEV_ANY_PORTS") != "" {
		return "127.0.0.1:0"
	}
	return ""
}

// registerDemo registers a demo's site through the admin API: the site and
// its service connection (reusing the service token of the previous run),
// the OAuth client for people, and every write tool, approved by the
// demo's approver.
func registerDemo(ctx context.Context, admin *adminClient, reg *connector.Registry, previous devState, d devDemo) (devSite, error) {
	s := d.Site
	site, err := admin.ensureSite(ctx, previous, siteRequest{
		Slug: s.Slug, Kind: d.kind, DisplayName: s.DisplayName, BaseURL: d.URL,
		Settings: s.Settings, Credentials: s.Credentials,
	})
	if err != nil {
		return devSite{}, fmt.Errorf("register the demo %s site: %w", d.Name, err)
	}
	if s.OAuthClientID != "" {
		if err := admin.putOAuthClient(ctx, site.ID, s.OAuthClientID, s.OAuthClientSecret); err != nil {
			return devSite{}, fmt.Errorf("add the demo %s site's OAuth client: %w", d.Name, err)
		}
	}
	if err := enableDemoWrites(ctx, admin, reg, &site, s.WriteApprover); err != nil {
		return devSite{}, fmt.Errorf("enable the demo %s site's writes: %w", d.Name, err)
	}
	site.ERPURL = d.URL
	site.ERPCredentials = maps.Clone(s.Credentials)
	// What registering a second site by hand takes: the credentials and
	// the settings that are strings (Acumatica's tenant).
	for k, v := range s.Settings {
		if v, ok := v.(string); ok {
			if site.ERPCredentials == nil {
				site.ERPCredentials = map[string]string{}
			}
			site.ERPCredentials[k] = v
		}
	}
	site.Users = devUsers(s.Users)
	return site, nil
}

func devUsers(users []connector.DemoUser) []devUser {
	var out []devUser
	for _, u := range users {
		out = append(out, devUser{Username: u.Username, Password: u.Password, Role: u.Role, Admin: u.Admin})
	}
	return out
}

// enableDemoWrites enables every write tool of the demo site, for people
// and for its service token, whose writes approver (the ERP's demo
// administrator) approves, so that the whole approval flow can be walked
// locally (docs/writes.md). A kind without write tools has nothing to
// enable.
func enableDemoWrites(ctx context.Context, admin *adminClient, reg *connector.Registry, site *devSite, approver string) error {
	site.WriteTools = writeToolNames(reg, site.Kind)
	if len(site.WriteTools) == 0 {
		return nil
	}
	site.ServiceWriteApprover = approver
	return admin.enableWrites(ctx, site.ID, site.WriteTools, approver)
}
