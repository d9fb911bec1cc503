package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/platform/connector/devstate"
)

// Site is a site of the gateway: a demo site from dev.json or one a test
// registered.
type Site struct {
	devstate.Site // its addresses, service token, demo users, ...
	gw            *Gateway

	mu      sync.Mutex
	service *Session
}

// Session is an MCP session of the official Go SDK's client with the
// gateway.
type Session struct {
	cs *mcp.ClientSession
}

// Result is a tool's answer: Structured is its JSON (numbers exact, as
// json.Number), Text the text block, which carries the same JSON.
type Result struct {
	IsError    bool
	Structured map[string]any
	Text       string
}

// OK returns the result's JSON, failing the test if the call failed.
func (r Result) OK(t testing.TB) map[string]any {
	t.Helper()
	if r.IsError {
		t.Fatalf("the call failed: %s", r.Text)
	}
	return r.Structured
}

// ErrorCode is the code of a failed call (error.code), or "".
func (r Result) ErrorCode() string {
	e, _ := r.Structured["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// Decode decodes the result's JSON into v.
func (r Result) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.Text), v); err != nil {
		t.Fatalf("decode the result: %v", err)
	}
}

// Service returns the site's MCP session over the service door
// (/service/mcp, with its service token), opened on first use and shared
// until the gateway stops.
func (s *Site) Service(t testing.TB) *Session {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.service == nil {
		s.service = s.gw.Connect(t, s.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": s.ServiceToken})
	}
	return s.service
}

// CallService calls a tool with the site's service token and returns its
// answer; a protocol error fails the test, a tool error is in the Result.
func (s *Site) CallService(t testing.TB, tool string, args map[string]any) Result {
	t.Helper()
	return s.Service(t).Call(t, tool, args)
}

// Connect opens an MCP session with the SDK's streamable HTTP client on
// endpoint, sending headers with every request. It is closed when the
// gateway stops.
func (g *Gateway) Connect(t testing.TB, endpoint string, headers map[string]string) *Session {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "erpgate-e2e-kit", Version: "1"}, nil)
	hc := &http.Client{Transport: headerTransport{headers: headers}}
	ctx, cancel := callContext()
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", endpoint, err)
	}
	return g.track(cs)
}

// track keeps a session to close when the gateway stops.
func (g *Gateway) track(cs *mcp.ClientSession) *Session {
	s := &Session{cs: cs}
	g.mu.Lock()
	g.sessions = append(g.sessions, s)
	g.mu.Unlock()
	return s
}

// Tools lists the names of the tools the session is offered.
func (s *Session) Tools(t testing.TB) []string {
	t.Helper()
	ctx, cancel := callContext()
	defer cancel()
	var names []string
	for tool, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// Call calls a tool. The answer's text and structuredContent must be the
// same JSON.
func (s *Session) Call(t testing.TB, tool string, args map[string]any) Result {
	t.Helper()
	ctx, cancel := callContext()
	defer cancel()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", tool, args, err)
	}
	out := Result{IsError: res.IsError}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks, want 1", tool, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: the content is %T, want text", tool, res.Content[0])
	}
	out.Text = tc.Text
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(structured, []byte(tc.Text)) {
		t.Fatalf("%s: the text and structuredContent differ:\n%s\n%s", tool, tc.Text, structured)
	}
	// The exact numbers come from the text: the SDK turns those of
	// structuredContent into float64s.
	dec := json.NewDecoder(strings.NewReader(tc.Text))
	dec.UseNumber()
	if err := dec.Decode(&out.Structured); err != nil {
		t.Fatalf("%s: the text is not a JSON object: %v", tool, err)
	}
	return out
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	headers map[string]string
}

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(req)
}
