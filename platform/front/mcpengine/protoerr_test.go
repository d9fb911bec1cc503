package mcpengine

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// libraryText are fragments of the error text of the libraries erpgate
// uses (encoding/json, encoding/base64, mcp-go, jsonschema): none may
// reach a client.
var libraryText = []string{
	"json:", "Go struct", "Go value", "unmarshal", "base64", "input byte", "unparsable", "interface {}",
	"mcp.", "not found", "header mismatch:", "failed to", "not supported", "Invalid ",
	"elicitation(s)", "request error",
}

// leaksLibraryText returns the library fragment s contains, if any.
func leaksLibraryText(s string) string {
	for _, f := range libraryText {
		if strings.Contains(s, f) {
			return f
		}
	}
	return ""
}

// TestProtocolErrorsArePlainSentences: every JSON-RPC error a client gets
// for a request the engine hands to mcp-go, or answers on its direct
// path, is a plain sentence of erpgate's with the JSON-RPC code that fits
// (-32602 for params that are not as MCP defines them), never the text of
// mcp-go, encoding/json or encoding/base64: a tools/list cursor that is not
// one the server gave, params that are not a JSON object, members of the
// wrong type, an unknown tool, a method the server does not offer, on
// protocol 2025-11-25 and 2026-07-28 and, for tools/call, on the direct
// path and through mcp-go's transport (a progress token in _meta).
func TestProtocolErrorsArePlainSentences(t *testing.T) {
	f := newFixture(t, false)
	legacy := func(method string) map[string]string {
		return map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}
	}
	modern := func(method string) map[string]string {
		return map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: method, mcp.HeaderName: "echo"}
	}
	const meta = `"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + mcp.ProtocolVersion20260728 + `","` + mcp.MetaKeyClientCapabilities + `":{}}`
	const progress = `"_meta":{"progressToken":"p1"}`
	const progressModern = `"_meta":{"progressToken":"p1","` + mcp.MetaKeyProtocolVersion + `":"` + mcp.ProtocolVersion20260728 + `","` + mcp.MetaKeyClientCapabilities + `":{}}`
	for _, c := range []struct {
		name    string
		method  string
		params  string
		headers func(string) map[string]string
		code    int
		mention string
	}{
		{"legacy: a cursor that is not base64", "tools/list", `{"cursor":"!!!"}`, legacy, mcp.INVALID_PARAMS, "cursor"},
		{"modern: a cursor that is not base64", "tools/list", `{"cursor":"!!!",` + meta + `}`, modern, mcp.INVALID_PARAMS, "cursor"},
		{"legacy: a cursor that is a number", "tools/list", `{"cursor":5}`, legacy, mcp.INVALID_PARAMS, "cursor"},
		{"modern: a cursor that is a number", "tools/list", `{"cursor":5,` + meta + `}`, modern, mcp.INVALID_PARAMS, "cursor"},
		{"legacy: tools/list params an array", "tools/list", `[1]`, legacy, mcp.INVALID_PARAMS, "params"},
		{"legacy: tools/call params an array (direct path)", "tools/call", `[1]`, legacy, mcp.INVALID_PARAMS, "params"},
		{"legacy: tools/call params a string (direct path)", "tools/call", `"echo"`, legacy, mcp.INVALID_PARAMS, "params"},
		{"modern: tools/call params an array", "tools/call", `[1]`, modern, mcp.INVALID_PARAMS, "params"},
		{"legacy: tools/call name a number (direct path)", "tools/call", `{"name":5}`, legacy, mcp.INVALID_PARAMS, "name"},
		{"legacy: tools/call name a number (mcp-go)", "tools/call", `{"name":5,` + progress + `}`, legacy, mcp.INVALID_PARAMS, "name"},
		// 2026-07-28 checks Mcp-Name against the name first.
		{"modern: tools/call name a number", "tools/call", `{"name":5,` + meta + `}`, modern, mcp.HEADER_MISMATCH, "Mcp-Name"},
		{"legacy: tools/call task not an object (direct path)", "tools/call", `{"name":"echo","task":5}`, legacy, mcp.INVALID_PARAMS, "params"},
		{"modern: tools/call inputResponses not an object", "tools/call", `{"name":"echo","inputResponses":5,` + meta + `}`, modern, mcp.INVALID_PARAMS, "params"},
		{"legacy: unknown tool (direct path)", "tools/call", `{"name":"drop_tables"}`, legacy, mcp.INVALID_PARAMS, "drop_tables"},
		{"legacy: unknown tool (mcp-go)", "tools/call", `{"name":"drop_tables",` + progress + `}`, legacy, mcp.INVALID_PARAMS, "drop_tables"},
		{"modern: unknown tool (direct path)", "tools/call", `{"name":"drop_tables",` + meta + `}`, func(m string) map[string]string {
			h := modern(m)
			h[mcp.HeaderName] = "drop_tables"
			return h
		}, mcp.INVALID_PARAMS, "drop_tables"},
		{"modern: unknown tool (mcp-go)", "tools/call", `{"name":"drop_tables",` + progressModern + `}`, func(m string) map[string]string {
			h := modern(m)
			h[mcp.HeaderName] = "drop_tables"
			return h
		}, mcp.INVALID_PARAMS, "drop_tables"},
		{"legacy: initialize params an array", "initialize", `[1]`, legacy, mcp.INVALID_PARAMS, "params"},
		{"legacy: ping params an array", "ping", `[1]`, legacy, mcp.INVALID_PARAMS, "params"},
		{"modern: Mcp-Name that is not the params' name", "tools/call", `{"name":5,` + meta + `}`, func(m string) map[string]string {
			h := modern(m)
			h[mcp.HeaderName] = "=?base64?!!!?="
			return h
		}, mcp.HEADER_MISMATCH, "Mcp-Name"},
		{"modern: subscriptions/listen notifications not an object", "subscriptions/listen", `{"notifications":5,` + meta + `}`, modern, mcp.INVALID_PARAMS, "params"},
		{"legacy: a method the server does not offer", "resources/list", `{}`, legacy, mcp.METHOD_NOT_FOUND, "resources/list"},
		{"modern: a method the server does not offer", "tasks/get", `{"taskId":"x",` + meta + `}`, modern, mcp.METHOD_NOT_FOUND, "tasks/get"},
		{"legacy: a method MCP does not define", "drop/tables", `{}`, legacy, mcp.METHOD_NOT_FOUND, "method"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":7,"method":"` + c.method + `","params":` + c.params + `}`
			status, ct, got := postRaw(t, f.url, body, c.headers(c.method))
			m, _ := got.(map[string]any)
			e, _ := m["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if e == nil || e["code"] != json.Number(itoa(c.code)) || m["id"] != json.Number("7") || !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("%d %s %v, want JSON-RPC error %d for id 7", status, ct, got, c.code)
			}
			if frag := leaksLibraryText(msg); frag != "" {
				t.Errorf("message %q carries library text (%q)", msg, frag)
			}
			if !strings.Contains(msg, c.mention) {
				t.Errorf("message %q does not mention %q", msg, c.mention)
			}
			// The usage event records the code the client got.
			events := f.sink.all()
			if want := rpcErrorCodes[c.code]; c.code == mcp.INVALID_PARAMS && !strings.Contains(c.name, "unknown tool") {
				if ev := events[len(events)-1]; ev.ErrorCode != want {
					t.Errorf("recorded %q, want %q", ev.ErrorCode, want)
				}
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestProtocolErrorNamesTheMemberAtFault: params whose name and arguments
// are fine but another member has the wrong type are told which member,
// and what it must be, not that the name must be a string and the
// arguments an object, which they already are.
func TestProtocolErrorNamesTheMemberAtFault(t *testing.T) {
	f := newFixture(t, false)
	legacy := map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}
	modern := map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: "tools/call", mcp.HeaderName: "echo"}
	const meta = `"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + mcp.ProtocolVersion20260728 + `","` + mcp.MetaKeyClientCapabilities + `":{}}`
	for _, c := range []struct {
		name    string
		headers map[string]string
		params  string
		mention string
	}{
		{"legacy: task a number", legacy, `{"name":"echo","arguments":{"n":1},"task":5}`, "task must be an object"},
		{"legacy: task's ttl a string", legacy, `{"name":"echo","arguments":{"n":1},"task":{"ttl":"x"}}`, "task.ttl must be"},
		{"legacy: _meta a number", legacy, `{"name":"echo","arguments":{"n":1},"_meta":5}`, "_meta must be an object"},
		{"modern: requestState a number", modern, `{"name":"echo","arguments":{"n":1},` + meta + `,"requestState":5}`, "requestState must be a string"},
		{"modern: inputResponses a number", modern, `{"name":"echo","arguments":{"n":1},` + meta + `,"inputResponses":5}`, "inputResponses must be an object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, got := postRaw(t, f.url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":`+c.params+`}`, c.headers)
			m, _ := got.(map[string]any)
			e, _ := m["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if e == nil || e["code"] != json.Number(itoa(mcp.INVALID_PARAMS)) {
				t.Fatalf("%v, want JSON-RPC error -32602", got)
			}
			if !strings.Contains(msg, c.mention) {
				t.Errorf("message %q does not say %q", msg, c.mention)
			}
			if frag := leaksLibraryText(msg); frag != "" {
				t.Errorf("message %q carries library text (%q)", msg, frag)
			}
		})
	}
}

// TestSDKClientSeesPlainProtocolErrors: what the official Go SDK client
// reports for a cursor the server never gave and for an unknown tool is
// erpgate's sentence.
func TestSDKClientSeesPlainProtocolErrors(t *testing.T) {
	f := newFixture(t, false)
	cs := f.session(t)
	_, err := cs.ListTools(context.Background(), &sdk.ListToolsParams{Cursor: "not a cursor"})
	if err == nil || leaksLibraryText(err.Error()) != "" || !strings.Contains(err.Error(), "cursor") {
		t.Errorf("tools/list with a bad cursor: %v", err)
	}
	_, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "drop_tables", Arguments: map[string]any{}})
	if err == nil || leaksLibraryText(err.Error()) != "" || !strings.Contains(err.Error(), "drop_tables") {
		t.Errorf("tools/call of an unknown tool: %v", err)
	}
}

// TestTransportRefusalsAreJSONRPCErrors: what mcp-go's transport answers
// in plain text (a content type that is not JSON, a protocol version it
// does not know) reaches the client as a JSON-RPC error in erpgate's
// words, with the same status.
func TestTransportRefusalsAreJSONRPCErrors(t *testing.T) {
	f := newFixture(t, false)
	ping := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	for _, c := range []struct {
		name    string
		method  string
		headers map[string]string
		status  int
		mention string
	}{
		{"text/plain", http.MethodPost, map[string]string{mcp.HeaderProtocolVersion: "2025-11-25", "Content-Type": "text/plain"}, http.StatusBadRequest, "application/json"},
		{"unknown protocol version", http.MethodPost, map[string]string{mcp.HeaderProtocolVersion: "1999-01-01"}, http.StatusBadRequest, "2025-11-25"},
		{"DELETE with an unknown protocol version", http.MethodDelete, map[string]string{mcp.HeaderProtocolVersion: "1999-01-01"}, http.StatusBadRequest, "2025-11-25"},
		{"GET with an unknown protocol version", http.MethodGet, map[string]string{mcp.HeaderProtocolVersion: "1999-01-01"}, http.StatusBadRequest, "2025-11-25"},
		{"GET", http.MethodGet, map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}, http.StatusMethodNotAllowed, "POST"},
		{"DELETE on 2026-07-28", http.MethodDelete, map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728}, http.StatusMethodNotAllowed, "POST"},
	} {
		var status int
		var ct string
		var got any
		if c.method == http.MethodPost {
			status, ct, got = postRaw(t, f.url, ping, c.headers)
		} else {
			req, _ := http.NewRequest(c.method, f.url, nil)
			for k, v := range c.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = json.NewDecoder(resp.Body).Decode(&got)
			_ = resp.Body.Close()
			status, ct = resp.StatusCode, resp.Header.Get("Content-Type")
		}
		m, _ := got.(map[string]any)
		e, _ := m["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if status != c.status || !strings.HasPrefix(ct, "application/json") || e == nil {
			t.Errorf("%s: %d %s %v, want %d with a JSON-RPC error", c.name, status, ct, got, c.status)
			continue
		}
		if frag := leaksLibraryText(msg); frag != "" || !strings.Contains(msg, c.mention) {
			t.Errorf("%s: message %q (library text %q), want one mentioning %q", c.name, msg, frag, c.mention)
		}
	}
}

// TestInvalidArgumentsAreInErpgatesWords: an INVALID_ARGUMENT names the
// argument and says what to change in erpgate's words, not the
// validator's ("got string, want integer", "additional properties ... not
// allowed") nor Go's ("parsing time ...: day out of range").
func TestInvalidArgumentsAreInErpgatesWords(t *testing.T) {
	f := newFixture(t, false)
	cs := f.session(t)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"n": "3"}, "/n"},
		{map[string]any{"n": 11}, "/n"},
		{map[string]any{"n": 0}, "/n"},
		{map[string]any{"n": 1, "x": true}, "x"},
		{map[string]any{}, "n"},
		{map[string]any{"n": 1, "when": "2024-02-30"}, "/when"},
		{map[string]any{"n": 1, "when": "tomorrow"}, "/when"},
	} {
		res, m := call(t, cs, "echo", c.args)
		text := res.Content[0].(*sdk.TextContent).Text
		if !res.IsError || errCode(m) != "INVALID_ARGUMENT" || !strings.Contains(text, c.want) {
			t.Errorf("%v: isError=%v %s, want INVALID_ARGUMENT naming %s", c.args, res.IsError, text, c.want)
		}
		for _, lib := range []string{"got string, want", "want integer", "additional properties", "not allowed", "minimum:", "maximum:", "parsing time", "out of range", "jsonschema", "is not valid date"} {
			if strings.Contains(text, lib) {
				t.Errorf("%v: message %s carries library text (%q)", c.args, text, lib)
				break
			}
		}
	}
}

// TestParamsSentenceHasTheRightArticle: the sentence for an initialize
// whose params are not as MCP defines them reads "an initialize request",
// not "a initialize request".
func TestParamsSentenceHasTheRightArticle(t *testing.T) {
	f := newFixture(t, false)
	for _, params := range []string{`{"protocolVersion":5}`, `[]`} {
		_, _, got := postRaw(t, f.url, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":`+params+`}`, map[string]string{mcp.HeaderProtocolVersion: ""})
		m, _ := got.(map[string]any)
		e, _ := m["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if !strings.Contains(msg, "of an initialize request") {
			t.Errorf("params %s: %v, want a sentence about the params of an initialize request", params, got)
		}
	}
}

