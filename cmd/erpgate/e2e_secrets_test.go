package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestSecretsNeverLogged runs a full scenario with debug logging and then
// searches everything erpgate logged for every secret it handled.
func TestSecretsNeverLogged(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", map[string]string{"ERPGATE_LOG_LEVEL": "debug"})
	bot := userWithRole(t, sim, "service")
	site := gw.registerFrappe(t, "acme", sim, bot)
	auth := map[string]string{"X-Erpgate-Service-Token": site.ServiceToken}
	cs := connect(t, site.ServiceMCPURL, auth)

	callTool(t, cs, "get_current_user", nil)
	callTool(t, cs, "list_sales_invoices", map[string]any{"limit": 5})
	callTool(t, cs, "get_document", map[string]any{"doctype": "Sales Invoice", "name": "missing"})
	sim.SetFault(frappetest.Fault{Status: 500})
	callTool(t, cs, "list_customers", nil)
	sim.ClearFaults()

	// A rejected credential and a wrong token must not be logged either.
	const wrongSecret = "wrong-secret-5f2c9d1e"
	err := gw.admin.do(context.Background(), http.MethodPut, "/sites/"+site.ID+"/connections/api_token",
		map[string]any{"credentials": map[string]string{"api_key": bot.APIKey, "api_secret": wrongSecret}}, nil)
	if err == nil {
		t.Fatal("a wrong API secret was accepted")
	}
	postRPC(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken + "tampered"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	badAdmin := &adminClient{base: gw.URL, token: gw.AdminToken + "x"}
	_ = badAdmin.do(context.Background(), http.MethodGet, "/sites", nil, nil)

	_, keyMaterial, _ := strings.Cut(gw.Keys, ":")
	secrets := map[string]string{
		"admin token":    gw.AdminToken,
		"encryption key": keyMaterial,
		"service token":  site.ServiceToken,
		"API key":        bot.APIKey,
		"API secret":     bot.APISecret,
		"wrong secret":   wrongSecret,
	}
	if u, err := url.Parse(gw.DBURL); err == nil {
		if pw, ok := u.User.Password(); ok {
			secrets["database password"] = pw
		}
	}
	logs := gw.Logs.String()
	if len(logs) < 1000 {
		t.Fatalf("the scenario logged almost nothing (%d bytes); the test would prove nothing", len(logs))
	}
	for what, s := range secrets {
		if s == "" {
			t.Fatalf("%s is empty", what)
		}
		if strings.Contains(logs, s) {
			t.Errorf("the logs contain the %s", what)
		}
	}
	// At debug level every request has its access line (path, status),
	// so the secrets above had every chance to appear.
	if !strings.Contains(logs, `"msg":"http_request","method":"POST","path":"/service/mcp","status":200`) {
		t.Errorf("no access line for the service MCP requests in:\n%.2000s", logs)
	}
}

// TestReplicaBoundsReachTheEngine: the replica's bounds set in the
// environment are the ones its MCP engine admits calls with (the engine
// logs the bounds in force at start-up), and without them the defaults
// are in force.
func TestReplicaBoundsReachTheEngine(t *testing.T) {
	gw := startGateway(t, "", map[string]string{
		"ERPGATE_LIMIT_REPLICA_CALLS":        "7",
		"ERPGATE_LIMIT_REPLICA_ANSWER_BYTES": "2097152",
		"ERPGATE_LIMIT_CALLER_SHARE":         "50",
	})
	// Half of the 7 call slots, rounded down, and of the work slots.
	callerShare := fmt.Sprintf(`"caller_work_slots":%d,"caller_call_slots":3`, max(16, 8*runtime.GOMAXPROCS(0))/2)
	if logs := gw.Logs.String(); !strings.Contains(logs, `"msg":"mcp_admission"`) || !strings.Contains(logs, `"call_slots":7,"answer_bytes":2097152,`+callerShare) {
		t.Errorf("the engine does not admit with the configured bounds:\n%.3000s", logs)
	}
	def := startGateway(t, "", nil)
	if logs := def.Logs.String(); !strings.Contains(logs, fmt.Sprintf(`"call_slots":%d,"answer_bytes":%d`, max(256, 128*runtime.GOMAXPROCS(0)), 64<<20)) {
		t.Errorf("the engine does not admit with the default bounds:\n%.3000s", logs)
	}
}
