package adminapi_test

import (
	"net/http"
	"testing"
	"time"

	"go.uber.org/zap"
)

// seedPerson gives user on site slug what a real sign-in leaves: a
// registered MCP client, a consent, an access and a refresh token, and a
// stored ERP token. The times are fixed so that the listing can be checked
// against them.
func (h *harness) seedPerson(slug, user, clientID string, consentAt, lastTokenAt time.Time) {
	h.t.Helper()
	ctx := h.t.Context()
	var siteID string
	if err := h.pool.QueryRow(ctx, `SELECT id::text FROM sites WHERE slug = $1`, slug).Scan(&siteID); err != nil {
		h.t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO oauth_clients (id, name, redirect_uris, grant_types, response_types, scope, token_endpoint_auth_method)
		  VALUES ($1, 'Client ' || $1, '{https://client.example/cb}', '{authorization_code}', '{code}', 'mcp', 'none')
		  ON CONFLICT (id) DO NOTHING`, []any{clientID}},
		{`INSERT INTO oauth_consents (site_id, erp_user, client_id, granted_at) VALUES ($1, $2, $3, $4)`,
			[]any{siteID, user, clientID, consentAt}},
		{`INSERT INTO oauth_tokens (kind, signature_hash, request_id, client_id, site_id, subject, requested_at, session, created_at)
		  VALUES ('access', sha256(convert_to($1 || $2 || 'a', 'UTF8')), 'r-' || $2, $3, $1::uuid, $2, $4, '{}', $5),
		         ('refresh', sha256(convert_to($1 || $2 || 'r', 'UTF8')), 'r-' || $2, $3, $1::uuid, $2, $4, '{}', $5)`,
			[]any{siteID, user, clientID, consentAt, lastTokenAt}},
		{`INSERT INTO upstream_tokens (site_id, erp_user, display_name, key_id, access_ciphertext, expires_at, created_at, updated_at)
		  VALUES ($1, $2, 'Name of ' || $2, 'k1', '\x00', $4, $3, $4)`,
			[]any{siteID, user, consentAt, lastTokenAt}},
	} {
		if _, err := h.pool.Exec(ctx, q.sql, q.args...); err != nil {
			h.t.Fatalf("seed %s: %v", user, err)
		}
	}
}

func TestPeopleListingAndRevocation(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	h.createSite("other")
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	h.seedPerson("acme", "ann@acme.example", "client-a", t0, t0.Add(3*time.Hour))
	h.seedPerson("acme", "bob@acme.example", "client-b", t0.Add(time.Hour), t0.Add(2*time.Hour))
	h.seedPerson("other", "ann@acme.example", "client-a", t0, t0.Add(time.Hour))

	r := h.call(http.MethodGet, "/api/v1/sites/acme/people", nil)
	expect(t, r, http.StatusOK, "")
	people := r.JSON(t)["people"].([]any)
	if len(people) != 2 {
		t.Fatalf("people = %s", r.Body)
	}
	ann := people[0].(map[string]any)
	clients := ann["clients"].([]any)
	if ann["erp_user"] != "ann@acme.example" || ann["display_name"] != "Name of ann@acme.example" ||
		ann["first_used_at"] != t0.Format(time.RFC3339) || ann["last_used_at"] != t0.Add(3*time.Hour).Format(time.RFC3339) || len(clients) != 1 {
		t.Fatalf("ann = %v", ann)
	}
	if c := clients[0].(map[string]any); c["client_id"] != "client-a" || c["client_name"] != "Client client-a" ||
		c["first_used_at"] != t0.Format(time.RFC3339) || c["last_used_at"] != t0.Add(3*time.Hour).Format(time.RFC3339) {
		t.Fatalf("ann's client = %v", c)
	}
	if people[1].(map[string]any)["erp_user"] != "bob@acme.example" {
		t.Fatalf("second person = %v", people[1])
	}

	expect(t, h.call(http.MethodDelete, "/api/v1/sites/acme/people/ann@acme.example", nil), http.StatusNoContent, "")
	for _, table := range []string{"oauth_tokens WHERE subject", "oauth_consents WHERE erp_user", "upstream_tokens WHERE erp_user"} {
		if n := count(t, h, `SELECT count(*) FROM `+table+` = 'ann@acme.example' AND site_id = (SELECT id FROM sites WHERE slug = 'acme')`); n != 0 {
			t.Errorf("%s: %d rows of ann on acme remain", table, n)
		}
		if n := count(t, h, `SELECT count(*) FROM `+table+` = 'ann@acme.example' AND site_id = (SELECT id FROM sites WHERE slug = 'other')`); n == 0 {
			t.Errorf("%s: ann's rows on the other site were removed too", table)
		}
		if n := count(t, h, `SELECT count(*) FROM `+table+` = 'bob@acme.example'`); n == 0 {
			t.Errorf("%s: bob's rows were removed too", table)
		}
	}
	r = h.call(http.MethodGet, "/api/v1/sites/acme/people", nil)
	if people := r.JSON(t)["people"].([]any); len(people) != 1 || people[0].(map[string]any)["erp_user"] != "bob@acme.example" {
		t.Fatalf("after revocation, people = %s", r.Body)
	}
	if n := count(t, h, `SELECT count(*) FROM admin_events WHERE action = 'revoke_person' AND outcome = 'success'
		AND site_slug = 'acme' AND actor_kind = 'operator' AND details->>'erp_user' = 'ann@acme.example'`); n != 1 {
		t.Errorf("%d revoke_person success events, want 1", n)
	}

	// Revoking again, or someone who never connected, is a 404 and a refusal
	// in the audit.
	r = h.call(http.MethodDelete, "/api/v1/sites/acme/people/ann@acme.example", nil)
	expect(t, r, http.StatusNotFound, "not_found")
	if n := count(t, h, `SELECT count(*) FROM admin_events WHERE action = 'revoke_person' AND outcome = 'refused' AND reason LIKE 'not_found:%'`); n != 1 {
		t.Errorf("%d revoke_person refused events, want 1", n)
	}
	// A user with a "/" is reached percent-encoded.
	h.seedPerson("acme", "dom/carol", "client-c", t0, t0)
	expect(t, h.call(http.MethodDelete, "/api/v1/sites/acme/people/dom%2Fcarol", nil), http.StatusNoContent, "")
	expect(t, h.call(http.MethodGet, "/api/v1/sites/nosuch/people", nil), http.StatusNotFound, "not_found")
}

// The admin API's changes are audited by the layer as the operator's, the
// refused ones with the sentence the operator was shown, and each is also
// logged as an admin_event line.
func TestAdminActionsAreAuditedAsTheOperators(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	r := h.call(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": "acme", "kind": "fakeerp", "display_name": "Again", "base_url": h.upstream.URL,
	})
	expect(t, r, http.StatusConflict, "conflict")
	r = h.call(http.MethodPut, "/api/v1/sites/acme/connections/api_token",
		map[string]any{"credentials": map[string]string{"api_key": goodKey, "api_secret": "not-the-secret"}})
	expect(t, r, http.StatusUnprocessableEntity, "credential_rejected")
	rejected := r.errorMessage(t)

	if n := count(t, h, `SELECT count(*) FROM admin_events WHERE actor_kind = 'operator' AND actor = 'admin_token'`); n != 3 {
		t.Errorf("%d operator events, want 3", n)
	}
	if n := count(t, h, `SELECT count(*) FROM admin_events WHERE action = 'create_site' AND outcome = 'refused'
		AND reason = 'conflict: slug “acme” is already in use'`); n != 1 {
		t.Errorf("%d refused create_site events with the reason, want 1", n)
	}
	if n := count(t, h, `SELECT count(*) FROM admin_events WHERE action = 'put_api_connection' AND outcome = 'refused'
		AND reason = 'credential_rejected: ' || $1`, rejected); n != 1 {
		t.Errorf("%d refused put_api_connection events with the reason %q, want 1", n, rejected)
	}
	if n := count(t, h, `SELECT count(*) FROM admin_events WHERE reason LIKE '%not-the-secret%' OR details::text LIKE '%not-the-secret%'`); n != 0 {
		t.Errorf("the audit table holds the submitted secret")
	}
	if got := h.logs.FilterField(zap.String("event", "admin_event")).Len(); got != 3 {
		t.Errorf("%d admin_event log lines, want 3", got)
	}
}
