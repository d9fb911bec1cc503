package frappe

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
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

// Frappe is its own OAuth 2 provider (frappe.integrations.oauth2; see the
// API facts §2.2). Users sign in with the site's OAuth Client; erpgate uses
// PKCE S256 (Frappe accepts it and checks the verifier) and the user is
// identified by openid_profile.
var _ connector.UpstreamOAuth = (*Connector)(nil)

const (
	oauthMethodPrefix = "/api/method/frappe.integrations.oauth2."
	// oauthScope is the OAuth Client's default scope set: "all" for the
	// REST API as the user, "openid" for openid_profile.
	oauthScope = "all openid"
)

// AuthorizationURL is Frappe's authorize method with PKCE S256.
func (*Connector) AuthorizationURL(site connector.Site, client connector.OAuthClient, req connector.AuthorizationRequest) (string, error) {
	if client.ID == "" {
		return "", fmt.Errorf("frappe: authorization URL for %s: the OAuth connection has no client_id", site.Slug)
	}
	q := url.Values{
		"client_id":             {client.ID},
		"response_type":         {"code"},
		"redirect_uri":          {req.RedirectURI},
		"scope":                 {oauthScope},
		"state":                 {req.State},
		"code_challenge":        {req.CodeChallenge},
		"code_challenge_method": {"S256"},
	}
	return site.URL(oauthMethodPrefix+"authorize", q), nil
}

// ExchangeCode redeems a code at get_token. client_id travels in the form
// body: Frappe's global header check treats "Authorization: Basic" as an
// API key pair and answers 401 before the OAuth code runs.
func (*Connector) ExchangeCode(ctx context.Context, site connector.Site, client connector.OAuthClient, hc *http.Client, code, redirectURI, codeVerifier string) (connector.UpstreamToken, error) {
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {redirectURI},
		"client_id":     {client.ID},
		"code_verifier": {codeVerifier},
	}
	addSecret(form, client)
	tok, idToken, err := postToken(ctx, site, hc, form)
	if err == nil {
		err = checkIDTokenSignature(idToken, client)
	}
	if err != nil {
		return connector.UpstreamToken{}, fmt.Errorf("frappe: exchange code on %s: %w", site.Slug, err)
	}
	return tok, nil
}

// checkIDTokenSignature is the one check of the client secret Frappe v15
// allows: get_token never compares client_secret, but with the openid scope
// it signs the id_token it returns (HS256) with the client's secret
// (frappe/oauth.py, finalize_id_token). A signature that the secret erpgate
// holds does not verify means that secret is wrong: it is refused like
// invalid_client. No id_token, no secret held or another algorithm: nothing
// to check.
func checkIDTokenSignature(idToken string, client connector.OAuthClient) error {
	if idToken == "" || !client.Secret.IsSet() {
		return nil
	}
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		return invalidResponse("the ERP's id_token is not a JWT")
	}
	rawHeader, err := base64.RawURLEncoding.DecodeString(parts[0])
	var header struct {
		Alg string `json:"alg"`
	}
	if err != nil || json.Unmarshal(rawHeader, &header) != nil {
		return invalidResponse("the ERP's id_token has an unreadable header")
	}
	if header.Alg != "HS256" {
		return nil
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return invalidResponse("the ERP's id_token has an unreadable signature")
	}
	mac := hmac.New(sha256.New, []byte(client.Secret.Reveal()))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return fmt.Errorf("%w (invalid_client: the id_token is not signed with this client secret, so the secret is wrong)", connector.ErrRefreshTokenDead)
	}
	return nil
}

// RefreshToken uses the refresh_token grant; Frappe issues a new refresh
// token each time. invalid_grant means the refresh token is dead.
func (*Connector) RefreshToken(ctx context.Context, site connector.Site, client connector.OAuthClient, hc *http.Client, refreshToken secrets.Secret) (connector.UpstreamToken, error) {
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {refreshToken.Reveal()},
		"client_id":     {client.ID},
	}
	addSecret(form, client)
	tok, _, err := postToken(ctx, site, hc, form)
	if err != nil {
		return connector.UpstreamToken{}, fmt.Errorf("frappe: refresh token on %s: %w", site.Slug, err)
	}
	return tok, nil
}

