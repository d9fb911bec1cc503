package adminapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/store/sites"
)

func TestPutAPIConnection(t *testing.T) {
	h := newHarness(t)
	site := h.createSite("acme")
	path := "/api/v1/sites/acme/connections/api_token"

	// Field problems are caught before the ERP is asked, all named at once.
	r := h.call(http.MethodPut, path, map[string]any{"credentials": map[string]string{"api_key": goodKey, "password": "x", "user": "y"}})
	expect(t, r, http.StatusBadRequest, "invalid_request")
	msg := r.errorMessage(t)
	for _, m := range []string{"api_secret", "“password”", "“user”"} {
		if !strings.Contains(msg, m) {
			t.Errorf("message %q does not name %s", msg, m)
		}
	}
	expect(t, h.call(http.MethodPut, path, map[string]any{"credentials": map[string]string{"api_key": " ", "api_secret": goodSecret}}),
		http.StatusBadRequest, "invalid_request")
	expect(t, h.call(http.MethodPut, path, map[string]any{}), http.StatusBadRequest, "invalid_request")
	expect(t, h.call(http.MethodPut, path, map[string]any{"credentials": map[string]int{"api_key": 1}}), http.StatusBadRequest, "invalid_request")
	if n := h.upstream.calls.Load(); n != 0 {
		t.Fatalf("the ERP was asked %d times about malformed credentials", n)
	}

	// The ERP refuses: 422, nothing saved.
	r = h.call(http.MethodPut, path, map[string]any{"credentials": map[string]string{"api_key": goodKey, "api_secret": "wrong-secret-x"}})
	expect(t, r, http.StatusUnprocessableEntity, "credential_rejected")
	msg = r.errorMessage(t)
	if !strings.Contains(msg, "rejected") || !strings.Contains(msg, "401") || !strings.Contains(msg, "nothing was saved") {
		t.Errorf("rejection message %q is not plain enough", msg)
	}
	if strings.Contains(r.Body, "wrong-secret-x") {
		t.Fatal("the response echoes the secret")
	}
	if n := count(t, h, `SELECT count(*) FROM connections`) + count(t, h, `SELECT count(*) FROM credentials`); n != 0 {
		t.Fatalf("a rejected credential left %d rows", n)
	}

	// The ERP accepts: saved with the identity it reported.
	r = h.call(http.MethodPut, path, map[string]any{"credentials": map[string]string{"api_key": " " + goodKey, "api_secret": goodSecret + "\n"}})
	expect(t, r, http.StatusOK, "")
	conn := r.JSON(t)
	if conn["type"] != "api_token" || conn["verified_identity"] != fakeIdentity || len(conn["fields"].([]any)) != 2 {
		t.Fatalf("connection = %s", r.Body)
	}
	if strings.Contains(r.Body, goodKey) || strings.Contains(r.Body, goodSecret) {
		t.Fatal("the response carries the credential")
	}
	_, fields, err := h.store.GetConnection(t.Context(), mustUUID(t, site["id"]), sites.ConnectionAPIToken)
	if err != nil || fields["api_key"].Reveal() != goodKey || fields["api_secret"].Reveal() != goodSecret {
		t.Fatalf("stored credential: %v", err)
	}

	// The site shows the connection, by name only.
	r = h.call(http.MethodGet, "/api/v1/sites/acme", nil)
	conns := r.JSON(t)["connections"].([]any)
	if len(conns) != 1 || conns[0].(map[string]any)["verified_identity"] != fakeIdentity {
		t.Fatalf("site connections = %v", conns)
	}
	for _, path := range []string{"/api/v1/sites/acme", "/api/v1/sites"} {
		if body := h.call(http.MethodGet, path, nil).Body; strings.Contains(body, goodKey) || strings.Contains(body, goodSecret) {
			t.Fatalf("GET %s carries the credential", path)
		}
	}

	// The credential pins the origin it was verified against.
	r = h.call(http.MethodPatch, "/api/v1/sites/acme", map[string]any{"base_url": "https://erp.elsewhere.example"})
	expect(t, r, http.StatusConflict, "conflict")
	if !strings.Contains(r.errorMessage(t), "delete them") {
		t.Errorf("message %q does not say what to do", r.errorMessage(t))
	}

	// A rejected replacement leaves the saved credential alone.
	expect(t, h.call(http.MethodPut, path, map[string]any{"credentials": map[string]string{"api_key": "k", "api_secret": "s"}}),
		http.StatusUnprocessableEntity, "credential_rejected")
	if _, fields, _ := h.store.GetConnection(t.Context(), mustUUID(t, site["id"]), sites.ConnectionAPIToken); fields["api_key"].Reveal() != goodKey {
		t.Fatal("a rejected replacement changed the saved credential")
	}

	// Delete, then it is gone.
	expect(t, h.call(http.MethodDelete, path, nil), http.StatusNoContent, "")
	expect(t, h.call(http.MethodDelete, path, nil), http.StatusNotFound, "not_found")
	if n := count(t, h, `SELECT count(*) FROM credentials`); n != 0 {
		t.Fatalf("%d credentials left after delete", n)
	}
}

