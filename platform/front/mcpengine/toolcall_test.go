package mcpengine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/usage"
)

// postMCP sends body as an MCP client would, with headers on top (an empty
// value removes one), and returns the response (its body read and closed)
// and its body.
func postMCP(t *testing.T, url, body string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

// post sends one JSON-RPC message with the given protocol version header
// (none if empty) and returns the status, content type and decoded reply.
func post(t *testing.T, url, version, body string) (int, string, map[string]any) {
	t.Helper()
	resp, data := postMCP(t, url, body, map[string]string{mcp.HeaderProtocolVersion: version})
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("reply to %s: %v", body, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), m
}

// FuzzDirectPathRepliesAsMCPGo holds the direct path (serveToolCall, the
// one place erpgate answers a tools/call without mcp-go's transport) to
// mcp-go: each call is sent twice, as it comes, and with a _meta member
// that leaves it to mcp-go's transport (an empty _meta before 2026-07-28,
// a progress token on 2026-07-28). Status, content type and JSON must be
// the same. The seeds are successes, tool errors, a result too large,
// redaction, panics, unknown tools, a missing name, odd arguments, and
// ids of every kind, on both protocol eras.
func FuzzDirectPathRepliesAsMCPGo(f *testing.F) {
	for _, c := range []struct{ name, args string }{
		{"echo", `{"n":3}`}, {"echo", `{"n":30}`}, {"echo", `{"n":3,"extra":true}`}, {"echo", `{"n":3,"when":"2024-02-30"}`},
		{"big", `{}`}, {"denied", ``}, {"panics", `{}`}, {"reallypanics", `{}`}, {"secretive", `{}`}, {"wide", `{}`},
		{"raw", `{}`}, {"rawbroken", `{}`}, {"echo", `null`}, {"echo", `[1]`}, {"echo", `"n=3"`},
		{"no_such_tool", `{}`}, {"", `{}`},
	} {
		for _, id := range []string{`7`, `-3`, `"req-1"`, `123456789012345678`, `1.5`, `"a\"<b>"`, `"é"`} {
			f.Add(false, c.name, c.args, id)
		}
		f.Add(true, c.name, c.args, `7`)
	}
	// Every input is sent twice by one caller, many of them refused calls:
	// a budget no run reaches (the budget has tests of its own).
	fx := newFixtureWith(f, false, func(o *Options) {
		o.CallerRequests = sourcelimit.Limit{Burst: 1 << 30, Every: time.Nanosecond}
	})
	f.Fuzz(func(t *testing.T, modern bool, name, args, id string) {
		if !json.Valid([]byte(id)) || (args != "" && !json.Valid([]byte(args))) || !validHeaderValue(name) {
			return // not a request of this shape: nothing to compare
		}
		if name == "pause" || name == "afterwork" || name == "upstream" {
			return // tools that wait on the fixture's ERP: slow, and the same to both paths
		}
		params := ``
		if name != "" {
			n, _ := json.Marshal(name)
			params = `"name":` + string(n)
		}
		if args != "" {
			params = strings.TrimPrefix(params+`,"arguments":`+args, ",")
		}
		var direct, viaMCPGo string
		headers := map[string]string{mcp.HeaderProtocolVersion: "2025-06-18"}
		if modern {
			headers = map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: "tools/call", mcp.HeaderName: name}
			direct = `{` + strings.TrimPrefix(params+`,`+modernMeta, ",") + `}`
			viaMCPGo = strings.Replace(direct, `"_meta":{`, `"_meta":{"progressToken":"p1",`, 1)
		} else {
			direct = `{` + params + `}`
			viaMCPGo = `{"_meta":{}` + strings.TrimSuffix(","+params, ",") + `}`
		}
		envelope := func(p string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + p + `}`
		}
		s1, ct1, got := postRaw(t, fx.url, envelope(direct), headers)
		s2, ct2, want := postRaw(t, fx.url, envelope(viaMCPGo), headers)
		if s1 != s2 || ct1 != ct2 || !reflect.DeepEqual(got, want) {
			t.Errorf("modern %v, params %s, id %s:\n direct  %d %s %v\n mcp-go  %d %s %v", modern, direct, id, s1, ct1, got, s2, ct2, want)
		}
	})
}

// validHeaderValue reports whether s can travel as Mcp-Name.
func validHeaderValue(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x20 || c == 0x7f || c >= 0x80 {
			return false
		}
	}
	return s == strings.TrimSpace(s)
}

// postRaw is postMCP, returning the status, content type and decoded
// reply (its text if it is not JSON).
func postRaw(t *testing.T, url, body string, headers map[string]string) (int, string, any) {
	t.Helper()
	resp, data := postMCP(t, url, body, headers)
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		v = string(data)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), v
}

// TestDirectReplyAnnouncesItsLength: a reply too long for net/http to
// measure by itself (over 2 KiB) still carries its Content-Length, so it
// is not sent in chunks.
func TestDirectReplyAnnouncesItsLength(t *testing.T) {
	f := newFixture(t, false)
	resp, body := postPlainCall(t, f.url, "wide", `{}`)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(strings.Repeat("w", 1500))) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if len(body) <= 2048 {
		t.Fatalf("reply of %d bytes: too short to test", len(body))
	}
	if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) > 0 {
		t.Errorf("Content-Length %d, Transfer-Encoding %v, for a body of %d bytes", resp.ContentLength, resp.TransferEncoding, len(body))
	}
}

