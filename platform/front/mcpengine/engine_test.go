package mcpengine

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/usage"
)

// fakeERP is a connector whose tools exercise the engine's chain.
type fakeERP struct{ upstream string }

func (fakeERP) Kind() string { return "fakeerp" }
func (fakeERP) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) {
	return raw, nil
}
func (fakeERP) APICredentialFields() []connector.CredentialField { return nil }
func (fakeERP) APIAuthorizer(connector.Site, map[string]secrets.Secret) (connector.Authorizer, error) {
	return nil, nil
}
func (fakeERP) VerifyAPICredential(context.Context, connector.Site, *http.Client) (string, error) {
	return "bot", nil
}

func (f fakeERP) Tools() []connector.Tool {
	out := schema.Object(schema.Prop("value", schema.Any("")))
	tool := func(name string, in *schema.Schema, h connector.Handler) connector.Tool {
		return connector.Tool{Name: name, Description: "Test tool.", Input: in, Output: out, Effect: connector.Read, Handler: h}
	}
	return []connector.Tool{
		tool("echo", schema.Object(
			schema.Prop("n", schema.Integer("").Min(1).Max(10)).Required(),
			schema.Prop("when", schema.Date("")),
		), func(ctx context.Context, c *connector.Call) (any, error) {
			var a struct {
				N    json.Number `json:"n"`
				When string      `json:"when"`
			}
			if err := c.Decode(&a); err != nil {
				return nil, err
			}
			return map[string]any{"value": map[string]any{"n": a.N, "amount": json.Number("1180.10")}}, nil
		}),
		tool("big", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			return map[string]any{"value": strings.Repeat("x", 5000)}, nil
		}),
		tool("wide", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			return map[string]any{"value": strings.Repeat("w", 1500)}, nil
		}),
		tool("denied", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			return nil, toolerr.New(toolerr.PermissionDenied, "no access to Sales Invoice")
		}),
		tool("panics", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			return nil, io.ErrUnexpectedEOF
		}),
		tool("secretive", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			return map[string]any{"value": map[string]any{"customer": "Acme", "tax_id": "GB123", "card": "4111 1111 1111 1111"}}, nil
		}),
		tool("reallypanics", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			var m map[string]int
			m["boom"]++ // a connector bug: assignment to a nil map
			return nil, nil
		}),
		tool("raw", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			// Passed on as the ERP wrote it: an escaped sensitive name and
			// a decimal whose digits must survive.
			return connector.RawResult(`{"value":{"customer":"Caf\u00e9","t\u0061x_id":"GB123","amount":1180.100}}`), nil
		}),
		tool("rawrepeated", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			// An ERP answer that names a member twice: the sensitive copy
			// first, a harmless one after it.
			return connector.RawResult(`{"value":{"customer":"Acme","tax_id":"GB123456789","tax_id":null,"note":"card 4111 1111 1111 1111","note":"ok"}}`), nil
		}),
		tool("rawbroken", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			return connector.RawResult(`{"value":[1,2}`), nil
		}),
		tool("rawsensitivebroken", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			// Something to redact first, then text that is not JSON.
			return connector.RawResult(`{"tax_id":"GB123"} {"more":1}`), nil
		}),
		tool("rawarray", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			return connector.RawResult(`[{"value":1}]`), nil
		}),
		tool("pause", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			// Two requests to the ERP, one after the other, each answered
			// after upstreamPause.
			for range 2 {
				if _, err := fetchJSON(ctx, c, "/pause"); err != nil {
					return nil, err
				}
			}
			return map[string]any{"value": "paused"}, nil
		}),
		tool("afterwork", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			// One request to the ERP, answered after upstreamPause, then
			// afterWork of the tool's own work.
			if _, err := fetchJSON(ctx, c, "/pause"); err != nil {
				return nil, err
			}
			time.Sleep(afterWork)
			return map[string]any{"value": "worked"}, nil
		}),
		tool("upstream", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			v, err := fetchJSON(ctx, c, "/slow")
			return map[string]any{"value": v}, err
		}),
		local(tool("localonly", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			return map[string]any{"value": "worked out locally"}, nil
		})),
		// A tool that says it is local but asks the ERP (a connector bug).
		local(tool("localreaches", schema.Object(), func(ctx context.Context, c *connector.Call) (any, error) {
			v, err := fetchJSON(ctx, c, "/pause")
			return map[string]any{"value": v}, err
		})),
	}
}

