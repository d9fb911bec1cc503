package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestOAuthSecretsNeverLogged walks the people's path with debug logging
// (sign-in, calls, silent refreshes, a failed code exchange at the ERP,
// replayed and made-up codes and tokens at the token endpoint, a dead ERP
// refresh token) and searches the logs, the sign-in events and the usage
// events for every secret that passed through erpgate.
func TestOAuthSecretsNeverLogged(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", map[string]string{"ERPGATE_LOG_LEVEL": "debug"})
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	client := sim.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(t.Context(), site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
	user := userWithRole(t, sim, "all-companies")
	alex := connectOAuth(t, site.MCPURL, frappeLogin(user))
	mustSucceed(t, callTool(t, alex.cs, "get_current_user", nil), "get_current_user")
	first := *alex.source.current()

	// Silent refreshes of erpgate's token and the ERP's.
	sim.ExpireTokens()
	expireUpstreamTokens(t, gw.DBURL)
	expireAccessTokens(t, gw.DBURL)
	alex.source.expire()
	mustSucceed(t, callTool(t, alex.cs, "get_current_user", nil), "get_current_user after expiry")
	second := *alex.source.current()

	// A sign-in whose code exchange the ERP fails.
	sim.SetFault(frappetest.Fault{PathPrefix: "/api/method/frappe.integrations.oauth2.get_token", Status: 500})
	failed := newHeadlessBrowser(t, e2eRedirectURI, frappeLogin(user))
	if _, err := tryConnectOAuth(t, site.MCPURL, failed); err == nil {
		t.Fatal("a sign-in succeeded although the ERP failed the code exchange")
	}
	sim.ClearFaults()

	// A dead ERP refresh token.
	sim.RevokeRefreshTokens(user.Email)
	sim.ExpireTokens()
	expireUpstreamTokens(t, gw.DBURL)
	if res := callTool(t, alex.cs, "list_companies", nil); !res.IsError || res.errorCode() != "AUTH_EXPIRED" {
		t.Fatalf("a call with a dead ERP refresh token: %s", res.Text)
	}

	// The token endpoint is sent a spent code with a made-up verifier, a
	// made-up code, and the refresh token already exchanged.
	const madeUpVerifier = "verifier-5a1c7e0b9d2f4e6a8c3b1d7f9e2a4c6b8d0f1e3a5c"
	const madeUpCode = "ory_ac_madeUpCode7c4e1a9b2d6f8e0c3a5b7d9f1e2c4a6b.sig"
	cfg := alex.source.cfg
	for _, form := range []url.Values{
		{"grant_type": {"authorization_code"}, "code": {alex.browser.codes[0]}, "code_verifier": {madeUpVerifier}, "client_id": {cfg.ClientID}, "redirect_uri": {e2eRedirectURI}},
		{"grant_type": {"authorization_code"}, "code": {madeUpCode}, "code_verifier": {madeUpVerifier}, "client_id": {cfg.ClientID}, "redirect_uri": {e2eRedirectURI}},
		{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}, "client_id": {cfg.ClientID}},
	} {
		resp, err := http.PostForm(cfg.Endpoint.TokenURL, form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Fatalf("token request %s answered %d", form.Get("grant_type"), resp.StatusCode)
		}
	}

	secrets := map[string]string{
		"OAuth client secret":        client.Secret,
		"user's password":            user.Password,
		"made-up code verifier":      madeUpVerifier,
		"made-up code":               madeUpCode,
		"first access token":         first.AccessToken,
		"first refresh token":        first.RefreshToken,
		"refreshed access token":     second.AccessToken,
		"refreshed refresh token":    second.RefreshToken,
		"erpgate's first code":       alex.browser.codes[0],
		"erpgate's code (refreshed)": alex.browser.codes[len(alex.browser.codes)-1],
	}
	// The ERP's codes, as they came back to erpgate's callback.
	for _, b := range []*headlessBrowser{alex.browser, failed} {
		for _, p := range b.Pages {
			if u, err := url.Parse(p.URL); err == nil && strings.HasSuffix(u.Path, "/callback") && u.Query().Get("code") != "" {
				secrets["ERP code at "+p.URL] = u.Query().Get("code")
			}
		}
	}
	if len(secrets) < 12 {
		t.Fatalf("only %d secrets collected; the ERP's codes were not seen", len(secrets))
	}
	var events, usage string
	queryRow(t, gw.DBURL, `SELECT coalesce(string_agg(e::text, E'\n'), '') FROM auth_events e`, nil, &events)
	queryRow(t, gw.DBURL, `SELECT coalesce(string_agg(u::text, E'\n'), '') FROM usage_events u`, nil, &usage)
	logs := gw.Logs.String()
	if !strings.Contains(logs, "ERP code exchange failed") || !strings.Contains(events, "grants_revoked") {
		t.Fatalf("the scenario did not fail the code exchange and revoke the grants; events:\n%s", events)
	}
	for what, s := range secrets {
		if s == "" {
			t.Fatalf("%s is empty", what)
		}
		for where, text := range map[string]string{"logs": logs, "auth_events": events, "usage_events": usage} {
			if strings.Contains(text, s) {
				t.Errorf("the %s contain the %s", where, what)
			}
		}
	}
}
