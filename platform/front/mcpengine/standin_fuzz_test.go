package mcpengine

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzStandInID: a request whose id is a whole number mcp-go would not
// echo as sent is handed on with a stand-in string id and otherwise the
// same members; a reply carrying the stand-in gets the id exactly as sent,
// and a reply without it is left as it is.
func FuzzStandInID(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","ID":-123456789012345678901234567890,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":18446744073709551616,"Id":1,"method":"ping","params":{"a":"<b>"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, ok := peekRequest(body)
		if !ok || !msg.largeID() || msg.answers() {
			return
		}
		st := &requestState{}
		out, standIn := st.standInID(body, msg.ID)
		if bytes.Equal(out, body) {
			return // not rewritten: mcp-go gets the body as it came
		}
		var before, after map[string]json.RawMessage
		if json.Unmarshal(body, &before) != nil || json.Unmarshal(out, &after) != nil {
			t.Fatalf("standInID(%q) = %q: not one JSON object", body, out)
		}
		if !bytes.Equal(after["id"], standIn) {
			t.Fatalf("standInID(%q): id %q, want the stand-in %q", body, after["id"], standIn)
		}
		for k, v := range before {
			if strings.EqualFold(k, "id") {
				continue
			}
			kept, ok := after[k]
			if !ok {
				t.Fatalf("standInID(%q) lost member %q", body, k)
			}
			var a, b any
			_ = json.Unmarshal(v, &a)
			_ = json.Unmarshal(kept, &b)
			if !jsonEqual(a, b) {
				t.Fatalf("standInID(%q) changed member %q: %q to %q", body, k, v, kept)
			}
		}
		reply := []byte(`{"jsonrpc":"2.0","id":` + string(standIn) + `,"result":{}}`)
		want := []byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{}}`)
		if got := st.restoreID(reply); !bytes.Equal(got, want) {
			t.Fatalf("restoreID: %q, want %q", got, want)
		}
		other := []byte(`{"jsonrpc":"2.0","id":"x","result":{}}`)
		if got := st.restoreID(other); !bytes.Equal(got, other) {
			t.Fatalf("restoreID changed a reply without the stand-in: %q", got)
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