// TestServeToolCallTakesOnlyPlainCalls: requests mcp-go's transport must
// see (no or unknown protocol version, the 2026-07-28 era, _meta, another
// content type) are left to it untouched.
func TestServeToolCallTakesOnlyPlainCalls(t *testing.T) {
	f := newFixture(t, false)
	ks := f.engine.kinds["fakeerp"]
	plain := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":1}}}`
	for _, c := range []struct {
		name, method, contentType, version, body string
		served                                   bool
	}{
		{"plain call", http.MethodPost, "application/json", "2025-06-18", plain, true},
		{"charset parameter", http.MethodPost, "application/json; charset=utf-8", "2025-03-26", plain, true},
		{"no protocol version", http.MethodPost, "application/json", "", plain, false},
		{"unknown version", http.MethodPost, "application/json", "1999-01-01", plain, false},
		{"modern era", http.MethodPost, "application/json", mcp.ProtocolVersion20260728, plain, false},
		{"_meta", http.MethodPost, "application/json", "2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":1},"_meta":{"progressToken":1}}}`, false},
		{"text/plain", http.MethodPost, "text/plain", "2025-06-18", plain, false},
		{"GET", http.MethodGet, "application/json", "2025-06-18", plain, false},
		{"unparsable", http.MethodPost, "application/json", "2025-06-18", `{"jsonrpc":`, false},
	} {
		st := &requestState{session: Session{Site: f.site}, id: "t"}
		r := httptest.NewRequest(c.method, "/mcp", strings.NewReader(c.body)).WithContext(withState(t.Context(), st))
		r.Header.Set("Content-Type", c.contentType)
		if c.version != "" {
			r.Header.Set(mcp.HeaderProtocolVersion, c.version)
		}
		w := httptest.NewRecorder()
		msg, _ := peekRequest([]byte(c.body))
		served := f.engine.serveToolCall(ks, w, r, []byte(c.body), msg)
		if served != c.served {
			t.Errorf("%s: served = %v, want %v", c.name, served, c.served)
		}
		if !served && (w.Body.Len() > 0 || w.Code != http.StatusOK || len(w.Header()) > 0) {
			t.Errorf("%s: not served, but wrote %d %v %q", c.name, w.Code, w.Header(), w.Body.String())
		}
		if served && !strings.Contains(w.Body.String(), `"structuredContent":{"value":{"amount":1180.10,"n":1}}`) {
			t.Errorf("%s: reply %s", c.name, w.Body.String())
		}
	}
}

// TestDirectDispatchTakesPlainCalls: the calls directCall answers are
// those with nothing but a known tool's name and arguments, and an id that
// mcp-go would write back as it came.
func TestDirectDispatchTakesPlainCalls(t *testing.T) {
	for id, plain := range map[string]bool{
		`7`: true, `-3`: true, `0`: true, `123456789012345`: true, `"req-1"`: true, `""`: true,
		`1234567890123456`: false, `07`: false, `-0`: false, `-07`: false, `1.5`: false, `1e3`: false, `-`: false, `"a\"b"`: false,
		`"<b>"`: false, `"é"`: false, `true`: false, `{}`: false, `"x`: false,
	} {
		if plainID(json.RawMessage(id)) != plain {
			t.Errorf("plainID(%s) = %v", id, !plain)
		}
	}
	var p callParams
	if err := json.Unmarshal([]byte(`{"name":"echo","arguments":{"n":1}}`), &p); err != nil || !p.plain() {
		t.Errorf("a name and arguments: plain = false (%v)", err)
	}
	for _, params := range []string{
		`{"name":"echo","_meta":{}}`, `{"name":"echo","task":{"ttl":1000}}`,
		`{"name":"echo","inputResponses":{}}`, `{"name":"echo","requestState":"s"}`,
	} {
		var p callParams
		if err := json.Unmarshal([]byte(params), &p); err != nil || p.plain() {
			t.Errorf("%s: plain = true (%v)", params, err)
		}
	}
}

