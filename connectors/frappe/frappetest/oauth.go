package frappetest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Frappe v15's OAuth 2 provider (frappe.integrations.oauth2; shared/erp-api/frappe/api-facts.md
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
//   - an access token and its refresh token are one OAuth Bearer Token
//     document with one status: revoking either revokes both;
//   - a refresh grant with a refresh token that is unknown or revoked is
//     not an OAuth error: validate_refresh_token's frappe.get_doc raises
//     DoesNotExistError, so the answer is Frappe's 404 ("OAuth Bearer
//     Token {'refresh_token': ..., 'status': 'Active'} not found");
//   - the client secret is never checked; client_id must be in the body;
//     "Authorization: Basic" on get_token is Frappe's API-key check and
//     fails with 401 before the OAuth code runs;
//   - with the openid scope, the code and refresh grants return an
//     id_token signed HS256 with the client secret (finalize_id_token);
//   - authorize refuses a scope the client lacks (invalid_scope), a
//     client whose response type is not Code (unauthorized_client), and a
//     user with none of the client's Allowed Roles (invalid_client_id, the
//     answer for an unknown client: validate_client_id checks both);
//   - revoke_token always answers 200 {};
//   - openid_profile answers only a Bearer token with the openid scope;
//     it and openid_configuration answer top-level JSON.
//
// OAuth Clients are made as an administrator makes them (oauth_client_doc.go).
//
// The real /login page signs in with JavaScript; the simulator's page has a
// plain form that posts to /login, so a headless client can use it.

// OAuthClient is an OAuth Client document registered on the simulator.
type OAuthClient struct {
	// ID is the client_id, the document's name; Secret its client_secret.
	ID     string
	Secret string
	// AppName is the app_name shown on the Confirm Access page.
	AppName string
	// RedirectURIs must match a request's redirect_uri exactly.
	RedirectURIs []string
	// DefaultRedirectURI is default_redirect_uri.
	DefaultRedirectURI string
	// Scopes are the allowed scopes, space-separated ("all openid" when
	// empty): an authorize request asking for others fails with
	// invalid_scope.
	Scopes string
	// GrantType is "Authorization Code" (the default) or "Implicit";
	// ResponseType "Code" (the default) or "Token". An authorize request's
	// response_type must be the client's (or an OpenID Connect one).
	// Frappe's token endpoint does not look at the grant type.
	GrantType, ResponseType string
	// SkipAuthorization skips the Confirm Access page.
	SkipAuthorization bool
	// AllowedRoles are the roles that may use the client: authorize (and
	// approve) answer invalid_client_id to a signed-in user with none of
	// them, as validate_client_id does (user_has_allowed_role). The
	// default is Desk User, the role every system user has.
	AllowedRoles []string
}

// DeskUser is SYSTEM_USER_ROLE, the automatic role of every system user
// and the default allowed role of an OAuth Client.
const DeskUser = "Desk User"

// allows reports whether u may use the client (user_has_allowed_role).
// Every demo user is a system user, so Desk User is theirs.
func (c OAuthClient) allows(u *User) bool {
	roles := c.withDefaults().AllowedRoles
	return slices.Contains(roles, DeskUser) || u.hasRole(roles)
}

// withDefaults fills in the doctype's defaults.
func (c OAuthClient) withDefaults() OAuthClient {
	if strings.TrimSpace(c.Scopes) == "" {
		c.Scopes = "all openid"
	}
	if c.GrantType == "" {
		c.GrantType = "Authorization Code"
	}
	if c.ResponseType == "" {
		c.ResponseType = "Code"
	}
	if len(c.AllowedRoles) == 0 {
		c.AllowedRoles = []string{DeskUser}
	}
	c.AllowedRoles = append([]string(nil), c.AllowedRoles...)
	if c.DefaultRedirectURI == "" && len(c.RedirectURIs) > 0 {
		c.DefaultRedirectURI = c.RedirectURIs[0]
	}
	c.RedirectURIs = append([]string(nil), c.RedirectURIs...)
	return c
}

// oauthCode is an OAuth Authorization Code.
type oauthCode struct {
	client, redirectURI, user, scope string
	challenge, method                string // method: "s256" or "plain"
	valid                            bool
}

// refreshGrant is the refresh token of an OAuth Bearer Token document.
// The document holds the access token too (its name) and one status:
// revoking either token revokes both.
type refreshGrant struct {
	client, user, scope string
	access              string // the access token issued with it
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
	return s.AddClient(OAuthClient{RedirectURIs: redirectURIs})
}

// AddClient creates an OAuth Client as an administrator does on the
// doctype: Frappe generates client_id (the name) and client_secret, ten
// hexadecimal characters each, when they are empty. Empty fields take the
// doctype's defaults. It returns the client as saved.
func (s *Simulator) AddClient(c OAuthClient) OAuthClient {
	if c.ID == "" {
		c.ID = generateHash(10)
	}
	if c.Secret == "" {
		c.Secret = generateHash(10)
	}
	c = c.withDefaults()
	s.PutClient(c)
	if s.opts.ClientAdded != nil {
		s.opts.ClientAdded(c)
	}
	return c
}

// PutClient adds or replaces an OAuth Client with a fixed id and secret
// (for development set-ups that must survive restarts).
func (s *Simulator) PutClient(c OAuthClient) {
	p := s.oauth()
	cp := c.withDefaults()
	p.mu.Lock()
	p.clients[c.ID] = &cp
	p.mu.Unlock()
}

// Client returns the OAuth Client with id, as saved.
func (s *Simulator) Client(id string) (OAuthClient, bool) {
	p := s.oauth()
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.clients[id]
	if c == nil {
		return OAuthClient{}, false
	}
	return c.withDefaults(), true
}

// generateHash is frappe.generate_hash(length=n): n lowercase hexadecimal
// characters.
func generateHash(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
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
// and with them the access tokens of the same OAuth Bearer Token
// documents, as an administrator revoking those documents would.
func (s *Simulator) RevokeRefreshTokens(email string) {
	p := s.oauth()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, g := range p.refresh {
		if strings.EqualFold(g.user, email) {
			g.revoked = true
			s.tokens.revoke(g.access)
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
