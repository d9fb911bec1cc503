package frappe

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector"
)

// TestPreflightClientWithRolesTheAPIUserLacks: an OAuth Client whose
// Allowed Roles the API user has none of answers authorize with
// invalid_client_id, the same answer as for a client that does not exist
// (validate_client_id checks both). The redirect URI check must not tell
// the operator that the client does not exist and to create one: it
// exists, and the fix is its Allowed Roles (or a missing client).
func TestPreflightClientWithRolesTheAPIUserLacks(t *testing.T) {
	s := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(s.Close)
	redirect := "https://gw.example/oauth/callback"
	api := s.User("no-accounting") // only Sales User
	st := siteOf(t, s, "")
	hc := factory.Client(st, connector.AuthorizerFunc(func(r *http.Request) error {
		r.Header.Set("Authorization", "token "+api.APIKey+":"+api.APISecret)
		return nil
	}))
	check := func(client frappetest.OAuthClient) connector.PreflightCheck {
		return checkRedirectURI(context.Background(), New(), st, connector.PreflightInput{API: hc,
			OAuthClient: &connector.OAuthClient{ID: client.ID}, RedirectURI: redirect})
	}

	open := s.AddClient(frappetest.OAuthClient{AppName: "erpgate", RedirectURIs: []string{redirect}})
	if got := check(open); got.Status != connector.CheckPass {
		t.Fatalf("client open to every desk user: %+v", got)
	}

	restricted := s.AddClient(frappetest.OAuthClient{AppName: "erpgate", RedirectURIs: []string{redirect}, AllowedRoles: []string{"Accounts User"}})
	got := check(restricted)
	if got.Status != connector.CheckFail {
		t.Fatalf("client restricted to Accounts User: %+v", got)
	}
	if !strings.Contains(got.Found, "Allowed Roles") || !strings.Contains(got.Fix, "Allowed Roles") {
		t.Errorf("found %q, fix %q: the check does not name the client's Allowed Roles", got.Found, got.Fix)
	}
	if strings.HasPrefix(got.Found, "Frappe has no OAuth Client") {
		t.Errorf("found %q: the client exists", got.Found)
	}

	missing := check(frappetest.OAuthClient{ID: "c0ffee0002"})
	if missing.Status != connector.CheckFail || !strings.Contains(missing.Fix, "/app/oauth-client/new") {
		t.Errorf("missing client: %+v", missing)
	}
}
