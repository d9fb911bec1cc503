package mcpengine

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/usage"
)

// postModern sends one JSON-RPC request of the 2026-07-28 era: the protocol
// version in the header and in the body's _meta, and the method in
// Mcp-Method (and the tool's name in Mcp-Name for tools/call). headers
// overrides or, with an empty value, removes a header.
func postModern(t *testing.T, url, method, params string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	h := map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: method}
	for k, v := range headers {
		h[k] = v
	}
	return postMCP(t, url, `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":`+params+`}`, h)
}

// modernMeta is the _meta member a 2026-07-28 request carries.
const modernMeta = `"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + mcp.ProtocolVersion20260728 + `",` +
	`"` + mcp.MetaKeyClientInfo + `":{"name":"test","version":"1"},"` + mcp.MetaKeyClientCapabilities + `":{}}`

// sseMessages reads the JSON messages of an SSE body in order; a JSON body
// is one message.
func sseMessages(t *testing.T, resp *http.Response, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	decode := func(data string) {
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("message %q: %v", data, err)
		}
		out = append(out, m)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		decode(string(body))
		return out
	}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			decode(data)
		}
	}
	return out
}

// TestSubscriptionsListenAcknowledgesBeforeItsResult: a 2026-07-28
// subscriptions/listen stream carries notifications/subscriptions/acknowledged
// before its result, every time. mcp-go's transport could lose it: its
// notification goroutine took the acknowledgement off the session's channel
// but found the request done once the handler's result had taken the lock
// first, and dropped it. The race shows in a fraction of tries, so the test
// makes 200.
func TestSubscriptionsListenAcknowledgesBeforeItsResult(t *testing.T) {
	const tries = 200
	// One caller sends them all, far more than a client would.
	f := newFixtureWith(t, false, func(o *Options) { o.CallerRequests = sourcelimit.Limit{Burst: tries} })
	lost := 0
	var example string
	for i := range tries {
		resp, body := postModern(t, f.url, string(mcp.MethodSubscriptionsListen),
			`{"notifications":{"toolsListChanged":true},`+modernMeta+`}`, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("try %d: %d %s", i, resp.StatusCode, body)
		}
		msgs := sseMessages(t, resp, body)
		ok := len(msgs) == 2 && msgs[0]["method"] == mcp.MethodNotificationSubscriptionsAcknowledged && msgs[1]["result"] != nil
		if !ok {
			lost++
			example = string(body)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d subscriptions/listen streams had no acknowledgement before the result; one was:\n%s", lost, tries, example)
	}
}

// TestProtocolRefusalsAreRecordedAsErrors: a request mcp-go's transport
// refuses before dispatch (2026-07-28 header checks, 400 with a JSON-RPC
// error) is recorded as an error with the refusal's code, under its
// method's name; before, a tools/call refused with 400/-32020 was recorded
// as a success.
func TestProtocolRefusalsAreRecordedAsErrors(t *testing.T) {
	f := newFixture(t, false)
	echo := `{"name":"echo","arguments":{"n":1},` + modernMeta + `}`
	for _, c := range []struct {
		name     string
		method   string
		params   string
		headers  map[string]string
		status   int
		rpcCode  int
		wantCode string
		wantTool string
	}{
		{"tools/call without Mcp-Name", "tools/call", echo, nil,
			http.StatusBadRequest, mcp.HEADER_MISMATCH, "HEADER_MISMATCH", "echo"},
		{"tools/call with another Mcp-Method", "tools/call", echo, map[string]string{mcp.HeaderMethod: "tools/list", mcp.HeaderName: "echo"},
			http.StatusBadRequest, mcp.HEADER_MISMATCH, "HEADER_MISMATCH", "echo"},
		{"tools/call of a tool that does not exist, without Mcp-Name", "tools/call", `{"name":"drop_tables","arguments":{},` + modernMeta + `}`, nil,
			http.StatusBadRequest, mcp.HEADER_MISMATCH, "HEADER_MISMATCH", "unknown"},
		{"tools/list with Last-Event-ID", "tools/list", `{` + modernMeta + `}`, map[string]string{"Last-Event-ID": "3"},
			http.StatusBadRequest, mcp.HEADER_MISMATCH, "HEADER_MISMATCH", ""},
		{"tools/list without _meta version", "tools/list", `{}`, nil,
			http.StatusBadRequest, mcp.INVALID_PARAMS, "INVALID_PARAMS", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(f.sink.all())
			resp, body := postModern(t, f.url, c.method, c.params, c.headers)
			var reply struct {
				Error struct{ Code int } `json:"error"`
			}
			_ = json.Unmarshal(body, &reply)
			if resp.StatusCode != c.status || reply.Error.Code != c.rpcCode {
				t.Fatalf("answered %d %s, want %d with error %d", resp.StatusCode, body, c.status, c.rpcCode)
			}
			events := f.sink.all()[before:]
			if len(events) != 1 {
				t.Fatalf("usage events: %+v", events)
			}
			ev := events[0]
			if ev.Method != c.method || ev.Outcome != usage.Error || ev.ErrorCode != c.wantCode {
				t.Errorf("recorded method %q outcome %q code %q, want %q error %q", ev.Method, ev.Outcome, ev.ErrorCode, c.method, c.wantCode)
			}
			if ev.Tool != c.wantTool {
				t.Errorf("recorded tool %q, want %q", ev.Tool, c.wantTool)
			}
		})
	}
}

