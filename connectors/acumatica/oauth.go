// Package acumatica is the Acumatica ERP connector. This part is the
// upstream sign-in (connector.UpstreamOAuth and connector.UpstreamAccessGate)
// that the OAuth MCP endpoints use: Acumatica's IdentityServer at
// /identity/connect/*, OIDC userinfo, and the canary generic inquiry read
// over OData as the access gate. The connector proper (catalogue, settings,
// API credentials) builds on it by embedding OAuth.
package acumatica

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/outbound"
	"github.com/erpgate/erpgate/platform/secrets"
	"github.com/erpgate/erpgate/platform/toolerr"
)

// OAuthScope is what a user's sign-in asks for. The plain "api" scope is
// load-bearing: Acumatica then ties one server session (one API-user seat)
// to each access token and closes it when the token expires. Under
// "api:concurrent_access" every cookieless request would open a new
// session and exhaust the licence's seats in seconds (seed 000, "The api
// scope is load-bearing"). Never add it.
const OAuthScope = "api openid profile email offline_access"

// OAuth is Acumatica's upstream sign-in. The zero value is ready to use.
type OAuth struct {
	// canary is the deployment's canary inquiry (Options.CanaryInquiry).
	canary func() string
}

var (
	_ connector.UpstreamOAuth      = OAuth{}
	_ connector.UpstreamAccessGate = OAuth{}
)

// AuthorizationURL is /identity/connect/authorize with PKCE S256.
func (OAuth) AuthorizationURL(site connector.Site, client connector.OAuthClient, req connector.AuthorizationRequest) (string, error) {
	if client.ID == "" {
		return "", fmt.Errorf("acumatica: authorization URL for %s: the OAuth connection has no client_id", site.Slug)
	}
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {client.ID},
		"redirect_uri":          {req.RedirectURI},
		"scope":                 {OAuthScope},
		"state":                 {req.State},
		"code_challenge":        {req.CodeChallenge},
		"code_challenge_method": {"S256"},
	}
	return site.URL("/identity/connect/authorize", q), nil
}

// ExchangeCode redeems a code; client credentials go in the form, as the
// Acumatica documentation shows.
func (OAuth) ExchangeCode(ctx context.Context, site connector.Site, client connector.OAuthClient, hc *http.Client, code, redirectURI, codeVerifier string) (connector.UpstreamToken, error) {
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {redirectURI},
		"code_verifier": {codeVerifier},
	}
	tok, err := postToken(ctx, site, client, hc, form)
	if err != nil {
		return connector.UpstreamToken{}, fmt.Errorf("acumatica: exchange code on %s: %w", site.Slug, err)
	}
	return tok, nil
}

// RefreshToken uses the refresh_token grant. Acumatica rotates refresh
// tokens: the presented one dies on use, which is why the platform
// serialises refreshes per user.
func (OAuth) RefreshToken(ctx context.Context, site connector.Site, client connector.OAuthClient, hc *http.Client, refreshToken secrets.Secret) (connector.UpstreamToken, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken.Reveal()}}
	tok, err := postToken(ctx, site, client, hc, form)
	if err != nil {
		return connector.UpstreamToken{}, fmt.Errorf("acumatica: refresh token on %s: %w", site.Slug, err)
	}
	return tok, nil
}

// tokenResponse is IdentityServer's token JSON.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int64  `json:"expires_in"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
}

func postToken(ctx context.Context, site connector.Site, client connector.OAuthClient, hc *http.Client, form url.Values) (connector.UpstreamToken, error) {
	form.Set("client_id", client.ID)
	if client.Secret.IsSet() {
		form.Set("client_secret", client.Secret.Reveal())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, site.URL("/identity/connect/token", nil), strings.NewReader(form.Encode()))
	if err != nil {
		return connector.UpstreamToken{}, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return connector.UpstreamToken{}, err
	}
	body, err := outbound.ReadBody(resp)
	if err != nil {
		return connector.UpstreamToken{}, err
	}
	var tr tokenResponse
	_ = json.Unmarshal(body, &tr)
	switch {
	case resp.StatusCode == http.StatusOK && tr.AccessToken != "":
		tok := connector.UpstreamToken{AccessToken: secrets.Secret(tr.AccessToken), RefreshToken: secrets.Secret(tr.RefreshToken), Scope: tr.Scope}
		if tr.ExpiresIn > 0 {
			tok.ExpiresIn = time.Duration(tr.ExpiresIn) * time.Second
		}
		return tok, nil
	case resp.StatusCode == http.StatusBadRequest && (tr.Error == "invalid_grant" || tr.Error == "invalid_client" || tr.Error == "unauthorized_client"):
		return connector.UpstreamToken{}, fmt.Errorf("%w (%s)", connector.ErrRefreshTokenDead, tr.Error)
	case refusedCredentials(resp.StatusCode, body):
		// The user's password changed or the user was disabled: the grant
		// is as dead as after invalid_grant (issue 15 item 7).
		detail, _ := credentialsRefused(resp.StatusCode, body)
		return connector.UpstreamToken{}, fmt.Errorf("%w (Acumatica: %q)", connector.ErrRefreshTokenDead, detail)
	case resp.StatusCode == http.StatusTooManyRequests:
		return connector.UpstreamToken{}, toolerr.New(toolerr.RateLimited, "Acumatica refused the sign-in: its licence's API users are all in use (API Login Limit); try again later")
	case resp.StatusCode >= 500:
		return connector.UpstreamToken{}, toolerr.New(toolerr.UpstreamUnavailable, "Acumatica's token endpoint failed with HTTP %d", resp.StatusCode)
	}
	return connector.UpstreamToken{}, toolerr.New(toolerr.UpstreamInvalidResponse, "Acumatica's token endpoint answered HTTP %d without a token", resp.StatusCode)
}

// userinfo is the OIDC userinfo JSON.
type userinfo struct {
	Sub               string `json:"sub"`
	Name              string `json:"name"`
	PreferredUsername string `json:"preferred_username"`
}

// Identify reads OIDC userinfo. The user id is the subject
// ("gibbs@U100"), stable per user and tenant.
func (OAuth) Identify(ctx context.Context, site connector.Site, hc *http.Client) (connector.UpstreamUser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, site.URL("/identity/connect/userinfo", nil), nil)
	if err != nil {
		return connector.UpstreamUser{}, fmt.Errorf("acumatica: identify user on %s: %w", site.Slug, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return connector.UpstreamUser{}, fmt.Errorf("acumatica: identify user on %s: %w", site.Slug, err)
	}
	body, err := outbound.ReadBody(resp)
	if err != nil {
		return connector.UpstreamUser{}, fmt.Errorf("acumatica: identify user on %s: %w", site.Slug, err)
	}
	var ui userinfo
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &ui) != nil || ui.Sub == "" {
		return connector.UpstreamUser{}, fmt.Errorf("acumatica: identify user on %s: %w", site.Slug,
			toolerr.New(toolerr.UpstreamInvalidResponse, "userinfo answered HTTP %d without a subject", resp.StatusCode))
	}
	name := ui.Name
	if name == "" {
		name = ui.PreferredUsername
	}
	return connector.UpstreamUser{ID: ui.Sub, DisplayName: name}, nil
}

// TokenAuthorizer sends "Authorization: Bearer <token>".
func (OAuth) TokenAuthorizer(accessToken secrets.Secret) connector.Authorizer {
	header := "Bearer " + accessToken.Reveal()
	return connector.AuthorizerFunc(func(r *http.Request) error {
		r.Header.Set("Authorization", header)
		return nil
	})
}
