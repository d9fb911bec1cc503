package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// postRPC sends one raw JSON-RPC body to an MCP endpoint.
func postRPC(t *testing.T, url string, headers map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func rpcErrorCode(t *testing.T, msg map[string]any) float64 {
	t.Helper()
	e, ok := msg["error"].(map[string]any)
	if !ok {
		t.Fatalf("no JSON-RPC error in %v", msg)
	}
	return e["code"].(float64)
}

func assertHealthy(t *testing.T, gw *gateway) {
	t.Helper()
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(gw.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s = %d after bad input", p, resp.StatusCode)
		}
	}
}

func TestServiceMCPBadInput(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", map[string]string{
		"ERPGATE_UPSTREAM_BUDGET":             "2s",
		"ERPGATE_UPSTREAM_MAX_RESPONSE_BYTES": "65536",
	})
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	auth := map[string]string{"X-Erpgate-Service-Token": site.ServiceToken}
	cs := connect(t, site.ServiceMCPURL, auth)

	t.Run("missing, malformed and revoked tokens get 401 with a JSON-RPC body", func(t *testing.T) {
		ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		for _, h := range []map[string]string{
			nil,
			{"X-Erpgate-Service-Token": "egs_nope"},
			{"Authorization": "Bearer " + site.ServiceToken + "x"},
		} {
			status, msg := postRPC(t, site.ServiceMCPURL, h, ping)
			if status != http.StatusUnauthorized {
				t.Errorf("headers %v: status %d", h, status)
			}
			rpcErrorCode(t, msg)
		}
		if status, _ := postRPC(t, site.ServiceMCPURL+"?token="+site.ServiceToken, nil, ping); status != http.StatusUnauthorized {
			t.Errorf("token in the query string was accepted: %d", status)
		}
		if status, _ := postRPC(t, site.ServiceMCPURL, map[string]string{"Authorization": "Bearer " + site.ServiceToken}, ping); status != http.StatusOK {
			t.Errorf("Bearer token refused: %d", status)
		}
	})

	t.Run("malformed JSON-RPC", func(t *testing.T) {
		status, msg := postRPC(t, site.ServiceMCPURL, auth, `{"jsonrpc":"2.0","id":1,"method":`)
		if status < 400 || rpcErrorCode(t, msg) != -32700 {
			t.Errorf("status %d, %v", status, msg)
		}
		assertHealthy(t, gw)
	})

	t.Run("protocol errors are erpgate's sentences, not a library's", func(t *testing.T) {
		// The SDK client (protocol 2026-07-28) with a cursor the server
		// never gave.
		_, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: "not a cursor"})
		if err == nil || strings.Contains(err.Error(), "base64") || strings.Contains(err.Error(), "input byte") || !strings.Contains(err.Error(), "cursor") {
			t.Errorf("tools/list with a bad cursor: %v", err)
		}
		// Raw JSON-RPC on both protocol versions: tools/call whose params
		// are not an object, and a cursor that is not a string.
		const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		for _, c := range []struct {
			name, version, method, params string
		}{
			{"2025-11-25 tools/call params an array", "2025-11-25", "tools/call", `["list_customers"]`},
			{"2025-11-25 tools/list cursor a number", "2025-11-25", "tools/list", `{"cursor":5}`},
			{"2026-07-28 tools/list cursor not base64", "2026-07-28", "tools/list", `{"cursor":"!!!",` + meta + `}`},
			{"2026-07-28 tools/call inputResponses a number", "2026-07-28", "tools/call", `{"name":"list_customers","inputResponses":5,` + meta + `}`},
		} {
			h := map[string]string{"X-Erpgate-Service-Token": site.ServiceToken, "Mcp-Protocol-Version": c.version, "Mcp-Method": c.method, "Mcp-Name": "list_customers"}
			_, msg := postRPC(t, site.ServiceMCPURL, h, `{"jsonrpc":"2.0","id":3,"method":"`+c.method+`","params":`+c.params+`}`)
			e, _ := msg["error"].(map[string]any)
			text, _ := e["message"].(string)
			if rpcErrorCode(t, msg) != -32602 {
				t.Errorf("%s: %v, want -32602 invalid params", c.name, msg)
			}
			for _, lib := range []string{"json:", "Go struct", "base64", "input byte", "unparsable", "mcp."} {
				if strings.Contains(text, lib) {
					t.Errorf("%s: message %q carries library text", c.name, text)
					break
				}
			}
		}
	})

	t.Run("invalid arguments are told in erpgate's words", func(t *testing.T) {
		// Raw JSON-RPC: the SDK would write 1.0 as 1.
		h := map[string]string{"X-Erpgate-Service-Token": site.ServiceToken, "Mcp-Protocol-Version": "2025-11-25"}
		for _, c := range []struct{ name, args, want string }{
			{"a number with a fraction for a whole number", `{"limit":5.5}`, "limit"},
			{"a date that does not exist", `{"from_date":"2025-02-30"}`, "from_date"},
			{"a string for a number", `{"limit":"ten"}`, "limit"},
			{"an unknown argument", `{"sql":"select 1"}`, "sql"},
		} {
			_, msg := postRPC(t, site.ServiceMCPURL, h, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_sales_invoices","arguments":`+c.args+`}}`)
			res, _ := msg["result"].(map[string]any)
			sc, _ := res["structuredContent"].(map[string]any)
			e, _ := sc["error"].(map[string]any)
			text, _ := e["message"].(string)
			if e["code"] != "INVALID_ARGUMENT" || !strings.Contains(text, c.want) {
				t.Errorf("%s: %v, want INVALID_ARGUMENT naming %s", c.name, msg, c.want)
			}
			// Go's and the validator's own words: type names, time
			// parsing, jsonschema's phrasing.
			for _, lib := range []string{"PageArgs", `" must be int`, "float64", "parsing time", "out of range", "jsonschema", "got string, want", "additional properties", "not allowed"} {
				if strings.Contains(text, lib) {
					t.Errorf("%s: message %q carries library text (%q)", c.name, text, lib)
					break
				}
			}
		}
	})

	t.Run("a whole number written with a fraction or an exponent is taken", func(t *testing.T) {
		// JSON Schema counts 5.0 and 5e0 as integers: the input schema
		// accepts them, and so does the tool. Raw JSON-RPC: the SDK would
		// write 5.0 as 5.
		h := map[string]string{"X-Erpgate-Service-Token": site.ServiceToken, "Mcp-Protocol-Version": "2025-11-25"}
		for _, limit := range []string{"5.0", "5e0", "0.5e1"} {
			_, msg := postRPC(t, site.ServiceMCPURL, h, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_sales_invoices","arguments":{"limit":`+limit+`}}}`)
			res, _ := msg["result"].(map[string]any)
			sc, _ := res["structuredContent"].(map[string]any)
			meta, _ := sc["meta"].(map[string]any)
			if res == nil || res["isError"] == true || meta["limit"] != float64(5) {
				t.Errorf("limit %s: %v, want a page of at most 5", limit, msg)
			}
		}
	})

	t.Run("unknown tool is a protocol error", func(t *testing.T) {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "drop_database", Arguments: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), "drop_database") {
			t.Errorf("err = %v", err)
		}
	})

	invalid := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"wrong type", "list_sales_invoices", map[string]any{"limit": "ten"}, "/limit"},
		{"out of range", "list_customers", map[string]any{"limit": 1000}, "/limit"},
		{"unknown argument", "list_customers", map[string]any{"sql": "select 1"}, "sql"},
		{"bad enum", "get_document", map[string]any{"doctype": "User", "name": "Administrator"}, "/doctype"},
		{"missing required", "get_document", map[string]any{"doctype": "Sales Invoice"}, "name"},
		{"bad date", "list_sales_invoices", map[string]any{"from_date": "01/02/2025"}, "/from_date"},
		{"incomparable ranking", "list_sales_invoices", map[string]any{"order_by": "grand_total"}, "currency"},
	}
	for _, c := range invalid {
		t.Run("INVALID_ARGUMENT: "+c.name, func(t *testing.T) {
			r := callTool(t, cs, c.tool, c.args)
			if !r.IsError || r.errorCode() != "INVALID_ARGUMENT" || !strings.Contains(r.Text, c.want) {
				t.Errorf("got isError=%v %s", r.IsError, r.Text)
			}
		})
	}

	faults := []struct {
		name  string
		fault frappetest.Fault
		want  string
	}{
		{"upstream hangs past the budget", frappetest.Fault{Hang: true}, "UPSTREAM_TIMEOUT"},
		{"upstream returns 500", frappetest.Fault{Status: 500}, "UPSTREAM_UNAVAILABLE"},
		{"upstream returns invalid JSON", frappetest.Fault{Body: []byte(`{"data":[{"name":`)}, "UPSTREAM_INVALID_RESPONSE"},
		{"upstream returns more than the bound", frappetest.Fault{BodySize: 1 << 20}, "RESPONSE_TOO_LARGE"},
		{"upstream resets the connection", frappetest.Fault{ResetConnection: true}, "UPSTREAM_UNAVAILABLE"},
	}
	for _, c := range faults {
		t.Run(c.want+": "+c.name, func(t *testing.T) {
			sim.SetFault(c.fault)
			defer sim.ClearFaults()
			r := callTool(t, cs, "list_customers", nil)
			if !r.IsError || r.errorCode() != c.want {
				t.Errorf("got isError=%v %s", r.IsError, r.Text)
			}
			sim.ClearFaults()
			assertHealthy(t, gw)
			if r := callTool(t, cs, "list_customers", map[string]any{"limit": 1}); r.IsError {
				t.Errorf("gateway did not recover: %s", r.Text)
			}
		})
	}

	t.Run("X-MCP-Error-Format: result delivers errors as results", func(t *testing.T) {
		h := map[string]string{"X-Erpgate-Service-Token": site.ServiceToken, "X-MCP-Error-Format": "result"}
		rcs := connect(t, site.ServiceMCPURL, h)
		r := callTool(t, rcs, "get_document", map[string]any{"doctype": "Sales Invoice", "name": "ACC-SINV-1999-99999"})
		if r.IsError || r.Structured["ok"] != false || r.Structured["status"] != "error" || r.errorCode() != "NOT_FOUND" {
			t.Errorf("got isError=%v %v", r.IsError, r.Structured)
		}
	})

	t.Run("null arguments and an empty search are arguments left out", func(t *testing.T) {
		// A voice agent sends every parameter, null or "" when it has none.
		for tool, args := range map[string]map[string]any{
			"list_customers":      {"search": "", "customer_group": nil, "territory": nil, "limit": 5},
			"list_sales_invoices": {"search": "", "customer": nil, "customer_query": nil, "status": nil, "limit": 5},
		} {
			r := callTool(t, cs, tool, args)
			if r.IsError {
				t.Errorf("%s %v: %s", tool, args, r.Text)
			}
		}
	})

	t.Run("revocation takes effect at once", func(t *testing.T) {
		g2 := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
		tokens, err := gw.admin.listTokens(context.Background(), g2.ID)
		if err != nil {
			t.Fatal(err)
		}
		var id string
		for _, tk := range tokens {
			if strings.HasPrefix(g2.ServiceToken, tk.Prefix) {
				id = tk.ID
			}
		}
		h := map[string]string{"X-Erpgate-Service-Token": g2.ServiceToken}
		ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		if status, _ := postRPC(t, site.ServiceMCPURL, h, ping); status != http.StatusOK {
			t.Fatalf("fresh token refused: %d", status)
		}
		if err := gw.admin.do(context.Background(), http.MethodDelete, "/sites/"+g2.ID+"/service-tokens/"+id, nil, nil); err != nil {
			t.Fatal(err)
		}
		if status, _ := postRPC(t, site.ServiceMCPURL, h, ping); status != http.StatusUnauthorized {
			t.Errorf("revoked token still accepted: %d", status)
		}
	})
}