// addSecret sends the client secret in the body, as RFC 6749 §2.3.1
// allows; Frappe v15 does not check it, later versions may.
func addSecret(form url.Values, client connector.OAuthClient) {
	if client.Secret.IsSet() {
		form.Set("client_secret", client.Secret.Reveal())
	}
}

// tokenResponse is get_token's top-level JSON (no "message" wrapper).
type tokenResponse struct {
	AccessToken  string          `json:"access_token"`
	RefreshToken string          `json:"refresh_token"`
	ExpiresIn    json.Number     `json:"expires_in"`
	Scope        string          `json:"scope"`
	TokenType    string          `json:"token_type"`
	IDToken      string          `json:"id_token"`
	Error        string          `json:"error"`
	Description  json.RawMessage `json:"error_description"`
}

// postToken calls get_token and returns the token and, when Frappe sent
// one, the id_token.
func postToken(ctx context.Context, site connector.Site, hc *http.Client, form url.Values) (connector.UpstreamToken, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, site.URL(oauthMethodPrefix+"get_token", nil), strings.NewReader(form.Encode()))
	if err != nil {
		return connector.UpstreamToken{}, "", fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return connector.UpstreamToken{}, "", err
	}
	body, err := outbound.ReadBody(resp)
	if err != nil {
		return connector.UpstreamToken{}, "", err
	}
	var tr tokenResponse
	_ = json.Unmarshal(body, &tr)
	switch {
	case resp.StatusCode == http.StatusOK && tr.AccessToken != "":
	case resp.StatusCode == http.StatusBadRequest && (tr.Error == "invalid_grant" || tr.Error == "invalid_client" || tr.Error == "unauthorized_client"):
		// The code or refresh token is unknown, used, revoked or was issued
		// to another client: it will never work again.
		return connector.UpstreamToken{}, "", fmt.Errorf("%w (%s)", connector.ErrRefreshTokenDead, tr.Error)
	case resp.StatusCode == http.StatusOK:
		return connector.UpstreamToken{}, "", invalidResponse("the ERP's token endpoint answered without an access token")
	default:
		return connector.UpstreamToken{}, "", upstreamError(resp.StatusCode, resp.Header, body)
	}
	tok := connector.UpstreamToken{
		AccessToken:  secrets.Secret(tr.AccessToken),
		RefreshToken: secrets.Secret(tr.RefreshToken),
		Scope:        tr.Scope,
	}
	if n, err := tr.ExpiresIn.Int64(); err == nil && n > 0 {
		tok.ExpiresIn = time.Duration(n) * time.Second
	}
	return tok, tr.IDToken, nil
}

// profile is openid_profile's top-level JSON.
type profile struct {
	Sub   string `json:"sub"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Identify reads openid_profile. The user id is the Frappe User name, an
// e-mail address, which is what Frappe's permissions are keyed by; sub (a
// per-user hash) is the fallback.
func (*Connector) Identify(ctx context.Context, site connector.Site, hc *http.Client) (connector.UpstreamUser, error) {
	var p profile
	if err := newClient(site, hc).getJSON(ctx, oauthMethodPrefix+"openid_profile", nil, &p); err != nil {
		return connector.UpstreamUser{}, fmt.Errorf("frappe: identify user on %s: %w", site.Slug, err)
	}
	user := connector.UpstreamUser{ID: strings.TrimSpace(p.Email), DisplayName: strings.TrimSpace(p.Name)}
	if user.ID == "" {
		user.ID = strings.TrimSpace(p.Sub)
	}
	if user.ID == "" {
		return connector.UpstreamUser{}, fmt.Errorf("frappe: identify user on %s: %w", site.Slug,
			toolerr.New(toolerr.UpstreamInvalidResponse, "openid_profile named no user"))
	}
	return user, nil
}

// TokenAuthorizer sends "Authorization: Bearer <token>".
func (*Connector) TokenAuthorizer(accessToken secrets.Secret) connector.Authorizer {
	header := "Bearer " + accessToken.Reveal()
	return connector.AuthorizerFunc(func(r *http.Request) error {
		r.Header.Set("Authorization", header)
		return nil
	})
}
