package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

func serve(t *testing.T, ready error, path string) *httptest.ResponseRecorder {
	t.Helper()
	e := echo.New()
	Register(e, Deps{
		Ready:     func(context.Context) error { return ready },
		PublicURL: func(p string) string { return "https://gw.example" + p },
		Version:   "test",
	})
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

func TestProbes(t *testing.T) {
	if rec := serve(t, nil, "/healthz"); rec.Code != http.StatusOK {
		t.Errorf("/healthz = %d", rec.Code)
	}
	// /health is where MCP4Acumatica and NexWave MCP, which erpgate
	// replaces, answered their health checks: monitors pointed there keep
	// working.
	if rec := serve(t, nil, "/health"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"ok"`) || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("/health = %d %s", rec.Code, rec.Body)
	}
	if rec := serve(t, nil, "/readyz"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"ready"`) {
		t.Errorf("/readyz = %d %s", rec.Code, rec.Body)
	}
	down := &ReadinessError{Reason: "database unavailable", Err: errors.New("dial tcp 10.0.0.5:5432: password=hunter2")}
	rec := serve(t, down, "/readyz")
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "database unavailable") {
		t.Errorf("/readyz while down = %d %s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "hunter2") || strings.Contains(rec.Body.String(), "10.0.0.5") {
		t.Errorf("/readyz leaked the cause: %s", rec.Body)
	}
	if rec := serve(t, errors.New("anything"), "/readyz"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with a plain error = %d", rec.Code)
	}
}

func TestLandingPageHeadersAndURLs(t *testing.T) {
	rec := serve(t, nil, "/")
	if rec.Code != http.StatusOK {
		t.Fatalf("/ = %d", rec.Code)
	}
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "frame-ancestors 'none'") || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("security headers: %v", rec.Header())
	}
	if !strings.Contains(rec.Body.String(), "https://gw.example/service/mcp") {
		t.Errorf("advertised URLs are not built from the public base URL")
	}
}

func TestLandingPageIsAKitPageWithClientSetup(t *testing.T) {
	rec := serve(t, nil, "/")
	body := rec.Body.String()
	for _, want := range []string{
		`<html lang="en">`,
		`href="https://gw.example/assets/erpgate.css?v=`,
		"https://gw.example/sites/&lt;slug&gt;/mcp",
		"claude mcp add --transport http erp https://gw.example/sites/&lt;slug&gt;/mcp",
		"[mcp_servers.erp]", "ChatGPT", "VS Code", `href="https://gw.example/api/v1/openapi.json"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("landing page lacks %q", want)
		}
	}
	for _, banned := range []string{"<script", "<style", "style=", "/register"} {
		if strings.Contains(body, banned) {
			t.Errorf("landing page has %q", banned)
		}
	}
	css := serve(t, nil, "/assets/erpgate.css")
	if css.Code != http.StatusOK || !strings.HasPrefix(css.Header().Get("Content-Type"), "text/css") || css.Body.Len() == 0 {
		t.Errorf("stylesheet: HTTP %d %s", css.Code, css.Header().Get("Content-Type"))
	}
}

// The landing page says who issues service tokens: the operator, and the
// administrators of a site's ERP on its owner's page (and at the end of
// registration), not the operator alone.
func TestTheLandingPageSaysWhoIssuesServiceTokens(t *testing.T) {
	body := serve(t, nil, "/").Body.String()
	if !strings.Contains(body, "the administrator of your ERP issues on the site's owner page") {
		t.Errorf("the landing page does not say ERP administrators issue service tokens: %s", body)
	}
}

func TestAnUnknownAddressGetsThePageOrJSON(t *testing.T) {
	e := echo.New()
	Register(e, Deps{Ready: func(context.Context) error { return nil }, PublicURL: func(p string) string { return "https://gw.example" + p }})
	e.GET("/api/v1/sites", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	get := func(path, accept string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept", accept)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	page := get("/no/such/page", "text/html,application/xhtml+xml")
	if page.Code != http.StatusNotFound || !strings.Contains(page.Body.String(), "There is no page at this address") || !strings.Contains(page.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("browser: HTTP %d %s", page.Code, page.Body)
	}
	api := get("/api/v1/nothing", "application/json")
	if api.Code != http.StatusNotFound || !strings.Contains(api.Header().Get("Content-Type"), "application/json") {
		t.Errorf("program: HTTP %d %s %s", api.Code, api.Header().Get("Content-Type"), api.Body)
	}
	if ok := get("/api/v1/sites", "text/html"); ok.Code != http.StatusOK {
		t.Errorf("a real route: HTTP %d", ok.Code)
	}
}

// The landing page links registration when it is served, and not when the
// operator turned it off.
func TestTheLandingPageLinksRegistrationWhenServed(t *testing.T) {
	for _, on := range []bool{true, false} {
		e := echo.New()
		Register(e, Deps{Ready: func(context.Context) error { return nil }, PublicURL: func(p string) string { return "https://gw.example" + p }, Registration: on})
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if got := strings.Contains(rec.Body.String(), `href="https://gw.example/register"`); got != on {
			t.Errorf("registration %v: link shown %v", on, got)
		}
	}
}
