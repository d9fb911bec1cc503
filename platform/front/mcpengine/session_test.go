package mcpengine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/platform/connector"
)

// statusRecorder notes the status the engine answers a DELETE with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusRecorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestAClientCannotEndItsSession: the capability session id of protocols
// before 2026-07-28 is sealed, and every replica reads it without asking
// anyone, so nothing can end it before it is no longer sent. A DELETE of
// it answered 200, as if the session had ended, while the same id went on
// working. MCP (Streamable HTTP, session management) lets a server that
// does not allow clients to end sessions answer 405: the official SDK's
// client ends its session with a DELETE on Close and takes the 405.
func TestAClientCannotEndItsSession(t *testing.T) {
	f := newWriteFixture(t)
	s := Session{Site: f.site, Principal: connector.Principal{AuthType: "oauth", Subject: jane}, ClientID: "client-1", LimitKey: "user:" + jane}
	var mu sync.Mutex
	var deletes []int
	var allow []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete {
			f.engine.ServeMCP(w, r, s)
			return
		}
		rec := &statusRecorder{ResponseWriter: w}
		f.engine.ServeMCP(rec, r, s)
		mu.Lock()
		deletes, allow = append(deletes, rec.status), append(allow, rec.Header().Get("Allow"))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)

	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}}})
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	session := cs.ID()
	if session == "" {
		t.Fatal("initialize issued no session id")
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("the SDK client's Close: %v", err)
	}
	mu.Lock()
	gotDeletes, gotAllow := deletes, allow
	mu.Unlock()
	if len(gotDeletes) != 1 || gotDeletes[0] != http.StatusMethodNotAllowed || gotAllow[0] != "POST" {
		t.Fatalf("the SDK's DELETE of its session: statuses %v, Allow %q; want one 405 allowing POST only", gotDeletes, gotAllow)
	}

	// By hand, with its protocol version, and on 2025-06-18: 405 with a
	// JSON-RPC error in erpgate's words.
	for _, version := range []string{"2025-11-25", "2025-06-18", ""} {
		req, _ := http.NewRequest(http.MethodDelete, srv.URL, nil)
		req.Header.Set(HeaderSessionID, session)
		if version != "" {
			req.Header.Set(mcp.HeaderProtocolVersion, version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var reply struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&reply)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" || reply.Error == nil {
			t.Fatalf("DELETE (version %q): %d, Allow %q, %+v", version, resp.StatusCode, resp.Header.Get("Allow"), reply.Error)
		}
		if frag := leaksLibraryText(reply.Error.Message); frag != "" || !strings.Contains(reply.Error.Message, "session") {
			t.Errorf("DELETE (version %q): message %q (library text %q), want a sentence about the session", version, reply.Error.Message, frag)
		}
	}

	// The session goes on, as the refusal says: a write call with it
	// still gets -32042, the URL elicitation its initialize declared.
	direct := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"make_thing","arguments":{"name":"Other"}}}`
	if _, m := rawPost(t, srv.URL, session, direct); m["error"] == nil || m["error"].(map[string]any)["code"] != json.Number("-32042") {
		t.Fatalf("the session after the refused DELETE: %v", m)
	}
}

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
