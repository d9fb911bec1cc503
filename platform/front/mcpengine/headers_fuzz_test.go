package mcpengine

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// FuzzStandardHeadersMatch: erpgate's check of a tools/call's Mcp-Method
// and Mcp-Name headers (the client's bytes) agrees with mcp-go's
// ValidateStandardHeaders for the same headers, protocol version and
// params, whatever the headers hold.
func FuzzStandardHeadersMatch(f *testing.F) {
	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18", ""} {
		f.Add(v, "tools/call", "list_companies", "list_companies")
		f.Add(v, "tools/call", "=?base64?bGlzdF9jb21wYW5pZXM=?=", "list_companies")
	}
	f.Add("2026-07-28", "tools/call", "=?base64?w6k=?=", "é")
	f.Add("2026-07-28", "tools/call", "=?base64?!!?=", "x")
	f.Add("2026-07-28", "tools/call", "=?base64??=", "")
	f.Add("2026-07-28", "tools/list", "", "")
	f.Add("2026-07-28", "", "x", "x")
	f.Fuzz(func(t *testing.T, version, method, nameHeader, toolName string) {
		h := http.Header{}
		h.Set(mcp.HeaderMethod, method)
		h.Set(mcp.HeaderName, nameHeader)
		params, err := json.Marshal(map[string]string{"name": toolName})
		if err != nil {
			t.Fatal(err)
		}
		// The name as the engine reads it from the body.
		var p struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			t.Fatal(err)
		}
		got := standardHeadersMatch(h.Get(mcp.HeaderMethod), h.Get, version, p.Name)
		want := mcp.ValidateStandardHeaders(h.Get, version, mcp.MethodToolsCall, params) == nil
		if got != want {
			t.Fatalf("version %q, Mcp-Method %q, Mcp-Name %q, name %q: erpgate says %v, mcp-go %v", version, method, nameHeader, p.Name, got, want)
		}
	})
}