func TestPutConnectionUpstreamUnreachable(t *testing.T) {
	h := newHarness(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	expect(t, h.call(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": "gone", "kind": "fakeerp", "display_name": "Gone", "base_url": deadURL}), http.StatusCreated, "")

	r := h.call(http.MethodPut, "/api/v1/sites/gone/connections/api_token",
		map[string]any{"credentials": map[string]string{"api_key": goodKey, "api_secret": goodSecret}})
	expect(t, r, http.StatusBadGateway, "upstream_unreachable")
	if msg := r.errorMessage(t); !strings.Contains(msg, deadURL) || !strings.Contains(msg, "nothing was saved") {
		t.Errorf("message %q", msg)
	}
	if n := count(t, h, `SELECT count(*) FROM connections`); n != 0 {
		t.Fatal("an unverified credential was saved")
	}
}

func TestConnectionTypes(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	r := h.call(http.MethodPut, "/api/v1/sites/acme/connections/oauth",
		map[string]any{"credentials": map[string]string{"client_id": "c", "client_secret": "s"}})
	expect(t, r, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(r.errorMessage(t), "do not support user sign-in") {
		t.Errorf("oauth message = %q", r.errorMessage(t))
	}
	expect(t, h.call(http.MethodPut, "/api/v1/sites/acme/connections/password", map[string]any{}), http.StatusNotFound, "not_found")
	expect(t, h.call(http.MethodDelete, "/api/v1/sites/acme/connections/oauth", nil), http.StatusNotFound, "not_found")
	expect(t, h.call(http.MethodPut, "/api/v1/sites/nope/connections/api_token",
		map[string]any{"credentials": map[string]string{"api_key": goodKey, "api_secret": goodSecret}}), http.StatusNotFound, "not_found")
}

// A credential pasted with a line break or another control character
// inside cannot be sent to the ERP (it goes in a header): it is refused
// as input, naming the field, not reported as an ERP that cannot be
// reached.
func TestCredentialWithControlCharactersIsRefusedAsInput(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	for _, key := range []string{"good-key\n7f3a", "good\x00key", "good\tkey"} {
		r := h.call(http.MethodPut, "/api/v1/sites/acme/connections/api_token",
			map[string]any{"credentials": map[string]string{"api_key": key, "api_secret": goodSecret}})
		if r.Status != http.StatusBadRequest || r.errorCode(t) != "invalid_request" {
			t.Errorf("api_key %q: HTTP %d %s, want 400 invalid_request", key, r.Status, r.Body)
			continue
		}
		if msg := r.errorMessage(t); !strings.Contains(msg, "api_key") || strings.Contains(msg, key) {
			t.Errorf("api_key %q: %q should name the field, not repeat its value", key, msg)
		}
	}
	if n := count(t, h, `SELECT count(*) FROM connections`); n != 0 {
		t.Errorf("%d connections saved", n)
	}
}