// TestAppendResponseMatchesEncodingJSON: whatever the reply, its JSON
// means what encoding/json's would.
func TestAppendResponseMatchesEncodingJSON(t *testing.T) {
	structured := json.RawMessage(`{"data":[{"name":"Café \"Ō\" <&>","note":"a\nb\tc\u2028d\u0001"}],"n":1.50}`)
	plain := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(structured))}, RawStructuredContent: structured}
	withError := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(`{"error":{"code":"NOT_FOUND"}}`)}, RawStructuredContent: json.RawMessage(`{"error":{"code":"NOT_FOUND"}}`), IsError: true}
	withMeta := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("x")}, RawStructuredContent: json.RawMessage(`{}`)}
	withMeta.Meta = &mcp.Meta{AdditionalFields: map[string]any{"k": "v"}}
	for name, resp := range map[string]any{
		"plain result, numeric id": mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(42)), plain),
		"plain result, string id":  mcp.NewJSONRPCResultResponse(mcp.NewRequestId("req-\"1\""), plain),
		"error result":             mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(1)), withError),
		"result with _meta":        mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(1)), withMeta),
		"JSON-RPC error":           mcp.NewJSONRPCError(mcp.NewRequestId(int64(3)), mcp.INVALID_PARAMS, "tool 'x' not found", nil),
	} {
		got := appendResponse(nil, resp)
		if !bytes.HasSuffix(got, []byte("\n")) {
			t.Errorf("%s: no trailing newline", name)
		}
		want, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(got) || !reflect.DeepEqual(decodeAny(t, got), decodeAny(t, want)) {
			t.Errorf("%s:\n got  %s\n want %s", name, got, want)
		}
	}
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// FuzzAppendJSONString: any string, valid UTF-8 or not, comes back from a
// JSON decoder exactly as it does from encoding/json's encoding.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"uote\back`, "nl\n\r\t\x00\x1f\x7f", "é Ō 日本 🙂", "\u2028\u2029", "bad \xff\xfe utf8 \xe2\x82", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("%q encoded as %s: %v", s, enc, err)
		}
		ref, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%q: decoded %q, encoding/json gives %q", s, got, want)
		}
	})
}

// TestDirectReplyCarriesServerTiming: a tools/call reply says how long the
// call was with the ERP and how long the gateway had it. The ERP answers
// each of the "pause" tool's two requests after upstreamPause, so erp is
// at least twice that; a tool that asks the ERP nothing has erp 0; total
// always covers erp.
func TestDirectReplyCarriesServerTiming(t *testing.T) {
	f := newFixture(t, false)
	for _, c := range []struct {
		tool   string
		minERP time.Duration
		zero   bool
	}{
		{"pause", 2 * upstreamPause, false},
		{"echo", 0, true},
		{"denied", 0, true},
	} {
		args := `{}`
		if c.tool == "echo" {
			args = `{"n":1}`
		}
		resp, _ := postPlainCall(t, f.url, c.tool, args)
		header := resp.Header.Get("Server-Timing")
		timing, err := parseServerTiming(header)
		if err != nil {
			t.Fatalf("%s: Server-Timing %q: %v", c.tool, header, err)
		}
		erp, total := timing["erp"], timing["total"]
		switch {
		case c.zero && erp != 0:
			t.Errorf("%s asked the ERP nothing, but erp;dur=%v (%q)", c.tool, erp, header)
		case erp < c.minERP:
			t.Errorf("%s: erp;dur=%v, want at least %v (%q)", c.tool, erp, c.minERP, header)
		case total < erp:
			t.Errorf("%s: total;dur=%v is less than erp;dur=%v", c.tool, total, erp)
		}
	}
}

// TestERPTimeEndsWhenTheAnswerIsRead: the time with the ERP ends when its
// answer has been read, not when the reply is written. The "afterwork"
// tool works afterWork after the ERP answered, so both in Server-Timing and
// in the usage event erp is at most total minus (nearly) afterWork; and
// at least the ERP's own pause.
func TestERPTimeEndsWhenTheAnswerIsRead(t *testing.T) {
	f := newFixture(t, false)
	const slack = 20 * time.Millisecond
	resp, body := postPlainCall(t, f.url, "afterwork", `{}`)
	if !bytes.Contains(body, []byte(`worked`)) {
		t.Fatalf("afterwork: %s", body)
	}
	header := resp.Header.Get("Server-Timing")
	timing, err := parseServerTiming(header)
	if err != nil {
		t.Fatalf("Server-Timing %q: %v", header, err)
	}
	erp, total := timing["erp"], timing["total"]
	if erp < upstreamPause || erp > total-(afterWork-slack) {
		t.Errorf("Server-Timing %q: erp;dur=%v, want at least %v and at most total;dur=%v minus %v of the tool's own work",
			header, erp, upstreamPause, total, afterWork-slack)
	}
	events := f.sink.all()
	if len(events) != 1 {
		t.Fatalf("usage events: %+v", events)
	}
	ev := events[0]
	if ev.ERPMS < upstreamPause.Milliseconds() || ev.ERPMS > ev.DurationMS-(afterWork-slack).Milliseconds() {
		t.Errorf("usage event erp_ms=%d duration_ms=%d, want erp_ms at least %d and at most duration_ms minus %d",
			ev.ERPMS, ev.DurationMS, upstreamPause.Milliseconds(), (afterWork - slack).Milliseconds())
	}
}

