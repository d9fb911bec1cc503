package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestOneCallerCannotFloodRequestsOtherThanToolCalls: the per-caller
// limits counted tool calls only. A signed-in user sending 1,000 other
// MCP requests on its site's endpoint (ping, tools/list, initialize, the
// initialized notification, GET) had every one served: each tools/list
// built and sent the whole catalogue, and each request with an id wrote a
// usage event to the database, as fast as the caller liked. Now the
// caller's other requests have a budget of their own: past it they are
// answered 429 with Retry-After and a JSON-RPC error, while another
// tenant's caller, during the flood and after it, is served as usual.
func TestOneCallerCannotFloodRequestsOtherThanToolCalls(t *testing.T) {
	ctx := context.Background()
	noisySim, quietSim := frappetest.NewServer(frappetest.Options{}), frappetest.NewServer(frappetest.Options{})
	defer noisySim.Close()
	defer quietSim.Close()
	gw := startGateway(t, "", nil)
	noisy := frappeOAuthSite(t, gw, "noisy", noisySim)
	quiet := gw.registerFrappe(t, "quiet", quietSim, userWithRole(t, quietSim, "service"))
	user := connectOAuth(t, noisy.MCPURL, frappeLogin(userWithRole(t, noisySim, "all-companies")))
	token := user.source.current().AccessToken
	quietHeaders := map[string]string{"X-Erpgate-Service-Token": quiet.ServiceToken, "MCP-Protocol-Version": "2025-06-18"}
	// What the connection above sent is not counted below.
	if err := gw.App.usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	eventsBefore := queryInt(t, gw.DBURL, `SELECT count(*) FROM usage_events WHERE site_slug = 'noisy' AND method <> 'tools/call'`)

	const flood = 1000
	bodies := []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"", // GET
	}
	client := &http.Client{Timeout: time.Minute}
	served, refused := 0, 0
	statuses := map[int]int{}
	for i := range flood {
		body := bodies[i%len(bodies)]
		method := http.MethodPost
		if body == "" {
			method = http.MethodGet
		}
		req, _ := http.NewRequestWithContext(ctx, method, noisy.MCPURL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		statuses[resp.StatusCode]++
		switch resp.StatusCode {
		case http.StatusOK, http.StatusAccepted, http.StatusMethodNotAllowed:
			served++
		case http.StatusTooManyRequests:
			refused++
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			var rpc struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err != nil || secs < 1 || json.Unmarshal(raw, &rpc) != nil || rpc.Error.Code == 0 || rpc.Error.Message == "" {
				t.Fatalf("refusal %d: Retry-After %q, body %s; want whole seconds and a JSON-RPC error", i, resp.Header.Get("Retry-After"), raw)
			}
		default:
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, raw)
		}
		// The other tenant, during the flood: never refused.
		if i%100 == 0 {
			if status, msg := postRPC(t, gw.URL+"/service/mcp", quietHeaders, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); status != http.StatusOK {
				t.Errorf("the other tenant's ping during the flood: %d %v", status, msg)
			}
		}
	}
	t.Logf("the noisy caller's %d requests: %v", flood, statuses)
	if served > flood/2 || refused == 0 {
		t.Errorf("%d of the caller's %d requests served, %d refused; want it bounded well below", served, flood, refused)
	}
	if err := gw.App.usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	events := queryInt(t, gw.DBURL, `SELECT count(*) FROM usage_events WHERE site_slug = 'noisy' AND method <> 'tools/call'`) - eventsBefore
	t.Logf("usage events written for the flood: %d", events)
	if events > flood/2 {
		t.Errorf("the flood wrote %d usage events; want it bounded well below its %d requests", events, flood)
	}

	// The other tenant, after the flood, with the official SDK client:
	// connects, lists the tools and calls a tool.
	cs := connect(t, gw.URL+"/service/mcp", map[string]string{"X-Erpgate-Service-Token": quiet.ServiceToken})
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if tools, err := cs.ListTools(lctx, nil); err != nil || len(tools.Tools) == 0 {
		t.Fatalf("the other tenant's tools/list: %v", err)
	}
	mustSucceed(t, callTool(t, cs, "list_customers", map[string]any{"limit": 5}), "list_customers")
	// The noisy user's tool calls have their own limits, untouched by
	// the flood.
	mustSucceed(t, callTool(t, user.cs, "get_current_user", nil), "get_current_user")
}