// RouteShape names the fixture ERP's routes for trace spans: /pause as it
// is, nothing else.
func (fakeERP) RouteShape(escapedPath string) string {
	if escapedPath == "/pause" {
		return escapedPath
	}
	return ""
}

// local makes t a tool that reaches nothing outside erpgate.
func local(t connector.Tool) connector.Tool { t.Local = true; return t }

// fetchJSON GETs path from the call's site through the call's client and
// decodes the answer.
func fetchJSON(ctx context.Context, c *connector.Call, path string) (any, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.Site.URL(path, nil), nil)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	var v any
	if err := outbound.DecodeJSON(resp, &v); err != nil {
		return nil, err
	}
	return v, nil
}

type sink struct {
	mu     sync.Mutex
	events []usage.Event
}

func (s *sink) Record(e usage.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

func (s *sink) all() []usage.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]usage.Event(nil), s.events...)
}

type fixture struct {
	engine *Engine
	site   connector.Site
	url    string
	sink   *sink
	logs   *observer.ObservedLogs
	errors bool
}

// upstreamPause is how long the fixture's ERP takes to answer /pause.
const upstreamPause = 30 * time.Millisecond

// afterWork is how long the "afterwork" tool works after the ERP answered.
const afterWork = 100 * time.Millisecond

func newFixture(t testing.TB, errorsAsResults bool) *fixture {
	t.Helper()
	return newFixtureWith(t, errorsAsResults, nil)
}