// postPlainCall sends a plain tools/call of tool with the arguments' JSON
// and returns the response (its body read and closed) and its body.
func postPlainCall(t *testing.T, url, tool, args string) (*http.Response, []byte) {
	t.Helper()
	return postMCP(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`,
		map[string]string{mcp.HeaderProtocolVersion: "2025-06-18"})
}

// parseServerTiming reads a Server-Timing header of "name;dur=ms" entries.
func parseServerTiming(h string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for entry := range strings.SplitSeq(h, ",") {
		name, params, ok := strings.Cut(strings.TrimSpace(entry), ";")
		ms, found := strings.CutPrefix(params, "dur=")
		if !ok || !found {
			return nil, fmt.Errorf("entry %q has no duration", entry)
		}
		f, err := strconv.ParseFloat(ms, 64)
		if err != nil {
			return nil, err
		}
		out[name] = time.Duration(f * float64(time.Millisecond))
	}
	if len(out) != 2 {
		return nil, fmt.Errorf("want erp and total, got %v", out)
	}
	return out, nil
}

// TestERPTimeCountsOverlapOnce: requests with the ERP that overlap count
// once, and one still open counts up to now.
func TestERPTimeCountsOverlapOnce(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	st := &requestState{started: t0}
	st.erpBegin(at(0))
	if d := st.erpDuration(at(20)); d != 20*time.Millisecond {
		t.Errorf("one request open for 20 ms: %v", d)
	}
	st.erpBegin(at(5))
	st.erpEnd(at(10))
	st.erpEnd(at(30))
	st.erpBegin(at(40))
	st.erpEnd(at(45))
	if d := st.erpDuration(at(100)); d != 35*time.Millisecond {
		t.Errorf("0-30 ms (two overlapping) and 40-45 ms: %v, want 35ms", d)
	}
	if got := string(st.appendServerTiming(nil, at(100))); got != "erp;dur=35.000, total;dur=100.000" {
		t.Errorf("Server-Timing %q", got)
	}
	for d, want := range map[time.Duration]string{
		0: "0.000", 999 * time.Nanosecond: "0.000", 1234567 * time.Nanosecond: "1.234",
		20 * time.Second: "20000.000", 7 * time.Microsecond: "0.007", 50 * time.Microsecond: "0.050",
		-time.Millisecond: "0.000",
	} {
		if got := string(appendMillis(nil, d)); got != want {
			t.Errorf("appendMillis(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestLegacyJSONOnlyClientGetsJSON: a service client that posts one
// tools/call, without initialize and accepting only application/json
// (NexWave MCP's "legacy JSON-RPC service tool calls"), gets one finite
// application/json reply.
func TestLegacyJSONOnlyClientGetsJSON(t *testing.T) {
	f := newFixture(t, false)
	resp, data := postMCP(t, f.url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":2}}}`,
		map[string]string{"Accept": "application/json"})
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, content type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	if !strings.Contains(string(data), `\"n\":2`) {
		t.Errorf("reply %s", data)
	}
}

// TestDirectPathAnswersOddEnvelopesAsMCPGo: JSON-RPC envelopes the fuzz
// test does not vary (members beside method, params and id) get the same
// answer on the direct path as through mcp-go's transport, on both
// protocol eras.
func TestDirectPathAnswersOddEnvelopesAsMCPGo(t *testing.T) {
	fx := newFixture(t, false)
	for _, extra := range []string{
		`"result":{}`, `"result":1`, `"result":null`, `"error":{"code":1,"message":"x"}`, `"extra":true`,
	} {
		for _, modern := range []bool{false, true} {
			headers := map[string]string{mcp.HeaderProtocolVersion: "2025-06-18"}
			direct, viaMCPGo := `{"name":"echo","arguments":{"n":3}}`, `{"_meta":{},"name":"echo","arguments":{"n":3}}`
			if modern {
				headers = map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: "tools/call", mcp.HeaderName: "echo"}
				direct = `{"name":"echo","arguments":{"n":3},` + modernMeta + `}`
				viaMCPGo = strings.Replace(direct, `"_meta":{`, `"_meta":{"progressToken":"p1",`, 1)
			}
			envelope := func(p string) string {
				return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + p + `,` + extra + `}`
			}
			s1, ct1, got := postRaw(t, fx.url, envelope(direct), headers)
			s2, ct2, want := postRaw(t, fx.url, envelope(viaMCPGo), headers)
			if s1 != s2 || ct1 != ct2 || !reflect.DeepEqual(got, want) {
				t.Errorf("modern %v, %s:\n direct  %d %s %v\n mcp-go  %d %s %v", modern, extra, s1, ct1, got, s2, ct2, want)
			}
			// A request that carries a result or an error is no JSON-RPC
			// request: refused, the call not run.
			if refused := strings.HasPrefix(extra, `"result":{`) || strings.HasPrefix(extra, `"result":1`) || strings.HasPrefix(extra, `"error"`); refused {
				m, _ := got.(map[string]any)
				e, _ := m["error"].(map[string]any)
				if s1 != http.StatusBadRequest || e["code"] != json.Number("-32600") || m["id"] != json.Number("7") {
					t.Errorf("modern %v, %s: %d %v, want 400 and -32600", modern, extra, s1, got)
				}
			}
		}
	}
}

