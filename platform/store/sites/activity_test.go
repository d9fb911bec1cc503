package sites_test

import (
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/store/sites"
)

// TestActivityCountsPeopleAndRecentCalls: people are the distinct ERP
// users with a consent, a live token or a stored ERP token on the site;
// calls are the site's tools/call events since the given time, errors
// those that failed; a site without any has none.
func TestActivityCountsPeopleAndRecentCalls(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	acme, beta, quiet := mustCreate(t, s, "acme"), mustCreate(t, s, "beta"), mustCreate(t, s, "quiet")
	now := time.Now()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO oauth_clients (id, name, redirect_uris, grant_types, response_types, scope, token_endpoint_auth_method)
		  VALUES ('c1', 'Client', '{https://client.example/cb}', '{authorization_code}', '{code}', 'mcp', 'none')`, nil},
		// ann: consent and ERP token; bob: a token only; cid: ERP token only.
		{`INSERT INTO oauth_consents (site_id, erp_user, client_id, granted_at) VALUES ($1, 'ann', 'c1', now())`, []any{acme.ID}},
		{`INSERT INTO oauth_tokens (kind, signature_hash, request_id, client_id, site_id, subject, requested_at, session, created_at)
		  VALUES ('access', sha256('bob'::bytea), 'r-bob', 'c1', $1, 'bob', now(), '{}', now())`, []any{acme.ID}},
		{`INSERT INTO upstream_tokens (site_id, erp_user, display_name, key_id, access_ciphertext, expires_at, created_at, updated_at)
		  VALUES ($1, 'ann', 'Ann', 'k1', '\x00', now(), now(), now()), ($1, 'cid', 'Cid', 'k1', '\x00', now(), now(), now())`, []any{acme.ID}},
		{`INSERT INTO oauth_consents (site_id, erp_user, client_id, granted_at) VALUES ($1, 'ann', 'c1', now())`, []any{beta.ID}},
		// acme: two calls in the window, one failed; one older; a
		// tools/list that is no call. beta: one call.
		{`INSERT INTO usage_events (occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, error_code, duration_ms) VALUES
		  ($2, $1, 'acme', 'oauth', 'a1', 'tools/call', 'list_customers', 'success', '', 5),
		  ($2, $1, 'acme', 'oauth', 'a2', 'tools/call', 'list_customers', 'error', 'INVALID_ARGUMENT', 5),
		  ($3, $1, 'acme', 'oauth', 'a3', 'tools/call', 'list_customers', 'error', 'UPSTREAM_TIMEOUT', 5),
		  ($2, $1, 'acme', 'oauth', 'a4', 'tools/list', '', 'success', '', 1),
		  ($2, $4, 'beta', 'service_token', 'b1', 'tools/call', 'list_customers', 'success', '', 5)`,
			[]any{acme.ID, now.Add(-time.Hour), now.Add(-25 * time.Hour), beta.ID}},
	} {
		if _, err := pool.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ActivityOf(ctx, now.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sites.Activity{"acme": {People: 3, Calls: 2, Errors: 1}, "beta": {People: 1, Calls: 1}, "quiet": {}}
	for slug, id := range map[string]sites.Site{"acme": acme, "beta": beta, "quiet": quiet} {
		if got[id.ID] != want[slug] {
			t.Errorf("%s: %+v, want %+v", slug, got[id.ID], want[slug])
		}
	}
}
