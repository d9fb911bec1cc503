package adminapi_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// seedUsage stores n tool calls of site slug, one a minute from at, every
// third failing with NOT_FOUND, made by user with client.
func (h *harness) seedUsage(slug, user, client string, at time.Time, n int) {
	h.t.Helper()
	if _, err := h.pool.Exec(h.t.Context(), `
		INSERT INTO usage_events (occurred_at, site_id, site_slug, auth_type, request_id, method, tool, outcome, error_code,
		                          duration_ms, erp_ms, erp_user, client_id)
		SELECT $2::timestamptz + i * interval '1 minute', s.id, s.slug, 'oauth', 'r' || i, 'tools/call', 'list_customers',
		       CASE WHEN i % 3 = 0 THEN 'error' ELSE 'success' END, CASE WHEN i % 3 = 0 THEN 'NOT_FOUND' ELSE '' END,
		       20 + i, 10 + i, $3, $4
		FROM sites s, generate_series(0, $5 - 1) i WHERE s.slug = $1`, slug, at, user, client, n); err != nil {
		h.t.Fatal(err)
	}
}

// TestUsageEventsFilterAndPage: the site filter keeps to its site, keyset
// pages through next_url reach every event once, and the other filters
// select what was seeded.
func TestUsageEventsFilterAndPage(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	h.createSite("other")
	t0 := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Minute)
	h.seedUsage("acme", "ann@acme.example", "client-a", t0, 7)
	h.seedUsage("other", "ann@acme.example", "client-a", t0, 3)

	seen := map[string]bool{}
	path := "/api/v1/usage-events?site=acme&limit=3"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		r := h.call(http.MethodGet, path, nil)
		expect(t, r, http.StatusOK, "")
		body := r.JSON(t)
		for _, e := range body["events"].([]any) {
			ev := e.(map[string]any)
			if ev["site_slug"] != "acme" || ev["erp_user"] != "ann@acme.example" || ev["client_id"] != "client-a" {
				t.Errorf("event %v", ev)
			}
			key := ev["request_id"].(string)
			if seen[key] {
				t.Errorf("event %s on two pages", key)
			}
			seen[key] = true
		}
		path = ""
		if next, ok := body["next_url"].(string); ok {
			u, err := url.Parse(next)
			if err != nil || u.Host != "gw.example.com" {
				t.Fatalf("next_url %q is not on the public base URL", next)
			}
			path = u.RequestURI()
		}
	}
	if len(seen) != 7 {
		t.Errorf("%d events over the pages, want 7", len(seen))
	}

	r := h.call(http.MethodGet, "/api/v1/usage-events?error_code=NOT_FOUND&outcome=error", nil)
	expect(t, r, http.StatusOK, "")
	// i = 0, 3, 6 on acme and 0 on other.
	if got := len(r.JSON(t)["events"].([]any)); got != 4 {
		t.Errorf("%d NOT_FOUND events, want 4", got)
	}
	r = h.call(http.MethodGet, "/api/v1/usage-events?from="+url.QueryEscape(t0.Add(5*time.Minute).Format(time.RFC3339)), nil)
	if got := len(r.JSON(t)["events"].([]any)); got != 2 {
		t.Errorf("%d events from minute 5, want 2 (acme's minutes 5 and 6)", got)
	}
}

