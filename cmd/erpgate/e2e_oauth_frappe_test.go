package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// frappeOAuthSite registers sim as site slug with an OAuth connection whose
// client has the gateway's callback as its redirect URI.
func frappeOAuthSite(t testing.TB, gw *gateway, slug string, sim *frappetest.Server) devSite {
	t.Helper()
	site := gw.registerFrappe(t, slug, sim, userWithRole(t, sim, "service"))
	client := sim.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(context.Background(), site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
	return site
}

// startFrappeOAuthGateway is the set-up most tests of the OAuth door open
// with: a Frappe simulator with its seeded data, a gateway with env (nil
// for the defaults), and the simulator registered there as site acme with
// an OAuth connection (frappeOAuthSite). Both stop at test cleanup.
func startFrappeOAuthGateway(t testing.TB, env map[string]string) (*frappetest.Server, *gateway, devSite) {
	t.Helper()
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	gw := startGateway(t, "", env)
	return sim, gw, frappeOAuthSite(t, gw, "acme", sim)
}

// loopbackProxyEnv is a gateway's environment that trusts loopback as a
// proxy, so that a test's requests name their source in X-Forwarded-For.
var loopbackProxyEnv = map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"}

func frappeLogin(u frappetest.User) map[string]string {
	return map[string]string{"usr": u.Email, "pwd": u.Password}
}

// TestOAuthFrappeEndToEnd walks the whole OAuth MCP path against the Frappe
// simulator with the official SDK client: discovery, registration,
// authorization, ERP login, consent, token; tool calls as each user, with
// their own permissions; silent refresh of both erpgate's and the ERP's
// tokens; and a dead ERP refresh token leading to a new sign-in.
func TestOAuthFrappeEndToEnd(t *testing.T) {
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	all, nz, sales := userWithRole(t, sim, "all-companies"), userWithRole(t, sim, "one-company"), userWithRole(t, sim, "no-accounting")

	alex := connectOAuth(t, site.MCPURL, frappeLogin(all))

	t.Run("sign-in showed the ERP login and erpgate's consent page", func(t *testing.T) {
		var sawLogin, sawConsent bool
		for _, p := range alex.browser.Pages {
			sawLogin = sawLogin || strings.Contains(p.URL, "/login")
			if strings.Contains(p.URL, "/oauth/consent") && strings.Contains(p.Body, "erpgate e2e client") {
				sawConsent = true
				for _, want := range []string{"AI model", "logged", "redacted", "127.0.0.1:9"} {
					if !strings.Contains(p.Body, want) {
						t.Errorf("consent page lacks %q", want)
					}
				}
			}
		}
		if !sawLogin || !sawConsent {
			t.Errorf("login page seen %v, consent page seen %v", sawLogin, sawConsent)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM auth_events WHERE event = 'consent' AND erp_user = $1`, all.Email); n != 1 {
			t.Errorf("%d consent events", n)
		}
	})

	t.Run("tool calls run as the signed-in user", func(t *testing.T) {
		out := mustSucceed(t, callTool(t, alex.cs, "get_current_user", nil), "get_current_user")
		if out["user"] != all.Email || out["auth_type"] != "oauth" {
			t.Errorf("get_current_user = %v", out)
		}
		rows := walkPages(t, alex.cs, "list_companies", nil)
		if len(rows) != len(sim.Data().List("Company")) {
			t.Errorf("%s sees %d companies", all.Email, len(rows))
		}
		// The usage events name the person and the MCP client they
		// consented to, for the operator's viewer.
		deadline := time.Now().Add(10 * time.Second)
		for queryInt(t, gw.DBURL, `SELECT count(*) FROM usage_events u WHERE u.tool = 'get_current_user' AND u.erp_user = $1
			AND u.client_id <> '' AND u.client_id = (SELECT client_id FROM auth_events WHERE event = 'consent' AND erp_user = $1)`, all.Email) != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("no usage event of get_current_user names %s and the consented client", all.Email)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("permissions differ per user", func(t *testing.T) {
		ngaio := connectOAuth(t, site.MCPURL, frappeLogin(nz))
		rows := walkPages(t, ngaio.cs, "list_companies", nil)
		if len(rows) != 1 || rows[0]["name"] != nz.Companies[0] {
			t.Errorf("%s sees companies %v", nz.Email, names(rows))
		}
		sam := connectOAuth(t, site.MCPURL, frappeLogin(sales))
		res := callTool(t, sam.cs, "list_sales_invoices", nil)
		if !res.IsError || res.errorCode() != "PERMISSION_DENIED" {
			t.Errorf("%s list_sales_invoices: %s", sales.Email, res.Text)
		}
	})

	t.Run("expired tokens are refreshed silently", func(t *testing.T) {
		before := sim.RefreshCount()
		sim.ExpireTokens()
		expireUpstreamTokens(t, gw.DBURL)
		expireAccessTokens(t, gw.DBURL)
		alex.source.expire()
		out := mustSucceed(t, callTool(t, alex.cs, "get_current_user", nil), "get_current_user after expiry")
		if out["user"] != all.Email {
			t.Errorf("get_current_user = %v", out)
		}
		if got := sim.RefreshCount() - before; got != 1 {
			t.Errorf("%d upstream refreshes, want 1", got)
		}
		if alex.source.refreshes != 1 || alex.browser.runs != 1 {
			t.Errorf("client refreshed %d times and signed in %d times; want 1 and 1", alex.source.refreshes, alex.browser.runs)
		}
	})

	t.Run("a token the ERP ends early is renewed and the call repeated", func(t *testing.T) {
		before := sim.RefreshCount()
		// Only the ERP forgets the token: erpgate still holds it as valid.
		sim.ExpireTokens()
		out := mustSucceed(t, callTool(t, alex.cs, "get_current_user", nil), "get_current_user after the ERP ended the token")
		if out["user"] != all.Email {
			t.Errorf("get_current_user = %v", out)
		}
		if got := sim.RefreshCount() - before; got != 1 {
			t.Errorf("%d upstream refreshes, want 1", got)
		}
	})

	t.Run("a dead ERP refresh token leads to a new sign-in", func(t *testing.T) {
		sim.RevokeRefreshTokens(all.Email)
		sim.ExpireTokens()
		expireUpstreamTokens(t, gw.DBURL)
		res := callTool(t, alex.cs, "get_current_user", nil)
		if !res.IsError || res.errorCode() != "AUTH_EXPIRED" {
			t.Fatalf("call with a dead ERP refresh token: %s", res.Text)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM oauth_tokens WHERE subject = $1`, all.Email); n != 0 {
			t.Errorf("%d tokens of the user survive", n)
		}
		// The client's next request gets 401, signs in again (the ERP
		// session and the consent are remembered) and goes on.
		out := mustSucceed(t, callTool(t, alex.cs, "get_current_user", nil), "get_current_user after re-authorisation")
		if out["user"] != all.Email {
			t.Errorf("get_current_user = %v", out)
		}
		if alex.browser.runs != 2 {
			t.Errorf("signed in %d times, want 2", alex.browser.runs)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM auth_events WHERE event = 'grants_revoked'`); n != 1 {
			t.Errorf("%d grants_revoked events", n)
		}
	})

	t.Run("tokens in the query string are ignored", func(t *testing.T) {
		tok := alex.source.current().AccessToken
		resp := rawMCP(t, site.MCPURL+"?access_token="+tok, "")
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("query-string token: HTTP %d", resp.StatusCode)
		}
		if resp := rawMCP(t, site.MCPURL, tok); resp.StatusCode != http.StatusOK {
			t.Errorf("header token: HTTP %d", resp.StatusCode)
		}
	})
}
