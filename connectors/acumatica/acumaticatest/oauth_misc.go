package acumaticatest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"
)

// baseURL is the instance URL as the client addressed it.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + pathPrefix(r)
}

// handleDiscovery serves the OpenID Provider configuration of the
// IdentityServer behind /identity (also answered at the site root).
func (s *Simulator) handleDiscovery(w http.ResponseWriter, r *http.Request) {
	iss := baseURL(r) + "/identity"
	doc := map[string]any{
		"issuer":                                iss,
		"jwks_uri":                              iss + "/.well-known/openid-configuration/jwks",
		"authorization_endpoint":                iss + "/connect/authorize",
		"token_endpoint":                        iss + "/connect/token",
		"userinfo_endpoint":                     iss + "/connect/userinfo",
		"end_session_endpoint":                  iss + "/connect/endsession",
		"revocation_endpoint":                   iss + "/connect/revocation",
		"frontchannel_logout_supported":         true,
		"frontchannel_logout_session_supported": true,
		"scopes_supported":                      []string{"openid", "profile", "email", "phone", "api", "api:concurrent_access", "offline_access"},
		"claims_supported":                      []string{"sub", "name", "given_name", "family_name", "preferred_username", "email", "zoneinfo", "updated_at", "phone_number"},
		"grant_types_supported":                 []string{"authorization_code", "client_credentials", "refresh_token", "implicit", "password"},
		"response_types_supported":              []string{"code", "token", "id_token", "id_token token", "code id_token", "code token", "code id_token token"},
		"response_modes_supported":              []string{"form_post", "query", "fragment"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post", "private_key_jwt"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported":      []string{"plain", "S256"},
	}
	b, _ := json.Marshal(doc)
	writeJSON(w, http.StatusOK, string(b))
}

func (s *Simulator) handleJWKS(w http.ResponseWriter, _ *http.Request) {
	k := signingKey()
	jwk := map[string]any{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": k.kid,
		"n": base64.RawURLEncoding.EncodeToString(k.key.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.key.E)).Bytes())}
	b, _ := json.Marshal(map[string]any{"keys": []any{jwk}})
	writeJSON(w, http.StatusOK, string(b))
}

// handleUserInfo returns the OIDC claims of the token's user (scope
// openid required; profile and email claims by scope), shaped like
// Acumatica's: sub is "user@Tenant".
func (s *Simulator) handleUserInfo(w http.ResponseWriter, r *http.Request) {
	tok := bearerToken(r)
	t := s.lookupAccess(tok)
	if t == nil {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if !t.has("openid") {
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope"`)
		w.WriteHeader(http.StatusForbidden)
		return
	}
	var b strings.Builder
	o := newJSONObject(&b)
	if t.has("profile") {
		o.str("name", t.user.DisplayName())
		o.str("given_name", t.user.FirstName)
		o.str("family_name", t.user.LastName)
		o.str("preferred_username", t.user.Username)
	}
	if t.has("email") {
		o.str("email", t.user.Email)
	}
	if t.has("profile") {
		o.str("zoneinfo", "")
		o.str("updated_at", "1/1/1900 12:00:00 AM")
	}
	o.str("sub", t.user.Username+"@"+s.tenant)
	o.close()
	writeJSON(w, http.StatusOK, b.String())
}

// handleRevocation implements RFC 7009. Revoking an access token makes it
// unusable but, as on Acumatica, does not end its server session (the
// seat stays taken until the token would have expired).
func (s *Simulator) handleRevocation(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeMethodNotAllowed(w, r.Method)
		return
	}
	if r.ParseForm() != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "")
		return
	}
	c := s.authenticateClient(r)
	if c == nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client", "")
		return
	}
	v := r.PostForm.Get("token")
	s.tokens.mu.Lock()
	if t := s.tokens.access[v]; t != nil && strings.EqualFold(t.client, c.ID) {
		t.revoked = true
	}
	if t := s.tokens.refresh[v]; t != nil && strings.EqualFold(t.client, c.ID) {
		t.dead = true
	}
	s.tokens.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

type rsaSigningKey struct {
	key *rsa.PrivateKey
	kid string
}

var (
	keyOnce sync.Once
	theKey  rsaSigningKey
)

// signingKey is generated once per process (id tokens need a signature,
// not a stable key).
func signingKey() rsaSigningKey {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic("acumaticatest: rsa key: " + err.Error())
		}
		sum := sha256.Sum256(k.N.Bytes())
		theKey = rsaSigningKey{key: k, kid: strings.ToUpper(base64.RawURLEncoding.EncodeToString(sum[:8]))}
	})
	return theKey
}

// idToken signs an OIDC id_token (RS256).
func (s *Simulator) idToken(issuer string, c *Client, u *User, now time.Time, nonce string) string {
	k := signingKey()
	header, _ := json.Marshal(map[string]any{"alg": "RS256", "kid": k.kid, "typ": "JWT"})
	claims := map[string]any{"iss": issuer, "aud": c.ID, "nbf": now.Unix(), "iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(), "auth_time": now.Unix(), "idp": "local", "amr": []string{"pwd"},
		"sub": u.Username + "@" + s.tenant}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	payload, _ := json.Marshal(claims)
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, k.key, crypto.SHA256, sum[:])
	if err != nil {
		panic("acumaticatest: sign id_token: " + err.Error())
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}
