package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/redact"
)

// TestLiveSettingsReachEveryReplica changes settings through one
// replica's admin API and watches a second replica on the same Postgres,
// through the official MCP client, apply each without a restart (the
// time each took is logged): a site's redaction pattern, its tool list, the deployment's row
// cap and the per-user call limit.
func TestLiveSettingsReachEveryReplica(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	a := startGateway(t, "", nil)
	b := startGateway(t, a.DBURL, map[string]string{"ERPGATE_ADMIN_TOKEN": a.AdminToken, "ERPGATE_ENCRYPTION_KEYS": a.Keys})
	site := a.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	onB := strings.Replace(site.ServiceMCPURL, a.URL, b.URL, 1)
	cs := connect(t, onB, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	ctx := context.Background()

	put := func(path string, value any) {
		t.Helper()
		if err := a.admin.do(ctx, http.MethodPut, path, map[string]any{"value": value}, nil); err != nil {
			t.Fatalf("PUT %s: %v", path, err)
		}
	}
	// within polls check on replica b until it holds, and logs how long
	// that took after the change was made on replica a. The bound says
	// only that the change arrives, by NOTIFY or by the 500 ms poll; it is
	// not a speed assertion (a loaded CI machine must not fail it).
	within := func(what string, check func() bool) {
		t.Helper()
		start := time.Now()
		deadline := start.Add(15 * time.Second)
		for !check() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: replica b did not apply the change within 15 s", what)
			}
			// Some checks are tool calls, and the caller may make 40 a
			// minute: looking every 50 ms leaves the change more than a
			// second and a half to arrive on a loaded machine.
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("%s: in force on replica b %v after the change on replica a", what, time.Since(start).Round(time.Millisecond))
	}

	customerName := func() any {
		out := mustSucceed(t, callTool(t, cs, "list_customers", map[string]any{"limit": 3}), "list_customers")
		names := findMember(out, "customer_name")
		if len(names) == 0 {
			t.Fatalf("list_customers returned no customer_name: %v", out)
		}
		return names[0]
	}
	if v := customerName(); v == redact.Placeholder {
		t.Fatalf("customer_name is redacted before any setting: %v", v)
	}
	put("/sites/acme/settings/redaction_add", []string{"CustomerName"})
	within("the site's redaction pattern", func() bool { return customerName() == redact.Placeholder })

	toolNames := func() []string {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	if n := len(toolNames()); n < 5 {
		t.Fatalf("only %d tools before", n)
	}
	put("/sites/acme/settings/tools", []string{"list_customers", "get_document"})
	within("the site's tool list", func() bool {
		names := toolNames()
		slices.Sort(names)
		return slices.Equal(names, []string{"get_document", "list_customers"})
	})
	if r := callTool(t, cs, "list_suppliers", map[string]any{}); !r.IsError || r.errorCode() != "PERMISSION_DENIED" || !strings.Contains(errorMessage(r), "does not offer the tool list_suppliers") {
		t.Errorf("a tool the site does not offer: %s", r.Text)
	}

	limitOf := func() json.Number {
		out := mustSucceed(t, callTool(t, cs, "list_customers", map[string]any{"limit": 50}), "list_customers")
		limits := findMember(out, "limit")
		if len(limits) != 1 {
			t.Fatalf("list_customers: %d limits in %v", len(limits), out)
		}
		n, _ := limits[0].(json.Number)
		return n
	}
	if got := limitOf(); got != "50" {
		t.Fatalf("limit before: %v", got)
	}
	put("/settings/max_records", 2)
	within("the deployment's row cap", func() bool { return limitOf() == "2" })

	put("/settings/user_per_minute", 1)
	refused := false
	start := time.Now()
	// At most 20 calls (below the old limit of 40 a minute, so a refusal is
	// the new limit's), 50 ms apart: back to back, they could all be made
	// before the change reached replica b (CI saw it take 60 ms).
	for i := 0; i < 20 && !refused; i++ {
		if i > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		r := callTool(t, cs, "list_customers", map[string]any{"limit": 1})
		refused = r.IsError && r.errorCode() == "RATE_LIMITED"
	}
	if !refused {
		t.Fatal("20 calls after the per-user limit went down to 1 a minute were all served")
	}
	t.Logf("the per-user limit of 1 a minute refused a call on replica b %v after the change", time.Since(start).Round(time.Millisecond))
}
