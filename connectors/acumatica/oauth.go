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
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// OAuthScope is what a user's sign-in asks for. The plain "api" scope is
// load-bearing: Acumatica then ties one server session (one API-user seat)
// to each access token and closes it when the token expires. Under
// "api:concurrent_access" every cookieless request would open a new
// session and exhaust the licence's seats in seconds
// (shared/erp-api/acumatica/api-facts.md). Never add it.
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

// tokenConfig is the site's OAuth client as golang.org/x/oauth2 sees it.
// AuthStyleInParams puts the client credentials in the form, as the
// Acumatica documentation shows. scope is sent by AuthorizationURL and the
// password grant; the code and refresh grants send none.
func tokenConfig(site connector.Site, client connector.OAuthClient, redirectURI, scope string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     client.ID,
		ClientSecret: client.Secret.Reveal(),
		Endpoint: oauth2.Endpoint{
			AuthURL:   site.URL("/identity/connect/authorize", nil),
			TokenURL:  site.URL("/identity/connect/token", nil),
			AuthStyle: oauth2.AuthStyleInParams,
		},
		RedirectURL: redirectURI,
		Scopes:      strings.Fields(scope),
	}
}

// AuthorizationURL is /identity/connect/authorize with PKCE S256.
func (OAuth) AuthorizationURL(site connector.Site, client connector.OAuthClient, req connector.AuthorizationRequest) (string, error) {
	if client.ID == "" {
		return "", fmt.Errorf("acumatica: authorization URL for %s: the OAuth connection has no client_id", site.Slug)
	}
	return tokenConfig(site, client, req.RedirectURI, OAuthScope).AuthCodeURL(req.State,
		oauth2.SetAuthURLParam("code_challenge", req.CodeChallenge),
		oauth2.SetAuthURLParam("code_challenge_method", "S256")), nil
}

// ExchangeCode redeems a code with the PKCE verifier.
func (OAuth) ExchangeCode(ctx context.Context, site connector.Site, client connector.OAuthClient, hc *http.Client, code, redirectURI, codeVerifier string) (connector.UpstreamToken, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	t, err := tokenConfig(site, client, redirectURI, "").Exchange(ctx, code, oauth2.VerifierOption(codeVerifier))
	if err != nil {
		err = grantError(ctx, err, client.Secret.Reveal(), code, codeVerifier)
		return connector.UpstreamToken{}, fmt.Errorf("acumatica: exchange code on %s: %w", site.Slug, err)
	}
	tok, err := connector.UpstreamTokenOf(t)
	if err != nil {
		return connector.UpstreamToken{}, fmt.Errorf("acumatica: exchange code on %s: %w", site.Slug, err)
	}
	return tok, nil
}

// RefreshToken uses the refresh_token grant. Acumatica rotates refresh
// tokens: the presented one dies on use, which is why the platform
// serialises refreshes per user.
func (OAuth) RefreshToken(ctx context.Context, site connector.Site, client connector.OAuthClient, hc *http.Client, refreshToken secrets.Secret) (connector.UpstreamToken, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	t, err := tokenConfig(site, client, "", "").TokenSource(ctx, &oauth2.Token{RefreshToken: refreshToken.Reveal()}).Token()
	if err != nil {
		err = grantError(ctx, err, client.Secret.Reveal(), refreshToken.Reveal())
		return connector.UpstreamToken{}, fmt.Errorf("acumatica: refresh token on %s: %w", site.Slug, err)
	}
	tok, err := connector.UpstreamTokenOf(t)
	if err != nil {
		return connector.UpstreamToken{}, fmt.Errorf("acumatica: refresh token on %s: %w", site.Slug, err)
	}
	return tok, nil
}

