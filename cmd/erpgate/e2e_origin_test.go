package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestForeignOriginIsRefusedAtEveryMCPDoor: a request from a browser
// origin erpgate does not allow is refused with 403 at each MCP door
// before its credentials are looked at: "If the Origin header is present
// and invalid, servers MUST respond with HTTP 403 Forbidden" (MCP
// 2025-11-25 and 2026-07-28, Streamable HTTP, Security Warning / Security &
// Endpoint). Before, a request without a valid token got the door's 401,
// and at the OAuth doors its challenge sent the browser client through
// the ERP sign-in and consent only to be refused with 403 once signed in.
// erpgate's own origin is still challenged as before.
func TestForeignOriginIsRefusedAtEveryMCPDoor(t *testing.T) {
	gw := startGateway(t, "", nil)
	post := func(path, origin string, header map[string]string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, gw.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(body)
	}
	for _, path := range []string{"/sites/acme/mcp", "/mcp", "/service/mcp"} {
		for name, h := range map[string]map[string]string{
			"no credential":              nil,
			"a bearer token not issued":  {"Authorization": "Bearer not-a-token"},
			"a service token not issued": {"X-Erpgate-Service-Token": "egs_not_a_token"},
		} {
			status, header, body := post(path, "https://evil.example", h)
			if status != http.StatusForbidden || header.Get("WWW-Authenticate") != "" || !strings.Contains(body, "origin") {
				t.Errorf("%s, %s, from a foreign origin: %d, WWW-Authenticate %q, %s; want 403 and no challenge", path, name, status, header.Get("WWW-Authenticate"), body)
			}
		}
		if status, _, body := post(path, gw.URL, nil); status != http.StatusUnauthorized {
			t.Errorf("%s from erpgate's own origin without a credential: %d %s, want 401", path, status, body)
		}
	}
}
