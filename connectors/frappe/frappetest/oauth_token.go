package frappetest

import (
	"net/http"
	"strings"
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
	// authenticate_client only loads the client by id; the secret is never
	// compared.
	if client == nil {
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
		return rc.issueTokens(p, client.ID, u.Email, defaultScope(rc.formString("scope")))
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
	return rc.issueTokens(p, client.ID, c.user, defaultScope(c.scope))
}

func (rc *reqCtx) grantRefresh(p *oauthProvider, client *OAuthClient) *apiError {
	tok := rc.formString("refresh_token")
	p.mu.Lock()
	g := p.refresh[tok]
	if g == nil || g.revoked || g.client != client.ID {
		p.mu.Unlock()
		return oauthError(rc.w, http.StatusBadRequest, "invalid_grant", "")
	}
	// A new refresh token is issued; the old one is not revoked.
	p.refreshN++
	p.mu.Unlock()
	return rc.issueTokens(p, client.ID, g.user, g.scope)
}

func defaultScope(s string) string {
	if strings.TrimSpace(s) == "" {
		return "all openid"
	}
	return s
}

func (rc *reqCtx) issueTokens(p *oauthProvider, clientID, email, scope string) *apiError {
	access := rc.s.tokens.issue(email, oauthTokenTTL)
	refresh := randomToken(30)
	p.mu.Lock()
	p.access[access] = clientID
	p.refresh[refresh] = &refreshGrant{client: clientID, user: email, scope: scope}
	p.mu.Unlock()
	writeJSONResponse(rc.w, http.StatusOK, map[string]any{
		"access_token": access, "expires_in": 3600, "token_type": "Bearer", "scope": scope, "refresh_token": refresh,
	})
	return nil
}

// oauthRevoke is POST .../oauth2.revoke_token: always 200 {}.
func (rc *reqCtx) oauthRevoke() *apiError {
	tok := rc.formString("token")
	rc.s.tokens.revoke(tok)
	p := rc.s.oauth()
	p.mu.Lock()
	if g := p.refresh[tok]; g != nil {
		g.revoked = true
	}
	p.mu.Unlock()
	writeJSONResponse(rc.w, http.StatusOK, newObject(0))
	return nil
}

// oauthProfile is .../oauth2.openid_profile for the authenticated user.
func (rc *reqCtx) oauthProfile() *apiError {
	u := rc.user
	given, family, _ := strings.Cut(u.FullName, " ")
	writeJSONResponse(rc.w, http.StatusOK, map[string]any{
		"sub": "frappe-" + strings.ReplaceAll(u.Email, "@", "-"), "name": u.FullName, "given_name": given, "family_name": family,
		"email": u.Email, "picture": nil, "roles": u.profileRoles(), "iss": rc.baseURL(),
	})
	return nil
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
