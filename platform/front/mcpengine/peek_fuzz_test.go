package mcpengine

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzPeekRequest: a body is taken as a request only when it is one JSON
// object with a method and an id (null too, which is then refused); a
// batch only when it is one JSON array.
func FuzzPeekRequest(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_companies","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		` {"id":1,"method":"ping"} x`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, ok := peekRequest(body)
		if ok {
			var ref map[string]json.RawMessage
			if json.Unmarshal(body, &ref) != nil || ref == nil {
				t.Fatalf("peekRequest(%q) took a body that is not one JSON object", body)
			}
			if msg.Method == "" || len(msg.ID) == 0 || !json.Valid(msg.ID) {
				t.Fatalf("peekRequest(%q) = method %q, id %q", body, msg.Method, msg.ID)
			}
		}
		if batch(body) {
			var ref []json.RawMessage
			if json.Unmarshal(bytes.TrimSpace(body), &ref) != nil {
				t.Fatalf("batch(%q) for a body that is not one JSON array", body)
			}
			if ok {
				t.Fatalf("%q is both a request and a batch", body)
			}
		}
	})
}