// TestEveryKnownMethodIsRecordedByName: each MCP method, of every era, is
// recorded under its own name (subscriptions/listen was "unknown"); a
// method MCP does not define is "unknown".
func TestEveryKnownMethodIsRecordedByName(t *testing.T) {
	f := newFixture(t, false)
	for _, c := range []struct {
		method, params string
		modern         bool
		want           string
	}{
		{"subscriptions/listen", `{"notifications":{},` + modernMeta + `}`, true, "subscriptions/listen"},
		{"server/discover", `{` + modernMeta + `}`, true, "server/discover"},
		{"tools/list", `{` + modernMeta + `}`, true, "tools/list"},
		{"ping", `{` + modernMeta + `}`, true, "ping"},
		{"resources/list", `{` + modernMeta + `}`, true, "resources/list"},
		{"prompts/list", `{` + modernMeta + `}`, true, "prompts/list"},
		{"resources/subscribe", `{"uri":"erp://x"}`, false, "resources/subscribe"},
		{"resources/unsubscribe", `{"uri":"erp://x"}`, false, "resources/unsubscribe"},
		{"tasks/list", `{}`, false, "tasks/list"},
		{"tasks/get", `{"taskId":"t1"}`, false, "tasks/get"},
		{"tasks/result", `{"taskId":"t1"}`, false, "tasks/result"},
		{"tasks/cancel", `{"taskId":"t1"}`, false, "tasks/cancel"},
		{"initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`, false, "initialize"},
		{"erp/steal", `{}`, false, "unknown"},
	} {
		before := len(f.sink.all())
		if c.modern {
			postModern(t, f.url, c.method, c.params, nil)
		} else {
			postLegacy(t, f.url, c.method, c.params)
		}
		events := f.sink.all()[before:]
		if len(events) != 1 || events[0].Method != c.want {
			t.Errorf("%s: usage events %+v, want one with method %q", c.method, events, c.want)
		}
	}
}

// postLegacy sends one JSON-RPC request of the 2025-06-18 era.
func postLegacy(t *testing.T, url, method, params string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"`+method+`","params":`+params+`}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method != "initialize" {
		req.Header.Set(mcp.HeaderProtocolVersion, "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}

// TestModernDirectTakesOnlyCallsThatPassMCPGosChecks: a 2026-07-28 call
// goes direct only with the version in the header and in _meta alike, the
// client's capabilities, Mcp-Method and Mcp-Name matching the body, no
// Last-Event-ID and nothing else in _meta; every other one is left to
// mcp-go, untouched, which refuses or serves it as it always did.
func TestModernDirectTakesOnlyCallsThatPassMCPGosChecks(t *testing.T) {
	f := newFixture(t, false)
	ks := f.engine.kinds["fakeerp"]
	version := mcp.ProtocolVersion20260728
	metaWith := func(members string) string {
		return `{"name":"echo","arguments":{"n":1},"_meta":{` + members + `}}`
	}
	full := `"` + mcp.MetaKeyProtocolVersion + `":"` + version + `","` + mcp.MetaKeyClientCapabilities + `":{}`
	for _, c := range []struct {
		name, params string
		headers      map[string]string
		served       bool
	}{
		{"a plain call", metaWith(full + `,"` + mcp.MetaKeyClientInfo + `":{"name":"c","version":"1"}`), nil, true},
		{"no client info", metaWith(full), nil, true},
		{"the name base64-encoded", metaWith(full), map[string]string{mcp.HeaderName: "=?base64?ZWNobw==?="}, true},
		{"no _meta", `{"name":"echo","arguments":{"n":1}}`, nil, false},
		{"a progress token", metaWith(full + `,"progressToken":1`), nil, false},
		{"a log level", metaWith(full + `,"` + mcp.MetaKeyLogLevel + `":"debug"`), nil, false},
		{"no capabilities", metaWith(`"` + mcp.MetaKeyProtocolVersion + `":"` + version + `"`), nil, false},
		{"capabilities not an object", metaWith(`"` + mcp.MetaKeyProtocolVersion + `":"` + version + `","` + mcp.MetaKeyClientCapabilities + `":[]`), nil, false},
		{"another version in _meta", metaWith(`"` + mcp.MetaKeyProtocolVersion + `":"2025-11-25","` + mcp.MetaKeyClientCapabilities + `":{}`), nil, false},
		{"client info not an object", metaWith(full + `,"` + mcp.MetaKeyClientInfo + `":"c"`), nil, false},
		{"Mcp-Name of another tool", metaWith(full), map[string]string{mcp.HeaderName: "big"}, false},
		{"no Mcp-Name", metaWith(full), map[string]string{mcp.HeaderName: ""}, false},
		{"no Mcp-Method", metaWith(full), map[string]string{mcp.HeaderMethod: ""}, false},
		{"Mcp-Method of another method", metaWith(full), map[string]string{mcp.HeaderMethod: "tools/list"}, false},
		{"Last-Event-ID", metaWith(full), map[string]string{mcp.HeaderLastEventID: "1"}, false},
		{"a task", `{"name":"echo","arguments":{"n":1},"task":{"ttl":1000},"_meta":{` + full + `}}`, nil, false},
		{"an unknown tool", `{"name":"no_such_tool","arguments":{},"_meta":{` + full + `}}`, map[string]string{mcp.HeaderName: "no_such_tool"}, false},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + c.params + `}`
		st := &requestState{session: Session{Site: f.site}, id: "t"}
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body)).WithContext(withState(t.Context(), st))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set(mcp.HeaderProtocolVersion, version)
		r.Header.Set(mcp.HeaderMethod, "tools/call")
		r.Header.Set(mcp.HeaderName, "echo")
		for k, v := range c.headers {
			if v == "" {
				r.Header.Del(k)
			} else {
				r.Header.Set(k, v)
			}
		}
		w := httptest.NewRecorder()
		msg, _ := peekRequest([]byte(body))
		served := f.engine.serveToolCall(ks, w, r, []byte(body), msg)
		if served != c.served {
			t.Errorf("%s: served = %v, want %v", c.name, served, c.served)
		}
		if !served && (w.Body.Len() > 0 || w.Code != http.StatusOK || len(w.Header()) > 0) {
			t.Errorf("%s: not served, but wrote %d %v %q", c.name, w.Code, w.Header(), w.Body.String())
		}
		if served && !strings.Contains(w.Body.String(), `"resultType":"complete"`) {
			t.Errorf("%s: reply %s", c.name, w.Body.String())
		}
	}
	// A tool with a parameter bound to a header is left to mcp-go, which
	// checks the header against the argument.
	bound := *ks.tools["echo"]
	bound.advertised.RawInputSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}`)
	bound.headerBound = len(mcp.ExtractParamHeaderBindings(&bound.advertised)) > 0
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set(mcp.HeaderMethod, "tools/call")
	r.Header.Set(mcp.HeaderName, "echo")
	params := metaWith(full)
	var p callParams
	if err := json.Unmarshal([]byte(params), &p); err != nil || !bound.headerBound || modernDirect(r, version, &bound, p.Name, "", p.Meta, nil) {
		t.Errorf("a tool with a header-bound parameter went direct (bound %v, %v)", bound.headerBound, err)
	}
	if !modernDirect(r, version, ks.tools["echo"], p.Name, "", p.Meta, nil) {
		t.Error("the same call of the tool without the binding did not go direct")
	}
}

// The remembered verdicts are modernMetaOK's: asked twice, under the
// version the _meta names and under another, the set answers as the
// check does, remembers only what passed, and stays within its bound.
func TestMetaVerdictsAnswerAsTheCheck(t *testing.T) {
	version := mcp.ProtocolVersion20260728
	ok := `{"` + mcp.MetaKeyProtocolVersion + `":"` + version + `","` + mcp.MetaKeyClientCapabilities + `":{}}`
	var c metaVerdicts
	for _, meta := range []string{ok, `{"progressToken":1}`, `{"` + mcp.MetaKeyProtocolVersion + `":"` + version + `"}`, `not json`} {
		for _, v := range []string{version, "2025-11-25", version} {
			want := modernMetaOK(v, json.RawMessage(meta))
			if got := c.ok(v, json.RawMessage(meta)); got != want {
				t.Errorf("ok(%s, %s) = %v, the check says %v", v, meta, got, want)
			}
		}
	}
	if len(c.m) != 1 {
		t.Errorf("remembered %d verdicts, want only the one that passed: %v", len(c.m), c.m)
	}
	for i := range metaVerdictsMax + 10 {
		meta := `{"` + mcp.MetaKeyProtocolVersion + `":"` + version + `","` + mcp.MetaKeyClientCapabilities + `":{},"` +
			mcp.MetaKeyClientInfo + `":{"name":"c` + strconv.Itoa(i) + `","version":"1"}}`
		if !c.ok(version, json.RawMessage(meta)) {
			t.Fatalf("client %d refused", i)
		}
	}
	if len(c.m) > metaVerdictsMax {
		t.Errorf("%d verdicts remembered, the bound is %d", len(c.m), metaVerdictsMax)
	}
}

