package frappe_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e"
)

// TestEndToEnd runs the real gateway (`erpgate dev`) with the end-to-end
// kit and calls the Frappe demo site's tools over the service door with the
// official MCP Go SDK. Expected values come from the simulator's seed,
// which a fresh simulator has too.
func TestEndToEnd(t *testing.T) {
	gw := e2e.Start(t, e2e.Options{})
	site := gw.Site(t, "frappe")
	seed := frappetest.NewHandler(frappetest.Options{})
	bot := seed.User("service")

	t.Run("get_current_user is the service user", func(t *testing.T) {
		out := site.CallService(t, "get_current_user", nil).OK(t)
		if out["user"] != bot.Email || out["auth_type"] != "service_token" {
			t.Errorf("get_current_user = %v, want %s by service token", out, bot.Email)
		}
	})

	t.Run("list_customers pages through every enabled customer", func(t *testing.T) {
		var want []string
		for _, c := range seed.Data().List("Customer") {
			if c.Int("disabled") == 0 {
				want = append(want, c.Name)
			}
		}
		if len(want) == 0 {
			t.Fatal("the seed has no enabled customer")
		}
		slices.Sort(want)
		var got []string
		for offset := 0; ; {
			out := site.CallService(t, "list_customers", map[string]any{"limit": 20, "offset": offset}).OK(t)
			for _, row := range out["data"].([]any) {
				got = append(got, row.(map[string]any)["name"].(string))
			}
			next, ok := out["meta"].(map[string]any)["next_offset"].(json.Number)
			if !ok {
				break
			}
			n, _ := next.Int64()
			offset = int(n)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("walked %d customers, want the seed's %d enabled ones", len(got), len(want))
		}
	})

	t.Run("a write waits for the demo administrator's approval", func(t *testing.T) {
		if !slices.Contains(site.Service(t).Tools(t), "create_sales_order") {
			t.Fatal("the service token is not offered create_sales_order")
		}
		r := site.CallService(t, "create_sales_order", map[string]any{
			"customer": seed.Data().List("Customer")[0].Name, "company": seed.Data().List("Company")[0].Name,
			"delivery_date": "2026-12-31",
			"items":         []any{map[string]any{"item_code": seed.Data().List("Item")[0].Name, "qty": 1}},
		})
		if r.ErrorCode() != "APPROVAL_REQUIRED" || !strings.Contains(r.Text, "/approve/") {
			t.Errorf("create_sales_order by the service token: %s", r.Text)
		}
	})

	t.Run("a person signs in with OAuth and calls as themselves", func(t *testing.T) {
		admin := seed.User(frappetest.RoleAdministrator)
		person := site.SignIn(t, map[string]string{"usr": admin.Email, "pwd": admin.Password})
		out := person.Call(t, "get_current_user", nil).OK(t)
		if out["user"] != admin.Email || out["auth_type"] != "oauth" {
			t.Errorf("get_current_user as %s = %v", admin.Email, out)
		}
	})

	t.Run("a second site registered with dev.json's credentials", func(t *testing.T) {
		// One site per ERP address: reach the same simulator by name.
		second := gw.RegisterSite(t, e2e.SiteRequest{
			Slug: "second-frappe", Kind: "frappe", DisplayName: "Second Frappe",
			BaseURL:     strings.Replace(site.ERPURL, "127.0.0.1", "localhost", 1),
			Credentials: site.ERPCredentials,
		})
		out := second.CallService(t, "get_current_user", nil).OK(t)
		if out["user"] != bot.Email {
			t.Errorf("get_current_user on the second site = %v, want %s", out, bot.Email)
		}
	})
}
