package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap/zapcore"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/config"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// syncBuffer collects log output from concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}
func (b *syncBuffer) Sync() error { return nil }
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// gateway is one real erpgate replica on a loopback port, with its logs.
type gateway struct {
	URL        string
	AdminToken string
	Keys       string
	DBURL      string
	App        *App
	Logs       *syncBuffer
	admin      *adminClient
}

// startGateway runs a replica against dbURL (a fresh database when empty)
// with env overriding the defaults. It stops at test cleanup.
func startGateway(t testing.TB, dbURL string, env map[string]string) *gateway {
	t.Helper()
	if dbURL == "" {
		dbURL = pgtest.NewDatabase(t)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := secrets.NewToken("ega")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.GenerateKeySpec("t1")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	logs := &syncBuffer{}
	app := serveReplica(t, ln, base, dbURL, admin.Value.Reveal(), keys, env, logs)
	return &gateway{
		URL: base, AdminToken: admin.Value.Reveal(), Keys: keys, DBURL: dbURL, App: app, Logs: logs,
		admin: &adminClient{base: base, token: admin.Value.Reveal()},
	}
}

// serveReplica runs an erpgate instance on ln, announcing base, against
// dbURL with the given admin token and keys, env overriding the defaults,
// logging into logs. It stops at test cleanup.
func serveReplica(t testing.TB, ln net.Listener, base, dbURL, adminToken, keys string, env map[string]string, logs *syncBuffer) *App {
	t.Helper()
	vars := map[string]string{
		"ERPGATE_LISTEN_ADDR":          ln.Addr().String(),
		"ERPGATE_PUBLIC_BASE_URL":      base,
		"DATABASE_URL":                 dbURL,
		"ERPGATE_ADMIN_TOKEN":          adminToken,
		"ERPGATE_ENCRYPTION_KEYS":      keys,
		"ERPGATE_USAGE_FLUSH_INTERVAL": "50ms",
	}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := vars[k]; return v, ok }, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	app, err := NewApp(ctx, cfg, newLogger(zapcore.DebugLevel, logs))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := app.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return app
}

// registerFrappe registers sim as a site with the credential of user and
// returns the site and a fresh service token.
func (g *gateway) registerFrappe(t testing.TB, slug string, sim *frappetest.Server, user frappetest.User) devSite {
	t.Helper()
	site, err := g.admin.ensureSite(context.Background(), devState{}, siteRequest{
		Slug: slug, Kind: "frappe", DisplayName: "Test " + slug, BaseURL: sim.URL,
		Credentials: map[string]string{"api_key": user.APIKey, "api_secret": user.APISecret},
	})
	if err != nil {
		t.Fatalf("register %s: %v", slug, err)
	}
	return site
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// connect opens an MCP session with the official Go SDK client.
func connect(t *testing.T, endpoint string, headers map[string]string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "erpgate-e2e", Version: "1"}, nil)
	hc := &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: headers}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func userWithRole(t testing.TB, sim *frappetest.Server, role string) frappetest.User {
	t.Helper()
	for _, u := range sim.Users() {
		if u.Role == role {
			return u
		}
	}
	t.Fatalf("simulator has no %s user", role)
	return frappetest.User{}
}

// acumaticaService is an Acumatica service connection: the tenant, the
// password-grant application and the dedicated API user. It has the
// fields of acumaticatest.ServiceLogin, so one converts to the other.
type acumaticaService struct {
	Tenant       string
	ClientID     string
	ClientSecret string
	Username     string
	Password     string
}

func (s acumaticaService) credentials() map[string]string {
	return map[string]string{
		"client_id": s.ClientID, "client_secret": s.ClientSecret,
		"username": s.Username, "password": s.Password,
	}
}

// registerAcumaticaService registers the Acumatica instance at erpURL as a
// site whose service connection is svc.
func registerAcumaticaService(ctx context.Context, admin *adminClient, previous devState, svc acumaticaService,
	slug, name, erpURL string) (devSite, error) {
	return admin.ensureSite(ctx, previous, siteRequest{
		Slug: slug, Kind: "acumatica", DisplayName: name, BaseURL: erpURL,
		Settings:    map[string]any{"tenant": svc.Tenant},
		Credentials: svc.credentials(),
	})
}

// callbackURL is the redirect URI the site's OAuth client must have, as
// the admin API states it.
func (g *gateway) callbackURL(t testing.TB, slug string) string {
	t.Helper()
	var site siteResponse
	if err := g.admin.do(context.Background(), http.MethodGet, "/sites/"+url.PathEscape(slug), nil, &site); err != nil {
		t.Fatal(err)
	}
	if site.OAuthRedirectURI == "" {
		t.Fatalf("site %s: no oauth_redirect_uri", slug)
	}
	return site.OAuthRedirectURI
}

// useSharedCallback makes the site one registered before sites had a
// redirect URI of their own, as migration 00027 left those.
func (g *gateway) useSharedCallback(t *testing.T, site devSite) {
	t.Helper()
	execSQL(t, g.DBURL, `UPDATE sites SET shared_callback = true WHERE id = $1`, site.ID)
}