// FuzzMetaVerdicts: whatever _meta and version come, the remembered
// answer, first and second time, is the check's.
func FuzzMetaVerdicts(f *testing.F) {
	f.Add(`{"`+mcp.MetaKeyProtocolVersion+`":"2026-07-28","`+mcp.MetaKeyClientCapabilities+`":{}}`, "2026-07-28")
	f.Add(`{"`+mcp.MetaKeyProtocolVersion+`":"2026-07-28","`+mcp.MetaKeyClientCapabilities+`":{"roots":{"listChanged":true}},"`+mcp.MetaKeyClientInfo+`":{"name":"c","version":"1"}}`, "2026-07-28")
	f.Add(`{"`+mcp.MetaKeyClientCapabilities+`":[]}`, "2025-11-25")
	var c metaVerdicts
	f.Fuzz(func(t *testing.T, meta, version string) {
		want := modernMetaOK(version, json.RawMessage(meta))
		for range 2 {
			if got := c.ok(version, json.RawMessage(meta)); got != want {
				t.Fatalf("ok(%q, %q) = %v, the check says %v", version, meta, got, want)
			}
		}
	})
}

// TestOnlyErpgatesProtocolVersionsAreNegotiated: erpgate speaks 2025-06-18,
// 2025-11-25 and 2026-07-28. An initialize asking for an older version
// (2024-11-05, 2025-03-26, whose JSON-RPC batches erpgate refuses) or an
// unknown one is answered with 2025-11-25, as MCP has a server answer a
// version it does not support; server/discover lists only erpgate's
// versions; and a request whose Mcp-Protocol-Version header names an
// older version is refused with 400, as MCP requires for a version the
// server does not support, in a sentence naming the ones it does.
func TestOnlyErpgatesProtocolVersionsAreNegotiated(t *testing.T) {
	f := newFixture(t, false)
	for asked, want := range map[string]string{
		"2024-11-05": "2025-11-25", "2025-03-26": "2025-11-25", "2099-01-01": "2025-11-25",
		"2025-06-18": "2025-06-18", "2025-11-25": "2025-11-25",
	} {
		s, _, got := postRaw(t, f.url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+asked+
			`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, map[string]string{mcp.HeaderProtocolVersion: ""})
		m, _ := got.(map[string]any)
		res, _ := m["result"].(map[string]any)
		if s != http.StatusOK || res["protocolVersion"] != want {
			t.Errorf("initialize with %s: %d %v, want protocolVersion %s", asked, s, got, want)
		}
	}

	resp, body := postModern(t, f.url, "server/discover", `{`+modernMeta+`}`, nil)
	var d struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
	}
	_ = json.Unmarshal(body, &d)
	if got := strings.Join(d.Result.SupportedVersions, ","); resp.StatusCode != http.StatusOK || got != "2026-07-28,2025-11-25,2025-06-18" {
		t.Errorf("server/discover: %d %s, want supportedVersions 2026-07-28, 2025-11-25, 2025-06-18", resp.StatusCode, body)
	}

	// A 2026-07-28-era request naming a version erpgate does not speak
	// gets -32022, whose data lists the versions erpgate speaks.
	future := strings.ReplaceAll(modernMeta, mcp.ProtocolVersion20260728, "2099-01-01")
	for method, params := range map[string]string{
		"tools/list": `{` + future + `}`,
		"tools/call": `{"name":"echo","arguments":{"n":3},` + future + `}`,
	} {
		resp, body := postModern(t, f.url, method, params, map[string]string{mcp.HeaderProtocolVersion: "2099-01-01", mcp.HeaderName: "echo"})
		var r struct {
			Error struct {
				Code int `json:"code"`
				Data struct {
					Supported []string `json:"supported"`
				} `json:"data"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &r)
		if got := strings.Join(r.Error.Data.Supported, ","); resp.StatusCode != http.StatusBadRequest || r.Error.Code != -32022 || got != "2026-07-28,2025-11-25,2025-06-18" {
			t.Errorf("%s naming 2099-01-01: %d %s, want 400, -32022 and data.supported 2026-07-28, 2025-11-25, 2025-06-18", method, resp.StatusCode, body)
		}
	}

	for _, v := range []string{"2024-11-05", "2025-03-26", "1999-01-01"} {
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"n":3}}}`,
		} {
			s, _, got := postRaw(t, f.url, body, map[string]string{mcp.HeaderProtocolVersion: v})
			m, _ := got.(map[string]any)
			e, _ := m["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if s != http.StatusBadRequest || e["code"] != json.Number("-32600") || !strings.Contains(msg, "2025-06-18") ||
				strings.Contains(msg, "2025-03-26") || strings.Contains(msg, "2024-11-05") {
				t.Errorf("header %s, %s: %d %v, want 400, -32600 and a sentence naming erpgate's versions only", v, body, s, got)
			}
		}
	}
	for _, ev := range f.sink.all() {
		if ev.Method == "tools/call" && ev.Outcome == usage.Success {
			t.Errorf("a call of a version erpgate does not speak ran: %+v", ev)
		}
	}
}

// TestSDKClientOfEachVersion: the official Go SDK client asking for each
// protocol version gets one erpgate speaks (its own, or 2025-11-25 for
// 2025-03-26), and pings (where the version has ping), lists and calls on
// it.
func TestSDKClientOfEachVersion(t *testing.T) {
	f := newFixture(t, false)
	for asked, want := range map[string]string{
		"2025-03-26": "2025-11-25", "2025-06-18": "2025-06-18", "2025-11-25": "2025-11-25", "2026-07-28": "2026-07-28",
	} {
		c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: f.url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: asked})
		if err != nil {
			t.Fatalf("%s: %v", asked, err)
		}
		if got := cs.InitializeResult().ProtocolVersion; got != want {
			t.Errorf("asked for %s: got %s, want %s", asked, got, want)
		}
		// 2026-07-28 has no ping (the Go SDK's server refuses it too).
		if err := cs.Ping(t.Context(), nil); asked != mcp.ProtocolVersion20260728 && err != nil {
			t.Errorf("%s: ping: %v", asked, err)
		}
		if list, err := cs.ListTools(t.Context(), nil); err != nil || len(list.Tools) == 0 {
			t.Errorf("%s: tools/list: %v", asked, err)
		}
		if _, m := call(t, cs, "echo", map[string]any{"n": 3}); m["value"] == nil {
			t.Errorf("%s: echo: %v", asked, m)
		}
		_ = cs.Close()
	}
}

// TestVersionHeaderThatIsNotTheMetasIsAHeaderMismatch: a request whose
// _meta names 2026-07-28 while its MCP-Protocol-Version header names
// another version is refused with 400 and HeaderMismatch (-32020), with
// its id, whatever the header names ("The header value MUST match the
// io.modelcontextprotocol/protocolVersion field carried in the request
// body's _meta. If the values do not match, the server MUST reject the
// request with 400 Bad Request and a HeaderMismatch JSON-RPC error",
// 2026-07-28, Streamable HTTP, Protocol Version Header). A header naming
// a version mcp-go knows and erpgate does not speak got erpgate's
// unsupported-version refusal (-32600, no id) instead.
func TestVersionHeaderThatIsNotTheMetasIsAHeaderMismatch(t *testing.T) {
	f := newFixture(t, false)
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		for method, params := range map[string]string{
			"tools/list": `{` + modernMeta + `}`,
			"tools/call": `{"name":"echo","arguments":{"n":3},` + modernMeta + `}`,
		} {
			resp, body := postModern(t, f.url, method, params, map[string]string{mcp.HeaderProtocolVersion: v, mcp.HeaderName: "echo"})
			var r struct {
				ID    json.RawMessage `json:"id"`
				Error struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			_ = json.Unmarshal(body, &r)
			if resp.StatusCode != http.StatusBadRequest || r.Error.Code != mcp.HEADER_MISMATCH || string(r.ID) != "7" {
				t.Errorf("header %s, %s with 2026-07-28 _meta: %d %s, want 400, -32020 and id 7", v, method, resp.StatusCode, body)
			}
		}
	}
	for _, ev := range f.sink.all() {
		if ev.Outcome == usage.Success {
			t.Errorf("a request whose header and _meta disagree ran: %+v", ev)
		}
	}
}

// TestVersionRefusalsCarryTheRequestsID: a request refused for the
// protocol version in its MCP-Protocol-Version header, whether erpgate or
// mcp-go's transport refuses it, gets its own id back with the error:
// "Error responses MUST include the same ID as the request they
// correspond to (except in error cases where the ID could not be read due
// a malformed request)" (2025-11-25, basic/index, Error Responses). The id
// is read the same way whatever the version.
func TestVersionRefusalsCarryTheRequestsID(t *testing.T) {
	f := newFixture(t, false)
	for _, v := range []string{"2024-11-05", "2025-03-26", "1999-01-01"} {
		for _, id := range []string{`7`, `"seven"`, `9007199254740993`} {
			resp, body := postMCP(t, f.url, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`, map[string]string{mcp.HeaderProtocolVersion: v})
			var r struct {
				ID    json.RawMessage `json:"id"`
				Error struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			_ = json.Unmarshal(body, &r)
			if resp.StatusCode != http.StatusBadRequest || r.Error.Code != mcp.INVALID_REQUEST || string(r.ID) != id {
				t.Errorf("header %s, id %s: %d %s, want 400, -32600 and the id", v, id, resp.StatusCode, body)
			}
		}
	}
}

