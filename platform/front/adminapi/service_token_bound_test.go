package adminapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// Attacker's test: a script with the admin token issues far more service
// tokens for one site than any site uses. The operator's API shares the
// site's bound (ERPGATE_LIMIT_SERVICE_TOKENS_PER_SITE raises it): the
// first 100 are issued, the next is 409 conflict in the API's error shape,
// saying what to do; revoking one makes room.
func TestAdminAPIIssuesNoMoreThanTheBoundOfServiceTokens(t *testing.T) {
	const bound = 100
	h := newHarness(t)
	h.createSite("acme")
	h.connect("acme")
	path := "/api/v1/sites/acme/service-tokens"
	var first string
	for i := range bound {
		r := h.call(http.MethodPost, path, map[string]any{"name": "bot", "expires_in_days": 30})
		expect(t, r, http.StatusCreated, "")
		if i == 0 {
			first, _ = r.JSON(t)["id"].(string)
		}
	}
	r := h.call(http.MethodPost, path, map[string]any{"name": "one too many"})
	expect(t, r, http.StatusConflict, "conflict")
	msg := r.errorMessage(t)
	for _, want := range []string{"site “acme”", "100 active service tokens", "at most 100", "ERPGATE_LIMIT_SERVICE_TOKENS_PER_SITE", "revoke one"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if n := count(t, h, `SELECT count(*) FROM service_tokens WHERE NOT revoked`); n != bound {
		t.Fatalf("%d active tokens stored, want %d", n, bound)
	}
	expect(t, h.call(http.MethodDelete, path+"/"+first, nil), http.StatusNoContent, "")
	expect(t, h.call(http.MethodPost, path, map[string]any{"name": "in its place"}), http.StatusCreated, "")
}
