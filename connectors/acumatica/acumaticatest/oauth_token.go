package acumaticatest

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// authorizationCodeLifetime is IdentityServer's default (300 s); codes are
// single-use.
const authorizationCodeLifetime = 5 * time.Minute

type authCode struct {
	code        string
	client      string
	redirectURI string
	scopes      []string
	user        *User
	challenge   string
	method      string
	nonce       string
	expires     time.Time
	used        bool
}

// writeOAuthError writes IdentityServer's error JSON.
func writeOAuthError(w http.ResponseWriter, status int, code, description string) {
	var b strings.Builder
	o := newJSONObject(&b)
	o.str("error", code)
	if description != "" {
		o.str("error_description", description)
	}
	o.close()
	w.Header().Set("Cache-Control", "no-store, no-cache, max-age=0")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, status, b.String())
}

// authenticateClient reads client credentials from the form or from HTTP
// Basic authentication, as IdentityServer accepts both.
func (s *Simulator) authenticateClient(r *http.Request) *Client {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id == "" {
		return nil
	}
	c := s.clientByID(id)
	if c == nil || subtle.ConstantTimeCompare([]byte(c.Secret), []byte(secret)) != 1 {
		return nil
	}
	return c
}

func parseScopes(s string) ([]string, bool) {
	var out []string
	for _, sc := range strings.Fields(s) {
		if !knownScopes[sc] {
			return nil, false
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, true
}

func (s *Simulator) handleToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeMethodNotAllowed(w, r.Method)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") || r.ParseForm() != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "")
		return
	}
	c := s.authenticateClient(r)
	if c == nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client", "")
		return
	}
	grant := r.PostForm.Get("grant_type")
	switch grant {
	case "":
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "")
	case "password":
		s.passwordGrant(w, r, c)
	case "authorization_code":
		s.codeGrant(w, r, c)
	case "refresh_token":
		s.refreshGrant(w, r, c)
	case "client_credentials", "implicit", "urn:ietf:params:oauth:grant-type:device_code":
		writeOAuthError(w, http.StatusBadRequest, "unauthorized_client", "")
	default:
		writeOAuthError(w, http.StatusBadRequest, "unsupported_grant_type", "")
	}
}

func (s *Simulator) passwordGrant(w http.ResponseWriter, r *http.Request, c *Client) {
	if c.Flow != FlowPassword {
		writeOAuthError(w, http.StatusBadRequest, "unauthorized_client", "")
		return
	}
	scope := r.PostForm.Get("scope")
	if scope == "" {
		scope = "api"
	}
	scopes, ok := parseScopes(scope)
	if !ok {
		writeOAuthError(w, http.StatusBadRequest, "invalid_scope", "")
		return
	}
	u := s.checkPassword(r.PostForm.Get("username"), r.PostForm.Get("password"))
	if u == nil && s.opts.InvalidCredentials500 && s.userByName(r.PostForm.Get("username")) != nil {
		writeInvalidCredentials(w)
		return
	}
	if u == nil || !u.hasAPILicence() {
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "invalid_username_or_password")
		return
	}
	s.issueTokens(w, r, c, u, scopes, s.now(), "")
}

func (s *Simulator) codeGrant(w http.ResponseWriter, r *http.Request, c *Client) {
	if c.Flow != FlowAuthorizationCode {
		writeOAuthError(w, http.StatusBadRequest, "unauthorized_client", "")
		return
	}
	now := s.now()
	s.mu.Lock()
	ac := s.codes[r.PostForm.Get("code")]
	valid := ac != nil && !ac.used && now.Before(ac.expires) && strings.EqualFold(ac.client, c.ID) &&
		ac.redirectURI == r.PostForm.Get("redirect_uri")
	if ac != nil {
		ac.used = true // a code is consumed by any attempt to redeem it
	}
	s.mu.Unlock()
	if !valid || !verifyPKCE(ac, r.PostForm.Get("code_verifier")) {
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "")
		return
	}
	if !ac.user.hasAPILicence() {
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "")
		return
	}
	s.issueTokens(w, r, c, ac.user, ac.scopes, now, ac.nonce)
}

