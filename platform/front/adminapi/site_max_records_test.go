package adminapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestSiteMaxRecordsPerSite: design.md caps the records per query per
// site. A site's own max_records is set through its settings, where
// nothing set means the deployment's; it only lowers the deployment's cap,
// so a value above it is refused, as is nonsense, with a 400 that says what
// is allowed, and the value in force stays. Before, max_records could only
// be set for the whole deployment (and the Acumatica connector's setting),
// so a Frappe site could not be capped on its own.
func TestSiteMaxRecordsPerSite(t *testing.T) {
	h := newHarness(t)
	h.createSite("small")
	h.createSite("big")

	r := h.call(http.MethodGet, "/api/v1/sites/small/settings", nil)
	expect(t, r, http.StatusOK, "")
	if s := setting(t, r.JSON(t), "max_records"); s["value"] != float64(1000) || s["source"] != "default" {
		t.Errorf("small's max_records before any change: %v, want the deployment's 1000", s)
	}

	r = h.call(http.MethodPut, "/api/v1/sites/small/settings/max_records", map[string]any{"value": 5})
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t); got["value"] != float64(5) || got["source"] != "site" {
		t.Errorf("small's max_records after PUT 5: %v", got)
	}

	for _, bad := range []struct {
		body any
		want string
	}{
		{map[string]any{"value": 0}, "must be a whole number from 1 to 100000"},
		{map[string]any{"value": -5}, "must be a whole number from 1 to 100000"},
		{map[string]any{"value": 100001}, "must be a whole number from 1 to 100000"},
		{map[string]any{"value": 2.5}, "must be a whole number from 1 to 100000"},
		{map[string]any{"value": "five"}, "must be a whole number from 1 to 100000"},
		{map[string]any{"value": nil}, "must be a whole number from 1 to 100000"},
		{map[string]any{}, `{"value": ...}`},
		// A site's cap only lowers the deployment's.
		{map[string]any{"value": 1001}, "cannot be above the deployment's 1000"},
		{map[string]any{"value": 100000}, "cannot be above the deployment's 1000"},
	} {
		r := h.call(http.MethodPut, "/api/v1/sites/small/settings/max_records", bad.body)
		expect(t, r, http.StatusBadRequest, "invalid_request")
		if msg := r.errorMessage(t); !strings.Contains(msg, bad.want) {
			t.Errorf("PUT max_records %v: %q, want it to say %q", bad.body, msg, bad.want)
		}
	}

	r = h.call(http.MethodGet, "/api/v1/sites/small/settings", nil)
	expect(t, r, http.StatusOK, "")
	if s := setting(t, r.JSON(t), "max_records"); s["value"] != float64(5) || s["source"] != "site" {
		t.Errorf("small's max_records after the refusals: %v, want 5 still", s)
	}
	r = h.call(http.MethodGet, "/api/v1/sites/big/settings", nil)
	expect(t, r, http.StatusOK, "")
	if s := setting(t, r.JSON(t), "max_records"); s["value"] != float64(1000) || s["source"] != "default" {
		t.Errorf("big's max_records: %v, want the deployment's 1000", s)
	}
	r = h.call(http.MethodGet, "/api/v1/settings", nil)
	expect(t, r, http.StatusOK, "")
	if s := setting(t, r.JSON(t), "max_records"); s["value"] != float64(1000) {
		t.Errorf("the deployment's max_records: %v, want 1000", s)
	}

	// The deployment's, raised, lets a site have a larger cap of its own
	// (still below it); reset returns a site to the deployment's.
	expect(t, h.call(http.MethodPut, "/api/v1/settings/max_records", map[string]any{"value": 2000}), http.StatusOK, "")
	r = h.call(http.MethodPut, "/api/v1/sites/big/settings/max_records", map[string]any{"value": 1500})
	expect(t, r, http.StatusOK, "")
	r = h.call(http.MethodDelete, "/api/v1/sites/small/settings/max_records", nil)
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t); got["value"] != float64(2000) || got["source"] != "deployment" {
		t.Errorf("small's max_records after reset: %v, want the deployment's 2000", got)
	}
}

// TestSiteMaxRecordsAboveALoweredDeploymentsSaysWhichApplies: a site's
// own max_records stays stored when the operator later lowers the
// deployment's below it, and the engine applies the deployment's, the
// lower. The site's settings say so (in_force), rather than show the
// site's own number alone as if it applied.
func TestSiteMaxRecordsAboveALoweredDeploymentsSaysWhichApplies(t *testing.T) {
	h := newHarness(t)
	h.createSite("small")
	expect(t, h.call(http.MethodPut, "/api/v1/sites/small/settings/max_records", map[string]any{"value": 500}), http.StatusOK, "")
	r := h.call(http.MethodGet, "/api/v1/sites/small/settings", nil)
	expect(t, r, http.StatusOK, "")
	if s := setting(t, r.JSON(t), "max_records"); s["value"] != float64(500) || s["in_force"] != float64(500) {
		t.Errorf("small's max_records of 500 under the deployment's 1000: %v, want 500 in force", s)
	}

	expect(t, h.call(http.MethodPut, "/api/v1/settings/max_records", map[string]any{"value": 300}), http.StatusOK, "")
	r = h.call(http.MethodGet, "/api/v1/sites/small/settings", nil)
	expect(t, r, http.StatusOK, "")
	if s := setting(t, r.JSON(t), "max_records"); s["value"] != float64(500) || s["source"] != "site" || s["in_force"] != float64(300) {
		t.Errorf("small's max_records of 500 once the deployment's is 300: %v, want its own 500 with 300 in force", s)
	}
	// A setting a site's value does not only lower has no in_force.
	if s := setting(t, r.JSON(t), "read_only"); s["in_force"] != nil {
		t.Errorf("read_only has in_force %v", s["in_force"])
	}
}
