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
	"net/http"
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

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/config"
	"github.com/erpgate/erpgate/platform/infra/pgcluster"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// Dev-mode defaults. Each can be overridden by the usual environment
// variable (ERPGATE_LISTEN_ADDR, ERPGATE_PUBLIC_BASE_URL, DATABASE_URL, …);
// the simulators' addresses by ERPGATE_DEV_FRAPPE_ADDR and
// ERPGATE_DEV_ACUMATICA_ADDR, the private cluster's port by
// ERPGATE_DEV_POSTGRES_PORT.
const (
	devListenAddr    = "127.0.0.1:8080"
	devFrappeAddr    = "127.0.0.1:8101"
	devFrappeSlug    = "demo-frappe"
	devAcumaticaAddr = "127.0.0.1:8102"
	devAcumaticaSlug = "demo-acumatica"
	devDatabase      = "erpgate"
	devSecretsFile   = "dev-secrets.json"
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
	defer func() { _ = log.Sync() }()
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

	sim := frappetest.NewHandler(frappetest.Options{})
	frappeURL, stopFrappe, err := serveLocal(envOr("ERPGATE_DEV_FRAPPE_ADDR", devFrappeAddr), sim)
	if err != nil {
		return fmt.Errorf("start the Frappe simulator: %w", err)
	}
	defer stopFrappe()
	acuSim := acumaticatest.NewHandler(acumaticatest.Options{})
	defer acuSim.Close()
	acumaticaURL, stopAcumatica, err := serveLocal(envOr("ERPGATE_DEV_ACUMATICA_ADDR", devAcumaticaAddr), acuSim)
	if err != nil {
		return fmt.Errorf("start the Acumatica simulator: %w", err)
	}
	defer stopAcumatica()
	registration, registrationPorts, stopRegistration, err := startRegistrationSimulators(dataDir)
	if err != nil {
		return err
	}
	defer stopRegistration()

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
	frappeSite, err := registerFrappeDemo(ctx, admin, cfg, previous, sim, frappeURL)
	if err != nil {
		return stopped(err)
	}
	acumaticaSite, err := registerAcumaticaDemo(ctx, admin, cfg, previous, acuSim, acumaticaURL)
	if err != nil {
		return stopped(err)
	}
	ports = append([]devPort{
		{Name: "gateway", Addr: gatewayAddr, Env: "ERPGATE_LISTEN_ADDR"},
		{Name: "Frappe simulator", Addr: hostPort(frappeURL), Env: "ERPGATE_DEV_FRAPPE_ADDR"},
		{Name: "Acumatica simulator", Addr: hostPort(acumaticaURL), Env: "ERPGATE_DEV_ACUMATICA_ADDR"},
	}, append(registrationPorts, ports...)...)
	state := devState{BaseURL: cfg.PublicBaseURL, AdminToken: sec.AdminToken, DatabaseURL: shownDBURL,
		MetricsURL: devMetricsURL(cfg), Ports: ports, Sites: []devSite{frappeSite, acumaticaSite},
		RegisterURL: cfg.PublicURL("/register"), Registration: registration}
	if err := writeJSONFile(statePath, state, 0o600); err != nil {
		return err
	}
	// The start-up lines sit in the logger's buffer for up to
	// logFlushInterval: flush them, so the summary comes after them.
	_ = log.Sync()
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

// serveLocal serves h on addr and returns its base URL and a stop function.
func serveLocal(addr string, h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return "http://" + ln.Addr().String(), stop, nil
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

// registerFrappeDemo registers the Frappe simulator as a site: its service
// user's API key for bots, and a fresh OAuth client (the simulator forgets
// clients between runs) so people can sign in as the demo users.
func registerFrappeDemo(ctx context.Context, admin *adminClient, cfg *config.Config, previous devState, sim *frappetest.Simulator, erpURL string) (devSite, error) {
	bot := sim.User("service")
	site, err := admin.ensureSite(ctx, previous, siteRequest{
		Slug: devFrappeSlug, Kind: "frappe", DisplayName: "Demo ERPNext (simulator)", BaseURL: erpURL,
		Credentials: map[string]string{"api_key": bot.APIKey, "api_secret": bot.APISecret},
	})
	if err != nil {
		return devSite{}, fmt.Errorf("register the demo Frappe site: %w", err)
	}
	client := sim.RegisterClient(cfg.PublicURL("/oauth/callback"))
	if err := admin.putOAuthClient(ctx, site.ID, client.ID, client.Secret); err != nil {
		return devSite{}, fmt.Errorf("add the demo Frappe site's OAuth client: %w", err)
	}
	if err := enableDemoWrites(ctx, admin, &site, sim.User(frappetest.RoleAdministrator).Email); err != nil {
		return devSite{}, fmt.Errorf("enable the demo Frappe site's writes: %w", err)
	}
	site.ERPURL = erpURL
	site.ERPCredentials = map[string]string{"api_key": bot.APIKey, "api_secret": bot.APISecret}
	for _, u := range sim.Users() {
		site.Users = append(site.Users, devUser{Username: u.Email, Password: u.Password, Role: u.Role, Admin: u.IsSystemManager()})
	}
	return site, nil
}

// registerAcumaticaDemo registers the Acumatica simulator as a site: the
// simulator's password-grant application and dedicated API user for bots,
// and a fresh authorization-code application so people can sign in.
func registerAcumaticaDemo(ctx context.Context, admin *adminClient, cfg *config.Config, previous devState, sim *acumaticatest.Simulator, erpURL string) (devSite, error) {
	svc := acumaticaService(sim.ServiceLogin())
	site, err := registerAcumaticaService(ctx, admin, previous, svc, devAcumaticaSlug, "Demo Acumatica (simulator)", erpURL)
	if err != nil {
		return devSite{}, fmt.Errorf("register the demo Acumatica site: %w", err)
	}
	client := sim.RegisterClient(cfg.PublicURL("/oauth/callback"))
	if err := admin.putOAuthClient(ctx, site.ID, client.ID, client.Secret); err != nil {
		return devSite{}, fmt.Errorf("add the demo Acumatica site's OAuth client: %w", err)
	}
	// Acumatica names a person by the OIDC subject, user@tenant.
	if err := enableDemoWrites(ctx, admin, &site, sim.User(acumaticatest.RoleFull).Username+"@"+svc.Tenant); err != nil {
		return devSite{}, fmt.Errorf("enable the demo Acumatica site's writes: %w", err)
	}
	site.ERPURL = erpURL
	site.ERPCredentials = svc.credentials()
	site.ERPCredentials["tenant"] = svc.Tenant
	for _, u := range sim.Users() {
		site.Users = append(site.Users, devUser{Username: u.Username, Password: u.Password, Role: u.Role, Admin: u.IsAdministrator()})
	}
	return site, nil
}

// enableDemoWrites enables every write tool of the demo site, for people
// and for its service token, whose writes approver (the ERP's demo
// administrator) approves, so that the whole approval flow can be walked
// locally (docs/writes.md).
func enableDemoWrites(ctx context.Context, admin *adminClient, site *devSite, approver string) error {
	reg, err := newRegistry()
	if err != nil {
		return err
	}
	site.WriteTools = writeToolNames(reg, site.Kind)
	site.ServiceWriteApprover = approver
	return admin.enableWrites(ctx, site.ID, site.WriteTools, approver)
}
