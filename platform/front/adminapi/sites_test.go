package adminapi_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestSiteCRUD(t *testing.T) {
	h := newHarness(t)

	r := h.call(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": "acme", "kind": "fakeerp", "display_name": "Acme Ltd", "base_url": strings.ToUpper(h.upstream.URL) + "/",
	})
	expect(t, r, http.StatusCreated, "")
	site := r.JSON(t)
	id, _ := site["id"].(string)
	if r.Header.Get("Location") != "/api/v1/sites/"+id {
		t.Errorf("Location = %q", r.Header.Get("Location"))
	}
	want := map[string]any{
		"slug": "acme", "kind": "fakeerp", "display_name": "Acme Ltd", "base_url": h.upstream.URL, "status": "active",
		"mcp_url": "https://gw.example.com/sites/acme/mcp", "service_mcp_url": "https://gw.example.com/service/mcp",
	}
	for k, v := range want {
		if site[k] != v {
			t.Errorf("%s = %v, want %v", k, site[k], v)
		}
	}
	settings, _ := site["settings"].(map[string]any)
	if len(settings) != 2 || settings["company"] != "" || settings["tenant"] != "" {
		t.Errorf("settings = %v, want the connector's defaults", site["settings"])
	}
	if conns, ok := site["connections"].([]any); !ok || len(conns) != 0 {
		t.Errorf("connections = %v, want []", site["connections"])
	}
	for _, k := range []string{"created_at", "updated_at"} {
		if s, _ := site[k].(string); !strings.HasSuffix(s, "Z") {
			t.Errorf("%s = %v, want a UTC timestamp", k, site[k])
		}
	}

	// By id and by slug.
	for _, ref := range []string{id, "acme"} {
		r := h.call(http.MethodGet, "/api/v1/sites/"+ref, nil)
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["id"] != id {
			t.Errorf("GET %s returned another site", ref)
		}
	}
	h.createSite("beta")
	r = h.call(http.MethodGet, "/api/v1/sites", nil)
	expect(t, r, http.StatusOK, "")
	list, _ := r.JSON(t)["sites"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["slug"] != "acme" || list[1].(map[string]any)["slug"] != "beta" {
		t.Fatalf("list = %s", r.Body)
	}

	r = h.call(http.MethodPatch, "/api/v1/sites/acme", map[string]any{
		"display_name": "Acme NZ", "status": "disabled", "settings": map[string]string{"company": "Acme NZ Ltd"},
	})
	expect(t, r, http.StatusOK, "")
	patched := r.JSON(t)
	if patched["display_name"] != "Acme NZ" || patched["status"] != "disabled" || patched["base_url"] != h.upstream.URL ||
		patched["settings"].(map[string]any)["company"] != "Acme NZ Ltd" {
		t.Fatalf("patched = %s", r.Body)
	}
	r = h.call(http.MethodPatch, "/api/v1/sites/"+id, map[string]any{"base_url": "http://erp.dev.test:8000/"})
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t)["base_url"]; got != "http://erp.dev.test:8000" {
		t.Errorf("patched base_url = %v", got)
	}

	expect(t, h.call(http.MethodDelete, "/api/v1/sites/acme", nil), http.StatusNoContent, "")
	expect(t, h.call(http.MethodGet, "/api/v1/sites/"+id, nil), http.StatusNotFound, "not_found")
	expect(t, h.call(http.MethodDelete, "/api/v1/sites/acme", nil), http.StatusNotFound, "not_found")
	expect(t, h.call(http.MethodPatch, "/api/v1/sites/acme", map[string]any{"display_name": "x"}), http.StatusNotFound, "not_found")
	expect(t, h.call(http.MethodGet, "/api/v1/sites/Not_A_Slug", nil), http.StatusNotFound, "not_found")
}