// TestUsageEventsExportAsCSV: format=csv streams every matching event.
func TestUsageEventsExportAsCSV(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	h.seedUsage("acme", "=cmd|' /C calc'!A0", "client-a", time.Now().UTC().Add(-time.Hour), 5)
	r := h.call(http.MethodGet, "/api/v1/usage-events?site=acme&format=csv&limit=1", nil)
	expect(t, r, http.StatusOK, "")
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Errorf("Content-Type %q", ct)
	}
	rows, err := csv.NewReader(strings.NewReader(r.Body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 || rows[0][0] != "id" {
		t.Fatalf("%d CSV lines, want a header and 5 (an export is not paged): %q", len(rows), rows)
	}
	if rows[1][5] != `'=cmd|' /C calc'!A0` {
		t.Errorf("erp_user cell %q: a formula must be kept as text", rows[1][5])
	}
}

// TestEventQueriesRefuseBadInput: bad filters are a 400 with sentences, an
// unknown site slug a 404, and no token a 401.
func TestEventQueriesRefuseBadInput(t *testing.T) {
	h := newHarness(t)
	for _, q := range []string{"from=tomorrow", "outcome=maybe", "after=1.2", "limit=0", "limit=501", "site=No_Such!", "from=2026-12-01T10:00&to=2026-12-01T09:00"} {
		for _, p := range []string{"/api/v1/usage-events?", "/api/v1/audit-events?"} {
			r := h.call(http.MethodGet, p+q, nil)
			expect(t, r, http.StatusBadRequest, "invalid_request")
			if msg := r.errorMessage(t); strings.Contains(msg, "parsing") || strings.Contains(msg, "strconv") {
				t.Errorf("%s%s: message %q shows library text", p, q, msg)
			}
		}
	}
	expect(t, h.call(http.MethodGet, "/api/v1/usage-events?site=nosuch", nil), http.StatusNotFound, "not_found")
	expect(t, h.send(http.MethodGet, "/api/v1/usage-events", nil, ""), http.StatusUnauthorized, "")
	expect(t, h.send(http.MethodGet, "/api/v1/audit-events", nil, "Bearer wrong"), http.StatusUnauthorized, "")
}

// TestAuditEventsShowSignInAndAdministration: a sign-in event and the
// operator's revocation through this API are both in the audit.
func TestAuditEventsShowSignInAndAdministration(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	h.seedPerson("acme", "ann@acme.example", "client-a", t0, t0)
	if _, err := h.pool.Exec(t.Context(), `INSERT INTO auth_events (occurred_at, site_id, event, erp_user, client_id)
		SELECT $1, id, 'sign_in', 'ann@acme.example', 'client-a' FROM sites WHERE slug = 'acme'`, t0); err != nil {
		t.Fatal(err)
	}
	expect(t, h.call(http.MethodDelete, "/api/v1/sites/acme/people/ann@acme.example", nil), http.StatusNoContent, "")

	r := h.call(http.MethodGet, "/api/v1/audit-events?site=acme&erp_user=ann@acme.example", nil)
	expect(t, r, http.StatusOK, "")
	var got []string
	for _, e := range r.JSON(t)["events"].([]any) {
		ev := e.(map[string]any)
		got = append(got, fmt.Sprintf("%s/%s/%s/%s", ev["source"], ev["event"], ev["actor_kind"], ev["site_slug"]))
	}
	want := []string{"administration/revoke_person/operator/acme", "sign-in/sign_in//acme"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("audit %v, want %v", got, want)
	}
}

// TestPeopleShowConsentsGrantsAndClients: the people listing carries each
// client's consent, live grants with their scopes, and redirect URIs; an
// expired token is not a live grant.
func TestPeopleShowConsentsGrantsAndClients(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	h.seedPerson("acme", "ann@acme.example", "client-a", t0, t0.Add(time.Hour))
	if _, err := h.pool.Exec(t.Context(), `UPDATE oauth_tokens SET granted_scopes = '{mcp,offline_access}', expires_at = now() + interval '1 hour' WHERE kind = 'access'`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.pool.Exec(t.Context(), `UPDATE oauth_tokens SET granted_scopes = '{mcp}', expires_at = now() - interval '1 hour' WHERE kind = 'refresh'`); err != nil {
		t.Fatal(err)
	}
	r := h.call(http.MethodGet, "/api/v1/sites/acme/people", nil)
	expect(t, r, http.StatusOK, "")
	ann := r.JSON(t)["people"].([]any)[0].(map[string]any)
	if ann["erp_token"] != true || ann["erp_token_expires_at"] != t0.Add(time.Hour).Format(time.RFC3339) {
		t.Errorf("ann's ERP token: %v, %v", ann["erp_token"], ann["erp_token_expires_at"])
	}
	c := ann["clients"].([]any)[0].(map[string]any)
	if c["consented_at"] != t0.Format(time.RFC3339) || c["live_grants"] != 1.0 ||
		fmt.Sprint(c["granted_scopes"]) != "[mcp offline_access]" || fmt.Sprint(c["redirect_uris"]) != "[https://client.example/cb]" {
		t.Errorf("ann's client %v", c)
	}
	if exp, _ := time.Parse(time.RFC3339, fmt.Sprint(c["grants_expire_at"])); exp.Before(time.Now()) {
		t.Errorf("grants_expire_at %v, want the live access token's expiry", c["grants_expire_at"])
	}
	// Without a consent, the client is still listed by its tokens.
	if _, err := h.pool.Exec(t.Context(), `DELETE FROM oauth_consents`); err != nil {
		t.Fatal(err)
	}
	r = h.call(http.MethodGet, "/api/v1/sites/acme/people", nil)
	c = r.JSON(t)["people"].([]any)[0].(map[string]any)["clients"].([]any)[0].(map[string]any)
	if c["consented_at"] != nil || c["live_grants"] != 1.0 {
		t.Errorf("client without consent %v", c)
	}
}
