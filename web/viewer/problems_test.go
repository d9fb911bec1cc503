package viewer

import (
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/activity"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

// TestUnknownSiteFilterIsQuotedForPeople: a site filter naming no site is
// refused with the name as typed between quotation marks, not Go-quoted
// with backslash escapes. Before: No site is named "ac\"me".
func TestUnknownSiteFilterIsQuotedForPeople(t *testing.T) {
	pool := pgtest.NewPool(t)
	keys, err := secrets.ParseKeyring(mustKeySpec(t))
	if err != nil {
		t.Fatal(err)
	}
	kit, err := pagekit.New("https://gw.example.com")
	if err != nil {
		t.Fatal(err)
	}
	v := New(Deps{Shell: shell{kit}, Events: activity.NewStore(pool), Sites: sites.NewStore(pool, keys), Now: time.Now})
	e := echo.New()
	v.Register(e)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, UsageExportPath+"?site=ac%22me", nil))
	body := html.UnescapeString(rec.Body.String())
	if rec.Code != http.StatusBadRequest || !strings.Contains(body, "No site is named “ac\"me”.") || strings.Contains(body, `\"`) {
		t.Errorf("HTTP %d: %s", rec.Code, body)
	}
}
