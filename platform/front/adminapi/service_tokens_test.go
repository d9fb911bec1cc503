package adminapi_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/store/sites"
)

func TestServiceTokens(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	path := "/api/v1/sites/acme/service-tokens"

	r := h.call(http.MethodPost, path, nil)
	expect(t, r, http.StatusConflict, "conflict")
	if !strings.Contains(r.errorMessage(t), "/api/v1/sites/acme/connections/api_token") {
		t.Errorf("message %q does not say how to add the connection", r.errorMessage(t))
	}
	h.connect("acme")

	r = h.call(http.MethodPost, path, map[string]string{"name": "voice agent"})
	expect(t, r, http.StatusCreated, "")
	issued := r.JSON(t)
	token, _ := issued["token"].(string)
	prefix, _ := issued["prefix"].(string)
	if !strings.HasPrefix(token, "egs_") || !strings.HasPrefix(token, prefix) || issued["name"] != "voice agent" || len(issued) != 7 || issued["expires_at"] != nil || issued["expired"] != false {
		t.Fatalf("issued = %s", r.Body)
	}
	st, resolved, err := h.store.ResolveServiceToken(t.Context(), token)
	if err != nil || resolved.Slug != "acme" || st.ID.String() != issued["id"] {
		t.Fatalf("the issued token does not resolve to acme: %v", err)
	}
	// An empty body is fine.
	expect(t, h.call(http.MethodPost, path, nil), http.StatusCreated, "")
	expect(t, h.call(http.MethodPost, path, map[string]string{"label": "x"}), http.StatusBadRequest, "invalid_request")

	r = h.call(http.MethodGet, path, nil)
	expect(t, r, http.StatusOK, "")
	if strings.Contains(r.Body, token) || strings.Contains(r.Body, token[len(prefix):]) || strings.Contains(r.Body, `"token"`) || strings.Contains(r.Body, "hash") {
		t.Fatalf("the listing shows the token: %s", r.Body)
	}
	list := r.JSON(t)["service_tokens"].([]any)
	first := list[0].(map[string]any)
	if len(list) != 2 || first["id"] != issued["id"] || first["revoked"] != false || first["last_used_at"] == nil || first["prefix"] != prefix {
		t.Fatalf("list = %s", r.Body)
	}

	expect(t, h.call(http.MethodDelete, path+"/"+issued["id"].(string), nil), http.StatusNoContent, "")
	if _, _, err := h.store.ResolveServiceToken(t.Context(), token); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Fatalf("revoked token resolves: %v", err)
	}
	r = h.call(http.MethodGet, path, nil)
	if got := r.JSON(t)["service_tokens"].([]any)[0].(map[string]any); got["revoked"] != true || got["revoked_at"] == nil {
		t.Fatalf("revoked token listed as %v", got)
	}
	expect(t, h.call(http.MethodDelete, path+"/"+uuid.NewString(), nil), http.StatusNotFound, "not_found")
	expect(t, h.call(http.MethodDelete, path+"/not-a-uuid", nil), http.StatusNotFound, "not_found")

	// Another site cannot see or revoke acme's tokens.
	h.createSite("beta")
	r = h.call(http.MethodGet, "/api/v1/sites/beta/service-tokens", nil)
	if n := len(r.JSON(t)["service_tokens"].([]any)); n != 0 {
		t.Fatalf("beta lists %d of acme's tokens", n)
	}
	other := list[1].(map[string]any)["id"].(string)
	expect(t, h.call(http.MethodDelete, "/api/v1/sites/beta/service-tokens/"+other, nil), http.StatusNotFound, "not_found")
}

func mustUUID(t *testing.T, v any) uuid.UUID {
	t.Helper()
	s, _ := v.(string)
	id, err := uuid.Parse(s)
	if err != nil {
		t.Fatalf("not a uuid: %v", v)
	}
	return id
}

// TestRevokingByATokensValueKeepsItSecret: an operator who found a token
// leaked holds its value, not its id, and may well send that to the
// revocation. Nothing is revoked (the path takes an id), and the value
// must not be repeated in the answer, the audit events or the log: before,
// the refusal quoted it everywhere, so the still valid token now also sat
// in the logs and the admin_events table.
func TestRevokingByATokensValueKeepsItSecret(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	h.connect("acme")
	path := "/api/v1/sites/acme/service-tokens"
	issued := h.call(http.MethodPost, path, map[string]string{"name": "leaked"}).JSON(t)
	token, _ := issued["token"].(string)
	prefix, _ := issued["prefix"].(string)
	secret := token[len(prefix):]

	r := h.call(http.MethodDelete, path+"/"+token, nil)
	expect(t, r, http.StatusNotFound, "not_found")
	if strings.Contains(r.Body, secret) {
		t.Errorf("the answer repeats the token's value: %s", r.Body)
	}
	if !strings.Contains(r.errorMessage(t), prefix) {
		t.Errorf("the answer %q does not name the token by its prefix %s, by which the listing shows it", r.errorMessage(t), prefix)
	}
	if n := count(t, h, `SELECT count(*) FROM admin_events WHERE action = 'revoke_service_token'
		AND (details::text LIKE '%' || $1 || '%' OR reason LIKE '%' || $1 || '%')`, secret); n != 0 {
		t.Errorf("%d audit events hold the token's value", n)
	}
	if n := count(t, h, `SELECT count(*) FROM admin_events WHERE action = 'revoke_service_token' AND outcome = 'refused'`); n != 1 {
		t.Errorf("%d refused revocations audited, want 1", n)
	}
	for _, e := range h.logs.All() {
		if strings.Contains(e.Message, secret) || strings.Contains(fmt.Sprint(e.ContextMap()), secret) {
			t.Errorf("the log holds the token's value: %s %v", e.Message, e.ContextMap())
		}
	}
	if _, _, err := h.store.ResolveServiceToken(t.Context(), token); err != nil {
		t.Errorf("the token stopped resolving (%v): only a revocation by id revokes", err)
	}
}
