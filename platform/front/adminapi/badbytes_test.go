package adminapi_test

import (
	"net/http"
	"strings"
	"testing"

	"go.uber.org/zap/zapcore"
)

// TestBytesPostgresCannotStoreAreRefused: a NUL or a byte that is not
// UTF-8 in what the operator sends cannot be stored in Postgres text or
// jsonb. Each is a 400 with a sentence, not an internal error, and a
// refused action is still in the audit.
func TestBytesPostgresCannotStoreAreRefused(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	h.connect("acme")

	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodDelete, "/api/v1/sites/acme/people/ann%00@acme.example", nil},
		{http.MethodDelete, "/api/v1/sites/acme/people/ann%FF@acme.example", nil},
		{http.MethodGet, "/api/v1/usage-events?erp_user=ann%00", nil},
		{http.MethodGet, "/api/v1/audit-events?tool=x%00", nil},
		{http.MethodGet, "/api/v1/audit-events?client=x%00", nil},
		{http.MethodPatch, "/api/v1/sites/acme", map[string]any{"settings": map[string]string{"tenant": "a\x00b"}}},
		{http.MethodPost, "/api/v1/sites", map[string]any{"slug": "nul", "kind": "fakeerp", "display_name": "Nul",
			"base_url": "http://erp.dev.test", "settings": map[string]string{"tenant": "a\x00b"}}},
	} {
		if r := h.call(c.method, c.path, c.body); r.Status != http.StatusBadRequest || r.errorCode(t) != "invalid_request" {
			t.Errorf("%s %s: %d %s, want 400 invalid_request", c.method, c.path, r.Status, r.Body)
		}
	}
	for action, want := range map[string]int{"revoke_person": 2, "update_site": 1, "create_site": 1} {
		if n := count(t, h, `SELECT count(*) FROM admin_events WHERE action = $1 AND outcome = 'refused'`, action); n != want {
			t.Errorf("%d refused %s events, want %d", n, action, want)
		}
	}

	// Refusals whose input holds a NUL are audited like any other.
	expect(t, h.call(http.MethodDelete, "/api/v1/sites/acme/service-tokens/x%00y", nil), http.StatusNotFound, "not_found")
	expect(t, h.call(http.MethodPost, "/api/v1/sites/acme/service-tokens", map[string]string{"name": "a\x00b"}), http.StatusBadRequest, "invalid_request")
	expect(t, h.call(http.MethodPut, "/api/v1/settings/x%00y", map[string]any{"value": 1}), http.StatusBadRequest, "invalid_request")
	expect(t, h.call(http.MethodPost, "/api/v1/sites", map[string]any{"slug": "n\x00l", "kind": "fakeerp", "display_name": "Nul",
		"base_url": "http://erp.dev.test"}), http.StatusBadRequest, "invalid_request")
	for action, want := range map[string]int{"revoke_service_token": 1, "issue_service_token": 1, "change_setting": 1, "create_site": 2} {
		if n := count(t, h, `SELECT count(*) FROM admin_events WHERE action = $1 AND outcome = 'refused'`, action); n != want {
			t.Errorf("%d refused %s events, want %d", n, action, want)
		}
	}
	for _, e := range h.logs.All() {
		if e.Level >= zapcore.ErrorLevel {
			t.Errorf("error logged: %s %v", e.Message, e.ContextMap())
		}
	}
}

// A refusal is audited with what was sent, within bounds: a caller (an
// owner on their page, with 64 KiB forms) cannot make each refused request
// store tens of kilobytes in admin_events.
func TestRefusedInputIsAuditedWithinBounds(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	h.connect("acme")
	long := strings.Repeat("x", 20_000)
	expect(t, h.call(http.MethodDelete, "/api/v1/sites/acme/service-tokens/"+long, nil), http.StatusNotFound, "not_found")
	expect(t, h.call(http.MethodDelete, "/api/v1/sites/acme/people/"+long, nil), http.StatusBadRequest, "invalid_request")
	expect(t, h.call(http.MethodPost, "/api/v1/sites/acme/service-tokens", map[string]string{"name": long}), http.StatusBadRequest, "invalid_request")
	expect(t, h.call(http.MethodPost, "/api/v1/sites", map[string]any{"slug": long, "kind": "fakeerp", "display_name": "Long",
		"base_url": "http://erp.dev.test"}), http.StatusBadRequest, "invalid_request")
	for _, action := range []string{"revoke_service_token", "revoke_person", "issue_service_token", "create_site"} {
		var size int
		if err := h.pool.QueryRow(t.Context(), `SELECT coalesce(max(length(details::text) + length(reason) + length(site_slug)), 0)
			FROM admin_events WHERE action = $1 AND outcome = 'refused'`, action).Scan(&size); err != nil {
			t.Fatal(err)
		}
		if size == 0 || size > 4096 {
			t.Errorf("the refused %s event holds %d characters, want some and at most 4096", action, size)
		}
	}
}
