package acumatica_test

import (
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e"
)

// TestEndToEnd runs the real gateway (`erpgate dev`) with the end-to-end
// kit and calls the Acumatica demo site's tools over the service door with
// the official MCP Go SDK. Expected values come from the simulator's seed,
// which a fresh simulator has too.
func TestEndToEnd(t *testing.T) {
	gw := e2e.Start(t, e2e.Options{})
	site := gw.Site(t, "acumatica")
	seed := acumaticatest.NewHandler(acumaticatest.Options{})
	t.Cleanup(seed.Close)
	customer := seed.Data().Records("Customer")[0]
	id, name := customer.String("CustomerID"), customer.String("CustomerName")

	t.Run("acumatica_list_customers finds a seeded customer by its name", func(t *testing.T) {
		out := site.CallService(t, "acumatica_list_customers", map[string]any{"search": name}).OK(t)
		found := false
		for _, row := range out["results"].([]any) {
			r := row.(map[string]any)
			found = found || r["CustomerID"] == id && r["CustomerName"] == name
		}
		if !found {
			t.Errorf("searching %q did not return customer %s: %v", name, id, out["results"])
		}
	})

	t.Run("acumatica_get_customer reads it", func(t *testing.T) {
		out := site.CallService(t, "acumatica_get_customer", map[string]any{"CustomerID": id}).OK(t)
		record := out["record"].(map[string]any)
		if record["CustomerName"] != name || record["Status"] != customer.String("Status") {
			t.Errorf("acumatica_get_customer %s = %v, want %s (%s)", id, record, name, customer.String("Status"))
		}
	})

	t.Run("an unknown customer is NOT_FOUND", func(t *testing.T) {
		if r := site.CallService(t, "acumatica_get_customer", map[string]any{"CustomerID": "NO-SUCH-1"}); r.ErrorCode() != "NOT_FOUND" {
			t.Errorf("an unknown customer: %s, want NOT_FOUND", r.Text)
		}
	})

	t.Run("a person signs in with OAuth and reads as themselves", func(t *testing.T) {
		admin := seed.User(acumaticatest.RoleFull)
		person := site.SignIn(t, map[string]string{"username": admin.Username, "password": admin.Password})
		out := person.Call(t, "acumatica_get_customer", map[string]any{"CustomerID": id}).OK(t)
		if record := out["record"].(map[string]any); record["CustomerName"] != name {
			t.Errorf("acumatica_get_customer %s as %s = %v, want %s", id, admin.Username, record, name)
		}
	})

	t.Run("a write waits for the demo administrator's approval", func(t *testing.T) {
		r := site.CallService(t, "acumatica_create_sales_order", map[string]any{
			"CustomerID": id,
			"Details":    []any{map[string]any{"InventoryID": seed.Data().Records("StockItem")[0].String("InventoryID"), "OrderQty": 1}},
		})
		if r.ErrorCode() != "APPROVAL_REQUIRED" || !strings.Contains(r.Text, "/approve/") {
			t.Errorf("acumatica_create_sales_order by the service token: %s", r.Text)
		}
		if want := seed.User(acumaticatest.RoleFull).Username + "@" + seed.ServiceLogin().Tenant; site.ServiceWriteApprover != want {
			t.Errorf("the demo site's writes wait for %q, want the demo administrator %q", site.ServiceWriteApprover, want)
		}
	})
}
