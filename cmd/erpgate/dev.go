package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/config"
	"github.com/erpgate/erpgate/platform/pgcluster"
	"github.com/erpgate/erpgate/platform/secrets"
)

// Dev-mode defaults. Each can be overridden by the usual environment
// variable (ERPGATE_LISTEN_ADDR, ERPGATE_PUBLIC_BASE_URL, DATABASE_URL, …);
// the simulators' addresses by ERPGATE_DEV_FRAPPE_ADDR and
// ERPGATE_DEV_ACUMATICA_ADDR.
const (
	devDataDir       = ".data"
	devListenAddr    = "127.0.0.1:8080"
	devFrappeAddr    = "127.0.0.1:8101"
	devFrappeSlug    = "demo-frappe"
	devAcumaticaAddr = "127.0.0.1:8102"
	devAcumaticaSlug = "demo-acumatica"
	devDatabase      = "erpgate"
	devSecretsFile   = "dev-secrets.json"
	devStateFile     = "dev.json"
)

// devSecrets are generated on the first run and reused afterwards, so the
// stored credentials stay readable and the admin token stays the same.
type devSecrets struct {
	AdminToken     string `json:"admin_token"`
	EncryptionKeys string `json:"encryption_keys"`
}

// devState is .data/dev.json: everything needed to use the local gateway.
type devState struct {
	BaseURL    string    `json:"base_url"`
	AdminToken string    `json:"admin_token"`
	Sites      []devSite `json:"sites"`
}

type devSite struct {
	ID            string    `json:"id"`
	Slug          string    `json:"slug"`
	Kind          string    `json:"kind"`
	ERPURL        string    `json:"erp_url"`
	MCPURL        string    `json:"mcp_url"`
	ServiceMCPURL string    `json:"service_mcp_url"`
	ServiceToken  string    `json:"service_token"`
	Users         []devUser `json:"users"`
}

type devUser struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Role     string `json:"role"`
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

	dbURL, hasDB := os.LookupEnv("DATABASE_URL")
	if !hasDB || dbURL == "" {
		cluster, err := pgcluster.Start(ctx, pgcluster.Options{Dir: filepath.Join(dataDir, "postgres"), Logger: log})
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
	}

	sim := frappetest.NewHandler(frappetest.Options{})
	frappeAddr := envOr("ERPGATE_DEV_FRAPPE_ADDR", devFrappeAddr)
	frappeURL, stopFrappe, err := serveLocal(frappeAddr, sim)
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
	select {
	case err := <-served:
		return err
	case <-listening:
	}

	statePath := filepath.Join(dataDir, devStateFile)
	previous := readDevState(statePath)
	admin := &adminClient{base: cfg.PublicBaseURL, token: sec.AdminToken}
	frappeSite, err := registerFrappeDemo(ctx, admin, cfg, previous, sim, frappeURL)
	if err != nil {
		return err
	}
	acumaticaSite, err := registerAcumaticaDemo(ctx, admin, cfg, previous, acuSim, acumaticaURL)
	if err != nil {
		return err
	}
	state := devState{BaseURL: cfg.PublicBaseURL, AdminToken: sec.AdminToken, Sites: []devSite{frappeSite, acumaticaSite}}
	if err := writeJSONFile(statePath, state, 0o600); err != nil {
		return err
	}
	printDevSummary(os.Stdout, state, statePath)

	return <-served
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

func readDevState(path string) devState {
	var s devState
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &s)
	}
	return s
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

func printDevSummary(w io.Writer, s devState, path string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "\nerpgate is running at %s\n", s.BaseURL)
	fmt.Fprintf(&b, "  admin API:   %s/api/v1  (Authorization: Bearer %s)\n", s.BaseURL, s.AdminToken)
	for _, site := range s.Sites {
		fmt.Fprintf(&b, "  site %s (%s, ERP simulator at %s)\n", site.Slug, site.Kind, site.ERPURL)
		fmt.Fprintf(&b, "    MCP (OAuth):  %s\n", site.MCPURL)
		fmt.Fprintf(&b, "    service MCP:  %s  (X-Erpgate-Service-Token: %s)\n", site.ServiceMCPURL, site.ServiceToken)
		for _, u := range site.Users {
			fmt.Fprintf(&b, "    demo user %-28s password %-16s %s\n", u.Username, u.Password, u.Role)
		}
	}
	fmt.Fprintf(&b, "All of this is in %s. Press Ctrl-C to stop.\n\n", path)
	_, _ = w.Write(b.Bytes())
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
	site.ERPURL = erpURL
	for _, u := range sim.Users() {
		site.Users = append(site.Users, devUser{Username: u.Email, Password: u.Password, Role: u.Role})
	}
	return site, nil
}

// registerAcumaticaService registers sim, served at erpURL, as a site
// whose service connection is the simulator's password-grant application
// and dedicated API user.
func registerAcumaticaService(ctx context.Context, admin *adminClient, previous devState, sim *acumaticatest.Simulator,
	slug, name, erpURL string) (devSite, error) {
	var service acumaticatest.Client
	for _, c := range sim.Clients() {
		if c.Flow == acumaticatest.FlowPassword {
			service = c
		}
	}
	apiUser := sim.User("service")
	return admin.ensureSite(ctx, previous, siteRequest{
		Slug: slug, Kind: "acumatica", DisplayName: name, BaseURL: erpURL,
		Settings: map[string]any{"tenant": sim.Tenant()},
		Credentials: map[string]string{
			"client_id": service.ID, "client_secret": service.Secret,
			"username": apiUser.Username, "password": apiUser.Password,
		},
	})
}

// registerAcumaticaDemo registers the Acumatica simulator as a site: the
// simulator's password-grant application and dedicated API user for bots,
// and a fresh authorization-code application so people can sign in.
func registerAcumaticaDemo(ctx context.Context, admin *adminClient, cfg *config.Config, previous devState, sim *acumaticatest.Simulator, erpURL string) (devSite, error) {
	site, err := registerAcumaticaService(ctx, admin, previous, sim, devAcumaticaSlug, "Demo Acumatica (simulator)", erpURL)
	if err != nil {
		return devSite{}, fmt.Errorf("register the demo Acumatica site: %w", err)
	}
	client := sim.RegisterClient(cfg.PublicURL("/oauth/callback"))
	if err := admin.putOAuthClient(ctx, site.ID, client.ID, client.Secret); err != nil {
		return devSite{}, fmt.Errorf("add the demo Acumatica site's OAuth client: %w", err)
	}
	site.ERPURL = erpURL
	for _, u := range sim.Users() {
		site.Users = append(site.Users, devUser{Username: u.Username, Password: u.Password, Role: u.Role})
	}
	return site, nil
}
