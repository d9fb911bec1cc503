package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

// acumaticaOAuthSite registers sim as an Acumatica site with an OAuth
// connection (a connected application whose redirect URI is the gateway's
// callback) and returns its MCP URL.
func acumaticaOAuthSite(t *testing.T, gw *gateway, slug string, sim *acumaticatest.Server) string {
	t.Helper()
	ctx := context.Background()
	var site siteResponse
	if err := gw.admin.do(ctx, http.MethodPost, "/sites", map[string]any{
		"slug": slug, "kind": "acumatica", "display_name": "Acumatica " + slug, "base_url": sim.URL,
		"settings": map[string]string{"tenant": sim.Tenant()},
	}, &site); err != nil {
		t.Fatal(err)
	}
	client := sim.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(ctx, site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
	return site.MCPURL
}

// customerListTool is the catalogue's tool that lists customers without
// required arguments (the stand-in's list_customers, or the connector's).
func customerListTool(t *testing.T, c *oauthMCPClient) string {
	t.Helper()
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		schema, _ := tool.InputSchema.(map[string]any)
		required, _ := schema["required"].([]any)
		if strings.Contains(tool.Name, "list") && strings.Contains(tool.Name, "customer") && len(required) == 0 {
			return tool.Name
		}
	}
	t.Fatal("no tool lists customers")
	return ""
}

func acumaticaLogin(u acumaticatest.User) map[string]string {
	return map[string]string{"username": u.Username, "password": u.Password}
}

// TestOAuthAcumaticaEndToEnd: the SDK client signs in to an Acumatica site
// (authorization code at /identity/connect, userinfo, the MCPAccess canary
// as the access gate, consent), calls a tool as each user with their own
// rights, refreshes silently and re-authorises after a dead refresh token.
// The canary's 403, 404 and 500 answers stop the sign-in on the right page.
func TestOAuthAcumaticaEndToEnd(t *testing.T) {
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	mcpURL := acumaticaOAuthSite(t, gw, "acu", sim)
	admin, clerk, noCanary := sim.User("full"), sim.User("no-ar"), sim.User("no-canary")

	adminClient := connectOAuth(t, mcpURL, acumaticaLogin(admin))
	listCustomers := customerListTool(t, adminClient)
	t.Run("sign-in passes the access gate and consent; calls run as the user", func(t *testing.T) {
		mustSucceed(t, callTool(t, adminClient.cs, listCustomers, nil), listCustomers)
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM auth_events WHERE event = 'sign_in' AND erp_user LIKE $1`, admin.Username+"%"); n != 1 {
			t.Errorf("%d sign_in events for %s", n, admin.Username)
		}
	})

	t.Run("permissions differ per user", func(t *testing.T) {
		c := connectOAuth(t, mcpURL, acumaticaLogin(clerk))
		res := callTool(t, c.cs, listCustomers, nil)
		if !res.IsError || res.errorCode() != "PERMISSION_DENIED" {
			t.Errorf("%s list_customers: %s", clerk.Username, res.Text)
		}
	})

	t.Run("expired tokens are refreshed silently", func(t *testing.T) {
		before := sim.RefreshCount()
		sim.ExpireTokens()
		expireUpstreamTokens(t, gw.DBURL)
		expireAccessTokens(t, gw.DBURL)
		adminClient.source.expire()
		mustSucceed(t, callTool(t, adminClient.cs, listCustomers, nil), "list_customers after expiry")
		if got := sim.RefreshCount() - before; got != 1 {
			t.Errorf("%d upstream refreshes, want 1", got)
		}
		if adminClient.browser.runs != 1 {
			t.Errorf("signed in %d times, want 1", adminClient.browser.runs)
		}
	})

	t.Run("a dead ERP refresh token leads to a new sign-in", func(t *testing.T) {
		sim.RevokeRefreshTokens(admin.Username)
		sim.ExpireTokens()
		expireUpstreamTokens(t, gw.DBURL)
		res := callTool(t, adminClient.cs, listCustomers, nil)
		if !res.IsError || res.errorCode() != "AUTH_EXPIRED" {
			t.Fatalf("call with a dead refresh token: %s", res.Text)
		}
		mustSucceed(t, callTool(t, adminClient.cs, listCustomers, nil), "list_customers after re-authorisation")
		if adminClient.browser.runs != 2 {
			t.Errorf("signed in %d times, want 2", adminClient.browser.runs)
		}
	})

	gate := func(t *testing.T, user acumaticatest.User) (*headlessBrowser, error) {
		b := newHeadlessBrowser(t, e2eRedirectURI, acumaticaLogin(user))
		_, err := tryConnectOAuth(t, mcpURL, b)
		return b, err
	}
	denials := func(reason string) int {
		return queryInt(t, gw.DBURL, `SELECT count(*) FROM auth_events WHERE event = 'login_denied' AND reason = $1`, reason)
	}
	t.Run("canary 403 shows access denied", func(t *testing.T) {
		before := denials("access_denied")
		b, err := gate(t, noCanary)
		if err == nil {
			t.Fatal("a user who cannot read the canary was let in")
		}
		p := b.LastPage()
		if p.Status != http.StatusForbidden || !strings.Contains(p.Body, "Access denied") || !strings.Contains(p.Body, "administrator") {
			t.Errorf("HTTP %d: %s", p.Status, pageText(p.Body))
		}
		if denials("access_denied") == before {
			t.Error("no login_denied/access_denied event")
		}
	})
	for _, status := range []int{http.StatusNotFound, http.StatusInternalServerError} {
		t.Run("canary "+http.StatusText(status)+" shows a configuration error", func(t *testing.T) {
			before := denials("access_check_misconfigured")
			sim.SetFault(acumaticatest.Fault{PathPrefix: "/t/" + sim.Tenant() + "/api/odata/gi/MCPAccess", Status: status, Body: `{"message":"fault"}`})
			defer sim.ClearFaults()
			b, err := gate(t, admin)
			if err == nil {
				t.Fatal("sign-in went through a broken access gate")
			}
			p := b.LastPage()
			if p.Status != http.StatusBadGateway || !strings.Contains(p.Body, "Configuration error") || !strings.Contains(p.Body, "OData") {
				t.Errorf("HTTP %d: %s", p.Status, pageText(p.Body))
			}
			if denials("access_check_misconfigured") == before {
				t.Error("no login_denied/access_check_misconfigured event")
			}
		})
	}
}