// newFixtureWith is newFixture with options changed by with.
func newFixtureWith(t testing.TB, errorsAsResults bool, with func(*Options)) *fixture {
	t.Helper()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/pause" {
			time.Sleep(upstreamPause)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"ok":true}`))
			return
		}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(upstream.Close)
	reg := connector.NewRegistry()
	reg.MustRegister(fakeERP{})
	core, logs := observer.New(zap.DebugLevel)
	s := &sink{}
	opts := Options{
		Registry: reg, Outbound: outbound.NewFactory(outbound.DefaultOptions()), Usage: s,
		Logger: zap.New(core), Budget: 300 * time.Millisecond, MaxResultBytes: 4096,
		AllowedOrigins: []string{"https://gw.example"},
	}
	if with != nil {
		with(&opts)
	}
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(upstream.URL)
	site := connector.Site{ID: uuid.New(), Slug: "demo", Kind: "fakeerp", BaseURL: base}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.ServeMCP(w, r, Session{Site: site, Principal: connector.Principal{AuthType: "service_token"}, ErrorsAsResults: errorsAsResults})
	}))
	t.Cleanup(srv.Close)
	return &fixture{engine: e, site: site, url: srv.URL, sink: s, logs: logs, errors: errorsAsResults}
}

func (f *fixture) session(t *testing.T) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: f.url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (*sdk.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	// The text block carries the exact JSON; the SDK decodes
	// structuredContent into float64s, which would hide number changes.
	raw := []byte(res.Content[0].(*sdk.TextContent).Text)
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = dec.Decode(&m)
	return res, m
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func TestCallChain(t *testing.T) {
	f := newFixture(t, false)
	cs := f.session(t)

	res, m := call(t, cs, "echo", map[string]any{"n": 3})
	if res.IsError {
		t.Fatalf("echo failed: %v", m)
	}
	v := m["value"].(map[string]any)
	if v["n"] != json.Number("3") || v["amount"] != json.Number("1180.10") {
		t.Errorf("numbers changed on the way: %v", v)
	}

	cases := []struct {
		tool string
		args map[string]any
		code string
		text string
	}{
		{"echo", map[string]any{"n": "3"}, "INVALID_ARGUMENT", "/n"},
		{"echo", map[string]any{"n": 11}, "INVALID_ARGUMENT", "/n"},
		{"echo", map[string]any{"n": 1, "x": true}, "INVALID_ARGUMENT", "x"},
		{"echo", map[string]any{}, "INVALID_ARGUMENT", "n"},
		{"echo", map[string]any{"n": 1, "when": "tomorrow"}, "INVALID_ARGUMENT", "/when"},
		{"big", nil, "RESPONSE_TOO_LARGE", "KiB"},
		{"denied", nil, "PERMISSION_DENIED", "Sales Invoice"},
		{"panics", nil, "INTERNAL", "operator"},
		{"rawbroken", nil, "INTERNAL", "could not be encoded"},
		{"rawsensitivebroken", nil, "INTERNAL", "could not be encoded"},
		{"rawarray", nil, "INTERNAL", "JSON object"},
		{"upstream", nil, "UPSTREAM_TIMEOUT", "does not mean there are no records"},
	}
	for _, c := range cases {
		res, m := call(t, cs, c.tool, c.args)
		if !res.IsError || errCode(m) != c.code {
			t.Errorf("%s(%v): isError=%v %v, want %s", c.tool, c.args, res.IsError, m, c.code)
			continue
		}
		text := res.Content[0].(*sdk.TextContent).Text
		if !strings.Contains(text, c.text) {
			t.Errorf("%s: message %q should mention %q", c.tool, text, c.text)
		}
		if c.code == "INTERNAL" && strings.Contains(text, io.ErrUnexpectedEOF.Error()) {
			t.Errorf("INTERNAL leaked the cause: %s", text)
		}
	}

	_, m = call(t, cs, "secretive", nil)
	v = m["value"].(map[string]any)
	if v["tax_id"] != "[REDACTED]" || v["card"] != "[REDACTED]" || v["customer"] != "Acme" {
		t.Errorf("redaction: %v", v)
	}
	// A result the handler encoded itself is redacted like any other,
	// however the ERP escaped its names, and keeps its digits otherwise.
	_, m = call(t, cs, "raw", nil)
	v = m["value"].(map[string]any)
	if v["tax_id"] != "[REDACTED]" || v["customer"] != "Café" || v["amount"] != json.Number("1180.100") {
		t.Errorf("raw result: %v", v)
	}
	if n := f.logs.FilterMessage("field_redaction").Len(); n != 2 {
		t.Errorf("field_redaction events = %d", n)
	}

	events := f.sink.all()
	var calls int
	for _, e := range events {
		if e.Method == "tools/call" {
			calls++
		}
	}
	if calls != 1+len(cases)+2 {
		t.Errorf("%d tools/call usage events, want %d", calls, 3+len(cases))
	}
	last := events[len(events)-1]
	if last.Tool != "raw" || last.Outcome != usage.Success || last.SiteSlug != "demo" || last.AuthType != "service_token" || last.RequestID == "" {
		t.Errorf("last event = %+v", last)
	}
}

func TestErrorsAsResults(t *testing.T) {
	f := newFixture(t, true)
	cs := f.session(t)
	res, m := call(t, cs, "denied", nil)
	if res.IsError || m["ok"] != false || m["status"] != "error" || errCode(m) != "PERMISSION_DENIED" {
		t.Errorf("isError=%v %v", res.IsError, m)
	}
}

// A service client that posts a bare JSON-RPC tools/call (no initialize,
// no session, Accept naming JSON only), as NexWave's legacy service
// clients did, gets one finite application/json reply; and a tool failure
// it receives as a result (X-MCP-Error-Format: result, HTTP 200) is still
// recorded as an error with its code, not as a success (seed 004, "Usage
// logs").
func TestALegacyServiceCallGetsAJSONReplyAndItsFailureIsCountedAsAnError(t *testing.T) {
	f := newFixture(t, true)
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"denied","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var reply struct {
		ID     json.Number `json:"id"`
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &reply); err != nil {
		t.Fatalf("not one JSON-RPC reply: %v: %s", err, body)
	}
	sc := reply.Result.StructuredContent
	if reply.ID != "7" || reply.Result.IsError || sc["ok"] != false || sc["status"] != "error" || errCode(sc) != "PERMISSION_DENIED" {
		t.Errorf("reply: %s", body)
	}
	events := f.sink.all()
	if len(events) != 1 {
		t.Fatalf("%d usage events, want 1: %+v", len(events), events)
	}
	if e := events[0]; e.Tool != "denied" || e.Outcome != usage.Error || e.ErrorCode != "PERMISSION_DENIED" {
		t.Errorf("usage event: tool %q outcome %q code %q, want denied, error, PERMISSION_DENIED", e.Tool, e.Outcome, e.ErrorCode)
	}
}

// A connector that panics fails its call like any other internal error:
// the error envelope (as a result with X-MCP-Error-Format: result), a
// plain sentence, and the panic in the operator's log, not Go's runtime
// text as a JSON-RPC error the client cannot take as a result.
func TestAPanickingToolIsAnInternalError(t *testing.T) {
	for _, asResults := range []bool{false, true} {
		f := newFixture(t, asResults)
		cs := f.session(t)
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "reallypanics", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("results %v: a protocol error: %v", asResults, err)
		}
		text := res.Content[0].(*sdk.TextContent).Text
		var m map[string]any
		_ = json.Unmarshal([]byte(text), &m)
		if res.IsError == asResults || errCode(m) != "INTERNAL" || m["status"] != "error" {
			t.Errorf("results %v: isError=%v %s", asResults, res.IsError, text)
		}
		if strings.Contains(text, "nil map") || strings.Contains(text, "panic") {
			t.Errorf("results %v: the answer quotes the panic: %s", asResults, text)
		}
		if f.logs.FilterMessage("tool call failed").FilterField(zap.String("tool", "reallypanics")).Len() != 1 {
			t.Errorf("results %v: the panic was not logged for the operator", asResults)
		}
	}
}

func TestAdvertisedSchemasAndOrigin(t *testing.T) {
	f := newFixture(t, false)
	cs := f.session(t)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s: readOnlyHint false", tool.Name)
		}
		out, _ := json.Marshal(tool.OutputSchema)
		if !strings.Contains(string(out), `"error"`) {
			t.Errorf("%s: output schema does not admit the error envelope: %s", tool.Name, out)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin: %d", resp.StatusCode)
	}
}

func TestNotificationsMakeNoUsageEvent(t *testing.T) {
	f := newFixture(t, false)
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if n := len(f.sink.all()); n != 0 {
		t.Errorf("%d usage events for a notification", n)
	}
}

func TestAdvertisedOutputSchemaKeepsRequiredAsAlternative(t *testing.T) {
	s := AdvertisedOutputSchema(schema.Object(schema.Prop("data", schema.Array(schema.Any(""), "")).Required()))
	var m map[string]any
	if err := json.Unmarshal(s, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["required"]; ok {
		t.Errorf("required must move into anyOf: %s", s)
	}
	if alts, _ := m["anyOf"].([]any); len(alts) != 2 {
		t.Errorf("anyOf = %v", m["anyOf"])
	}
}

func (fakeERP) SiteRules() connector.SiteRules { return connector.SiteRules{} }

// TestInvalidArgumentsMessageIsStable: the same invalid arguments get the
// same message every time, though the validator finds unknown names and
// failing properties by walking maps.
func TestInvalidArgumentsMessageIsStable(t *testing.T) {
	in := schema.Object(
		schema.Prop("n", schema.Integer("").Min(1)).Required(),
		schema.Prop("when", schema.Date("")),
		schema.Prop("note", schema.String("").Len(1, 3)),
	)
	v, err := schema.CompileValidator(in, "mem:///stable")
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"n":"x","when":5,"note":"long","zz":1,"aa":2,"mm":3,"":4}`)
	var first string
	for i := range 50 {
		_, err := validateArgs(v, args)
		if toolerr.Classify(err).Code != toolerr.InvalidArgument {
			t.Fatalf("%v, want INVALID_ARGUMENT", err)
		}
		msg := toolerr.Classify(err).Message
		if i == 0 {
			first = msg
			if !strings.Contains(msg, `unknown arguments '', 'aa', 'mm', 'zz'`) {
				t.Fatalf("message %q does not list the unknown names in order", msg)
			}
			continue
		}
		if msg != first {
			t.Fatalf("call %d: %q, first %q", i+1, msg, first)
		}
	}
	t.Log(first)
}

