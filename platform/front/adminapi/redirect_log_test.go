package adminapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/front/adminapi"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// TestRefusedRedirectLeavesNoCredentialInTheLog: an ERP that answers the
// credential check with a redirect to another host has it refused by the
// outbound transport, and the refusal is logged. The Location is the
// ERP's to write and may carry a token or session id in its user info or
// query (here as an echo of what was sent): the log names only its scheme,
// host and path.
func TestRefusedRedirectLeavesNoCredentialInTheLog(t *testing.T) {
	const userInfoMarker, queryMarker = "pw-LocUs3rMarker", "sid-LocQu3ryMarker"
	erp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "https://erpuser:"+userInfoMarker+"@sso.elsewhere.example/login/step?session="+queryMarker+"&key="+goodKey)
		w.WriteHeader(http.StatusFound)
	}))
	t.Cleanup(erp.Close)
	h := newHarnessWith(t, func(d *adminapi.Deps, _ *fakeUpstream) {
		d.HTTPClient = outbound.NewFactory(outbound.Options{}).Client
	})
	r := h.call(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": "moved", "kind": "fakeerp", "display_name": "Moved", "base_url": erp.URL,
		"settings": map[string]string{"tenant": "moved"},
	})
	expect(t, r, http.StatusCreated, "")
	r = h.call(http.MethodPut, "/api/v1/sites/moved/connections/api_token",
		map[string]any{"credentials": map[string]string{"api_key": goodKey, "api_secret": goodSecret}})
	expect(t, r, http.StatusBadGateway, "upstream_unreachable")

	var refusal string
	for _, entry := range h.logs.All() {
		blob, _ := json.Marshal(entry.ContextMap())
		text := entry.Message + " " + string(blob)
		for _, secret := range []string{userInfoMarker, queryMarker, goodKey, "erpuser"} {
			if strings.Contains(text, secret) {
				t.Errorf("log line carries %q from the refused redirect: %s", secret, text)
			}
		}
		if entry.Message == "admin request failed" {
			refusal = text
		}
	}
	if !strings.Contains(refusal, "https://sso.elsewhere.example/login/step") {
		t.Errorf("the refusal's log line does not name the redirect's scheme, host and path: %q", refusal)
	}
}