// TestRefusalsCarryTheIDWhenItCanBeRead: every error erpgate writes for a
// request whose body it has parsed carries the request's id when the id
// is one JSON-RPC allows (a string or a number; MCP: a string or an
// integer), as sent, and null otherwise: "It MUST be the same as the
// value of the id member in the Request Object. If there was an error in
// detecting the id in the Request Object (e.g. Parse error/Invalid
// Request), it MUST be Null" (JSON-RPC 2.0, 5. Response object). Before,
// a message whose method was not a name was answered with a null id
// although its id had been read, and a request carrying a result had an
// id of any JSON type echoed, an object or a boolean too, which no
// JSON-RPC client can match to anything.
func TestRefusalsCarryTheIDWhenItCanBeRead(t *testing.T) {
	f := newFixture(t, false)
	for _, c := range []struct {
		name, body, id string
	}{
		{"a method that is a number", `{"jsonrpc":"2.0","id":7,"method":5}`, `7`},
		{"an empty method", `{"jsonrpc":"2.0","id":"seven","method":""}`, `"seven"`},
		{"a method that is null, a large id", `{"jsonrpc":"2.0","id":9007199254740993,"method":null,"params":{}}`, `9007199254740993`},
		{"a method that is a number, an object id", `{"jsonrpc":"2.0","id":{"n":7},"method":5}`, `null`},
		{"a request with a result", `{"jsonrpc":"2.0","id":7,"method":"ping","result":{}}`, `7`},
		{"a request with a result, an object id", `{"jsonrpc":"2.0","id":{"n":7},"method":"ping","result":{}}`, `null`},
		{"a request with an error, a boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping","error":{"code":1,"message":"x"}}`, `null`},
		{"a request with a result, a fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping","result":{}}`, `null`},
		{"an id that is an array", `{"jsonrpc":"2.0","id":[7],"method":"ping"}`, `null`},
		{"not JSON", `{"jsonrpc":"2.0","id":7,"method":"ping"`, `null`},
		{"a batch", `[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, `null`},
	} {
		resp, body := postMCP(t, f.url, c.body, map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"})
		var r struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &r); err != nil || r.Error == nil || r.JSONRPC != "2.0" {
			t.Errorf("%s: %d %s, want a JSON-RPC error", c.name, resp.StatusCode, body)
			continue
		}
		if resp.StatusCode != http.StatusBadRequest || string(r.ID) != c.id {
			t.Errorf("%s: %d with id %s, want 400 with id %s: %s", c.name, resp.StatusCode, r.ID, c.id, body)
		}
	}
}
