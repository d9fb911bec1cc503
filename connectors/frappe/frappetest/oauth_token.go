package frappetest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// oauthGetToken is POST .../oauth2.get_token.
func (rc *reqCtx) oauthGetToken() *apiError {
	if rc.r.Method != http.MethodPost {
		return oauthError(rc.w, http.StatusBadRequest, "invalid_request", "")
	}
	p := rc.s.oauth()
	clientID := rc.formString("client_id")
	p.mu.Lock()
	client := p.clients[clientID]
	p.mu.Unlock()
	// authenticate_client only loads the client by id (frappe.get_doc, so
	// an unknown id is a 404 DoesNotExistError, not an OAuth error); the
	// secret is never compared.
	if client == nil {
		if clientID != "" {
			return notFound("OAuth Client " + clientID + " not found")
		}
		return oauthError(rc.w, http.StatusBadRequest, "invalid_client", "")
	}
	switch rc.formString("grant_type") {
	case "authorization_code":
		return rc.grantCode(p, client)
	case "refresh_token":
		return rc.grantRefresh(p, client)
	case "password":
		u := rc.s.userByEmail(rc.formString("username"))
		if u == nil || u.Password != rc.formString("password") {
			return oauthError(rc.w, http.StatusBadRequest, "invalid_grant", "")
		}
		return rc.issueTokens(p, client, u.Email, defaultScope(rc.formString("scope")), false)
	default:
		return oauthError(rc.w, http.StatusBadRequest, "unsupported_grant_type", "")
	}
}

func (rc *reqCtx) grantCode(p *oauthProvider, client *OAuthClient) *apiError {
	code := rc.formString("code")
	p.mu.Lock()
	c := p.codes[code]
	if c == nil || !c.valid || c.client != client.ID || c.redirectURI != rc.formString("redirect_uri") {
		p.mu.Unlock()
		return oauthError(rc.w, http.StatusBadRequest, "invalid_grant", "")
	}
	if c.challenge != "" {
		verifier := rc.formString("code_verifier")
		if verifier == "" || !pkceMatches(c.method, c.challenge, verifier) {
			delete(p.codes, code)
			p.mu.Unlock()
			return oauthError(rc.w, http.StatusBadRequest, "invalid_grant", "")
		}
	}
	c.valid = false
	p.mu.Unlock()
	return rc.issueTokens(p, client, c.user, defaultScope(c.scope), true)
}

func (rc *reqCtx) grantRefresh(p *oauthProvider, client *OAuthClient) *apiError {
	tok := rc.formString("refresh_token")
	p.mu.Lock()
	g := p.refresh[tok]
	if g == nil || g.revoked {
		// validate_refresh_token is frappe.get_doc("OAuth Bearer Token",
		// {"refresh_token": tok, "status": "Active"}): no such document is
		// a DoesNotExistError, which get_token does not catch.
		p.mu.Unlock()
		return notFound("OAuth Bearer Token {'refresh_token': " + pyStrRepr(tok) + ", 'status': 'Active'} not found")
	}
	if rc.s.opts.RefreshGrantForbidden {
		// frappe.get_doc of the OAuth Bearer Token as Guest.
		p.mu.Unlock()
		return listPermissionError("Guest", "User")
	}
	if g.client != client.ID {
		p.mu.Unlock()
		return oauthError(rc.w, http.StatusBadRequest, "invalid_grant", "")
	}
	// A new refresh token is issued; the old one is not revoked.
	p.refreshN++
	p.mu.Unlock()
	return rc.issueTokens(p, client, g.user, g.scope, true)
}

func defaultScope(s string) string {
	if strings.TrimSpace(s) == "" {
		return "all openid"
	}
	return s
}

// issueTokens answers a successful grant. With withIDToken and the openid
// scope (the OpenID Connect code and refresh grants) the answer carries an
// id_token, as finalize_id_token makes it: HS256, signed with the
// client's client_secret, the userinfo claims included.
func (rc *reqCtx) issueTokens(p *oauthProvider, client *OAuthClient, email, scope string, withIDToken bool) *apiError {
	access := rc.s.tokens.issue(email, oauthTokenTTL, scope)
	refresh := randomToken(30)
	p.mu.Lock()
	p.access[access] = client.ID
	p.refresh[refresh] = &refreshGrant{client: client.ID, user: email, scope: scope, access: access}
	p.mu.Unlock()
	body := map[string]any{
		"access_token": access, "expires_in": 3600, "token_type": "Bearer", "scope": scope, "refresh_token": refresh,
	}
	if u := rc.s.userByEmail(email); withIDToken && u != nil && slices.Contains(strings.Fields(scope), "openid") {
		body["id_token"] = idToken(client, access, rc.userinfo(u))
	}
	writeJSONResponse(rc.w, http.StatusOK, body)
	return nil
}

