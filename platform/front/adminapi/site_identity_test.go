package adminapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// dbERP is an ERP of kind "dberp" whose instance serves several databases
// at one address and may live under a virtual directory: its sites are told
// apart by the database setting, not by a tenant.
type dbERP struct{ fakeERP }

func (dbERP) Kind() string { return "dberp" }

func (dbERP) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) {
	var in map[string]string
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, toolerr.New(toolerr.InvalidArgument, "settings must be an object of strings")
	}
	out := map[string]string{"database": strings.TrimSpace(in["database"])}
	if t, ok := in["tenant"]; ok {
		out["tenant"] = t
	}
	return json.Marshal(out)
}

func (dbERP) SiteRules() connector.SiteRules {
	return connector.SiteRules{BaseURLPath: true, IdentityName: "database", Identity: func(settings json.RawMessage) string {
		var s map[string]string
		_ = json.Unmarshal(settings, &s)
		return s["database"]
	}}
}

// TestSiteIdentityIsTheConnectors: the registry keeps one site per base
// URL and the identity its connector declares. For dberp that is the
// database: two databases at one address are two sites, even though
// neither has a tenant; one database twice is refused, in its own words.
func TestSiteIdentityIsTheConnectors(t *testing.T) {
	h := newHarness(t)
	for _, db := range []string{"sales", "stock"} {
		r := h.call(http.MethodPost, "/api/v1/sites", map[string]any{
			"slug": db, "kind": "dberp", "display_name": db, "base_url": h.upstream.URL,
			"settings": map[string]string{"database": db, "tenant": "shared"}})
		expect(t, r, http.StatusCreated, "")
	}
	r := h.call(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": "sales2", "kind": "dberp", "display_name": "x", "base_url": h.upstream.URL + "/",
		"settings": map[string]string{"database": "sales"}})
	expect(t, r, http.StatusConflict, "conflict")
	if msg := r.errorMessage(t); !strings.Contains(msg, "database") || !strings.Contains(msg, h.upstream.URL) {
		t.Errorf("conflict message %q does not name the base URL and the database", msg)
	}
	r = h.call(http.MethodPatch, "/api/v1/sites/stock", map[string]any{"settings": map[string]string{"database": "sales"}})
	expect(t, r, http.StatusConflict, "conflict")
	r = h.call(http.MethodPatch, "/api/v1/sites/stock", map[string]any{"settings": map[string]string{"database": "stock2"}})
	expect(t, r, http.StatusOK, "")
	if got := count(t, h, `SELECT count(*) FROM sites WHERE slug = 'stock' AND identity_key = 'stock2'`); got != 1 {
		t.Errorf("identity key not recomputed from the new settings")
	}
}

// TestBaseURLPathPerConnector: a connector that accepts a path (an
// instance under a virtual directory) gets it kept in one spelling; one
// that does not is told its sites are origins.
func TestBaseURLPathPerConnector(t *testing.T) {
	h := newHarness(t)
	r := h.call(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": "vdir", "kind": "dberp", "display_name": "x", "base_url": h.upstream.URL + "/ERP/Main//",
		"settings": map[string]string{"database": "a"}})
	expect(t, r, http.StatusCreated, "")
	if got := r.JSON(t)["base_url"]; got != h.upstream.URL+"/ERP/Main" {
		t.Errorf("base_url %v, want %s/ERP/Main", got, h.upstream.URL)
	}
	// The same database under another directory is another instance.
	r = h.call(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": "vdir2", "kind": "dberp", "display_name": "x", "base_url": h.upstream.URL + "/ERP2",
		"settings": map[string]string{"database": "a"}})
	expect(t, r, http.StatusCreated, "")
	r = h.call(http.MethodPatch, "/api/v1/sites/vdir2", map[string]any{"base_url": h.upstream.URL + "/ERP/../x"})
	expect(t, r, http.StatusBadRequest, "invalid_request")

	r = h.call(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": "nopath", "kind": "fakeerp", "display_name": "x", "base_url": h.upstream.URL + "/app"})
	expect(t, r, http.StatusBadRequest, "invalid_request")
	if msg := r.errorMessage(t); !strings.Contains(msg, "without a path") {
		t.Errorf("message %q does not say the site is an origin", msg)
	}
	h.createSite("origin-only")
	r = h.call(http.MethodPatch, "/api/v1/sites/origin-only", map[string]any{"base_url": h.upstream.URL + "/app"})
	expect(t, r, http.StatusBadRequest, "invalid_request")
}
