package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestOAuthRefreshTokenIsNotAnAccessToken: a refresh token sent as a bearer
// token never authenticates an MCP request (issue 14, item 2). Used that
// way it would never rotate, so reuse detection would never fire.
func TestOAuthRefreshTokenIsNotAnAccessToken(t *testing.T) {
	r := newOAuthRig(t)
	status, tok := r.exchange(r.code())
	if status != http.StatusOK {
		t.Fatalf("exchange: HTTP %d %v", status, tok)
	}
	access, refresh := tok["access_token"].(string), tok["refresh_token"].(string)
	if resp := rawMCP(t, r.site.MCPURL, access); resp.StatusCode != http.StatusOK {
		t.Fatalf("access token: HTTP %d", resp.StatusCode)
	}
	if resp := rawMCP(t, r.site.MCPURL, refresh); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("refresh token as bearer while its access token is valid: HTTP %d, want 401", resp.StatusCode)
	}
	expireAccessTokens(t, r.gw.DBURL)
	if resp := rawMCP(t, r.site.MCPURL, refresh); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("refresh token as bearer after its access token expired: HTTP %d, want 401", resp.StatusCode)
	}
	// The refresh token itself still refreshes.
	if status, out, _ := r.token(map[string][]string{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}); status != http.StatusOK {
		t.Errorf("refresh: HTTP %d %v", status, out)
	}
}

// registerStatus posts a registration and returns the status and answer.
func registerStatus(t *testing.T, gw *gateway, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(gw.URL+"/oauth/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestOAuthRedirectURIPolicy: registration, Client ID Metadata Documents
// and authorization requests share one redirect-URI policy (issue 14,
// items 5.2 to 5.4).
func TestOAuthRedirectURIPolicy(t *testing.T) {
	r := newOAuthRig(t)
	for _, bad := range []string{"http://127.evil.example/cb", "http://127.0.0.1.nip.io/cb", "ws://127.0.0.1/cb",
		"view-source:https://evil.example/", "jar:https://evil.example/a.jar!/", "filesystem:https://evil.example/temporary/",
		"https://claude.ai@evil.example/cb"} {
		body, _ := json.Marshal(map[string]any{"redirect_uris": []string{bad}, "token_endpoint_auth_method": "none"})
		status, out := registerStatus(t, r.gw, string(body))
		if status != http.StatusBadRequest || out["error"] != "invalid_redirect_uri" {
			t.Errorf("register %s: HTTP %d %v", bad, status, out)
		}
	}
	for _, good := range []string{"https://claude.ai/api/mcp/auth_callback", "http://[::1]:8080/cb", "http://localhost/cb", "com.example.app:/cb"} {
		body, _ := json.Marshal(map[string]any{"redirect_uris": []string{good}, "token_endpoint_auth_method": "none"})
		if status, out := registerStatus(t, r.gw, string(body)); status != http.StatusCreated {
			t.Errorf("register %s: HTTP %d %v", good, status, out)
		}
	}

	// A client registered before the policy (stored as it was then) gets
	// nothing at the authorization endpoint: not a redirect, not a code.
	for i, bad := range []string{"https://claude.ai@evil.example/cb", "http://127.evil.example/cb", "jar:https://evil.example/a.jar!/"} {
		id := fmt.Sprintf("egc_legacy_%d", i)
		execSQL(t, r.gw.DBURL, `INSERT INTO oauth_clients (id, redirect_uris, grant_types, response_types, scope, token_endpoint_auth_method)
			VALUES ($1, $2, '{authorization_code,refresh_token}', '{code}', 'erp:read offline_access', 'none')`, id, []string{bad})
		resp := noFollow(t, r.authorizeURL(func(q url.Values) { q.Set("client_id", id); q.Set("redirect_uri", bad) }))
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("legacy client with %s: HTTP %d, Location %q", bad, resp.StatusCode, resp.Header.Get("Location"))
		}
	}

	// A metadata document listing a fake loopback redirect is refused.
	var docURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": docURL, "redirect_uris": []string{"http://127.0.0.1.nip.io/cb"}})
	}))
	defer srv.Close()
	docURL = srv.URL + "/client.json"
	resp := noFollow(t, r.authorizeURL(func(q url.Values) { q.Set("client_id", docURL); q.Set("redirect_uri", "http://127.0.0.1.nip.io/cb") }))
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Errorf("document with a fake loopback redirect: HTTP %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}
