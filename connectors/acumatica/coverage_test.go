package acumatica

import (
	"net/url"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// smokeCase is one call of a tool with the outcome each user kind gets.
type smokeCase struct {
	args map[string]any
	// deniedTo lists the kinds whose rights refuse the call.
	deniedTo []userKind
}

// smokeCases returns a call for every tool in the catalogue; the test
// fails for a tool without one, so a new tool cannot skip the simulator.
func smokeCases(h *harness) map[string]smokeCase {
	d := h.sim.Data()
	cases := map[string]smokeCase{}
	for _, g := range getterSpecs {
		c := smokeCase{args: keyArgs(g, d.Records(g.Entity)[0])}
		if deniedTo(kindNoAR, g.Entity) {
			c.deniedTo = []userKind{kindNoAR}
		}
		cases["acumatica_get_"+g.Tool] = c
	}
	noAR := []userKind{kindNoAR}
	cust := d.Records("Customer")[0]
	cases["acumatica_list_entities"] = smokeCase{args: map[string]any{"entity": "Invoice", "filterExpression": "Status eq 'Open'", "top": 3}, deniedTo: noAR}
	cases["acumatica_list_customers"] = smokeCase{args: map[string]any{"top": 3}, deniedTo: noAR}
	cases["acumatica_describe_entity"] = smokeCase{args: map[string]any{"entity": "Invoice"}}
	cases["acumatica_list_generic_inquiries"] = smokeCase{args: map[string]any{"search": "AR"}}
	cases["acumatica_describe_inquiry"] = smokeCase{args: map[string]any{"name": acumaticatest.CanaryInquiry}}
	cases["acumatica_run_inquiry"] = smokeCase{args: map[string]any{"name": acumaticatest.CanaryInquiry}, deniedTo: []userKind{kindNoCanary}}
	cases["acumatica_clear_cache"] = smokeCase{}
	cases["acumatica_search_schema"] = smokeCase{args: map[string]any{"query": "purchase order vendor"}}
	cases["acumatica_get_schema_entity"] = smokeCase{args: map[string]any{"name": "PurchaseOrder"}}
	cases["acumatica_list_schema_entities"] = smokeCase{args: map[string]any{"prefix": "Sales"}}
	cases["acumatica_explain_gi_xml"] = smokeCase{args: map[string]any{"xml": readGI(h.t, "flat-export.xml")}}
	cases["search"] = smokeCase{args: map[string]any{"query": cust.String("CustomerID")}}
	cases["fetch"] = smokeCase{args: map[string]any{"id": "Customer:" + url.PathEscape(cust.String("CustomerID"))}, deniedTo: noAR}
	order := d.Records("SalesOrder")[0]
	item := d.Records("StockItem")[0]
	cases["acumatica_create_sales_order"] = smokeCase{args: map[string]any{"CustomerID": cust.String("CustomerID"),
		"Details": []any{map[string]any{"InventoryID": item.String("InventoryID"), "OrderQty": 2}}}, deniedTo: noAR}
	cases["acumatica_update_customer"] = smokeCase{args: map[string]any{"CustomerID": cust.String("CustomerID"),
		"MainContact": map[string]any{"Phone2": "+1 (555) 010-0000"}}, deniedTo: noAR}
	cases["acumatica_add_note"] = smokeCase{args: map[string]any{"entity": "SalesOrder", "OrderType": order.String("OrderType"),
		"OrderNbr": order.String("OrderNbr"), "text": "Smoke test note."}}
	return cases
}

// TestEveryToolRunsForEveryUserKind runs every tool in the catalogue
// against the simulator as every kind of caller: success, or
// PERMISSION_DENIED exactly where the user's rights say so.
func TestEveryToolRunsForEveryUserKind(t *testing.T) {
	runEveryTool(t, newHarness(t, harnessOptions{}))
}

// runEveryTool runs every tool in h's catalogue as every kind of caller.
func runEveryTool(t *testing.T, h *harness) {
	t.Helper()
	cases := smokeCases(h)
	for _, tool := range h.conn.Tools() {
		c, ok := cases[tool.Name]
		if !ok {
			t.Errorf("%s: no smoke case; add one", tool.Name)
			continue
		}
		for _, kind := range userKinds {
			_, err := h.run(kind, tool.Name, c.args)
			if tool.Name == "acumatica_clear_cache" {
				// The next kind's clear comes after the interval.
				h.ahead.Add(int64(clearCacheInterval))
			}
			denied := false
			for _, k := range c.deniedTo {
				denied = denied || k == kind
			}
			switch {
			case denied:
				if codeOf(err) != toolerr.PermissionDenied {
					t.Errorf("%s as %s: err = %v, want PERMISSION_DENIED", tool.Name, kind.name, err)
				}
			case err != nil:
				t.Errorf("%s as %s: %v", tool.Name, kind.name, err)
			}
		}
	}
}
