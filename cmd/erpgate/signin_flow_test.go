package main

import (
	"testing"

	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e/signin"
)

// TestSignInFlowGetsTokensThatWork: the benchmark's sign-in (one
// registered client, then the browser through the ERP's login and
// erpgate's consent for each site) gets an access token that serves tool
// calls as the person on that site, and a refresh token.
func TestSignInFlowGetsTokensThatWork(t *testing.T) {
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	person := userWithRole(t, sim, "one-company")
	clientID, err := signin.Register(t.Context(), gw.URL)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := signin.SignIn(t.Context(), gw.URL, clientID, site.MCPURL, frappeLogin(person))
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken == "" || tok.ClientID != clientID {
		t.Errorf("tokens %+v", tok)
	}
	if err := callAsUser(site.MCPURL, tok.AccessToken, person.Email, 1); err != nil {
		t.Fatal(err)
	}
}