// TestRequestIDsMustBeStringsOrNumbers: a request whose id is an object,
// an array or a boolean is not a valid JSON-RPC request (MCP: a string or
// an integer); it is refused with -32600 and a null id, and the call is
// not run, on either path and either era.
func TestRequestIDsMustBeStringsOrNumbers(t *testing.T) {
	fx := newFixture(t, false)
	for _, id := range []string{`{"a":1}`, `[1]`, `true`, `false`} {
		for _, modern := range []bool{false, true} {
			headers := map[string]string{mcp.HeaderProtocolVersion: "2025-06-18"}
			params := `{"name":"echo","arguments":{"n":3}}`
			if modern {
				headers = map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: "tools/call", mcp.HeaderName: "echo"}
				params = `{"name":"echo","arguments":{"n":3},` + modernMeta + `}`
			}
			s, _, got := postRaw(t, fx.url, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":`+params+`}`, headers)
			m, _ := got.(map[string]any)
			e, _ := m["error"].(map[string]any)
			if s != http.StatusBadRequest || e["code"] != json.Number("-32600") || m["id"] != nil || m["result"] != nil {
				t.Errorf("modern %v, id %s: %d %v, want 400, -32600 and a null id", modern, id, s, got)
			}
		}
	}
	for _, ev := range fx.sink.all() {
		if ev.Outcome == usage.Success {
			t.Errorf("a call with an invalid id ran: %+v", ev)
		}
	}
}

// TestBatchesAreInvalidRequests: a JSON array is valid JSON but, since
// 2025-06-18, no MCP message (batching was removed): it is refused with
// -32600 Invalid Request, not -32700 Parse error, and nothing in it runs.
func TestBatchesAreInvalidRequests(t *testing.T) {
	fx := newFixture(t, false)
	for _, body := range []string{
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":3}}}]`,
		` [] `,
	} {
		for _, v := range []string{"2025-06-18", "2025-11-25"} {
			s, _, got := postRaw(t, fx.url, body, map[string]string{mcp.HeaderProtocolVersion: v})
			m, _ := got.(map[string]any)
			e, _ := m["error"].(map[string]any)
			if s != http.StatusBadRequest || e["code"] != json.Number("-32600") || m["id"] != nil {
				t.Errorf("%s, %s: %d %v, want 400 and -32600", v, body, s, got)
			}
		}
	}
	if ev := fx.sink.all(); len(ev) != 0 {
		t.Errorf("usage events for refused batches: %+v", ev)
	}
}

// TestRequestIDsAreEchoedExactlyOrRefused: MCP requests carry a string or
// integer id, never null, and the reply carries the same id. A request
// with a null id is not a notification (it would get 202 and no reply,
// leaving the client waiting); an id that is not a whole number would come
// back as another number the client cannot match. Those are refused with
// -32600 and a null id, and the call does not run; other ids, whole
// numbers of any size included, come back as sent, on either path and
// either era.
func TestRequestIDsAreEchoedExactlyOrRefused(t *testing.T) {
	fx := newFixture(t, false)
	body := func(id string, modern bool) (string, map[string]string) {
		if modern {
			return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"n":3},` + modernMeta + `}}`,
				map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: "tools/call", mcp.HeaderName: "echo"}
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"n":3}}}`,
			map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}
	}
	for _, modern := range []bool{false, true} {
		for _, id := range []string{`null`, `1.5`, `1e-400`} {
			b, h := body(id, modern)
			s, _, got := postRaw(t, fx.url, b, h)
			m, _ := got.(map[string]any)
			e, _ := m["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if s != http.StatusBadRequest || e["code"] != json.Number("-32600") || m["id"] != nil || m["result"] != nil || !strings.Contains(msg, "id") {
				t.Errorf("modern %v, id %s: %d %v, want 400, -32600 and a null id", modern, id, s, got)
			}
		}
	}
	for _, ev := range fx.sink.all() {
		if ev.Outcome == usage.Success {
			t.Errorf("a call with an id that cannot be echoed ran: %+v", ev)
		}
	}
	for _, modern := range []bool{false, true} {
		for _, id := range []string{`"abc"`, `"9007199254740993"`, `0`, `-5`, `9007199254740991`, `-9007199254740991`,
			`9007199254740993`, `-9007199254740993`, `18446744073709551617`, `123456789012345678901234567890`} {
			b, h := body(id, modern)
			resp, data := postMCP(t, fx.url, b, h)
			var m map[string]json.RawMessage
			_ = json.Unmarshal(data, &m)
			if resp.StatusCode != http.StatusOK || string(m["id"]) != id || m["result"] == nil {
				t.Errorf("modern %v, id %s: %d %s, want 200 and the id as sent", modern, id, resp.StatusCode, data)
			}
		}
	}
}