// TestInvalidArgumentsOfAlternatives: a value that fits none of an
// anyOf's or oneOf's forms is told what it may be, as alternatives (not as
// rules it must meet all at once), and one that fits more than one form of
// a oneOf is told so (not that it fits none).
func TestInvalidArgumentsOfAlternatives(t *testing.T) {
	v, err := schema.CompileJSON([]byte(`{"type":"object","properties":{
		"id":{"anyOf":[{"type":"string"},{"type":"integer"}]},
		"code":{"oneOf":[{"type":"string","maxLength":3},{"type":"string","pattern":"^[A-Z]+$"}]},
		"who":{"type":"object","anyOf":[{"required":["name"]},{"required":["email"]}]}
	}}`), "mem:///alternatives")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args       string
		want, dont []string
	}{
		{`{"id":true}`, []string{"/id: must be string or integer, not boolean"}, []string{"/id: must be string, not boolean"}},
		{`{"code":"AB"}`, []string{"/code:", "more than one"}, []string{"does not match the tool's input schema"}},
		{`{"code":"abcd"}`, []string{"/code:", "at most 3 characters", " or ", "pattern"}, []string{"does not match the tool's input schema"}},
		{`{"who":{}}`, []string{"/who:", "missing required member 'name'", " or ", "missing required member 'email'"}, []string{"; /who: missing"}},
	} {
		_, err := validateArgs(v, json.RawMessage(c.args))
		msg := toolerr.Classify(err).Message
		t.Log(msg)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q, want it to say %q", c.args, msg, w)
			}
		}
		for _, d := range c.dont {
			if strings.Contains(msg, d) {
				t.Errorf("%s: %q, want it not to say %q", c.args, msg, d)
			}
		}
	}
}

