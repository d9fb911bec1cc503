package acumatica

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// TestUnderVirtualDirectory: with the instance at /AcumaticaERP (the
// simulator 404s everything outside it), every tool works for every kind
// of caller, the service credential verifies, and the user sign-in
// (authorize, code exchange, userinfo, the canary gate, refresh) runs, all
// without one request outside the directory.
func TestUnderVirtualDirectory(t *testing.T) {
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{PathPrefix: "/AcumaticaERP"}})
	if !strings.HasSuffix(h.site.BaseURL.String(), "/AcumaticaERP") {
		t.Fatalf("site base URL %s", h.site.BaseURL)
	}
	runEveryTool(t, h)
	ctx := context.Background()

	svc, err := h.conn.APIAuthorizer(h.site, h.serviceFields())
	if err != nil {
		t.Fatal(err)
	}
	if id, err := h.conn.VerifyAPICredential(ctx, h.site, h.out.Client(h.site, svc)); err != nil || id == "" {
		t.Errorf("VerifyAPICredential = %q, %v", id, err)
	}

	redirect := "https://gateway.example/oauth/callback"
	c := h.sim.RegisterClient(redirect)
	client := connector.OAuthClient{ID: c.ID, Secret: secrets.Secret(c.Secret)}
	verifier := strings.Repeat("verifier-", 6)
	sum := sha256.Sum256([]byte(verifier))
	authURL, err := OAuth{}.AuthorizationURL(h.site, client, connector.AuthorizationRequest{
		RedirectURI: redirect, State: "st", CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	if want := h.srv.URL + "/AcumaticaERP/identity/connect/authorize?"; !strings.HasPrefix(authURL, want) {
		t.Errorf("authorization URL %s, want it under %s", authURL, want)
	}
	user := h.sim.User(acumaticatest.RoleFull)
	loc, err := acumaticatest.CompleteAuthorization(nil, authURL, user.Username, user.Password)
	if err != nil {
		t.Fatal(err)
	}
	plain := h.out.Client(h.site, nil)
	tok, err := OAuth{}.ExchangeCode(ctx, h.site, client, plain, loc.Query().Get("code"), redirect, verifier)
	if err != nil {
		t.Fatalf("ExchangeCode: %v", err)
	}
	asUser := h.out.Client(h.site, OAuth{}.TokenAuthorizer(tok.AccessToken))
	if who, err := (OAuth{}).Identify(ctx, h.site, asUser); err != nil || !strings.HasPrefix(who.ID, user.Username) {
		t.Errorf("Identify = %+v, %v", who, err)
	}
	if check, err := (OAuth{}).CheckAccess(ctx, h.site, asUser); err != nil || check.Decision != connector.AccessAllowed {
		t.Errorf("CheckAccess = %+v, %v", check, err)
	}
	if _, err := (OAuth{}).RefreshToken(ctx, h.site, client, plain, tok.RefreshToken); err != nil {
		t.Errorf("RefreshToken: %v", err)
	}
	if n := h.sim.OutsideRequests(); n != 0 {
		t.Errorf("%d requests went outside the virtual directory", n)
	}
	if n := h.sim.RequestCount("/AcumaticaERP/"); n == 0 || n != h.sim.RequestCount("") {
		t.Errorf("%d requests under the directory of %d", n, h.sim.RequestCount(""))
	}
}
