package frappe

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
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

// Frappe is its own OAuth 2 provider (frappe.integrations.oauth2; see
// shared/erp-api/frappe/api-facts.md §2.2). Users sign in with the site's OAuth Client; erpgate uses
// PKCE S256 (Frappe accepts it and checks the verifier) and the user is
// identified by openid_profile.
var _ connector.UpstreamOAuth = (*Connector)(nil)

const (
	oauthMethodPrefix = "/api/method/frappe.integrations.oauth2."
	// oauthScope is the OAuth Client's default scope set: "all" for the
	// REST API as the user, "openid" for openid_profile.
	oauthScope = "all openid"
)

// tokenConfig is the site's OAuth client as golang.org/x/oauth2 sees it.
// AuthStyleInParams puts client_id (and the secret, when one is held) in
// the form body: Frappe's global header check treats "Authorization:
// Basic" as an API key pair and answers 401 before the OAuth code runs.
// Frappe v15 does not check the secret there; later versions may.
func tokenConfig(site connector.Site, client connector.OAuthClient, redirectURI string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     client.ID,
		ClientSecret: client.Secret.Reveal(),
		Endpoint: oauth2.Endpoint{
			AuthURL:   site.URL(oauthMethodPrefix+"authorize", nil),
			TokenURL:  site.URL(oauthMethodPrefix+"get_token", nil),
			AuthStyle: oauth2.AuthStyleInParams,
		},
		RedirectURL: redirectURI,
		Scopes:      strings.Fields(oauthScope),
	}
}

// AuthorizationURL is Frappe's authorize method with PKCE S256.
func (*Connector) AuthorizationURL(site connector.Site, client connector.OAuthClient, req connector.AuthorizationRequest) (string, error) {
	if client.ID == "" {
		return "", fmt.Errorf("frappe: authorization URL for %s: the OAuth connection has no client_id", site.Slug)
	}
	return tokenConfig(site, client, req.RedirectURI).AuthCodeURL(req.State,
		oauth2.SetAuthURLParam("code_challenge", req.CodeChallenge),
		oauth2.SetAuthURLParam("code_challenge_method", "S256")), nil
}

// ExchangeCode redeems a code at get_token with the PKCE verifier.
func (*Connector) ExchangeCode(ctx context.Context, site connector.Site, client connector.OAuthClient, hc *http.Client, code, redirectURI, codeVerifier string) (connector.UpstreamToken, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	t, err := tokenConfig(site, client, redirectURI).Exchange(ctx, code, oauth2.VerifierOption(codeVerifier))
	if err == nil {
		idToken, _ := t.Extra("id_token").(string)
		err = checkIDTokenSignature(idToken, client)
	} else {
		err = tokenError(ctx, err)
	}
	var tok connector.UpstreamToken
	if err == nil {
		tok, err = connector.UpstreamTokenOf(t)
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
// to check. golang.org/x/oauth2 does not read id_tokens, hence this.
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
//
// So does a 403: get_token runs as Guest, and a PermissionError there is
// Frappe failing to read the token's own documents, as every refresh on
// Frappe 15.94.1 does (frappe/frappe issue 36132: "No permission for
// User"). Repeating the refresh never helps; a new sign-in (a code grant)
// does, so the user is asked for one rather than told they lack a right.
func (*Connector) RefreshToken(ctx context.Context, site connector.Site, client connector.OAuthClient, hc *http.Client, refreshToken secrets.Secret) (connector.UpstreamToken, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	t, err := tokenConfig(site, client, "").TokenSource(ctx, &oauth2.Token{RefreshToken: refreshToken.Reveal()}).Token()
	if re := (*oauth2.RetrieveError)(nil); errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusForbidden {
		return connector.UpstreamToken{}, fmt.Errorf("frappe: refresh token on %s: %w (the ERP refused the refresh with HTTP 403; it cannot renew this sign-in)", site.Slug, connector.ErrRefreshTokenDead)
	}
	if err != nil {
		return connector.UpstreamToken{}, fmt.Errorf("frappe: refresh token on %s: %w", site.Slug, tokenError(ctx, err))
	}
	tok, err := connector.UpstreamTokenOf(t)
	if err != nil {
		return connector.UpstreamToken{}, fmt.Errorf("frappe: refresh token on %s: %w", site.Slug, err)
	}
	return tok, nil
}

// upstreamToken is a token get_token issued. An answer without a new
// refresh token keeps the one presented (golang.org/x/oauth2 does so).
// tokenError classifies a failed token request. A *oauth2.RetrieveError's
// own message quotes the ERP's body, which may echo what erpgate sent (the
// client secret, the code, the refresh token): it is never wrapped or
// printed, and the ERP's body is not read for detail here.
func tokenError(ctx context.Context, err error) error {
	var re *oauth2.RetrieveError
	var ue *url.Error
	switch {
	case errors.As(err, &re) && re.Response.StatusCode == http.StatusBadRequest && deadGrant(re.ErrorCode):
		// The code or refresh token is unknown, used, revoked or was issued
		// to another client: it will never work again.
		return fmt.Errorf("%w (%s)", connector.ErrRefreshTokenDead, re.ErrorCode)
	case re != nil && re.Response.StatusCode == http.StatusNotFound && missingTokenDocument(re.Body):
		// Frappe v15 looks the refresh token (and the client) up with
		// frappe.get_doc, so one that is revoked or unknown is a
		// DoesNotExistError (404), not invalid_grant. Its message quotes
		// the token: only the exception type is read.
		return fmt.Errorf("%w (the ERP has no such token or OAuth client any more: it was revoked or removed)", connector.ErrRefreshTokenDead)
	case re != nil && re.Response.StatusCode/100 == 2:
		return invalidResponse("the ERP's token endpoint answered with an error instead of a token")
	case re != nil:
		return upstreamError(re.Response.StatusCode, re.Response.Header, nil)
	case errors.As(err, &ue):
		// The outbound transport's own error (refused destination, timeout),
		// without the URL: a refused redirect's Location may quote the form.
		return outbound.WithoutURL(err)
	case ctx.Err() != nil:
		return ctx.Err()
	case strings.HasPrefix(err.Error(), "oauth2: cannot fetch token:"):
		// Reading the body failed; the library flattens that error to text.
		return toolerr.New(toolerr.UpstreamUnavailable, "the ERP's token endpoint broke off its answer")
	}
	// No access token, or a body that is not a token.
	return invalidResponse("the ERP's token endpoint answered without an access token")
}

// missingTokenDocument reports whether a get_token answer is Frappe's
// DoesNotExistError for a document it looked up (the OAuth Bearer Token
// of the refresh token, or the OAuth Client): a thrown "not found" with a
// message, unlike the bare one of an unknown route.
func missingTokenDocument(body []byte) bool {
	var fe frappeError
	return json.Unmarshal(body, &fe) == nil && fe.ExcType == "DoesNotExistError" && fe.ServerMessages != ""
}

// deadGrant reports whether an OAuth error code says the grant presented
// (code, refresh token, or the client it was issued to) is refused for good.
func deadGrant(code string) bool {
	return code == "invalid_grant" || code == "invalid_client" || code == "unauthorized_client"
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
		// Without the URL: a refused redirect's Location may quote the
		// token the request carried, and sign-in pages log this error.
		return connector.UpstreamUser{}, fmt.Errorf("frappe: identify user on %s: %w", site.Slug, outbound.WithoutURL(err))
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
