package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestAServiceTokenOpensOnlyItsOwnSitesServiceDoor: a bot's token of acme
// is a credential for /service/mcp as acme and nothing else: not the
// OAuth doors of acme or of another site, not the site-chosen-at-sign-in
// door, not the admin API, /metrics or the console. Each refusal is a 401
// (or the console's sign-in page), never a 5xx, and never echoes the
// token. Presented in the forms clients and proxies produce, it works
// where it should and is refused, never a 5xx, where it should not.
func TestAServiceTokenOpensOnlyItsOwnSitesServiceDoor(t *testing.T) {
	acmeERP := frappetest.NewServer(frappetest.Options{})
	defer acmeERP.Close()
	globexERP := frappetest.NewServer(frappetest.Options{})
	defer globexERP.Close()
	gw := startGateway(t, "", nil)
	acme := gw.registerFrappe(t, "acme", acmeERP, userWithRole(t, acmeERP, "service"))
	globex := gw.registerFrappe(t, "globex", globexERP, userWithRole(t, globexERP, "service"))
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	bearer := map[string]string{"Authorization": "Bearer " + acme.ServiceToken}

	for _, path := range []string{"/sites/acme/mcp", "/sites/globex/mcp", "/mcp"} {
		for name, h := range map[string]map[string]string{
			"as bearer":             bearer,
			"in the service header": {"X-Erpgate-Service-Token": acme.ServiceToken},
		} {
			status, msg := postRPC(t, gw.URL+path, h, ping)
			if status != http.StatusUnauthorized {
				t.Errorf("acme's service token %s at %s: HTTP %d %v, want 401", name, path, status, msg)
			}
			if strings.Contains(fmt.Sprint(msg), acme.ServiceToken) {
				t.Errorf("%s echoes the token", path)
			}
		}
	}
	for _, path := range []string{"/api/v1/sites", "/api/v1/sites/" + acme.ID + "/service-tokens", "/metrics"} {
		req, _ := http.NewRequest(http.MethodGet, gw.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+acme.ServiceToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), acme.ServiceToken) {
			t.Errorf("acme's service token at %s: HTTP %d %s, want 401", path, resp.StatusCode, body)
		}
	}

	// The service door itself: each token runs as its own site only.
	for _, c := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"lowercase bearer", map[string]string{"Authorization": "bearer " + acme.ServiceToken}, http.StatusOK},
		{"uppercase bearer", map[string]string{"Authorization": "BEARER " + acme.ServiceToken}, http.StatusOK},
		{"spaces around the token", map[string]string{"Authorization": "Bearer    " + acme.ServiceToken + "  "}, http.StatusOK},
		{"the token with a character changed", map[string]string{"X-Erpgate-Service-Token": changeLast(acme.ServiceToken)}, http.StatusUnauthorized},
		{"the token in another case", map[string]string{"X-Erpgate-Service-Token": strings.ToUpper(acme.ServiceToken)}, http.StatusUnauthorized},
		{"the token twice, comma-joined (as a proxy folds two lines)", map[string]string{"X-Erpgate-Service-Token": acme.ServiceToken + ", " + acme.ServiceToken}, http.StatusUnauthorized},
		{"a 60 KB token", map[string]string{"X-Erpgate-Service-Token": acme.ServiceToken + strings.Repeat("a", 60<<10)}, http.StatusUnauthorized},
		{"another site's token beside it", map[string]string{"X-Erpgate-Service-Token": acme.ServiceToken, "Authorization": "Bearer " + globex.ServiceToken}, http.StatusBadRequest},
	} {
		if status, msg := postRPC(t, acme.ServiceMCPURL, c.header, ping); status != c.want {
			t.Errorf("%s: HTTP %d %v, want %d", c.name, status, msg, c.want)
		}
	}
	if status, _ := postRPC(t, acme.ServiceMCPURL+"?access_token="+acme.ServiceToken, nil, ping); status != http.StatusUnauthorized {
		t.Errorf("the token in the query string: HTTP %d, want 401", status)
	}
	// A NUL inside the token: Go's client will not send it, so by hand.
	if status := rawStatus(t, gw.URL, "X-Erpgate-Service-Token: "+acme.ServiceToken[:8]+"\x00"+acme.ServiceToken[8:]); status/100 != 4 {
		t.Errorf("a token with a NUL: HTTP %d, want a 4xx", status)
	}

	// Usage: each token's calls are its site's and its own.
	ids := map[string]string{}
	for _, s := range []devSite{acme, globex} {
		tokens, err := gw.admin.listTokens(context.Background(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range tokens {
			if strings.HasPrefix(s.ServiceToken, tk.Prefix) {
				ids[s.ID] = tk.ID
			}
		}
		call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_customers","arguments":{}}}`
		if status, msg := postRPC(t, s.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": s.ServiceToken}, call); status != http.StatusOK {
			t.Fatalf("%s's tools/call: HTTP %d %v", s.ID, status, msg)
		}
	}
	for _, s := range []devSite{acme, globex} {
		waitFor(t, 20*time.Second, "the tools/call usage events", func() bool {
			return queryInt(t, gw.DBURL, `SELECT count(*) FROM usage_events WHERE method = 'tools/call' AND site_id = $1`, s.ID) == 1
		})
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM usage_events WHERE method = 'tools/call' AND site_id = $1
			AND auth_type = 'service_token' AND client_id = $2`, s.ID, ids[s.ID]); n != 1 {
			t.Errorf("%s's tools/call is not recorded as its site's and its token's (%s)", s.ID, ids[s.ID])
		}
	}
	assertHealthy(t, gw)
}

// rawStatus sends a POST to /service/mcp with one header line written as
// is and returns the status code.
func rawStatus(t *testing.T, base, headerLine string) int {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	fmt.Fprintf(conn, "POST /service/mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		strings.TrimPrefix(base, "http://"), headerLine, len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// changeLast returns token with its last character replaced by another.
func changeLast(token string) string {
	last := "A"
	if strings.HasSuffix(token, last) {
		last = "B"
	}
	return token[:len(token)-1] + last
}
