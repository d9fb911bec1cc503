package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestWritesAreWired: a gateway with encryption keys has the approval
// store and the engine's sealing key: initialize on an MCP endpoint of an
// earlier protocol gets the capability session id (platform/front/mcpengine,
// writes.go), which a gateway without writes would not issue.
func TestWritesAreWired(t *testing.T) {
	gw := startGateway(t, "", nil)
	if gw.App.approvals == nil {
		t.Fatal("no approval store")
	}
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"x","version":"1"},"capabilities":{"elicitation":{"url":{}}}}}`
	req, _ := http.NewRequest(http.MethodPost, site.ServiceMCPURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Erpgate-Service-Token", site.ServiceToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d, session id %q", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
	}
}
