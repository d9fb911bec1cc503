package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

// Issue 15, item 6: an Acumatica instance under a virtual directory
// (https://erp.example.com/AcumaticaERP/, the usual on-premises install).
// The simulator answers only under /AcumaticaERP and 404s everything
// else, so every URL erpgate builds (identity server, contract REST,
// OData, the canary gate, UI links) must be under it.
func TestAcumaticaUnderVirtualDirectory(t *testing.T) {
	sim := acumaticatest.NewServer(acumaticatest.Options{PathPrefix: "/AcumaticaERP"})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	ctx := context.Background()

	var mcpURL string
	t.Run("the admin API keeps the directory, without its trailing slash", func(t *testing.T) {
		var site siteResponse
		if err := gw.admin.do(ctx, http.MethodPost, "/sites", map[string]any{
			"slug": "acu", "kind": "acumatica", "display_name": "Acumatica", "base_url": sim.URL + "/",
			"settings": map[string]string{"tenant": sim.Tenant()},
		}, &site); err != nil {
			t.Fatal(err)
		}
		if site.BaseURL != sim.URL {
			t.Errorf("base_url %q, want %q", site.BaseURL, sim.URL)
		}
		client := sim.RegisterClient(gw.callbackURL(t, site.Slug))
		if err := gw.admin.putOAuthClient(ctx, site.ID, client.ID, client.Secret); err != nil {
			t.Fatal(err)
		}
		mcpURL = site.MCPURL
	})

	t.Run("a service connection works under the directory", func(t *testing.T) {
		var service acumaticatest.Client
		for _, c := range sim.Clients() {
			if c.Flow == acumaticatest.FlowPassword {
				service = c
			}
		}
		u := sim.User("service")
		site, err := gw.admin.ensureSite(ctx, devState{}, siteRequest{
			Slug: "acu", Kind: "acumatica", DisplayName: "Acumatica under a directory", BaseURL: sim.URL,
			Settings: map[string]any{"tenant": sim.Tenant()},
			Credentials: map[string]string{
				"client_id": service.ID, "client_secret": service.Secret,
				"username": u.Username, "password": u.Password,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
		out := mustSucceed(t, callTool(t, cs, "acumatica_list_customers", map[string]any{"top": 2}), "acumatica_list_customers")
		if rows, _ := out["results"].([]any); len(rows) != 2 {
			t.Errorf("acumatica_list_customers rows: %v", out)
		}
		mustSucceed(t, callTool(t, cs, "acumatica_run_inquiry", map[string]any{"name": "Customer Contacts", "top": 2}), "acumatica_run_inquiry")
		customer := sim.Data().Records("Customer")[0]
		r := callTool(t, cs, "search", map[string]any{"query": customer.String("CustomerID")})
		out = mustSucceed(t, r, "search")
		results, _ := out["results"].([]any)
		if len(results) == 0 {
			t.Fatalf("search %s found nothing: %s", customer.String("CustomerID"), r.Text)
		}
		link, _ := results[0].(map[string]any)["url"].(string)
		if !strings.HasPrefix(link, sim.URL+"/Main?") {
			t.Errorf("the form link %q is not under the directory %s", link, sim.URL)
		}
	})

	admin := sim.User("full")
	t.Run("OAuth sign-in, the canary gate and tools run under the directory", func(t *testing.T) {
		c := connectOAuth(t, mcpURL, acumaticaLogin(admin))
		mustSucceed(t, callTool(t, c.cs, "acumatica_list_customers", map[string]any{"top": 1}), "acumatica_list_customers")
		mustSucceed(t, callTool(t, c.cs, "acumatica_list_generic_inquiries", nil), "acumatica_list_generic_inquiries")
		if n := sim.RequestCount("/AcumaticaERP/t/" + sim.Tenant() + "/api/odata/gi/MCPAccess"); n == 0 {
			t.Error("the canary gate was not read under the directory")
		}
	})

	t.Run("/mcp matches an address under the directory", func(t *testing.T) {
		fields := acumaticaLogin(admin)
		fields["erp_url"] = sim.URL + "/Main?ScreenId=AR303000"
		fields["tenant"] = sim.Tenant()
		c := connectOAuth(t, gw.URL+"/mcp", fields)
		mustSucceed(t, callTool(t, c.cs, "acumatica_list_customers", map[string]any{"top": 1}), "acumatica_list_customers via /mcp")
	})

	t.Run("an address outside the directory is not this site", func(t *testing.T) {
		b := newHeadlessBrowser(t, e2eRedirectURI, map[string]string{"erp_url": sim.Origin + "/OtherApp/Main"})
		_, err := tryConnectOAuth(t, gw.URL+"/mcp", b)
		if p := b.LastPage(); err == nil || p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "no ERP at that address") {
			t.Errorf("HTTP %d: %s", p.Status, pageText(p.Body))
		}
	})

	if n := sim.OutsideRequests(); n != 0 {
		t.Errorf("%d requests went outside the virtual directory", n)
	}
}
