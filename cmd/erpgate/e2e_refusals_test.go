package main

import (
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// Issue 15, items 4 and 5, through the engine with the official MCP Go SDK:
// a refused user gets PERMISSION_DENIED without a pick-list, and a total
// over a field hidden from the user arrives as null with the field named.
func TestServiceMCPRefusedDocumentsAndFields(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)

	sales := gw.registerFrappe(t, "sales", sim, userWithRole(t, sim, "no-accounting"))
	cs := connect(t, sales.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": sales.ServiceToken})
	r := callTool(t, cs, "list_sales_invoices", map[string]any{"customer_query": "acme widgets"})
	if !r.IsError || r.errorCode() != "PERMISSION_DENIED" {
		t.Fatalf("a user who may not read invoices: %s", r.Text)
	}

	// One site per ERP address: a second simulator for the second user.
	sim2 := frappetest.NewServer(frappetest.Options{})
	defer sim2.Close()
	clerk := gw.registerFrappe(t, "clerk", sim2, userWithRole(t, sim2, "field-limited"))
	cs = connect(t, clerk.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": clerk.ServiceToken})
	const company = "Demo Holdings NZ Ltd"
	out := mustSucceed(t, callTool(t, cs, "list_sales_invoices", map[string]any{"company": company, "currency": "NZD", "summary": "totals"}), "totals")
	s := out["summary"].(map[string]any)
	totals := s["totals"].(map[string]any)
	if v, ok := totals["base_grand_total"]; !ok || v != nil {
		t.Fatalf("base_grand_total %v, want null", v)
	}
	if totals["grand_total"] == nil {
		t.Fatalf("grand_total missing: %v", totals)
	}
	if u, _ := s["unavailable_fields"].([]any); len(u) != 2 {
		t.Fatalf("unavailable_fields %v", s["unavailable_fields"])
	}
	page := mustSucceed(t, callTool(t, cs, "list_sales_invoices", map[string]any{"company": company, "limit": 3}), "page")
	if u, _ := page["meta"].(map[string]any)["unavailable_fields"].([]any); len(u) != 1 || u[0] != "base_grand_total" {
		t.Fatalf("meta %v", page["meta"])
	}
}
