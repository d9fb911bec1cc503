package adminapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// fakeOAuthERP is fakeERP with user sign-in (kind "fakeoauth").
type fakeOAuthERP struct{ fakeERP }

var _ connector.UpstreamOAuth = fakeOAuthERP{}

func (fakeOAuthERP) Kind() string { return "fakeoauth" }
func (fakeOAuthERP) AuthorizationURL(connector.Site, connector.OAuthClient, connector.AuthorizationRequest) (string, error) {
	return "", nil
}
func (fakeOAuthERP) ExchangeCode(context.Context, connector.Site, connector.OAuthClient, *http.Client, string, string, string) (connector.UpstreamToken, error) {
	return connector.UpstreamToken{}, nil
}
func (fakeOAuthERP) RefreshToken(context.Context, connector.Site, connector.OAuthClient, *http.Client, secrets.Secret) (connector.UpstreamToken, error) {
	return connector.UpstreamToken{}, nil
}
func (fakeOAuthERP) Identify(context.Context, connector.Site, *http.Client) (connector.UpstreamUser, error) {
	return connector.UpstreamUser{}, nil
}
func (fakeOAuthERP) TokenAuthorizer(secrets.Secret) connector.Authorizer { return nil }

// An OAuth connection takes client_id and client_secret, is stored sealed
// without a round trip to the ERP, and never shows the secret.
func TestPutOAuthConnection(t *testing.T) {
	h := newHarness(t)
	expect(t, h.call(http.MethodPost, "/api/v1/sites", map[string]any{
		"slug": "signin", "kind": "fakeoauth", "display_name": "Sign-in", "base_url": h.upstream.URL,
	}), http.StatusCreated, "")

	r := h.call(http.MethodPut, "/api/v1/sites/signin/connections/oauth",
		map[string]any{"credentials": map[string]string{"client_id": "abc123"}})
	expect(t, r, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(r.errorMessage(t), "client_secret") {
		t.Errorf("missing-field message = %q", r.errorMessage(t))
	}

	r = h.call(http.MethodPut, "/api/v1/sites/signin/connections/oauth",
		map[string]any{"credentials": map[string]string{"client_id": "abc123", "client_secret": "s3cr3t-value"}})
	expect(t, r, http.StatusOK, "")
	if strings.Contains(string(r.Body), "s3cr3t-value") {
		t.Fatal("the client secret was echoed")
	}
	site, err := h.store.GetSiteBySlug(context.Background(), "signin")
	if err != nil {
		t.Fatal(err)
	}
	_, fields, err := h.store.GetConnection(context.Background(), site.ID, sites.ConnectionOAuth)
	if err != nil {
		t.Fatal(err)
	}
	if fields["client_id"].Reveal() != "abc123" || fields["client_secret"].Reveal() != "s3cr3t-value" {
		t.Fatal("the stored OAuth client differs from what was sent")
	}
}