// TestIntegerIDsWithAPointOrAnExponentAreTaken: MCP has request ids be
// strings or integers, and its JSON Schema (dialect 2020-12) types
// RequestId as "integer", which is any number whose fractional part is
// zero, however it is written: 1.0, 1e3 and 10e-1 are integers, 1.5 and
// 1e-3 are not. Such an integer was refused with 400 as if it were a
// fraction. It is taken, and its reply carries the id with the bytes it
// was sent with (mcp-go would echo 1e3 as 1000), on either path and either
// era; a number with a fraction is still refused.
func TestIntegerIDsWithAPointOrAnExponentAreTaken(t *testing.T) {
	fx := newFixture(t, false)
	legacy := map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}
	modern := modernHeaders
	cases := []struct {
		name, method, params string
		headers              map[string]string
	}{
		{"legacy call (direct path)", "tools/call", `{"name":"echo","arguments":{"n":3}}`, legacy},
		{"legacy call with a progress token (mcp-go)", "tools/call", `{"name":"echo","arguments":{"n":3},"_meta":{"progressToken":"p"}}`, legacy},
		{"legacy tools/list (mcp-go)", "tools/list", `{}`, legacy},
		{"modern call (direct path)", "tools/call", `{"name":"echo","arguments":{"n":3},` + modernMeta + `}`, modern("tools/call", "echo")},
		{"modern tools/list (mcp-go)", "tools/list", `{` + modernMeta + `}`, modern("tools/list", "")},
	}
	for _, id := range []string{`1.0`, `1e3`, `-2.50E+1`, `10e-1`, `0.0`, `-0.000e5`, `1e400`, `12345678901234567890.000`} {
		for _, c := range cases {
			resp, data := postMCP(t, fx.url, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+c.method+`","params":`+c.params+`}`, c.headers)
			msgs := rawMessages(t, resp, data)
			last := msgs[len(msgs)-1]
			if resp.StatusCode != http.StatusOK || string(last["id"]) != id || last["result"] == nil {
				t.Errorf("id %s, %s: %d %s, want 200, a result and the id as sent", id, c.name, resp.StatusCode, data)
			}
		}
	}
	for _, id := range []string{`1.5`, `1e-3`, `1.25e1`, `-0.5`, `1e-400`, `123456789012345678901.5`} {
		for _, c := range cases {
			s, _, got := postRaw(t, fx.url, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+c.method+`","params":`+c.params+`}`, c.headers)
			m, _ := got.(map[string]any)
			e, _ := m["error"].(map[string]any)
			if s != http.StatusBadRequest || e["code"] != json.Number("-32600") || m["id"] != nil || m["result"] != nil {
				t.Errorf("id %s, %s: %d %v, want 400, -32600 and a null id", id, c.name, s, got)
			}
		}
	}
}

// TestJSONThatIsNoMessageIsAnInvalidRequest: a body that is valid JSON but
// no JSON-RPC message (a string, a number, a boolean, null, an object
// whose method is not a name) is refused with 400 and -32600 Invalid
// Request, as JSON-RPC 2.0 has it (-32700 is for JSON that does not
// parse), never answered 202 with nothing, which would leave the client
// waiting for a reply. An id that can be read goes back with the error
// (TestRefusalsCarryTheIDWhenItCanBeRead); otherwise the id is null.
func TestJSONThatIsNoMessageIsAnInvalidRequest(t *testing.T) {
	fx := newFixture(t, false)
	for body, id := range map[string]any{
		`"ping"`: nil, `5`: nil, `true`: nil, `null`: nil,
		`{"jsonrpc":"2.0","id":2,"method":5}`:                json.Number("2"),
		`{"jsonrpc":"2.0","id":2,"method":""}`:               json.Number("2"),
		`{"jsonrpc":"2.0","id":2,"method":null,"params":{}}`: json.Number("2"),
		`{"jsonrpc":"2.0","method":{"name":"ping"}}`:         nil,
	} {
		for _, v := range []string{"2025-06-18", "2025-11-25"} {
			s, _, got := postRaw(t, fx.url, body, map[string]string{mcp.HeaderProtocolVersion: v})
			m, _ := got.(map[string]any)
			e, _ := m["error"].(map[string]any)
			if s != http.StatusBadRequest || e["code"] != json.Number("-32600") || m["id"] != id {
				t.Errorf("%s, %s: %d %v, want 400, -32600 and id %v", v, body, s, got, id)
			}
		}
	}
	// Still taken: a notification, and a response the client sends.
	for _, body := range []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":5,"result":{}}`} {
		if s, _, got := postRaw(t, fx.url, body, map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}); s != http.StatusAccepted {
			t.Errorf("%s: %d %v, want 202", body, s, got)
		}
	}
}