// idToken is the HS256 JWT of finalize_id_token: aud, iat, at_hash, exp,
// iss and the userinfo claims, signed with the client secret.
func idToken(client *OAuthClient, accessToken string, claims map[string]any) string {
	now := time.Now().Unix()
	sum := sha256.Sum256([]byte(accessToken))
	payload := map[string]any{"aud": client.ID, "iat": now, "exp": now + int64(oauthTokenTTL/time.Second),
		"at_hash": base64.RawURLEncoding.EncodeToString(sum[:len(sum)/2])}
	for k, v := range claims {
		payload[k] = v
	}
	header, _ := json.Marshal(map[string]string{"typ": "jwt", "alg": "HS256"})
	body, _ := json.Marshal(payload)
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(body)
	mac := hmac.New(sha256.New, []byte(client.Secret))
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// oauthRevoke is POST .../oauth2.revoke_token: always 200 {}. The
// validator's revoke_token sets the OAuth Bearer Token document's status
// to Revoked, found by its refresh_token with token_type_hint
// refresh_token, and by its name (the access token) otherwise, so a
// refresh token sent without that hint revokes nothing. Either way the
// document's access and refresh token both die.
func (rc *reqCtx) oauthRevoke() *apiError {
	tok := rc.formString("token")
	p := rc.s.oauth()
	p.mu.Lock()
	if rc.formString("token_type_hint") == "refresh_token" {
		if g := p.refresh[tok]; g != nil {
			g.revoked = true
			rc.s.tokens.revoke(g.access)
		}
	} else {
		rc.s.tokens.revoke(tok)
		for _, g := range p.refresh {
			if g.access == tok {
				g.revoked = true
			}
		}
	}
	p.mu.Unlock()
	writeJSONResponse(rc.w, http.StatusOK, newObject(0))
	return nil
}

// oauthProfile is .../oauth2.openid_profile. oauthlib's userinfo endpoint
// answers only an OAuth Bearer token with the openid scope: a session
// cookie or an API key gets invalid_token (401), a token without openid
// insufficient_scope (403), as generate_json_error_response writes them.
func (rc *reqCtx) oauthProfile() *apiError {
	kind, tok, _ := strings.Cut(rc.r.Header.Get("Authorization"), " ")
	scope, ok := rc.s.tokens.scope(tok)
	if !strings.EqualFold(kind, "bearer") || !ok {
		return authorizeErrorDescribed(rc.w, http.StatusUnauthorized, "invalid_token",
			"The access token provided is expired, revoked, malformed, or invalid for other reasons.")
	}
	if !slices.Contains(strings.Fields(scope), "openid") {
		return authorizeErrorDescribed(rc.w, http.StatusForbidden, "insufficient_scope",
			"The request requires higher privileges than provided by the access token.")
	}
	writeJSONResponse(rc.w, http.StatusOK, rc.userinfo(rc.user))
	return nil
}

// userinfo is get_userinfo(user): the openid_profile body and the claims of
// an id_token.
func (rc *reqCtx) userinfo(u *User) map[string]any {
	given, family, _ := strings.Cut(u.FullName, " ")
	return map[string]any{
		"sub": "frappe-" + strings.ReplaceAll(u.Email, "@", "-"), "name": u.FullName, "given_name": given, "family_name": family,
		"email": u.Email, "picture": nil, "roles": u.profileRoles(), "iss": rc.baseURL(),
	}
}

// oauthConfiguration is .../oauth2.openid_configuration: no PKCE methods,
// grant types or registration endpoint are advertised on v15.
func (rc *reqCtx) oauthConfiguration() *apiError {
	base := rc.baseURL()
	m := base + "/api/method/frappe.integrations.oauth2."
	writeJSONResponse(rc.w, http.StatusOK, map[string]any{
		"issuer":                 base,
		"authorization_endpoint": m + "authorize",
		"token_endpoint":         m + "get_token",
		"userinfo_endpoint":      m + "openid_profile",
		"revocation_endpoint":    m + "revoke_token",
		"introspection_endpoint": m + "introspect_token",
		"response_types_supported": []string{"code", "token", "code id_token", "code token id_token",
			"id_token", "id_token token"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"HS256"},
	})
	return nil
}

func (rc *reqCtx) baseURL() string {
	scheme := "http"
	if rc.r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + rc.r.Host
}
