package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/front/mcpengine"
)

// TestManyTokensOfOneSiteCannotFloodRequestsOtherThanToolCalls: the
// budget of requests other than tool calls was per caller only, and a
// site's owner issues as many service tokens as they like: eight tokens,
// each sending pings within its own budget (its burst of 100), had all
// 800 served, eight times what one caller gets, each taking the replica's
// CPU from the other tenants. The callers of one site now share a budget
// too (twice a caller's by default): past it they are answered 429 with
// Retry-After and a sentence naming the site, while another site's
// caller is served, and the site's tool calls are untouched.
func TestManyTokensOfOneSiteCannotFloodRequestsOtherThanToolCalls(t *testing.T) {
	ctx := context.Background()
	sim, quietSim := frappetest.NewServer(frappetest.Options{}), frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	defer quietSim.Close()
	gw := startGateway(t, "", nil)
	noisy := gw.registerFrappe(t, "noisy", sim, userWithRole(t, sim, "service"))
	quiet := gw.registerFrappe(t, "quiet", quietSim, userWithRole(t, quietSim, "service"))
	const callers = 8
	tokens := []string{noisy.ServiceToken}
	for i := 1; i < callers; i++ {
		var created tokenResponse
		if err := gw.admin.do(ctx, http.MethodPost, "/sites/"+noisy.ID+"/service-tokens", map[string]any{"name": fmt.Sprintf("bot %d", i)}, &created); err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, created.Token)
	}
	quietHeaders := map[string]string{"X-Erpgate-Service-Token": quiet.ServiceToken, "MCP-Protocol-Version": "2025-06-18"}

	// Each token sends as many pings as its own burst allows, the tokens
	// taking turns: no token is ever over its own budget.
	perCaller := mcpengine.DefaultCallerRequests.Burst
	client := &http.Client{Timeout: time.Minute}
	served, refused := 0, 0
	for round := range perCaller {
		for _, token := range tokens {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/service/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("X-Erpgate-Service-Token", token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				served++
			case http.StatusTooManyRequests:
				refused++
				if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 || !strings.Contains(string(raw), "this site") {
					t.Fatalf("refusal: Retry-After %q, %s; want whole seconds and a sentence naming the site", resp.Header.Get("Retry-After"), raw)
				}
			default:
				t.Fatalf("ping: %d %s", resp.StatusCode, raw)
			}
		}
		if round%20 == 0 {
			if status, msg := postRPC(t, gw.URL+"/service/mcp", quietHeaders, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); status != http.StatusOK {
				t.Errorf("the other site's ping during the flood: %d %v", status, msg)
			}
		}
	}
	t.Logf("%d tokens of one site, %d pings each: %d served, %d refused", callers, perCaller, served, refused)
	if refused == 0 || served > callers*perCaller/2 {
		t.Errorf("%d tokens of one site, each within its own budget, had %d of %d pings served (%d refused); want the site held to its own budget, well below", callers, served, callers*perCaller, refused)
	}
	// The site's tool calls have the call limits, not this budget.
	if o := callService(ctx, client, gw.URL, tokens[callers-1], "list_customers", map[string]any{"limit": 5}); !o.ok() {
		t.Errorf("a tool call of the flooding site: %v", o)
	}
}
