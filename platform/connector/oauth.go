package connector

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// ErrRefreshTokenDead means the ERP refused a refresh token for good: it
// expired, was rotated away or was revoked. The platform then drops the
// user's stored ERP tokens and revokes their erpgate grants for the site, so
// the MCP client signs in again instead of failing on every call.
// Transient failures (network, 5xx, rate limits) must not use it.
var ErrRefreshTokenDead = errors.New("connector: the ERP refused the refresh token")

// UpstreamOAuth is implemented by a connector whose users sign in to their
// own ERP with OAuth, so that every tool call runs as them. The platform
// orchestrates the sign-in (state, browser binding, PKCE, consent) and keeps
// the tokens; the connector knows the ERP's endpoints and quirks.
//
// Every *http.Client passed in comes from the outbound transport: it only
// reaches the site's own origin. A connector never logs or wraps a token
// value into an error.
type UpstreamOAuth interface {
	// AuthorizationURL returns the ERP URL the user's browser is sent to.
	// The connector chooses the scopes: they are load-bearing (Acumatica's
	// plain "api" scope, never "api:concurrent_access", decides how licence
	// seats are used), so the platform never passes its own.
	AuthorizationURL(site Site, client OAuthClient, req AuthorizationRequest) (string, error)
	// ExchangeCode redeems an authorization code at the ERP's token
	// endpoint. An error the user can act on (the ERP refused the code) is a
	// *toolerr.Error with code AUTH_EXPIRED or PERMISSION_DENIED.
	ExchangeCode(ctx context.Context, site Site, client OAuthClient, hc *http.Client, code, redirectURI, codeVerifier string) (UpstreamToken, error)
	// RefreshToken exchanges a refresh token for a new token. ERPs rotate
	// refresh tokens: the returned RefreshToken replaces the old one (when
	// the ERP sends none, the old one stays valid and RefreshToken is empty).
	// A refresh token the ERP refuses for good is reported with an error
	// wrapping ErrRefreshTokenDead; anything else is transient.
	RefreshToken(ctx context.Context, site Site, client OAuthClient, hc *http.Client, refreshToken secrets.Secret) (UpstreamToken, error)
	// Identify asks the ERP who the token in hc belongs to (Frappe's
	// openid_profile, Acumatica's OIDC userinfo).
	Identify(ctx context.Context, site Site, hc *http.Client) (UpstreamUser, error)
	// TokenAuthorizer returns the request authorisation for an access token
	// (normally Authorization: Bearer).
	TokenAuthorizer(accessToken secrets.Secret) Authorizer
}

// UpstreamAccessGate is implemented by a connector that checks, after
// sign-in, whether the user may use erpgate at all (Acumatica's canary
// inquiry). Connectors without a gate let every signed-in user through.
type UpstreamAccessGate interface {
	// CheckAccess reads the gate as the user whose token is in hc. It
	// returns an error only when the outcome could not be classified at all;
	// an unreachable ERP is AccessMisconfigured.
	CheckAccess(ctx context.Context, site Site, hc *http.Client) (AccessCheck, error)
}

// OAuthClient is the site's OAuth client on the ERP (the site's oauth
// connection).
type OAuthClient struct {
	ID     string
	Secret secrets.Secret
}

// AuthorizationRequest is what the platform puts in an ERP authorization
// request.
type AuthorizationRequest struct {
	// RedirectURI is erpgate's callback URL, registered on the ERP client.
	RedirectURI string
	// State is single-use and bound to the user's browser by the platform.
	State string
	// CodeChallenge is the PKCE S256 challenge of a verifier the platform
	// keeps until the code is exchanged.
	CodeChallenge string
}

// UpstreamToken is an ERP token response.
type UpstreamToken struct {
	AccessToken secrets.Secret
	// RefreshToken is empty when the ERP issued none.
	RefreshToken secrets.Secret
	// ExpiresIn is the access token's lifetime as the ERP stated it; zero
	// when it stated none.
	ExpiresIn time.Duration
	// Scope is the granted scope, when the ERP says.
	Scope string
}

// UpstreamTokenOf converts a token golang.org/x/oauth2 read from an ERP's
// token endpoint (the connectors' code exchange, refresh and password
// grant use that library) into an UpstreamToken. erpgate sends every ERP
// token as "Authorization: Bearer", so a token of another type (MAC,
// DPoP) is refused: a client must not use a token whose type it does not
// understand (RFC 6749 section 7.1). An answer without a type is taken as
// Bearer.
func UpstreamTokenOf(t *oauth2.Token) (UpstreamToken, error) {
	if t.TokenType != "" && !strings.EqualFold(t.TokenType, "bearer") {
		return UpstreamToken{}, toolerr.New(toolerr.UpstreamInvalidResponse,
			"the ERP issued a token of type %q, which erpgate cannot use: it sends ERP tokens as Bearer tokens only", ERPWord(t.TokenType))
	}
	scope, _ := t.Extra("scope").(string)
	tok := UpstreamToken{AccessToken: secrets.Secret(t.AccessToken), RefreshToken: secrets.Secret(t.RefreshToken), Scope: scope}
	if t.ExpiresIn > 0 {
		tok.ExpiresIn = time.Duration(t.ExpiresIn) * time.Second
	}
	return tok, nil
}

// UpstreamUser is the ERP identity behind a token.
type UpstreamUser struct {
	// ID is the stable ERP user id the user's tokens are kept under and
	// their calls run as (Frappe: the User name, an e-mail address;
	// Acumatica: the OIDC subject).
	ID string
	// DisplayName is the user's full name, for pages.
	DisplayName string
}

// AccessDecision is the outcome of an access gate.
type AccessDecision int

const (
	accessUnset AccessDecision = iota
	// AccessAllowed lets the user in.
	AccessAllowed
	// AccessDenied means the ERP said the user may not use erpgate (403):
	// they should ask their ERP administrator.
	AccessDenied
	// AccessMisconfigured means the gate itself is broken (404, 5xx,
	// unreachable): an administrator has to fix the set-up.
	AccessMisconfigured
)

func (d AccessDecision) String() string {
	switch d {
	case AccessAllowed:
		return "allowed"
	case AccessDenied:
		return "denied"
	case AccessMisconfigured:
		return "misconfigured"
	}
	return "unset"
}

// AccessCheck is an access gate's answer.
type AccessCheck struct {
	Decision AccessDecision
	// Detail says what the gate saw, safe to show and log (for example
	// "the inquiry MCPAccess answered 404"). Never a token or ERP body.
	Detail string
	// LikelyCauses lists, for AccessMisconfigured, what an administrator
	// should check.
	LikelyCauses []string
}

// OAuthErrorCode keeps the error code an ERP put in an OAuth redirect
// (?error=...) short and plain, for a log line or an event: lower-case
// letters and "_", at most 40, "error" when nothing is left. The value
// comes from the browser's URL, so it is anyone's text.
func OAuthErrorCode(code string) string {
	out := make([]rune, 0, len(code))
	for _, c := range code {
		if (c >= 'a' && c <= 'z') || c == '_' {
			out = append(out, c)
		}
		if len(out) == 40 {
			break
		}
	}
	if len(out) == 0 {
		return "error"
	}
	return string(out)
}
