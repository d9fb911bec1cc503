package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e/signin"
)

// redirectURI is the MCP client's redirect URI. Nothing listens there: the
// headless browser stops when it is sent to it.
const redirectURI = "http://127.0.0.1:9/callback"

// SignIn connects to the site's /mcp as a person, the way an MCP client
// does: the official SDK's OAuth handler (discovery, dynamic client
// registration, PKCE, token exchange) with a headless browser in place of
// the person. The browser fills the forms it meets: the ERP's sign-in form
// with fields, under the names the connector's simulator gives its inputs
// (the connector's own hook, e.g. {"usr": user, "pwd": password} for
// Frappe), and erpgate's consent page, which it accepts. The session is
// closed when the gateway stops.
func (s *Site) SignIn(t testing.TB, fields map[string]string) *Session {
	t.Helper()
	browser := signin.NewBrowser(redirectURI, fields)
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirectURI}, ClientName: "erpgate e2e kit", TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"},
		}},
		RedirectURL: redirectURI,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			final, err := browser.Run(ctx, "GET", args.URL, nil)
			if err != nil {
				return nil, err
			}
			q := final.Query()
			if e := q.Get("error"); e != "" {
				return nil, fmt.Errorf("the sign-in failed: %s: %s", e, q.Get("error_description"))
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "erpgate-e2e-kit", Version: "1"}, nil)
	ctx, cancel := callContext()
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.MCPURL, OAuthHandler: handler, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("sign in at %s: %v (last page: %s)", s.MCPURL, err, signin.PageText(browser.LastPage().Body))
	}
	return s.gw.track(cs)
}
