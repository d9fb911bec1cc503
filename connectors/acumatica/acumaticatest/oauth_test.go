package acumaticatest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	IDToken      string `json:"id_token"`
	ExpiresIn    int    `json:"expires_in"`
	TokenType    string `json:"token_type"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
	Description  string `json:"error_description"`
}

func authorizeURL(s *Server, c Client, redirect, scope, state, challenge string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {c.ID}, "redirect_uri": {redirect}, "scope": {scope}, "state": {state}}
	if challenge != "" {
		q.Set("code_challenge", challenge)
		q.Set("code_challenge_method", "S256")
	}
	return s.URL + "/identity/connect/authorize?" + q.Encode()
}

func exchange(t *testing.T, s *Server, c Client, form url.Values) (int, tokenResponse) {
	t.Helper()
	status, b := tokenRequest(t, s, form, c.ID, c.Secret)
	var tr tokenResponse
	mustUnmarshal(t, b, &tr)
	return status, tr
}

func TestAuthorizationCodeWithPKCE(t *testing.T) {
	s := newTestServer(t, Options{})
	redirect := "http://127.0.0.1:9/cb"
	c := s.RegisterClient(redirect)
	if !strings.HasSuffix(c.ID, "@Demo") || len(c.ID) != 36+5 {
		t.Errorf("client id %q", c.ID)
	}
	verifier := strings.Repeat("v3rifier-", 6)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	loc, err := CompleteAuthorization(nil, authorizeURL(s, c, redirect, "api openid profile email offline_access", "st-1", challenge), "admin", "admin-P@ss1")
	if err != nil {
		t.Fatal(err)
	}
	code := loc.Query().Get("code")
	if !strings.HasPrefix(loc.String(), redirect+"?code=") || loc.Query().Get("state") != "st-1" ||
		!strings.Contains(loc.RawQuery, "scope=api%20openid%20profile%20email%20offline_access") {
		t.Fatalf("redirect %s", loc)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {verifier + "x"}}
	if status, tr := exchange(t, s, c, form); status != http.StatusBadRequest || tr.Error != "invalid_grant" {
		t.Errorf("wrong verifier: %d %+v", status, tr)
	}
	// The failed attempt consumed the code: authorize again.
	loc, err = CompleteAuthorization(nil, authorizeURL(s, c, redirect, "api openid profile email offline_access", "st-2", challenge), "admin", "admin-P@ss1")
	if err != nil {
		t.Fatal(err)
	}
	form.Set("code", loc.Query().Get("code"))
	form.Set("code_verifier", verifier)
	status, tr := exchange(t, s, c, form)
	if status != http.StatusOK || tr.AccessToken == "" || len(tr.AccessToken) != 43 || tr.RefreshToken == "" ||
		strings.Count(tr.IDToken, ".") != 2 || tr.ExpiresIn != 3600 || tr.TokenType != "Bearer" {
		t.Fatalf("token: %d %+v", status, tr)
	}
	if status, tr2 := exchange(t, s, c, form); status != http.StatusBadRequest || tr2.Error != "invalid_grant" {
		t.Errorf("code reuse: %d %+v", status, tr2)
	}
	status, b := get(t, s.URL+"/identity/connect/userinfo", tr.AccessToken)
	var ui map[string]string
	mustUnmarshal(t, b, &ui)
	if status != http.StatusOK || ui["sub"] != "admin@Demo" || ui["preferred_username"] != "admin" || ui["name"] != "Kimberly Gibbs" ||
		ui["email"] != "admin@demo-company.com" || ui["updated_at"] != "1/1/1900 12:00:00 AM" {
		t.Errorf("userinfo %d %s", status, b)
	}
	resp, b := call(t, http.MethodGet, s.entityURL(Version25, "Vendor?$top=1", nil), tr.AccessToken, nil)
	if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 0 {
		t.Errorf("API with code-flow token: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
}

func TestAuthorizeRejections(t *testing.T) {
	s := newTestServer(t, Options{})
	c := s.Clients()[0]
	redirect := c.RedirectURIs[0]
	resp, b := call(t, http.MethodGet, authorizeURL(s, c, "http://evil.example/cb", "api", "x", ""), "", nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "invalid_request") {
		t.Errorf("unregistered redirect: %d", resp.StatusCode)
	}
	if _, err := CompleteAuthorization(nil, authorizeURL(s, c, redirect, "api", "x", ""), "admin", "wrong"); err == nil {
		t.Error("wrong password must fail sign-in")
	}
	loc, err := CompleteAuthorization(nil, authorizeURL(s, c, redirect, "api bogus", "x", ""), "admin", "admin-P@ss1")
	if err != nil || loc.Query().Get("error") != "invalid_scope" || loc.Query().Get("state") != "x" {
		t.Errorf("invalid scope: %v %v", loc, err)
	}
	if status, tr := exchange(t, s, c, url.Values{"grant_type": {"password"}, "username": {"admin"}, "password": {"admin-P@ss1"}}); status != http.StatusBadRequest || tr.Error != "unauthorized_client" {
		t.Errorf("password grant on a code client: %d %+v", status, tr)
	}
}

func TestPasswordGrantErrors(t *testing.T) {
	s := newTestServer(t, Options{TokenLifetime: 2 * time.Minute})
	svc := s.Clients()[1]
	form := func(user, pass string) url.Values {
		return url.Values{"grant_type": {"password"}, "username": {user}, "password": {pass}, "scope": {"api offline_access"}}
	}
	status, b := tokenRequest(t, s, form("admin", "nope"), svc.ID, svc.Secret)
	if status != http.StatusBadRequest || string(b) != `{"error":"invalid_grant","error_description":"invalid_username_or_password"}` {
		t.Errorf("bad password: %d %s", status, b)
	}
	if status, tr := exchange(t, s, svc, form("no.api", "noapi-P@ss1")); status != http.StatusBadRequest || tr.Error != "invalid_grant" {
		t.Errorf("no API licence: %d %+v", status, tr)
	}
	if status, b := tokenRequest(t, s, form("admin", "admin-P@ss1"), svc.ID, "wrong-secret"); status != http.StatusBadRequest || string(b) != `{"error":"invalid_client"}` {
		t.Errorf("bad secret: %d %s", status, b)
	}
	if status, tr := exchange(t, s, svc, url.Values{"grant_type": {"urn:custom"}}); status != http.StatusBadRequest || tr.Error != "unsupported_grant_type" {
		t.Errorf("unknown grant: %d %+v", status, tr)
	}
	if status, tr := exchange(t, s, svc, url.Values{"grant_type": {"password"}, "username": {"admin"}, "password": {"admin-P@ss1"}, "scope": {"api nope"}}); status != http.StatusBadRequest || tr.Error != "invalid_scope" {
		t.Errorf("unknown scope: %d %+v", status, tr)
	}
	// Client credentials in an HTTP Basic header are accepted too.
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/identity/connect/token", strings.NewReader(form("admin", "admin-P@ss1").Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(svc.ID, svc.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tr tokenResponse
	_ = json.NewDecoder(resp.Body).Decode(&tr)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || tr.ExpiresIn != 120 || tr.Scope != "api offline_access" || tr.RefreshToken == "" {
		t.Errorf("basic client auth: %d %+v", resp.StatusCode, tr)
	}
}

func TestRefreshRotation(t *testing.T) {
	clock := newClock()
	s := newTestServer(t, Options{Now: clock.Now})
	svc := s.Clients()[1]
	_, tr := exchange(t, s, svc, url.Values{"grant_type": {"password"}, "username": {"api.service"}, "password": {"service-P@ss1"}, "scope": {"api offline_access"}})
	rt1 := tr.RefreshToken
	status, tr2 := exchange(t, s, svc, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt1}})
	if status != http.StatusOK || tr2.RefreshToken == "" || tr2.RefreshToken == rt1 || tr2.AccessToken == tr.AccessToken {
		t.Fatalf("refresh: %d %+v", status, tr2)
	}
	if status, tr3 := exchange(t, s, svc, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt1}}); status != http.StatusBadRequest || tr3.Error != "invalid_grant" {
		t.Errorf("old refresh token must die: %d %+v", status, tr3)
	}
	if s.RefreshCount() != 1 {
		t.Errorf("RefreshCount %d", s.RefreshCount())
	}
	// Expiry by the clock: the access token stops working, refresh works.
	clock.Advance(time.Hour + time.Second)
	if status, _ := get(t, s.entityURL(Version24, "Account?$top=1", nil), tr2.AccessToken); status != http.StatusUnauthorized {
		t.Errorf("expired token: %d", status)
	}
	status, tr4 := exchange(t, s, svc, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tr2.RefreshToken}})
	if status != http.StatusOK || s.RefreshCount() != 2 {
		t.Fatalf("second refresh: %d %+v", status, tr4)
	}
	s.ExpireTokens()
	if status, _ := get(t, s.entityURL(Version24, "Account?$top=1", nil), tr4.AccessToken); status != http.StatusUnauthorized {
		t.Errorf("ExpireTokens: %d", status)
	}
	s.RevokeRefreshTokens("api.service")
	if status, tr5 := exchange(t, s, svc, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tr4.RefreshToken}}); status != http.StatusBadRequest || tr5.Error != "invalid_grant" {
		t.Errorf("revoked refresh: %d %+v", status, tr5)
	}
	// The chain dies 30 days after the first sign-in.
	_, tr = exchange(t, s, svc, url.Values{"grant_type": {"password"}, "username": {"api.service"}, "password": {"service-P@ss1"}, "scope": {"api offline_access"}})
	clock.Advance(31 * 24 * time.Hour)
	if status, _ := exchange(t, s, svc, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tr.RefreshToken}}); status != http.StatusBadRequest {
		t.Errorf("refresh after the absolute lifetime: %d", status)
	}
}

func TestDiscoveryAndRevocation(t *testing.T) {
	s := newTestServer(t, Options{})
	for _, p := range []string{"/identity/.well-known/openid-configuration", "/.well-known/openid-configuration"} {
		status, b := get(t, s.URL+p, "")
		var d map[string]any
		mustUnmarshal(t, b, &d)
		if status != http.StatusOK || d["issuer"] != s.URL+"/identity" || d["token_endpoint"] != s.URL+"/identity/connect/token" {
			t.Errorf("%s: %d %s", p, status, b)
		}
	}
	if status, b := get(t, s.URL+"/identity/.well-known/openid-configuration/jwks", ""); status != http.StatusOK || !strings.Contains(string(b), `"kty":"RSA"`) {
		t.Errorf("jwks: %d %s", status, b)
	}
	svc := s.Clients()[1]
	tok := passwordToken(t, s, "admin", "api")
	status, _ := tokenRequestPath(t, s, "/identity/connect/revocation", url.Values{"token": {tok}}, svc)
	if status != http.StatusOK {
		t.Fatalf("revocation: %d", status)
	}
	if status, _ := get(t, s.entityURL(Version24, "Account?$top=1", nil), tok); status != http.StatusUnauthorized {
		t.Errorf("revoked token still works: %d", status)
	}
	if s.SeatsInUse() != 1 {
		t.Errorf("revoking a token does not end its session: seats %d", s.SeatsInUse())
	}
}

func tokenRequestPath(t *testing.T, s *Server, path string, form url.Values, c Client) (int, []byte) {
	t.Helper()
	form.Set("client_id", c.ID)
	form.Set("client_secret", c.Secret)
	resp, b := callForm(t, s.URL+path, form)
	return resp.StatusCode, b
}
