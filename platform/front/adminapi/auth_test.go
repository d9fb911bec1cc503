package adminapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/adminapi"
	"github.com/erpgate/erpgate/platform/store/activity"
)

func TestAdminTokenRequired(t *testing.T) {
	h := newHarness(t)
	for _, authorization := range []string{
		"",
		"Bearer",
		"Bearer wrong-token",
		"Bearer " + adminToken + "x",
		"Basic " + adminToken,
		adminToken,
	} {
		r := h.send(http.MethodGet, "/api/v1/sites", nil, authorization)
		expect(t, r, http.StatusUnauthorized, "unauthorized")
		if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%q: WWW-Authenticate = %q", authorization, r.Header.Get("WWW-Authenticate"))
		}
	}
	// Writes are refused before anything happens.
	r := h.send(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": "acme", "kind": "fakeerp", "display_name": "Acme", "base_url": "https://erp.acme.example"}, "Bearer nope")
	expect(t, r, http.StatusUnauthorized, "unauthorized")
	if n := count(t, h, `SELECT count(*) FROM sites`); n != 0 {
		t.Fatal("an unauthenticated request created a site")
	}
	// The scheme is case-insensitive.
	expect(t, h.send(http.MethodGet, "/api/v1/sites", nil, "bearer "+adminToken), http.StatusOK, "")
	// The description is public.
	r = h.send(http.MethodGet, "/api/v1/openapi.json", nil, "")
	expect(t, r, http.StatusOK, "")
	if r.JSON(t)["openapi"] != "3.1.0" {
		t.Errorf("openapi.json: %.80s", r.Body)
	}
}

// With no ADMIN_TOKEN configured, nothing authenticates, not even an empty
// bearer token.
func TestUnsetAdminTokenRefusesEverything(t *testing.T) {
	h := newHarness(t)
	api := adminapi.New(adminapi.Deps{
		Store:      h.store,
		Registry:   connector.NewRegistry(),
		PublicURL:  func(p string) string { return p },
		HTTPClient: authorizingClient,
		Activity:   activity.NewStore(h.pool),
	})
	e := echo.New()
	api.Register(e.Group("/api/v1"))
	h.e = e
	for _, authorization := range []string{"", "Bearer ", "Bearer x"} {
		expect(t, h.send(http.MethodGet, "/api/v1/sites", nil, authorization), http.StatusUnauthorized, "unauthorized")
	}
}

func TestEchoErrorsUseTheErrorShape(t *testing.T) {
	h := newHarness(t)
	r := h.call(http.MethodGet, "/api/v1/nope", nil)
	expect(t, r, http.StatusNotFound, "not_found")
	expect(t, h.call(http.MethodGet, "/api/v1", nil), http.StatusNotFound, "not_found")
	expect(t, h.call(http.MethodGet, "/api/v1/sites/acme/connections", nil), http.StatusNotFound, "not_found")

	r = h.call(http.MethodDelete, "/api/v1/sites", nil)
	expect(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
	if got := r.Header.Get("Allow"); got != "GET, POST" {
		t.Errorf("Allow = %q, want \"GET, POST\"", got)
	}
	r = h.call(http.MethodPost, "/api/v1/sites/acme/connections/api_token", nil)
	expect(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
	if got := r.Header.Get("Allow"); got != "DELETE, PUT" {
		t.Errorf("Allow = %q, want \"DELETE, PUT\"", got)
	}
	expect(t, h.call(http.MethodPut, "/api/v1/openapi.json", nil), http.StatusMethodNotAllowed, "method_not_allowed")
}