// TestLargeIntegerIDsAreEchoedAsSent: MCP ids are strings or integers,
// with no bound on the integer (a client may number its requests with
// 64-bit values), and a reply carries the id of its request. An integer
// beyond ±(2^53-1) comes back with the bytes it was sent with, wherever the
// reply is written: a result or an error, on the direct path or through
// mcp-go's transport, in JSON or on a subscriptions/listen stream (whose
// acknowledgement names the request's id as its subscription id too), and
// in the refusals erpgate writes itself.
func TestLargeIntegerIDsAreEchoedAsSent(t *testing.T) {
	fx := newFixture(t, false)
	legacy := map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}
	modern := modernHeaders
	for _, id := range []string{`9007199254740993`, `-9007199254740995`, `18446744073709551617`} {
		for _, c := range []struct {
			name, method, params string
			headers              map[string]string
			status               int
			result               bool
		}{
			{"legacy call (direct path)", "tools/call", `{"name":"echo","arguments":{"n":3}}`, legacy, http.StatusOK, true},
			{"legacy call with a progress token (mcp-go)", "tools/call", `{"name":"echo","arguments":{"n":3},"_meta":{"progressToken":"p"}}`, legacy, http.StatusOK, true},
			{"legacy unknown tool (direct path)", "tools/call", `{"name":"drop_tables"}`, legacy, http.StatusOK, false},
			{"legacy tools/list (mcp-go)", "tools/list", `{}`, legacy, http.StatusOK, true},
			{"legacy method not offered (mcp-go)", "resources/list", `{}`, legacy, http.StatusOK, false},
			{"modern call (direct path)", "tools/call", `{"name":"echo","arguments":{"n":3},` + modernMeta + `}`, modern("tools/call", "echo"), http.StatusOK, true},
			{"modern tools/list (mcp-go)", "tools/list", `{` + modernMeta + `}`, modern("tools/list", ""), http.StatusOK, true},
			{"modern header mismatch (mcp-go)", "tools/call", `{"name":"echo","arguments":{"n":3},` + modernMeta + `}`, modern("tools/call", "other"), http.StatusBadRequest, false},
			{"modern subscriptions/listen (SSE)", "subscriptions/listen", `{"notifications":{"toolsListChanged":true},` + modernMeta + `}`, modern("subscriptions/listen", ""), http.StatusOK, true},
		} {
			t.Run(id+" "+c.name, func(t *testing.T) {
				resp, data := postMCP(t, fx.url, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+c.method+`","params":`+c.params+`}`, c.headers)
				if resp.StatusCode != c.status {
					t.Fatalf("%d %s, want %d", resp.StatusCode, data, c.status)
				}
				msgs := rawMessages(t, resp, data)
				last := msgs[len(msgs)-1]
				if string(last["id"]) != id {
					t.Fatalf("reply id %s, want %s as sent: %s", last["id"], id, data)
				}
				if got := last["result"] != nil; got != c.result {
					t.Fatalf("result %v, want %v: %s", got, c.result, data)
				}
				for _, m := range msgs[:len(msgs)-1] {
					var p struct {
						Meta map[string]json.RawMessage `json:"_meta"`
					}
					_ = json.Unmarshal(m["params"], &p)
					if got := p.Meta[mcp.MetaKeySubscriptionID]; string(got) != id {
						t.Errorf("%s names subscription %s, want %s: %s", m["method"], got, id, data)
					}
				}
			})
		}
		// A request that carries a result is refused by erpgate itself,
		// with its id.
		s, _, got := postRaw(t, fx.url, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list","result":{}}`, legacy)
		m, _ := got.(map[string]any)
		if s != http.StatusBadRequest || m["id"] != json.Number(id) {
			t.Errorf("a request with a result, id %s: %d %v, want 400 and the id as sent", id, s, got)
		}
	}
}

// rawMessages reads the JSON-RPC messages of a reply, JSON or SSE, in
// order, each member as it was written.
func rawMessages(t *testing.T, resp *http.Response, body []byte) []map[string]json.RawMessage {
	t.Helper()
	var lines []string
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, l := range strings.Split(string(body), "\n") {
			if data, ok := strings.CutPrefix(l, "data: "); ok {
				lines = append(lines, data)
			}
		}
	} else {
		lines = []string{string(body)}
	}
	var out []map[string]json.RawMessage
	for _, l := range lines {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("message %q: %v", l, err)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		t.Fatalf("no message in %q", body)
	}
	return out
}

// modernHeaders are a 2026-07-28 request's headers for method, with
// Mcp-Name when name is not empty.
func modernHeaders(method, name string) map[string]string {
	h := map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: method}
	if name != "" {
		h[mcp.HeaderName] = name
	}
	return h
}

