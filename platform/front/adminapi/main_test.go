package adminapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/adminapi"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/activity"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/sites"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const adminToken = "admin-token-5b0e9f"

// harness is a real echo instance with the admin API mounted at /api/v1,
// on a fresh database, with the fake ERP registered and its upstream up.
type harness struct {
	t        *testing.T
	e        *echo.Echo
	store    *sites.Store
	pool     *pgxpool.Pool
	upstream *fakeUpstream
	logs     *observer.ObservedLogs
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, func(*adminapi.Deps, *fakeUpstream) {})
}

// newHarnessWith is newHarness with deps changed by adjust, which is
// given the harness's fake ERP.
func newHarnessWith(t *testing.T, adjust func(*adminapi.Deps, *fakeUpstream)) *harness {
	t.Helper()
	pool := pgtest.NewPool(t)
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	registry := connector.NewRegistry()
	registry.MustRegister(fakeERP{})
	registry.MustRegister(fakeOAuthERP{})
	registry.MustRegister(dbERP{})
	core, logs := observer.New(zapcore.DebugLevel)
	store := sites.NewStore(pool, keys)
	live := livesettings.New(pool, livesettings.Defaults{
		MaxRecords: 1000, UserConcurrency: 3, UserPerMinute: 40, SiteConcurrency: 10, SitePerMinute: 300, CanaryInquiry: "MCPAccess",
	}, nil)
	if err := live.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	deps := adminapi.Deps{
		Settings:   live,
		Store:      store,
		Registry:   registry,
		AdminToken: adminToken,
		PublicURL:  func(path string) string { return "https://gw.example.com" + path },
		IsDevHost:  func(host string) bool { return host == "erp.dev.test" },
		HTTPClient: authorizingClient,
		Logger:     zap.New(core),
		Activity:   activity.NewStore(pool),
	}
	upstream := newFakeUpstream(t)
	adjust(&deps, upstream)
	api := adminapi.New(deps)
	e := echo.New()
	api.Register(e.Group("/api/v1"))
	return &harness{t: t, e: e, store: store, pool: pool, upstream: upstream, logs: logs}
}

// response is one answer of the API.
type response struct {
	Status int
	Header http.Header
	Body   string
}

// JSON decodes the body into a generic value.
func (r response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(r.Body), &v); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return v
}

// errorCode returns error.code of an error body, checking the shape.
func (r response) errorCode(t *testing.T) string {
	t.Helper()
	v := r.JSON(t)
	e, ok := v["error"].(map[string]any)
	if !ok || len(v) != 1 || len(e) != 2 {
		t.Fatalf("not an error body: %s", r.Body)
	}
	code, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	if code == "" || msg == "" {
		t.Fatalf("error without code or message: %s", r.Body)
	}
	return code
}

func (r response) errorMessage(t *testing.T) string {
	t.Helper()
	r.errorCode(t)
	return r.JSON(t)["error"].(map[string]any)["message"].(string)
}

// call sends an authenticated request. body is nil (none), a string (sent
// as is) or a value encoded as JSON.
func (h *harness) call(method, path string, body any) response {
	h.t.Helper()
	return h.send(method, path, body, "Bearer "+adminToken)
}

// send is call with an explicit Authorization header ("" for none).
func (h *harness) send(method, path string, body any, authorization string) response {
	h.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		r = jsonBody(h.t, b)
	}
	req := httptest.NewRequestWithContext(h.t.Context(), method, path, r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	h.e.ServeHTTP(rec, req)
	if got := rec.Header().Get("Cache-Control"); got != "no-store" {
		h.t.Errorf("%s %s: Cache-Control = %q, want no-store", method, path, got)
	}
	return response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.String()}
}

// expect fails the test unless r has status and, for errors, code.
func expect(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d: %s", r.Status, status, r.Body)
	}
	if code != "" {
		if got := r.errorCode(t); got != code {
			t.Fatalf("error code = %q, want %q: %s", got, code, r.Body)
		}
	}
}

// createSite registers a fakeerp site whose base URL is the fake upstream.
func (h *harness) createSite(slug string) map[string]any {
	h.t.Helper()
	r := h.call(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": slug, "kind": "fakeerp", "display_name": "Site " + slug, "base_url": h.upstream.URL,
		"settings": map[string]string{"tenant": slug},
	})
	expect(h.t, r, http.StatusCreated, "")
	return r.JSON(h.t)
}

// connect stores the good credential on the site.
func (h *harness) connect(site string) {
	h.t.Helper()
	r := h.call(http.MethodPut, "/api/v1/sites/"+site+"/connections/api_token",
		map[string]any{"credentials": map[string]string{"api_key": goodKey, "api_secret": goodSecret}})
	expect(h.t, r, http.StatusOK, "")
}

// sendRaw sends an authenticated request with an explicit Content-Type.
func (h *harness) sendRaw(method, path, contentType, body string) response {
	h.t.Helper()
	req := httptest.NewRequestWithContext(h.t.Context(), method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	rec := httptest.NewRecorder()
	h.e.ServeHTTP(rec, req)
	return response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.String()}
}

// count runs a counting query on the harness's database.
func count(t *testing.T, h *harness, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := h.pool.QueryRow(t.Context(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
