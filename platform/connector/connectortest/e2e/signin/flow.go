package signin

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Tokens are what erpgate's token endpoint issued.
type Tokens struct {
	ClientID     string
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int    `json:"expires_in"`
}

// redirectURI is the client's; nothing listens there, as the browser
// stops when it is sent to it.
const redirectURI = "http://127.0.0.1:9/callback"

// SignIn gets tokens for resource (an MCP URL of erpgate at base) the way
// an MCP client does, as the client clientID (see Register): it sends the
// browser through the authorization request with PKCE (the person signs
// in to the ERP with fields and consents) and exchanges the code.
func SignIn(ctx context.Context, base, clientID, resource string, fields map[string]string) (Tokens, error) {
	verifier := rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	state := rand.Text()
	q := url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI},
		"scope": {"erp:read"}, "state": {state}, "resource": {resource},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}
	b := NewBrowser(redirectURI, fields)
	final, err := b.Run(ctx, http.MethodGet, base+"/oauth/authorize?"+q.Encode(), nil)
	if err != nil {
		return Tokens{}, err
	}
	code := final.Query().Get("code")
	if code == "" || final.Query().Get("state") != state {
		return Tokens{}, fmt.Errorf("sign-in ended without a code: %s", final)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
		"client_id": {clientID}, "code_verifier": {verifier}, "resource": {resource}}
	var tok Tokens
	if err := post(ctx, base+"/oauth/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()), &tok); err != nil {
		return Tokens{}, err
	}
	if tok.AccessToken == "" {
		return Tokens{}, fmt.Errorf("the token endpoint issued no access token")
	}
	tok.ClientID = clientID
	return tok, nil
}

// Register registers a public MCP client with erpgate at base (dynamic
// client registration, RFC 7591) and returns its id.
func Register(ctx context.Context, base string) (string, error) {
	body, _ := json.Marshal(map[string]any{
		"client_name": "erpgate sign-in", "redirect_uris": []string{redirectURI}, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
	})
	var out struct {
		ClientID string `json:"client_id"`
	}
	if err := post(ctx, base+"/oauth/register", "application/json", bytes.NewReader(body), &out); err != nil {
		return "", err
	}
	return out.ClientID, nil
}

func post(ctx context.Context, target, contentType string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: HTTP %d: %s", target, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}