// TestOverlongRequestIDsAreRefused: a request id had no bound but the
// request's (1 MiB), and every reply carries the id back (a
// subscriptions/listen stream three times), so a caller could have the
// gateway hold and send back a megabyte per request. An id longer than
// 256 bytes as sent (clients send small integers or UUIDs) is refused with
// -32600, a null id and a sentence, before anything runs, on every path
// and era; an id of 256 bytes is served and echoed as sent; a client of
// the official SDK is served as before.
func TestOverlongRequestIDsAreRefused(t *testing.T) {
	fx := newFixture(t, false)
	legacy := map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}
	modern := modernHeaders
	atBound := `"` + strings.Repeat("a", 254) + `"` // 256 bytes with its quotes
	ids := map[string]string{
		"257-byte string":  `"` + strings.Repeat("b", 255) + `"`,
		"1000 KiB string":  `"` + strings.Repeat("c", 1000<<10) + `"`,
		"escaped string":   `"` + strings.Repeat(`\u0041`, 50) + `"`, // 300 bytes sent, 50 once read
		"257-digit number": "1" + strings.Repeat("0", 256),
		"long integral":    "1" + strings.Repeat("0", 300) + ".0",
	}
	routes := []struct {
		name, method, params string
		headers              map[string]string
	}{
		{"legacy call (direct path)", "tools/call", `{"name":"echo","arguments":{"n":3}}`, legacy},
		{"legacy call with a progress token (mcp-go)", "tools/call", `{"name":"echo","arguments":{"n":3},"_meta":{"progressToken":"p"}}`, legacy},
		{"legacy ping (mcp-go)", "ping", `{}`, legacy},
		{"modern call (direct path)", "tools/call", `{"name":"echo","arguments":{"n":3},` + modernMeta + `}`, modern("tools/call", "echo")},
		{"modern tools/list (mcp-go)", "tools/list", `{` + modernMeta + `}`, modern("tools/list", "")},
		{"modern subscriptions/listen (SSE)", "subscriptions/listen", `{"notifications":{"toolsListChanged":true},` + modernMeta + `}`, modern("subscriptions/listen", "")},
	}
	for idName, id := range ids {
		for _, c := range routes {
			t.Run(idName+" "+c.name, func(t *testing.T) {
				resp, data := postMCP(t, fx.url, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+c.method+`","params":`+c.params+`}`, c.headers)
				var m struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Result  json.RawMessage `json:"result"`
					Error   *struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(data, &m); err != nil || resp.StatusCode != http.StatusBadRequest ||
					resp.Header.Get("Content-Type") != "application/json" || string(m.ID) != "null" || m.Result != nil ||
					m.Error == nil || m.Error.Code != mcp.INVALID_REQUEST || !strings.Contains(m.Error.Message, "256 bytes") {
					t.Fatalf("%d %s %.300s, want 400, one JSON-RPC error -32600 naming the bound, and a null id",
						resp.StatusCode, resp.Header.Get("Content-Type"), data)
				}
				if len(data) > 512 {
					t.Errorf("the refusal is %d bytes: it carries the id back", len(data))
				}
			})
		}
	}
	// A batch (refused whole), a message that is no request and a
	// response (a client's answer, which no request of erpgate's could
	// have asked for with such an id) do not carry the id back either.
	for name, body := range map[string]string{
		"batch":                 `[{"jsonrpc":"2.0","id":` + ids["1000 KiB string"] + `,"method":"ping"}]`,
		"request with a result": `{"jsonrpc":"2.0","id":` + ids["1000 KiB string"] + `,"method":"ping","result":{}}`,
		"not a message":         `{"jsonrpc":"2.0","id":` + ids["1000 KiB string"] + `,"method":7}`,
		"response":              `{"jsonrpc":"2.0","id":` + ids["1000 KiB string"] + `,"result":{}}`,
		"error response":        `{"jsonrpc":"2.0","id":` + ids["1000 KiB string"] + `,"error":{"code":-32603,"message":"x"}}`,
	} {
		for _, h := range []map[string]string{legacy, modern("ping", "")} {
			resp, data := postMCP(t, fx.url, body, h)
			if resp.StatusCode != http.StatusBadRequest || len(data) > 512 {
				t.Errorf("%s with a long id, protocol %s: %d, %d bytes %.200s, want 400 without the id",
					name, h[mcp.HeaderProtocolVersion], resp.StatusCode, len(data), data)
			}
		}
	}
	for _, ev := range fx.sink.all() {
		if ev.Outcome == usage.Success || ev.ErrorCode != "INVALID_REQUEST" {
			t.Errorf("a request with an overlong id went further than the door: %+v", ev)
		}
	}

	for _, c := range routes {
		resp, data := postMCP(t, fx.url, `{"jsonrpc":"2.0","id":`+atBound+`,"method":"`+c.method+`","params":`+c.params+`}`, c.headers)
		msgs := rawMessages(t, resp, data)
		if last := msgs[len(msgs)-1]; resp.StatusCode != http.StatusOK || string(last["id"]) != atBound || last["result"] == nil {
			t.Errorf("%s with a 256-byte id: %d %.300s, want 200 and the id as sent", c.name, resp.StatusCode, data)
		}
	}
	if res, m := call(t, fx.session(t), "echo", map[string]any{"n": 3}); res.IsError || m["value"].(map[string]any)["n"] != json.Number("3") {
		t.Errorf("an SDK client's call: %v", m)
	}
}

// TestOverlongIDsOfMessagesWithAnUnreadableMemberAreRefused: a message
// whose "jsonrpc" is no string is not one the engine can read as a
// request, but mcp-go's transport reads its id all the same (its first
// look at the body has no "jsonrpc"), and a 2026-07-28 response with such
// a body had mcp-go send its id back, up to the request's bound.
func TestOverlongIDsOfMessagesWithAnUnreadableMemberAreRefused(t *testing.T) {
	fx := newFixture(t, false)
	long := `"` + strings.Repeat("c", 1000<<10) + `"`
	legacy := map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}
	for _, jsonrpc := range []string{`5`, `true`, `{}`, `["2.0"]`} {
		for name, body := range map[string]string{
			"response":       `{"jsonrpc":` + jsonrpc + `,"id":` + long + `,"result":{"a":1}}`,
			"error response": `{"jsonrpc":` + jsonrpc + `,"id":` + long + `,"error":{"code":-32603,"message":"x"}}`,
			"ping":           `{"jsonrpc":` + jsonrpc + `,"id":` + long + `,"method":"ping","params":{` + modernMeta + `}}`,
		} {
			for _, h := range []map[string]string{legacy, modernHeaders("ping", "")} {
				resp, data := postMCP(t, fx.url, body, h)
				if len(data) > 512 {
					t.Errorf("%s with \"jsonrpc\":%s and a long id, protocol %s: %d, %d bytes %.120s, want no id carried back",
						name, jsonrpc, h[mcp.HeaderProtocolVersion], resp.StatusCode, len(data), data)
				}
			}
		}
	}
}
