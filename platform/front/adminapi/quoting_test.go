package adminapi_test

import (
	"net/http"
	"strings"
	"testing"
	"unicode"
)

// TestMessagesQuoteInputPlainly: an operator's input named in an error
// message (a site, a connection type, a setting, an ERP user, a service
// token, a body's member) is quoted between typographic quotes as it reads:
// a quote mark and a non-ASCII letter as themselves, a control character
// as a visible symbol, never as Go's escapes ("a\"b\x01").
func TestMessagesQuoteInputPlainly(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	h.connect("acme")
	const typed = `Zoë "Q"` + "\x01"
	const path = "Zo%C3%AB%20%22Q%22%01"
	for _, c := range []struct {
		method, path string
		body         any
		status       int
	}{
		{http.MethodGet, "/api/v1/sites/" + path, nil, http.StatusNotFound},
		{http.MethodGet, "/api/v1/nothing/" + path, nil, http.StatusNotFound},
		{http.MethodPost, "/api/v1/sites", map[string]any{"slug": typed, "kind": "fakeerp", "display_name": "X", "base_url": "http://erp.dev.test"}, http.StatusBadRequest},
		{http.MethodPost, "/api/v1/sites", map[string]any{"slug": "x", "kind": "fakeerp", "display_name": "X", "base_url": "http://erp.dev.test", typed: 1}, http.StatusBadRequest},
		{http.MethodPut, "/api/v1/sites/acme/connections/" + path, map[string]any{"credentials": map[string]string{}}, http.StatusNotFound},
		{http.MethodDelete, "/api/v1/sites/acme/people/" + path, nil, http.StatusNotFound},
		{http.MethodDelete, "/api/v1/sites/acme/service-tokens/" + path, nil, http.StatusNotFound},
		{http.MethodPut, "/api/v1/settings/" + path, map[string]any{"value": 1}, http.StatusBadRequest},
		{http.MethodPatch, "/api/v1/sites/acme", map[string]any{"status": typed}, http.StatusBadRequest},
		{http.MethodPost, "/api/v1/sites", map[string]any{"slug": "acme", "kind": typed, "display_name": "X", "base_url": "http://erp.dev.test"}, http.StatusBadRequest},
	} {
		r := h.call(c.method, c.path, c.body)
		msg := r.errorMessage(t)
		t.Logf("%s %s: %d %s", c.method, c.path, r.Status, msg)
		if r.Status != c.status {
			t.Errorf("%s %s: HTTP %d, want %d: %s", c.method, c.path, r.Status, c.status, msg)
		}
		// A route quotes the whole path, which ends with the input.
		if !strings.Contains(msg, "“Zoë \"Q\"␁”") && !strings.Contains(msg, "/Zoë \"Q\"␁”") {
			t.Errorf("%s %s: %q does not quote the input as “Zoë \"Q\"␁”", c.method, c.path, msg)
		}
		if strings.Contains(msg, `\"`) || strings.Contains(msg, `\x`) || strings.Contains(msg, `\u`) || strings.ContainsFunc(msg, unicode.IsControl) {
			t.Errorf("%s %s: %q quotes Go-style or holds a control character", c.method, c.path, msg)
		}
	}
}
