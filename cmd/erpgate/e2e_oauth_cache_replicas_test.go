package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/freeport"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestOAuthRevocationsReachTheOtherReplica runs two erpgate processes on
// one Postgres. Replica B serves a user's calls from its cache (the access
// token's grant, the site, the user's ERP token); each way of ending the
// user's access, done through replica A or the ERP, must make B refuse the
// same token with 401 well before the cache's 30 s backstop: a revoked
// grant, a revoked refresh-token family, an ERP sign-in that died, and a
// disabled site. The time each took to reach B is logged; the benchmark
// (two_replicas) measures it.
func TestOAuthRevocationsReachTheOtherReplica(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	other := frappetest.NewServer(frappetest.Options{})
	defer other.Close()
	a, b, gw := twoReplicas(t, map[string]string{
		"ERPGATE_LOG_LEVEL":           "warn",
		"ERPGATE_OAUTH_REFRESH_GRACE": "1s",
		// The polling below makes more calls than a person would.
		"ERPGATE_LIMIT_USER_PER_MINUTE": "100000",
		"ERPGATE_LIMIT_SITE_PER_MINUTE": "100000",
	})
	acme := frappeOAuthSite(t, gw, "acme", sim)
	beta := frappeOAuthSite(t, gw, "beta", other)

	// signedIn signs user in to site and checks that both replicas serve
	// the token (so B has cached it).
	signedIn := func(t *testing.T, site devSite, user frappetest.User) *oauthMCPClient {
		t.Helper()
		c := connectOAuth(t, site.MCPURL, frappeLogin(user))
		token := c.source.current().AccessToken
		for _, base := range []string{a.URL, b.URL, b.URL} {
			if err := callAsUser(base+"/sites/"+site.Slug+"/mcp", token, user.Email, 1); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	refusedOnB := func(t *testing.T, site devSite, token string, since time.Time) {
		t.Helper()
		waitRefused(t, b.URL+"/sites/"+site.Slug+"/mcp", token, since)
	}

	t.Run("a revoked grant", func(t *testing.T) {
		c := signedIn(t, acme, userWithRole(t, sim, "all-companies"))
		tok := c.source.current()
		since := time.Now()
		status, out := tokenEndpoint(t, a.URL+"/oauth/revoke", url.Values{
			"token": {tok.RefreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {c.source.cfg.ClientID}})
		if status != http.StatusOK {
			t.Fatalf("revoke: HTTP %d %s", status, out)
		}
		refusedOnB(t, acme, tok.AccessToken, since)
	})

	t.Run("a revoked refresh-token family", func(t *testing.T) {
		user := userWithRole(t, sim, "one-company")
		c := signedIn(t, acme, user)
		first := c.source.current()
		c.source.expire()
		second, err := c.source.Token()
		if err != nil || second.RefreshToken == first.RefreshToken {
			t.Fatalf("refresh: %v", err)
		}
		for _, base := range []string{b.URL, b.URL} {
			if err := callAsUser(base+"/sites/acme/mcp", second.AccessToken, user.Email, 2); err != nil {
				t.Fatal(err)
			}
		}
		// The first refresh token, used again after its grace period,
		// revokes the family, the newest access token included.
		execSQL(t, gw.DBURL, `UPDATE oauth_tokens SET used_at = now() - interval '1 hour' WHERE kind = 'refresh' AND used_at IS NOT NULL`)
		since := time.Now()
		status, out := tokenEndpoint(t, a.URL+"/oauth/token", url.Values{
			"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}, "client_id": {c.source.cfg.ClientID}})
		if status != http.StatusBadRequest || !strings.Contains(out, "invalid_grant") {
			t.Fatalf("reuse of a rotated refresh token: HTTP %d %s", status, out)
		}
		refusedOnB(t, acme, second.AccessToken, since)
	})

	t.Run("an ERP sign-in that died", func(t *testing.T) {
		user := userWithRole(t, sim, "no-accounting")
		c := signedIn(t, acme, user)
		token := c.source.current().AccessToken
		// The ERP ends the user's tokens; the next call, on A, finds the
		// refresh token dead and ends the user's grants.
		sim.RevokeRefreshTokens(user.Email)
		sim.ExpireTokens()
		since := time.Now()
		if err := callAsUser(a.URL+"/sites/acme/mcp", token, user.Email, 3); err == nil || !strings.Contains(err.Error(), "AUTH_EXPIRED") {
			t.Fatalf("call on A after the ERP ended the sign-in: %v", err)
		}
		refusedOnB(t, acme, token, since)
	})

	t.Run("a disabled site", func(t *testing.T) {
		c := signedIn(t, beta, userWithRole(t, other, "all-companies"))
		token := c.source.current().AccessToken
		since := time.Now()
		if err := gw.admin.do(context.Background(), http.MethodPatch, "/sites/"+beta.ID, map[string]any{"status": "disabled"}, nil); err != nil {
			t.Fatal(err)
		}
		refusedOnB(t, beta, token, since)
	})
}

// waitRefused waits until endpoint answers the token with 401, at most
// 10 s after since: well under the cache's 30 s backstop, so that only an
// invalidation makes a replica that cached the token refuse it in time.
func waitRefused(t *testing.T, endpoint, token string, since time.Time) {
	t.Helper()
	deadline := since.Add(10 * time.Second)
	for {
		status, body := mcpCallStatus(t, endpoint, token)
		if status == http.StatusUnauthorized {
			t.Logf("%s refused the token %v after the change", endpoint, time.Since(since).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still answers the token with HTTP %d: %s", endpoint, status, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestARevocationReachesAReplicaWhoseListenerWentSilent: replica B's
// listening connection goes silent while its pool keeps working, as when a
// NAT or load balancer forgets the one idle flow. The revocation's
// notification never reaches B, and no error tells it so; B must notice
// the silence, drop its cache, and refuse the revoked token well before
// the cache's 30 s backstop.
func TestARevocationReachesAReplicaWhoseListenerWentSilent(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	bin := buildErpgate(t)
	addrA, addrB := freeport.Loopback(t), freeport.Loopback(t)
	env, adminToken := replicaEnv(t, addrA, pgtest.NewDatabase(t), map[string]string{
		"ERPGATE_LOG_LEVEL": "warn",
		// The polling below makes more calls than a person would.
		"ERPGATE_LIMIT_USER_PER_MINUTE": "100000",
		"ERPGATE_LIMIT_SITE_PER_MINUTE": "100000",
	})
	a := startReplica(t, bin, addrA, env)
	silencer := pgtest.NewSilencer(t, env["DATABASE_URL"])
	envB := maps.Clone(env)
	envB["DATABASE_URL"] = silencer.URL
	b := startReplica(t, bin, addrB, envB)
	gw := &gateway{URL: a.URL, DBURL: env["DATABASE_URL"], admin: &adminClient{base: a.URL, token: adminToken}}
	acme := frappeOAuthSite(t, gw, "acme", sim)

	user := userWithRole(t, sim, "all-companies")
	c := connectOAuth(t, acme.MCPURL, frappeLogin(user))
	tok := c.source.current()
	for i, base := range []string{a.URL, b.URL, b.URL} {
		if err := callAsUser(base+"/sites/acme/mcp", tok.AccessToken, user.Email, i); err != nil {
			t.Fatal(err)
		}
	}
	if n := silencer.SilenceListening(); n != 1 {
		t.Fatalf("silenced %d listening connections of B, want 1", n)
	}
	since := time.Now()
	status, out := tokenEndpoint(t, a.URL+"/oauth/revoke", url.Values{
		"token": {tok.RefreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {c.source.cfg.ClientID}})
	if status != http.StatusOK {
		t.Fatalf("revoke: HTTP %d %s", status, out)
	}
	waitRefused(t, b.URL+"/sites/acme/mcp", tok.AccessToken, since)
}

// tokenEndpoint posts a form to an OAuth endpoint.
func tokenEndpoint(t *testing.T, endpoint string, form url.Values) (int, string) {
	t.Helper()
	resp, err := http.PostForm(endpoint, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// mcpCallStatus makes one tools/call of get_current_user and returns the
// HTTP status and body.
func mcpCallStatus(t *testing.T, endpoint, token string) (int, string) {
	t.Helper()
	status, _, body := mcpCallFrom(t, endpoint, token, "")
	return status, body
}

// mcpCallFrom is mcpCallStatus with the answer's headers, sent through a
// proxy as forwardedFor when that is not empty.
func mcpCallFrom(t *testing.T, endpoint, token, forwardedFor string) (int, http.Header, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_current_user","arguments":{}}}`
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+token)
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var msg json.RawMessage
	if json.Unmarshal(raw, &msg) != nil {
		return resp.StatusCode, resp.Header, fmt.Sprintf("%q", raw)
	}
	return resp.StatusCode, resp.Header, string(msg)
}
