package viewer

import (
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/activity"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// shell stands in for the console: every request is let through, as the
// console's guard lets a signed-in operator through.
type shell struct{ kit *pagekit.Kit }

func (s shell) Guard(next http.Handler) http.Handler { return next }
func (s shell) Kit() *pagekit.Kit                    { return s.kit }
func (s shell) AddNav(string, string)                {}
func (s shell) Render(w http.ResponseWriter, _ *http.Request, status int, p *pagekit.Page, _ string, data any) {
	_ = s.kit.Render(w, status, p, struct{ Data any }{data}, pagekit.Options{})
}

// TestExportIsAStreamedCSVDownload: the export is CSV with the page kit's
// headers, only of the filtered site, and bad filters get the error page.
func TestExportIsAStreamedCSVDownload(t *testing.T) {
	pool := pgtest.NewPool(t)
	keys, err := secrets.ParseKeyring(mustKeySpec(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, slug := range []string{"acme", "beta"} {
		if _, err := pool.Exec(t.Context(), `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES (gen_random_uuid(), $1, 'frappe', 'https://' || $1 || '.example', $1)`, slug); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(t.Context(), `INSERT INTO usage_events (occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, duration_ms)
			SELECT now() - i * interval '1 minute', id, slug, 'oauth', 'r' || i, 'tools/call', 'list_customers', 'success', 5
			FROM sites, generate_series(1, 3) i WHERE slug = $1`, slug); err != nil {
			t.Fatal(err)
		}
	}
	kit, err := pagekit.New("https://gw.example.com")
	if err != nil {
		t.Fatal(err)
	}
	v := New(Deps{Shell: shell{kit}, Events: activity.NewStore(pool), Sites: sites.NewStore(pool, keys), Now: time.Now})
	e := echo.New()
	v.Register(e)

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, UsageExportPath+"?site=acme", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") ||
		!strings.Contains(rec.Header().Get("Content-Disposition"), `attachment; filename="erpgate-usage.csv"`) ||
		rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("Content-Security-Policy") == "" {
		t.Fatalf("export: %d %v", rec.Code, rec.Header())
	}
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Errorf("%d lines, want a header and acme's 3 events", len(rows))
	}
	for _, r := range rows[1:] {
		if r[3] != "acme" {
			t.Errorf("exported a row of %s", r[3])
		}
	}

	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, AuditExportPath+"?outcome=maybe", nil))
	if rec.Code != http.StatusBadRequest || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") ||
		!strings.Contains(rec.Body.String(), "The outcome must be one of: success, refused, error.") {
		t.Errorf("bad export filters: %d %s", rec.Code, rec.Body.String())
	}
}

func mustKeySpec(t *testing.T) string {
	t.Helper()
	spec, err := secrets.GenerateKeySpec("t1")
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestUsagePageShowsAndFindsRequestIDs: each event shows the request id its
// reply carried (X-Request-Id), as the log line and the export do, and the
// form's request id field finds the one call a person quotes.
func TestUsagePageShowsAndFindsRequestIDs(t *testing.T) {
	pool := pgtest.NewPool(t)
	keys, err := secrets.ParseKeyring(mustKeySpec(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES (gen_random_uuid(), 'acme', 'frappe', 'https://acme.example', 'acme')`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `INSERT INTO usage_events (occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, duration_ms)
		SELECT now() - i * interval '1 minute', id, slug, 'oauth', 'req' || i || 'e5f0', 'tools/call', 'list_customers', 'success', 5
		FROM sites, generate_series(1, 3) i`); err != nil {
		t.Fatal(err)
	}
	kit, err := pagekit.New("https://gw.example.com")
	if err != nil {
		t.Fatal(err)
	}
	// The console's partial the pages use; this shell has no flash.
	if kit, err = kit.WithPartials(fstest.MapFS{"console.html": {Data: []byte(`{{define "console_flash"}}{{end}}`)}}, "console.html"); err != nil {
		t.Fatal(err)
	}
	v := New(Deps{Shell: shell{kit}, Events: activity.NewStore(pool), Sites: sites.NewStore(pool, keys), Now: time.Now})
	e := echo.New()
	v.Register(e)
	get := func(path string) string {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s = %d %s", path, rec.Code, rec.Body.String())
		}
		return rec.Body.String()
	}

	all := get(UsagePath)
	shown := func(page, id string) bool { return strings.Contains(page, ">"+id+"<") }
	for _, id := range []string{"req1e5f0", "req2e5f0", "req3e5f0"} {
		if !shown(all, id) {
			t.Errorf("the usage page does not show request id %s", id)
		}
	}
	if !strings.Contains(all, `name="request_id"`) {
		t.Errorf("the filter form has no request id field")
	}
	one := get(UsagePath + "?request_id=req2e5f0")
	if !shown(one, "req2e5f0") || strings.Contains(one, "req1e5f0") || strings.Contains(one, "req3e5f0") {
		t.Errorf("filtered by request id req2e5f0, the page shows other calls or not that one")
	}
	if !strings.Contains(one, `value="req2e5f0"`) {
		t.Errorf("the form does not keep the request id filter")
	}
}