func TestUsageEvents(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", map[string]string{"ERPGATE_UPSTREAM_BUDGET": "5s"})
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	auth := map[string]string{"X-Erpgate-Service-Token": site.ServiceToken}
	cs := connect(t, site.ServiceMCPURL, auth)

	// The ERP takes erpDelay to answer the first call's request.
	const erpDelay = 60 * time.Millisecond
	sim.SetFault(frappetest.Fault{PathPrefix: "/api/resource/Company", Delay: erpDelay, Times: 1})
	callTool(t, cs, "list_companies", nil)
	callTool(t, cs, "get_document", map[string]any{"doctype": "Customer", "name": "No Such Customer Ltd"})
	_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"})

	// A call whose client goes away while the ERP hangs is cancelled.
	sim.SetFault(frappetest.Fault{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_customers", Arguments: map[string]any{}})
	cancel()
	sim.ClearFaults()

	type row struct{ Method, Tool, Outcome, Code, Slug, Auth string }
	want := []row{
		{"tools/call", "list_companies", "success", "", "acme", "service_token"},
		{"tools/call", "get_document", "error", "NOT_FOUND", "acme", "service_token"},
		{"tools/call", "unknown", "error", "UNKNOWN_TOOL", "acme", "service_token"},
		{"tools/call", "list_customers", "cancelled", "", "acme", "service_token"},
	}
	conn, err := pgx.Connect(context.Background(), gw.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var got []row
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows, err := conn.Query(context.Background(),
			`SELECT method, tool, outcome, error_code, site_slug, auth_type FROM usage_events WHERE method = 'tools/call' ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		got, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var x row
			err := r.Scan(&x.Method, &x.Tool, &x.Outcome, &x.Code, &x.Slug, &x.Auth)
			return x, err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(got) != len(want) {
		t.Fatalf("usage rows = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}

	// Each event names the service token as its client, and no ERP user.
	tokens, err := gw.admin.listTokens(context.Background(), site.ID)
	if err != nil || len(tokens) != 1 {
		t.Fatalf("tokens %v, %v", tokens, err)
	}
	var wrong int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM usage_events WHERE erp_user <> '' OR client_id <> $1`, tokens[0].ID).Scan(&wrong); err != nil || wrong != 0 {
		t.Errorf("%d usage events with an ERP user or another client than token %s (%v)", wrong, tokens[0].ID, err)
	}

	// Each tool call's time with the ERP: at least the delay the ERP took
	// for the first, none for a tool that does not exist, and never more
	// than the call's whole duration. Other requests have none.
	rows, err := conn.Query(context.Background(),
		`SELECT tool, erp_ms, duration_ms FROM usage_events WHERE method = 'tools/call' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	type timing struct {
		Tool            string
		ERP, DurationMS int64
	}
	timings, err := pgx.CollectRows(rows, pgx.RowToStructByPos[timing])
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range timings {
		switch {
		case tm.ERP > tm.DurationMS:
			t.Errorf("%s: erp_ms %d exceeds duration_ms %d", tm.Tool, tm.ERP, tm.DurationMS)
		case tm.Tool == "list_companies" && tm.ERP < erpDelay.Milliseconds():
			t.Errorf("list_companies: erp_ms %d, but the ERP took %v to answer", tm.ERP, erpDelay)
		case tm.Tool == "unknown" && tm.ERP != 0:
			t.Errorf("an unknown tool was %d ms with the ERP", tm.ERP)
		}
	}
	var others, othersWithERP int
	if err := conn.QueryRow(context.Background(),
		`SELECT count(*), count(erp_ms) FROM usage_events WHERE method <> 'tools/call'`).Scan(&others, &othersWithERP); err != nil {
		t.Fatal(err)
	}
	if others == 0 || othersWithERP != 0 {
		t.Errorf("%d events other than tools/call, %d of them with erp_ms; want some, none", others, othersWithERP)
	}
	if logs := gw.Logs.String(); !strings.Contains(logs, `"event":"mcp_request"`) || !strings.Contains(logs, `"MCP get_document: error (NOT_FOUND)"`) || !strings.Contains(logs, `"erp_ms":`) {
		t.Errorf("usage events were not logged")
	}
}