// TestEventStreamsAreNotBuffered: a reply sent as an event stream tells a
// proxy in front of erpgate not to hold it back (X-Accel-Buffering: no,
// which MCP's Streamable HTTP transport recommends for nginx), so the
// acknowledgement of a subscriptions/listen reaches the client as it is
// written; a JSON reply carries no such header.
func TestEventStreamsAreNotBuffered(t *testing.T) {
	f := newFixture(t, false)
	resp, body := postModern(t, f.url, string(mcp.MethodSubscriptionsListen),
		`{"notifications":{"toolsListChanged":true},`+modernMeta+`}`, nil)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("subscriptions/listen: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if got := resp.Header.Get("X-Accel-Buffering"); got != "no" {
		t.Errorf("event stream: X-Accel-Buffering %q, want no", got)
	}
	resp, body = postModern(t, f.url, "tools/list", `{`+modernMeta+`}`, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Accel-Buffering") != "" {
		t.Errorf("JSON reply: %d, X-Accel-Buffering %q (%s)", resp.StatusCode, resp.Header.Get("X-Accel-Buffering"), body)
	}
}

// TestListenNeedsAClientThatTakesAnEventStream: a 2026-07-28
// subscriptions/listen is answered only with an event stream ("The
// server's response is itself an SSE stream that stays open", 2026-07-28,
// Streamable HTTP, Receiving Messages), so a client whose Accept header
// rules text/event-stream out gets 406 Not Acceptable (RFC 9110, 12.5.1)
// with a JSON-RPC error carrying its id, and no stream it cannot read;
// before, it got the stream. A client that sends no Accept header, or
// one that admits the stream (wildcards too), still gets it.
func TestListenNeedsAClientThatTakesAnEventStream(t *testing.T) {
	f := newFixture(t, false)
	listen := `{"notifications":{"toolsListChanged":true},` + modernMeta + `}`
	for _, accept := range []string{
		"application/json",
		"application/json, text/event-stream;q=0",
		"text/html, application/*",
		"text/*;q=0, application/json",
	} {
		resp, body := postModern(t, f.url, string(mcp.MethodSubscriptionsListen), listen, map[string]string{"Accept": accept})
		var r struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &r)
		if resp.StatusCode != http.StatusNotAcceptable || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			r.Error == nil || string(r.ID) != "7" {
			t.Errorf("Accept %q: %d %s %s, want 406 with a JSON-RPC error with id 7", accept, resp.StatusCode, resp.Header.Get("Content-Type"), body)
			continue
		}
		if frag := leaksLibraryText(r.Error.Message); frag != "" || !strings.Contains(r.Error.Message, "text/event-stream") {
			t.Errorf("Accept %q: message %q, want a sentence naming text/event-stream", accept, r.Error.Message)
		}
	}
	// An id past 2^53 too comes back as sent.
	resp, body := postMCP(t, f.url, `{"jsonrpc":"2.0","id":9007199254740993,"method":"subscriptions/listen","params":`+listen+`}`,
		map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: string(mcp.MethodSubscriptionsListen), "Accept": "application/json"})
	if resp.StatusCode != http.StatusNotAcceptable || !strings.Contains(string(body), `"id":9007199254740993,`) {
		t.Errorf("a large id: %d %s, want 406 with the id as sent", resp.StatusCode, body)
	}
	for _, accept := range []string{
		"", // no Accept header: any media type
		"application/json, text/event-stream",
		"text/event-stream",
		"*/*",
		"text/*",
		"application/json;q=1, */*;q=0.1",
		"TEXT/Event-Stream",
	} {
		resp, body := postModern(t, f.url, string(mcp.MethodSubscriptionsListen), listen, map[string]string{"Accept": accept})
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Errorf("Accept %q: %d %s %s, want the stream", accept, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	// Only the stream needs it: other requests are answered whatever
	// their Accept says (erpgate does not check it on POST).
	if resp, body := postModern(t, f.url, "tools/list", `{`+modernMeta+`}`, map[string]string{"Accept": "text/html"}); resp.StatusCode != http.StatusOK {
		t.Errorf("tools/list with Accept text/html: %d %s", resp.StatusCode, body)
	}
	refused := 0
	for _, ev := range f.sink.all() {
		if ev.Method == string(mcp.MethodSubscriptionsListen) && ev.Outcome == usage.Error && ev.ErrorCode == "INVALID_REQUEST" {
			refused++
		}
	}
	if refused != 5 {
		t.Errorf("%d refused subscriptions/listen recorded as INVALID_REQUEST errors, want 5", refused)
	}
}