// upstreamToken is a token IdentityServer issued. An answer without a new
// refresh token keeps the one presented (golang.org/x/oauth2 does so).
// grantError classifies a failed code or refresh grant; sent are the
// secrets the request carried.
func grantError(ctx context.Context, err error, sent ...string) error {
	re, err := tokenAnswer(ctx, err)
	if re == nil {
		return err
	}
	status := re.Response.StatusCode
	switch {
	case seatsTaken(re):
		// Before invalid_grant: a refusal for want of a seat may come
		// with that code, and the grant is as alive as before.
		return connector.HTTPError(http.StatusTooManyRequests, "Acumatica refused the sign-in: its licence's API users are all in use (API Login Limit); try again later", 0)
	case status == http.StatusBadRequest && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client"):
		return fmt.Errorf("%w (%s)", connector.ErrRefreshTokenDead, re.ErrorCode)
	case refusedCredentials(status, re.Body):
		// The user's password changed or the user was disabled: the grant
		// is as dead as after invalid_grant (issue 15 item 7).
		return fmt.Errorf("%w (Acumatica: %q)", connector.ErrRefreshTokenDead, refusedDetail(re, sent...))
	case status >= 500:
		return toolerr.New(toolerr.UpstreamUnavailable, "Acumatica's token endpoint failed with HTTP %d", status)
	}
	return toolerr.New(toolerr.UpstreamInvalidResponse, "Acumatica's token endpoint answered HTTP %d without a token", status)
}

// tokenAnswer splits a failed token request: the ERP's refusal, or
// (re == nil) the error to return. A *oauth2.RetrieveError's own message
// quotes the ERP's body, which may echo what erpgate sent (the client
// secret, the code, a token, the password): it is never wrapped or
// printed. The library reads the answer itself (at most 1 MiB) instead of
// outbound.ReadBody.
func tokenAnswer(ctx context.Context, err error) (re *oauth2.RetrieveError, _ error) {
	var ue *url.Error
	switch {
	case errors.As(err, &re):
		return re, nil
	case errors.As(err, &ue):
		// The outbound transport's own error (refused destination, timeout),
		// without the URL: a refused redirect's Location may quote the form.
		return nil, outbound.WithoutURL(err)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case strings.HasPrefix(err.Error(), "oauth2: cannot fetch token:"):
		// Reading the body failed; the library flattens that error to text.
		return nil, toolerr.New(toolerr.UpstreamUnavailable, "Acumatica's token endpoint broke off its answer")
	}
	// HTTP 2xx without an access token, or with a body that is not JSON:
	// the library keeps no body for those, so a 2xx page saying "API Login
	// Limit" reads as an unusable answer here.
	return nil, toolerr.New(toolerr.UpstreamInvalidResponse, "Acumatica's token endpoint answered without a token")
}

// refusedDetail is Acumatica's message refusing a sign-in, left out when
// the answer quotes one of the secrets erpgate sent.
func refusedDetail(re *oauth2.RetrieveError, sent ...string) string {
	detail, _ := credentialsRefused(re.Response.StatusCode, re.Body)
	if quotesSent(detail, re.Body, sent...) {
		return withheldDetail
	}
	return detail
}

// withheldDetail stands for an ERP message that quoted a secret.
const withheldDetail = "a message quoting what erpgate sent, left out"

// quotesSent reports whether an answer (its cleaned detail, its body, or
// the whole message the detail was cut from) quotes one of the secrets
// erpgate sent: as erpgate holds it, or as the request carried it
// ("p%40ss" for "p@ss" in a form). The whole message counts because the
// body may spell a secret with JSON escapes (\" for a quote) while the
// detail, cut at 300 characters, holds only its beginning.
func quotesSent(detail string, body []byte, sent ...string) bool {
	var e acumaticaError
	_ = json.Unmarshal(body, &e)
	texts := []string{detail, string(body)}
	for _, m := range []string{e.ExceptionMessage, e.Message} {
		texts = append(texts, m, strings.Join(strings.Fields(m), " "))
	}
	for _, s := range sent {
		if s == "" {
			continue
		}
		for _, spelt := range []string{s, url.QueryEscape(s), url.PathEscape(s), strings.Join(strings.Fields(s), " ")} {
			for _, text := range texts {
				if spelt != "" && strings.Contains(text, spelt) {
					return true
				}
			}
		}
	}
	return false
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
		// Without the URL: a refused redirect's Location may quote the
		// token the request carried, and sign-in pages log this error.
		return connector.UpstreamUser{}, fmt.Errorf("acumatica: identify user on %s: %w", site.Slug, outbound.WithoutURL(err))
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
