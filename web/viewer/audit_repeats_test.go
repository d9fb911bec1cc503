package viewer

import (
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"slices"
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

// TestAuditShowsHowManyRefusalsARowCounts: a row that counts a minute's
// anonymous refusals (migration 00043's repeats) says how many, on the
// page and in the export; a row of one event says nothing more.
func TestAuditShowsHowManyRefusalsARowCounts(t *testing.T) {
	pool := pgtest.NewPool(t)
	keys, err := secrets.ParseKeyring(mustKeySpec(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `
		INSERT INTO admin_events (occurred_at, actor_kind, actor, action, outcome, reason, details, repeats, summary_key)
		VALUES (now() - interval '5 minutes', 'operator', 'console_sign_in', 'console_sign_in', 'refused', 'invalid_request: the admin token is not valid',
		        '{"source": "203.0.113.1", "reasons": {"wrong_token": 37}}', 37, 'console_sign_in 2026-12-07T10:00'),
		       (now() - interval '4 minutes', 'operator', 'admin_token', 'create_site', 'success', '', '{}', 1, NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `
		INSERT INTO auth_events (occurred_at, event, reason, repeats, summary_key)
		VALUES (now() - interval '3 minutes', 'login_denied', 'wrong_browser', 5, '- login_denied wrong_browser 2026-12-07T10:02')`); err != nil {
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

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, AuditPath, nil))
	page := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("audit page: %d %s", rec.Code, page)
	}
	for _, want := range []string{"refused, 37 times in this minute", "refused, 5 times in this minute"} {
		if !strings.Contains(page, want) {
			t.Errorf("the audit page does not say %q:\n%s", want, page)
		}
	}
	if strings.Count(page, "times in this minute") != 2 {
		t.Errorf("a row of one event says how many times:\n%s", page)
	}

	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, AuditExportPath, nil))
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil || len(rows) != 4 {
		t.Fatalf("export: %d rows (%v)", len(rows), err)
	}
	col := slices.Index(rows[0], "repeats")
	if col < 0 {
		t.Fatalf("the export has no repeats column: %v", rows[0])
	}
	var got []string
	for _, r := range rows[1:] {
		got = append(got, r[col])
	}
	if want := []string{"5", "1", "37"}; !slices.Equal(got, want) {
		t.Errorf("repeats newest first %v, want %v", got, want)
	}
}
