package adminapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// overHTTP sends an authenticated JSON request to srv, a real HTTP server
// over the harness's admin API, and decodes the JSON answer.
func overHTTP(t *testing.T, srv *httptest.Server, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, in)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: HTTP %d, not JSON: %v", method, path, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

func timeOf(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("not a time: %v", v)
	}
	return at
}

// TestServiceTokenLifetime: POST /sites/{id}/service-tokens takes an
// optional expires_in_days (1 to 366; left out or null: never expires).
// The answer and the listing give expires_at (null: never) and whether the
// token has expired; an expired token is listed as expired, not revoked,
// and the audit event records the expiry.
func TestServiceTokenLifetime(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	h.connect("acme")
	srv := httptest.NewServer(h.e)
	t.Cleanup(srv.Close)
	path := "/api/v1/sites/acme/service-tokens"

	for _, bad := range []any{0, -1, 367, 1.5, "30", true} {
		status, body := overHTTP(t, srv, http.MethodPost, path, map[string]any{"name": "bad", "expires_in_days": bad})
		if e, _ := body["error"].(map[string]any); status != http.StatusBadRequest || e["code"] != "invalid_request" {
			t.Errorf("expires_in_days %v: HTTP %d %v, want 400 invalid_request", bad, status, body)
		}
	}
	if n := count(t, h, `SELECT count(*) FROM service_tokens`); n != 0 {
		t.Fatalf("%d tokens issued by refused requests", n)
	}

	status, never := overHTTP(t, srv, http.MethodPost, path, map[string]any{"name": "never", "expires_in_days": nil})
	if status != http.StatusCreated || never["expires_at"] != nil || never["expired"] != false {
		t.Fatalf("issued without a lifetime: HTTP %d %v", status, never)
	}
	status, quarter := overHTTP(t, srv, http.MethodPost, path, map[string]any{"name": "quarter", "expires_in_days": 90})
	if status != http.StatusCreated || quarter["expired"] != false {
		t.Fatalf("issued for 90 days: HTTP %d %v", status, quarter)
	}
	if created, expires := timeOf(t, quarter["created_at"]), timeOf(t, quarter["expires_at"]); !expires.Equal(created.Add(90 * 24 * time.Hour)) {
		t.Errorf("issued at %v for 90 days expires at %v", created, expires)
	}
	status, year := overHTTP(t, srv, http.MethodPost, path, map[string]any{"name": "year", "expires_in_days": 366})
	if status != http.StatusCreated || year["expires_at"] == nil {
		t.Fatalf("issued for 366 days: HTTP %d %v", status, year)
	}
	if n := count(t, h, `SELECT count(*) FROM admin_events WHERE action = 'issue_service_token' AND outcome = 'success'
		AND details->>'token_id' = $1 AND (details->>'expires_at')::timestamptz = $2::timestamptz`, quarter["id"], quarter["expires_at"]); n != 1 {
		t.Errorf("%d audit events record the 90-day token's expiry, want 1", n)
	}

	// The quarter passes.
	if _, err := h.pool.Exec(t.Context(), `UPDATE service_tokens SET created_at = created_at - interval '91 days', expires_at = expires_at - interval '91 days' WHERE id = $1`, quarter["id"]); err != nil {
		t.Fatal(err)
	}
	status, list := overHTTP(t, srv, http.MethodGet, path, nil)
	if status != http.StatusOK {
		t.Fatalf("list: HTTP %d %v", status, list)
	}
	byName := map[string]map[string]any{}
	for _, raw := range list["service_tokens"].([]any) {
		tok := raw.(map[string]any)
		byName[tok["name"].(string)] = tok
	}
	if tok := byName["never"]; tok["expires_at"] != nil || tok["expired"] != false {
		t.Errorf("never-expiring token listed as %v", tok)
	}
	if tok := byName["quarter"]; tok["expires_at"] == nil || tok["expired"] != true || tok["revoked"] != false {
		t.Errorf("expired token listed as %v", tok)
	}
	if tok := byName["year"]; tok["expires_at"] == nil || tok["expired"] != false {
		t.Errorf("token with a year to go listed as %v", tok)
	}
}