// TestARepeatedNameDoesNotCarryASecretPast: a result that names a member
// twice, a sensitive value first and a harmless one after, reaches the
// client without the sensitive value, in the text block and in
// structuredContent. Before, the scan saw the first copy, the decoded
// document kept only the last, nothing was left to redact, and the
// original bytes, first copy included, went out.
func TestARepeatedNameDoesNotCarryASecretPast(t *testing.T) {
	f := newFixture(t, false)
	res, _ := call(t, f.session(t), "rawrepeated", nil)
	text := res.Content[0].(*sdk.TextContent).Text
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"GB123456789", "4111"} {
		if strings.Contains(text, secret) || strings.Contains(string(structured), secret) {
			t.Errorf("%s reached the client: %s", secret, text)
		}
	}
	if res.IsError || !strings.Contains(text, "Acme") {
		t.Errorf("the rest of the result: %s", text)
	}
}

// TestNullArgumentsAreAbsent: a client that sends null for an optional
// argument it has no value for (voice agents and some function-calling
// models send every parameter) is answered as if it had left the argument
// out, as NexWave MCP did, rather than refused as INVALID_ARGUMENT. A
// required argument sent as null is still missing.
func TestNullArgumentsAreAbsent(t *testing.T) {
	f := newFixture(t, false)
	cs := f.session(t)
	res, m := call(t, cs, "echo", map[string]any{"n": 3, "when": nil})
	if res.IsError {
		t.Fatalf("echo with when null: %v", m)
	}
	if v := m["value"].(map[string]any); v["n"] != json.Number("3") {
		t.Errorf("value = %v", v)
	}
	res, m = call(t, cs, "echo", map[string]any{"n": nil})
	if !res.IsError || errCode(m) != "INVALID_ARGUMENT" || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "n") {
		t.Errorf("required n as null: isError=%v %v, want INVALID_ARGUMENT naming n", res.IsError, m)
	}
}

// TestLocalToolsAreAdvertisedClosedWorld: a tool that reaches nothing
// outside erpgate (Local) is advertised with openWorldHint false, every
// other with true; and a local tool's call cannot reach the ERP: its
// request is refused (INTERNAL), so a tool that says it is local and is
// not fails rather than the hint being wrong.
func TestLocalToolsAreAdvertisedClosedWorld(t *testing.T) {
	f := newFixture(t, false)
	cs := f.session(t)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		local := tool.Name == "localonly" || tool.Name == "localreaches"
		if open := tool.Annotations.OpenWorldHint; open == nil || *open == local {
			t.Errorf("%s: openWorldHint %v, want %v", tool.Name, open != nil && *open, !local)
		}
	}
	if res, m := call(t, cs, "localonly", nil); res.IsError {
		t.Errorf("localonly: %v", m)
	}
	if res, m := call(t, cs, "localreaches", nil); !res.IsError || errCode(m) != "INTERNAL" {
		t.Errorf("a local tool reached the ERP: isError=%v %v", res.IsError, m)
	}
	if f.logs.FilterMessage("tool call failed").FilterField(zap.String("tool", "localreaches")).Len() != 1 {
		t.Errorf("the local tool's request to the ERP was not logged for the operator")
	}
}
