package adminapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// One line per admin action, naming the action, the site and the outcome,
// and no line ever carrying a credential, a token or the admin token.
func TestAuditLogLinesAndNoSecrets(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	h.call(http.MethodPut, "/api/v1/sites/acme/connections/api_token",
		map[string]any{"credentials": map[string]string{"api_key": goodKey, "api_secret": "rejected-secret-x"}})
	h.connect("acme")
	issued := h.call(http.MethodPost, "/api/v1/sites/acme/service-tokens", map[string]string{"name": "bot"}).JSON(t)
	token := issued["token"].(string)
	h.send(http.MethodGet, "/api/v1/sites", nil, "Bearer not-the-admin-token")

	type line struct {
		action, slug, outcome, code string
	}
	var got []line
	for _, entry := range h.logs.All() {
		fields := entry.ContextMap()
		blob, _ := json.Marshal(fields)
		text := entry.Message + " " + string(blob)
		for _, secret := range []string{goodKey, goodSecret, "rejected-secret-x", token, token[4:], adminToken, "not-the-admin-token"} {
			if strings.Contains(text, secret) {
				t.Errorf("log line carries a secret: %s", text)
			}
		}
		if entry.Message != "admin action" {
			continue
		}
		l := line{action: str(fields["action"]), slug: str(fields["site_slug"]), outcome: str(fields["outcome"]), code: str(fields["error_code"])}
		if fields["event"] != "admin_action" || (l.slug != "" && str(fields["site_id"]) == "") {
			t.Errorf("audit line fields: %v", fields)
		}
		got = append(got, l)
	}
	want := []line{
		{"create_site", "acme", "success", ""},
		{"put_connection", "acme", "error", "credential_rejected"},
		{"put_connection", "acme", "success", ""},
		{"issue_service_token", "acme", "success", ""},
		{"list_sites", "", "error", "unauthorized"},
	}
	if len(got) != len(want) {
		t.Fatalf("audit lines = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("audit line %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
