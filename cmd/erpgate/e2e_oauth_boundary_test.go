package main

import (
	"net/http"
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
