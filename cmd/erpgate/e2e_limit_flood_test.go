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

// TestCallerRefusedByItsLimitsCannotFloodUsageEvents: a caller over its
// per-minute call limit got RATE_LIMITED for each tool call, but each
// was still read, checked and answered as a full MCP result, and each
// wrote a usage event (a row in usage_events) and a log line: one token
// looping on its refusals made as many rows as it liked, taking
// PostgreSQL and the log from every other tenant. Its first refusals are
// still full results with RATE_LIMITED and retry_after_seconds; past its
// budget of refused tool calls it is answered 429 with Retry-After at the
// door, with no usage event, while another tenant is served.
func TestCallerRefusedByItsLimitsCannotFloodUsageEvents(t *testing.T) {
	ctx := context.Background()
	sim, quietSim := frappetest.NewServer(frappetest.Options{}), frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	defer quietSim.Close()
	// Two calls a minute: the rest of the flood is over the limit.
	gw := startGateway(t, "", map[string]string{"ERPGATE_LIMIT_USER_PER_MINUTE": "2"})
	noisy := gw.registerFrappe(t, "noisy", sim, userWithRole(t, sim, "service"))
	quiet := gw.registerFrappe(t, "quiet", quietSim, userWithRole(t, quietSim, "service"))
	quietHeaders := map[string]string{"X-Erpgate-Service-Token": quiet.ServiceToken, "MCP-Protocol-Version": "2025-06-18"}
	awayFromTheMinuteTurn(t, gw.DBURL)

	const flood = 1000
	client := &http.Client{Timeout: time.Minute}
	succeeded, limited, refused := 0, 0, 0
	for i := range flood {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/service/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_current_user","arguments":{}}}`))
		req.Header.Set("X-Erpgate-Service-Token", noisy.ServiceToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			var rpc struct {
				Result struct {
					IsError           bool `json:"isError"`
					StructuredContent struct {
						Error struct {
							Code       string `json:"code"`
							RetryAfter int    `json:"retry_after_seconds"`
						} `json:"error"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal(raw, &rpc); err != nil {
				t.Fatalf("call %d: %s", i, raw)
			}
			switch e := rpc.Result.StructuredContent.Error; {
			case !rpc.Result.IsError:
				succeeded++
			case e.Code == "RATE_LIMITED" && e.RetryAfter >= 1:
				limited++
			default:
				t.Fatalf("call %d: %s; want success or RATE_LIMITED with retry_after_seconds", i, raw)
			}
		case http.StatusTooManyRequests:
			refused++
			if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 || !strings.Contains(string(raw), `"error"`) {
				t.Fatalf("refusal %d: Retry-After %q, %s; want whole seconds and a JSON-RPC error", i, resp.Header.Get("Retry-After"), raw)
			}
		default:
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, raw)
		}
		// The other tenant, during the flood: never refused.
		if i%100 == 0 {
			if status, msg := postRPC(t, gw.URL+"/service/mcp", quietHeaders, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); status != http.StatusOK {
				t.Errorf("the other tenant's ping during the flood: %d %v", status, msg)
			}
		}
	}
	t.Logf("the noisy caller's %d calls: %d succeeded, %d RATE_LIMITED results, %d refused 429", flood, succeeded, limited, refused)
	if limited == 0 {
		t.Error("no call was answered RATE_LIMITED: a client must be told its limit and when to retry")
	}
	if limited > flood/2 || refused == 0 {
		t.Errorf("%d of the caller's %d calls over its limit answered as full results, %d refused at the door; want them bounded well below", limited, flood, refused)
	}
	if err := gw.App.usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	events := queryInt(t, gw.DBURL, `SELECT count(*) FROM usage_events WHERE site_slug = 'noisy' AND error_code = 'RATE_LIMITED'`)
	t.Logf("usage events of RATE_LIMITED calls: %d", events)
	if events != limited {
		t.Errorf("%d usage events of RATE_LIMITED calls, want one for each of the %d answered", events, limited)
	}
	if events > flood/2 {
		t.Errorf("the flood wrote %d usage events; want them bounded well below its %d calls", events, flood)
	}

	// The other tenant, after the flood, calls a tool.
	cs := connect(t, gw.URL+"/service/mcp", map[string]string{"X-Erpgate-Service-Token": quiet.ServiceToken})
	mustSucceed(t, callTool(t, cs, "list_customers", map[string]any{"limit": 5}), "list_customers")
}