func TestCreateSiteValidation(t *testing.T) {
	h := newHarness(t)
	valid := func() map[string]any {
		return map[string]any{"slug": "acme", "kind": "fakeerp", "display_name": "Acme", "base_url": "https://erp.acme.example"}
	}
	with := func(k string, v any) map[string]any {
		m := valid()
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name   string
		body   any
		status int
		// mention must all appear in the message.
		mention []string
	}{
		{"bad slug", with("slug", "Acme_Ltd"), 400, []string{"slug", "Acme_Ltd"}},
		{"reserved slug", with("slug", "admin"), 400, []string{"reserved"}},
		{"http for a public host", with("base_url", "http://erp.acme.example"), 400, []string{"https"}},
		{"url with a path", with("base_url", "https://erp.acme.example/app"), 400, []string{"path"}},
		{"unknown kind", with("kind", "sap"), 400, []string{"“sap”", "fakeerp"}},
		{"unknown fields", with("colour", "red"), 400, []string{"“colour”"}},
		{"missing fields", map[string]any{"slug": "acme"}, 400, []string{"kind", "display_name", "base_url"}},
		{"blank display name", with("display_name", "  "), 400, []string{"display_name"}},
		{"bad setting", with("settings", map[string]any{"region": "eu"}), 400, []string{"“region”"}},
		{"settings not an object", with("settings", []int{1}), 400, []string{"settings"}},
		{"wrong type", with("slug", 42), 400, []string{"“slug” must be a string"}},
		{"not JSON", "slug=acme", 400, []string{"JSON"}},
		{"array body", "[1]", 400, []string{"JSON object"}},
		{"trailing data", `{"slug":"acme"} {}`, 400, []string{"JSON"}},
		{"empty body", "", 400, []string{"JSON object"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.call(http.MethodPost, "/api/v1/sites", c.body)
			expect(t, r, c.status, "invalid_request")
			msg := r.errorMessage(t)
			for _, m := range c.mention {
				if !strings.Contains(msg, m) {
					t.Errorf("message %q does not mention %q", msg, m)
				}
			}
		})
	}
	// Two unknown fields are named together.
	m := valid()
	m["colour"], m["size"] = "red", 3
	if msg := h.call(http.MethodPost, "/api/v1/sites", m).errorMessage(t); !strings.Contains(msg, "“colour”, “size”") {
		t.Errorf("message %q does not name both unknown fields", msg)
	}
	// Content type and size.
	r := h.sendRaw(http.MethodPost, "/api/v1/sites", "text/plain", `{}`)
	expect(t, r, http.StatusUnsupportedMediaType, "invalid_request")
	big := `{"slug":"acme","display_name":"` + strings.Repeat("x", 70<<10) + `"}`
	expect(t, h.call(http.MethodPost, "/api/v1/sites", big), http.StatusRequestEntityTooLarge, "invalid_request")

	if n := count(t, h, `SELECT count(*) FROM sites`); n != 0 {
		t.Fatalf("%d sites saved by invalid requests", n)
	}
	// A development host may use plain http.
	expect(t, h.call(http.MethodPost, "/api/v1/sites", with("base_url", "http://erp.dev.test")), http.StatusCreated, "")
}

func TestSiteConflicts(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")

	r := h.call(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": "acme", "kind": "fakeerp", "display_name": "x", "base_url": "https://other.example"})
	expect(t, r, http.StatusConflict, "conflict")
	if !strings.Contains(r.errorMessage(t), "slug “acme”") {
		t.Errorf("message %q does not say the slug is taken", r.errorMessage(t))
	}
	// Same origin and tenant as acme.
	r = h.call(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": "acme2", "kind": "fakeerp", "display_name": "x", "base_url": h.upstream.URL, "settings": map[string]string{"tenant": "acme"}})
	expect(t, r, http.StatusConflict, "conflict")
	if !strings.Contains(r.errorMessage(t), h.upstream.URL) {
		t.Errorf("message %q does not name the base URL", r.errorMessage(t))
	}
	// Same origin, another tenant: fine. Then PATCH into acme's tenant: 409.
	h.createSite("other")
	r = h.call(http.MethodPatch, "/api/v1/sites/other", map[string]any{"settings": map[string]string{"tenant": "acme"}})
	expect(t, r, http.StatusConflict, "conflict")

	r = h.call(http.MethodPatch, "/api/v1/sites/other", map[string]any{"status": "paused"})
	expect(t, r, http.StatusBadRequest, "invalid_request")
	r = h.call(http.MethodPatch, "/api/v1/sites/other", map[string]any{"slug": "renamed"})
	expect(t, r, http.StatusBadRequest, "invalid_request")
}
