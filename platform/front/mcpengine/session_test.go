package mcpengine

import (
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestAFailedInitializeIssuesNoSession: the capability session id was set
// before mcp-go answered the initialize, so an initialize it refused (its
// clientInfo not an object), or one its transport refused (not JSON),
// still came back with a session id: a client must get a session only
// from an initialize that succeeded.
func TestAFailedInitializeIssuesNoSession(t *testing.T) {
	f := newWriteFixture(t)
	u := f.person(t, jane)
	good := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"url":{}}},"clientInfo":{"name":"x","version":"1"}}}`
	badClient := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"url":{}}},"clientInfo":"x"}}`
	v1125 := map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}
	for _, c := range []struct {
		name    string
		body    string
		headers map[string]string
	}{
		{"clientInfo not an object", badClient, nil},
		{"clientInfo not an object, with the version header", badClient, v1125},
		{"not JSON", good, map[string]string{"Content-Type": "text/plain"}},
	} {
		resp, body := postMCP(t, u, c.body, c.headers)
		failed := resp.StatusCode != http.StatusOK
		for _, m := range sseMessages(t, resp, body) {
			failed = failed || m["error"] != nil
		}
		if !failed {
			t.Errorf("%s: the initialize succeeded: %d %s", c.name, resp.StatusCode, body)
		}
		if id := resp.Header.Get(HeaderSessionID); id != "" {
			t.Errorf("%s: %d %s, with session id %q", c.name, resp.StatusCode, body, id)
		}
	}
	if resp, body := postMCP(t, u, good, v1125); resp.StatusCode != http.StatusOK || resp.Header.Get(HeaderSessionID) == "" {
		t.Errorf("a good initialize: %d, session id %q: %s", resp.StatusCode, resp.Header.Get(HeaderSessionID), body)
	}
}