// verifyPKCE checks the code_verifier against the stored challenge
// (RFC 7636; methods plain and S256).
func verifyPKCE(ac *authCode, verifier string) bool {
	if ac.challenge == "" {
		return verifier == ""
	}
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	if ac.method == "S256" {
		sum := sha256.Sum256([]byte(verifier))
		return base64.RawURLEncoding.EncodeToString(sum[:]) == ac.challenge
	}
	return verifier == ac.challenge
}

func (s *Simulator) refreshGrant(w http.ResponseWriter, r *http.Request, c *Client) {
	now := s.now()
	s.tokens.mu.Lock()
	rt := s.tokens.refresh[r.PostForm.Get("refresh_token")]
	ok := rt != nil && !rt.dead && strings.EqualFold(rt.client, c.ID) && now.Sub(rt.chainStart) < refreshChainLifetime
	if ok {
		// Rotation: the presented token dies on use, successful or not.
		rt.dead = true
	}
	stale := ok && s.tokens.passwordGen[rt.user] != rt.passGen
	s.tokens.mu.Unlock()
	if stale {
		if s.opts.InvalidCredentials500 {
			writeInvalidCredentials(w)
			return
		}
		ok = false
	}
	if !ok || !rt.user.hasAPILicence() {
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "")
		return
	}
	if s.issueTokens(w, r, c, rt.user, rt.scopes, rt.chainStart, "") {
		s.tokens.mu.Lock()
		s.tokens.refreshes++
		s.tokens.mu.Unlock()
	} else {
		s.tokens.mu.Lock()
		rt.dead = false // a refused sign-in leaves the chain usable
		s.tokens.mu.Unlock()
	}
}

// issueTokens mints the token response. A new sign-in beyond the licence's
// API-user seats is refused with 429 "API Login Limit".
func (s *Simulator) issueTokens(w http.ResponseWriter, r *http.Request, c *Client, u *User, scopes []string, chainStart time.Time, nonce string) bool {
	now := s.now()
	at := &accessToken{value: opaqueToken(), user: u, client: c.ID, scopes: scopes, expires: now.Add(s.tokenLifetime)}
	var rt *refreshToken
	if slices.Contains(scopes, "offline_access") {
		rt = &refreshToken{value: opaqueToken(), user: u, client: c.ID, scopes: scopes, chainStart: chainStart}
	}
	s.tokens.mu.Lock()
	if slices.Contains(scopes, "api") && !slices.Contains(scopes, "api:concurrent_access") &&
		!s.tokens.userSeated(u, now) && s.tokens.seatsInUse(now) >= s.seatLimit {
		s.tokens.mu.Unlock()
		writeOAuthError(w, http.StatusTooManyRequests, "invalid_grant", msgLoginLimit)
		return false
	}
	at.passGen = s.tokens.passwordGen[u]
	s.tokens.access[at.value] = at
	if rt != nil {
		rt.passGen = at.passGen
		s.tokens.refresh[rt.value] = rt
	}
	s.tokens.mu.Unlock()

	var b strings.Builder
	o := newJSONObject(&b)
	if slices.Contains(scopes, "openid") {
		o.str("id_token", s.idToken(baseURL(r)+"/identity", c, u, now, nonce))
	}
	o.str("access_token", at.value)
	o.raw("expires_in", strconv.Itoa(int(s.tokenLifetime/time.Second)))
	o.str("token_type", "Bearer")
	if rt != nil {
		o.str("refresh_token", rt.value)
	}
	o.str("scope", strings.Join(scopes, " "))
	o.close()
	w.Header().Set("Cache-Control", "no-store, no-cache, max-age=0")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, b.String())
	return true
}
