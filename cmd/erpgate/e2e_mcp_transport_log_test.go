package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestMCPTransportLinesGoThroughErpgatesLog: a caller posting a JSON-RPC
// response nobody asked for made mcp-go write a plain-text line to the
// process's standard error through Go's default logger: outside
// erpgate's log (no level, no structure, no bound), one line per request
// of any caller. Its lines must go through erpgate's logger, named, and
// at most at warning level without a stack trace: what a caller can make
// happen at will must not raise an operator's error alerts.
func TestMCPTransportLinesGoThroughErpgatesLog(t *testing.T) {
	var stray syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&stray, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	req, err := http.NewRequest(http.MethodPost, site.ServiceMCPURL,
		strings.NewReader(`{"jsonrpc":"2.0","id":4242,"result":{"content":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+site.ServiceToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an unsolicited response: HTTP %d %s", resp.StatusCode, body)
	}
	if s := stray.String(); s != "" {
		t.Errorf("a line outside erpgate's log: %s", s)
	}
	found := false
	for _, line := range strings.Split(gw.Logs.String(), "\n") {
		if !strings.Contains(line, `"logger":"mcp-go"`) {
			continue
		}
		found = true
		if !strings.Contains(line, `"level":"warn"`) || strings.Contains(line, "stacktrace") {
			t.Errorf("mcp-go's line: %s", line)
		}
	}
	if !found {
		t.Errorf("no mcp-go line in erpgate's log:\n%s", gw.Logs.String())
	}
}
