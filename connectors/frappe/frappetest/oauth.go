package frappetest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Frappe v15's OAuth 2 provider (frappe.integrations.oauth2, API facts
// §2.2), with its quirks:
//
//   - authorize sends a Guest to /login?redirect-to=<the authorize URL>,
//     and shows a logged-in user a "Confirm Access" page (Allow goes to
//     approve, Deny to redirect_uri?error=access_denied);
//   - approve answers with a 30-character code;
//   - get_token takes authorization_code (PKCE optional: plain or S256;
//     a stored challenge without a verifier deletes the code), refresh_token
//     (a new access and refresh token each time; the old refresh token is
//     NOT revoked) and password; tokens last 3600 s;
//   - the client secret is never checked; client_id must be in the body;
//     "Authorization: Basic" on get_token is Frappe's API-key check and
//     fails with 401 before the OAuth code runs;
//   - revoke_token always answers 200 {};
//   - openid_profile and openid_configuration answer top-level JSON.
//
// The real /login page signs in with JavaScript; the simulator's page has a
// plain form that posts to /login, so a headless client can use it.

// OAuthClient is an OAuth Client registered on the simulator.
type OAuthClient struct {
	ID     string
	Secret string
	// RedirectURIs must match a request's redirect_uri exactly.
	RedirectURIs []string
	// SkipAuthorization skips the Confirm Access page.
	SkipAuthorization bool
	// GrantType is "Authorization Code" (the default) or "Implicit";
	// ResponseType "Code" (the default) or "Token"; Scopes the client's
	// space-separated scopes (default "all openid"), as on the OAuth
	// Client doctype.
	GrantType, ResponseType, Scopes string
}

// withDefaults fills in the doctype's defaults.
func (c OAuthClient) withDefaults() OAuthClient {
	if c.GrantType == "" {
		c.GrantType = "Authorization Code"
	}
	if c.ResponseType == "" {
		c.ResponseType = "Code"
	}
	if c.Scopes == "" {
		c.Scopes = "all openid"
	}
	return c
}

// oauthCode is an OAuth Authorization Code.
type oauthCode struct {
	client, redirectURI, user, scope string
	challenge, method                string // method: "s256" or "plain"
	valid                            bool
}

// refreshGrant is a refresh token.
type refreshGrant struct {
	client, user, scope string
	revoked             bool
}

// oauthProvider is the simulator's OAuth state.
type oauthProvider struct {
	mu       sync.Mutex
	clients  map[string]*OAuthClient
	codes    map[string]*oauthCode
	refresh  map[string]*refreshGrant
	access   map[string]string // access token -> client id
	refreshN int
}

// providers holds each simulator's OAuth state. It lives beside the
// Simulator rather than in it so that the OAuth provider stays in its own
// files.
var providers sync.Map // *Simulator -> *oauthProvider

func (s *Simulator) oauth() *oauthProvider {
	p, _ := providers.LoadOrStore(s, &oauthProvider{
		clients: map[string]*OAuthClient{}, codes: map[string]*oauthCode{},
		refresh: map[string]*refreshGrant{}, access: map[string]string{},
	})
	return p.(*oauthProvider)
}

// oauthTokenTTL is oauthlib's BearerToken default, which Frappe keeps.
const oauthTokenTTL = 3600 * time.Second

func init() {
	for name, fn := range map[string]methodFunc{
		"frappe.integrations.oauth2.authorize":            (*reqCtx).oauthAuthorize,
		"frappe.integrations.oauth2.approve":              (*reqCtx).oauthApprove,
		"frappe.integrations.oauth2.get_token":            (*reqCtx).oauthGetToken,
		"frappe.integrations.oauth2.revoke_token":         (*reqCtx).oauthRevoke,
		"frappe.integrations.oauth2.openid_profile":       (*reqCtx).oauthProfile,
		"frappe.integrations.oauth2.openid_configuration": (*reqCtx).oauthConfiguration,
		"frappe.utils.change_log.get_versions":            (*reqCtx).methodGetVersions,
	} {
		whitelisted[name] = fn
	}
	for _, name := range []string{"authorize", "get_token", "revoke_token", "openid_configuration"} {
		allowGuest["frappe.integrations.oauth2."+name] = true
	}
}

// RegisterClient adds an OAuth Client (as on the "OAuth Client" doctype)
// with the given exact redirect URIs and returns it.
func (s *Simulator) RegisterClient(redirectURIs ...string) OAuthClient {
	c := &OAuthClient{ID: randomToken(10), Secret: randomToken(10), RedirectURIs: append([]string(nil), redirectURIs...)}
	*c = c.withDefaults()
	p := s.oauth()
	p.mu.Lock()
	p.clients[c.ID] = c
	p.mu.Unlock()
	return *c
}

// PutClient adds or replaces an OAuth Client with a fixed id and secret
// (for development set-ups that must survive restarts).
func (s *Simulator) PutClient(c OAuthClient) {
	p := s.oauth()
	p.mu.Lock()
	cp := c.withDefaults()
	p.clients[c.ID] = &cp
	p.mu.Unlock()
}

// ExpireTokens makes every access token issued so far expire now, as if
// an hour had passed. Refresh tokens keep working.
func (s *Simulator) ExpireTokens() {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	past := time.Now().Add(-time.Second)
	for _, t := range s.tokens.tokens {
		t.expires = past
	}
}

// RefreshCount is how many refresh_token grants succeeded.
func (s *Simulator) RefreshCount() int {
	p := s.oauth()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refreshN
}

// RevokeRefreshTokens revokes every refresh token of the user (by e-mail),
// as an administrator revoking OAuth Bearer Tokens would.
func (s *Simulator) RevokeRefreshTokens(email string) {
	p := s.oauth()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, g := range p.refresh {
		if strings.EqualFold(g.user, email) {
			g.revoked = true
		}
	}
}

// oauthError writes an oauthlib error body.
func oauthError(w http.ResponseWriter, status int, code, description string) *apiError {
	body := map[string]string{"error": code}
	if description != "" {
		body["error_description"] = description
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
	return nil
}

// pkceMatches checks a verifier against a stored challenge, as Frappe's
// validate_code does.
func pkceMatches(method, challenge, verifier string) bool {
	if method == "s256" {
		sum := sha256.Sum256([]byte(verifier))
		return base64.RawURLEncoding.EncodeToString(sum[:]) == challenge
	}
	return verifier == challenge
}

func (rc *reqCtx) formString(k string) string {
	v, _ := rc.arg(k)
	return cstr(v)
}
