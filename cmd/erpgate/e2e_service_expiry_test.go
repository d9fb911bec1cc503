package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// refusalOf posts initialize to the service endpoint with token and
// returns the status, the WWW-Authenticate header and the body.
func refusalOf(t *testing.T, endpoint, token string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Erpgate-Service-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(body)
}

// TestServiceMCPRefusesAnExpiredTokenLikeARevokedOne: a token issued
// through the admin API for 30 days works with the official MCP client;
// once its 30 days have passed, the client cannot connect with it, and
// the refusal (status, challenge and body) is exactly a revoked token's,
// so a caller learns no more from a token that ran out than from one
// that was revoked. A token issued without a lifetime goes on working.
func TestServiceMCPRefusesAnExpiredTokenLikeARevokedOne(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	ctx := context.Background()
	issue := func(body map[string]any) tokenResponse {
		t.Helper()
		var tok tokenResponse
		if err := gw.admin.do(ctx, http.MethodPost, "/sites/"+site.ID+"/service-tokens", body, &tok); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	expiring := issue(map[string]any{"name": "thirty days", "expires_in_days": 30})
	revoked := issue(map[string]any{"name": "revoked"})
	never := issue(map[string]any{"name": "never"})

	// Within its 30 days the token works.
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": expiring.Token})
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list within the token's lifetime: %v", err)
	}

	// Thirty-one days pass: the token's times move back by that much in
	// the database, and its cached entry is dropped (a NOTIFY of the
	// site; the resolver's own clock is tested in servicemcp).
	pool, err := pgxpool.New(ctx, gw.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `UPDATE service_tokens SET created_at = created_at - interval '31 days', expires_at = expires_at - interval '31 days' WHERE id = $1`, expiring.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT pg_notify('erpgate_invalidate', 'site:' || $1::text)`, site.ID); err != nil {
		t.Fatal(err)
	}
	if err := gw.admin.do(ctx, http.MethodDelete, "/sites/"+site.ID+"/service-tokens/"+revoked.ID, nil, nil); err != nil {
		t.Fatal(err)
	}

	var expiredStatus int
	var expiredChallenge, expiredBody string
	deadline := time.Now().Add(10 * time.Second)
	for {
		expiredStatus, expiredChallenge, expiredBody = refusalOf(t, site.ServiceMCPURL, expiring.Token)
		if expiredStatus != http.StatusOK || time.Now().After(deadline) {
			break // the notification may take a moment to arrive
		}
		time.Sleep(20 * time.Millisecond)
	}
	revokedStatus, revokedChallenge, revokedBody := refusalOf(t, site.ServiceMCPURL, revoked.Token)
	if revokedStatus != http.StatusUnauthorized {
		t.Fatalf("a revoked token: HTTP %d %s", revokedStatus, revokedBody)
	}
	if expiredStatus != revokedStatus || expiredChallenge != revokedChallenge || expiredBody != revokedBody {
		t.Errorf("an expired token is refused with HTTP %d %q %s;\na revoked one with HTTP %d %q %s", expiredStatus, expiredChallenge, expiredBody, revokedStatus, revokedChallenge, revokedBody)
	}
	// One sentence for both, which now names the expiry among the causes:
	// "unknown or revoked" sent the owner of an expired token looking for
	// a revocation nobody made.
	if !strings.Contains(revokedBody, "expired") {
		t.Errorf("the refusal does not say the token may have expired: %s", revokedBody)
	}
	if strings.Contains(expiredBody, expiring.Token) || strings.Contains(expiredBody, expiring.Prefix) {
		t.Errorf("the refusal names the token: %s", expiredBody)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "erpgate-e2e", Version: "1"}, nil)
	hc := &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: map[string]string{"X-Erpgate-Service-Token": expiring.Token}}}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if s, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: site.ServiceMCPURL, HTTPClient: hc, MaxRetries: -1}, nil); err == nil {
		_ = s.Close()
		t.Errorf("the MCP client connected with an expired token")
	}
	if _, err := cs.ListTools(ctx, nil); err == nil {
		t.Errorf("the session opened before the expiry still lists tools after it")
	}

	other := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": never.Token})
	if _, err := other.ListTools(ctx, nil); err != nil {
		t.Errorf("a token without a lifetime: %v", err)
	}
	for _, line := range strings.Split(gw.Logs.String(), "\n") {
		if strings.Contains(line, expiring.Token) {
			t.Errorf("the log holds the expired token: %s", line)
		}
	}
}

// TestDevReusesNoExpiredToken: `erpgate dev` keeps the service token of
// its last run (dev.json) while the gateway still lists it as usable. An
// expired token is not usable: the run issues a new one, as for a revoked
// token, instead of printing one every call is refused with.
func TestDevReusesNoExpiredToken(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	ctx := context.Background()
	var previous tokenResponse
	if err := gw.admin.do(ctx, http.MethodPost, "/sites/"+site.ID+"/service-tokens", map[string]any{"name": "dev", "expires_in_days": 30}, &previous); err != nil {
		t.Fatal(err)
	}
	if got, err := gw.admin.serviceToken(ctx, site.ID, previous.Token); err != nil || got != previous.Token {
		t.Fatalf("within its lifetime the token is not kept: %v", err)
	}
	queryInt(t, gw.DBURL, `WITH moved AS (UPDATE service_tokens SET created_at = created_at - interval '31 days', expires_at = expires_at - interval '31 days' WHERE id = $1 RETURNING 1) SELECT count(*) FROM moved`, previous.ID)
	got, err := gw.admin.serviceToken(ctx, site.ID, previous.Token)
	if err != nil || got == previous.Token || !strings.HasPrefix(got, "egs_") {
		t.Fatalf("after the token expired, the dev run kept it (%v)", err)
	}
}
