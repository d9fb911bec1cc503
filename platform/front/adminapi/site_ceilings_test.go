package adminapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestSiteCallCeilingsPerSite: a site's own call ceilings (seed 000: an
// Acumatica of a small licence tier throttles at some 6 calls at once and
// 50 a minute) are set per site through the site's settings, where
// nothing set means the deployment's; nonsense is refused with a 400 that
// says what is allowed, and leaves the value in force. Before, the
// ceilings could only be set for the whole deployment.
func TestSiteCallCeilingsPerSite(t *testing.T) {
	h := newHarness(t)
	h.createSite("small")
	h.createSite("big")

	r := h.call(http.MethodGet, "/api/v1/sites/small/settings", nil)
	expect(t, r, http.StatusOK, "")
	for _, name := range []string{"site_concurrency", "site_per_minute"} {
		s := setting(t, r.JSON(t), name)
		want := map[string]float64{"site_concurrency": 10, "site_per_minute": 300}[name]
		if s["value"] != want || s["source"] != "default" {
			t.Errorf("small's %s before any change: %v, want the deployment's %v", name, s, want)
		}
	}

	r = h.call(http.MethodPut, "/api/v1/sites/small/settings/site_concurrency", map[string]any{"value": 6})
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t); got["value"] != float64(6) || got["source"] != "site" {
		t.Errorf("small's site_concurrency after PUT 6: %v", got)
	}
	r = h.call(http.MethodPut, "/api/v1/sites/small/settings/site_per_minute", map[string]any{"value": 50})
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t); got["value"] != float64(50) || got["source"] != "site" {
		t.Errorf("small's site_per_minute after PUT 50: %v", got)
	}

	for _, bad := range []struct {
		name string
		body any
	}{
		{"site_concurrency", map[string]any{"value": 0}},
		{"site_concurrency", map[string]any{"value": -3}},
		{"site_concurrency", map[string]any{"value": 2147483648}},
		{"site_concurrency", map[string]any{"value": 1e15}},
		{"site_concurrency", map[string]any{"value": 2.5}},
		{"site_concurrency", map[string]any{"value": "ten"}},
		{"site_concurrency", map[string]any{"value": nil}},
		{"site_per_minute", map[string]any{"value": 0}},
		{"site_per_minute", map[string]any{"value": -50}},
		{"site_per_minute", map[string]any{"value": 99999999999}},
	} {
		r := h.call(http.MethodPut, "/api/v1/sites/small/settings/"+bad.name, bad.body)
		expect(t, r, http.StatusBadRequest, "invalid_request")
		if msg := r.errorMessage(t); !strings.Contains(msg, "must be a whole number from 1 to 1073741824") {
			t.Errorf("PUT %s %v: %q, want it to say what numbers are allowed", bad.name, bad.body, msg)
		}
	}

	r = h.call(http.MethodGet, "/api/v1/sites/small/settings", nil)
	expect(t, r, http.StatusOK, "")
	if s := setting(t, r.JSON(t), "site_concurrency"); s["value"] != float64(6) || s["source"] != "site" {
		t.Errorf("small's site_concurrency after the refusals: %v, want 6 still", s)
	}
	if s := setting(t, r.JSON(t), "site_per_minute"); s["value"] != float64(50) || s["source"] != "site" {
		t.Errorf("small's site_per_minute after the refusals: %v, want 50 still", s)
	}
	// The other site, and the deployment, keep theirs.
	r = h.call(http.MethodGet, "/api/v1/sites/big/settings", nil)
	expect(t, r, http.StatusOK, "")
	if s := setting(t, r.JSON(t), "site_concurrency"); s["value"] != float64(10) || s["source"] != "default" {
		t.Errorf("big's site_concurrency: %v, want the deployment's 10", s)
	}
	r = h.call(http.MethodGet, "/api/v1/settings", nil)
	expect(t, r, http.StatusOK, "")
	if s := setting(t, r.JSON(t), "site_concurrency"); s["value"] != float64(10) {
		t.Errorf("the deployment's site_concurrency: %v, want 10", s)
	}

	// A deployment value reaches a site without its own; reset returns a
	// site to the deployment's.
	expect(t, h.call(http.MethodPut, "/api/v1/settings/site_concurrency", map[string]any{"value": 20}), http.StatusOK, "")
	r = h.call(http.MethodGet, "/api/v1/sites/big/settings", nil)
	if s := setting(t, r.JSON(t), "site_concurrency"); s["value"] != float64(20) || s["source"] != "deployment" {
		t.Errorf("big's site_concurrency after the deployment's went to 20: %v", s)
	}
	r = h.call(http.MethodDelete, "/api/v1/sites/small/settings/site_concurrency", nil)
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t); got["value"] != float64(20) || got["source"] != "deployment" {
		t.Errorf("small's site_concurrency after reset: %v, want the deployment's 20", got)
	}
}
