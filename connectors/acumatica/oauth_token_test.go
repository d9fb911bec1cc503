package acumatica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// echoingTokenEndpoint is a hostile or careless /identity/connect/token
// that quotes every value it was sent (client secret, code, verifier,
// refresh token, password) in its answer: in the OAuth error fields, in
// Acumatica's exception fields (after the words that make it a refused
// sign-in or a seat limit) and as plain text.
func echoingTokenEndpoint(t *testing.T, status int, contentType, errorCode, prefix string) connector.Site {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		var all []string
		for k, v := range r.PostForm {
			all = append(all, k+"="+strings.Join(v, ","))
		}
		echo := prefix + " " + strings.Join(all, " ")
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		if contentType == "text/html" {
			_, _ = w.Write([]byte(echo))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"error": errorCode, "error_description": echo, "error_uri": "https://x/" + echo,
			"message": echo, "exceptionMessage": echo, "exceptionType": "PX.Data.PXException",
		})
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return connector.Site{Slug: "evil", Kind: Kind, BaseURL: u}
}

// TestTokenErrorsQuoteNoSecret: whatever the token endpoint answers, the
// error erpgate returns (shown to MCP clients and operators, written to
// logs) never contains a value erpgate sent it.
func TestTokenErrorsQuoteNoSecret(t *testing.T) {
	const clientSecret, code, verifier, refresh, password = "s3cret-client-XYZ", "code-ABC-123", "verifier-DEF-456", "refresh-GHI-789", "passw0rd-JKL-012"
	client := connector.OAuthClient{ID: "cid@Tenant", Secret: secrets.Secret(clientSecret)}
	cred := serviceCredential{client: client, username: "api-user", password: secrets.Secret(password)}
	hc := &http.Client{}
	check := func(what string, err error, sent ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: succeeded", what)
			return
		}
		for _, s := range sent {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: error quotes %q: %v", what, s, err)
			}
		}
	}
	for _, status := range []int{200, 400, 401, 403, 429, 500, 502} {
		for _, ct := range []string{"application/json", "text/html"} {
			for _, ec := range []string{"", "invalid_grant", "invalid_client", "unauthorized_client", "invalid_scope", "invalid_request"} {
				for _, prefix := range []string{"", "Error: Invalid credentials.", "API Login Limit"} {
					site := echoingTokenEndpoint(t, status, ct, ec, prefix)
					what := strings.Join([]string{http.StatusText(status), ct, ec, prefix}, "/")
					_, err := OAuth{}.ExchangeCode(context.Background(), site, client, hc, code, "https://gw/cb", verifier)
					check("exchange "+what, err, clientSecret, code, verifier)
					_, err = OAuth{}.RefreshToken(context.Background(), site, client, hc, secrets.Secret(refresh))
					check("refresh "+what, err, clientSecret, refresh)
					_, err = passwordGrant(context.Background(), site, cred, hc)
					check("password grant "+what, err, clientSecret, password)
				}
			}
		}
	}
}

// TestTokenRedirectsQuoteNoSecret: a token endpoint that answers with a
// redirect out of the site, its Location quoting every value it was sent,
// is refused by the outbound transport without being followed, and the
// error erpgate returns (written to logs, shown to the operator who
// verifies a service connection) does not carry that Location.
func TestTokenRedirectsQuoteNoSecret(t *testing.T) {
	const clientSecret, code, verifier, refresh, password = "s3cret-client-XYZ", "code-ABC-123", "verifier-DEF-456", "refresh-GHI-789", "passw0rd-JKL-012"
	client := connector.OAuthClient{ID: "cid@Tenant", Secret: secrets.Secret(clientSecret)}
	cred := serviceCredential{client: client, username: "api-user", password: secrets.Secret(password)}
	factory := outbound.NewFactory(outbound.DefaultOptions())
	check := func(what string, err error, sent ...string) {
		t.Helper()
		for _, s := range sent {
			if err == nil || strings.Contains(err.Error(), s) {
				t.Errorf("%s: error quotes %q: %v", what, s, err)
			}
		}
	}
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		for _, away := range []string{"https://elsewhere.example/collect", "/Other/collect", "/%zz/collect"} {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = r.ParseForm()
				w.Header().Set("Location", away+"?"+r.PostForm.Encode())
				w.WriteHeader(status)
			}))
			u, _ := url.Parse(srv.URL + "/AcumaticaERP")
			site := connector.Site{Slug: "evil", Kind: Kind, BaseURL: u}
			hc := factory.Client(site, nil)
			what := fmt.Sprintf("HTTP %d to %s", status, away)
			_, err := OAuth{}.ExchangeCode(context.Background(), site, client, hc, code, "https://gw/cb", verifier)
			check("exchange "+what, err, clientSecret, code, verifier)
			_, err = OAuth{}.RefreshToken(context.Background(), site, client, hc, secrets.Secret(refresh))
			check("refresh "+what, err, clientSecret, refresh)
			_, err = passwordGrant(context.Background(), site, cred, hc)
			check("password grant "+what, err, clientSecret, password)
			srv.Close()
		}
	}
}

// countingTransport stands for the outbound transport: every token
// request must go through the client passed in.
type countingTransport struct {
	n    int
	fail error
}

func (rt *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.n++
	if rt.fail != nil {
		return nil, rt.fail
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestTokenRequestsOnTheWire: what /identity/connect/token receives for
// each grant (through the client passed in, client credentials in the
// body, the PKCE verifier, the connector's scopes only where they belong)
// and how its refusals are classified.
func TestTokenRequestsOnTheWire(t *testing.T) {
	var form url.Values
	var authz string
	answer := jsonAnswer(200, `{"access_token":"at-1","refresh_token":"rt-2","expires_in":3600,"token_type":"Bearer","scope":"api offline_access"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/identity/connect/token" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		_ = r.ParseForm()
		form, authz = r.PostForm, r.Header.Get("Authorization")
		answer(w)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	site := connector.Site{Slug: "wire", Kind: Kind, BaseURL: u}
	client := connector.OAuthClient{ID: "cid@Demo", Secret: "csecret"}
	cred := serviceCredential{client: client, username: "api", password: "pw"}
	rt := &countingTransport{}
	hc := &http.Client{Transport: rt}
	creds := url.Values{"client_id": {"cid@Demo"}, "client_secret": {"csecret"}}
	with := func(v url.Values) string {
		for k, vs := range creds {
			v[k] = vs
		}
		return v.Encode()
	}

	for _, grant := range []struct {
		name string
		run  func() (connector.UpstreamToken, error)
		want string
	}{
		{"code", func() (connector.UpstreamToken, error) {
			return OAuth{}.ExchangeCode(context.Background(), site, client, hc, "the-code", "https://gw/cb", "the-verifier")
		}, with(url.Values{"grant_type": {"authorization_code"}, "code": {"the-code"}, "redirect_uri": {"https://gw/cb"}, "code_verifier": {"the-verifier"}})},
		{"refresh", func() (connector.UpstreamToken, error) {
			return OAuth{}.RefreshToken(context.Background(), site, client, hc, "rt-0")
		}, with(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt-0"}})},
		{"password", func() (connector.UpstreamToken, error) { return passwordGrant(context.Background(), site, cred, hc) },
			with(url.Values{"grant_type": {"password"}, "username": {"api"}, "password": {"pw"}, "scope": {ServiceScope}})},
	} {
		before := rt.n
		tok, err := grant.run()
		if err != nil || form.Encode() != grant.want || authz != "" || rt.n != before+1 {
			t.Errorf("%s grant sent %v (Authorization %q, %d requests through the client): %v; want %s", grant.name, form, authz, rt.n-before, err, grant.want)
		}
		if tok.AccessToken != "at-1" || tok.RefreshToken != "rt-2" || tok.ExpiresIn != time.Hour || tok.Scope != "api offline_access" {
			t.Errorf("%s grant: token = %+v", grant.name, tok)
		}
	}

	invalidCredentials := `{"message":"An error has occurred.","exceptionMessage":"Error: Invalid credentials. Please try again.","exceptionType":"PX.Data.PXException"}`
	for _, tc := range []struct {
		name     string
		answer   func(http.ResponseWriter)
		dead     bool
		refresh  toolerr.Code
		password toolerr.Code
	}{
		{"invalid_grant", jsonAnswer(400, `{"error":"invalid_grant"}`), true, "", toolerr.AuthExpired},
		{"invalid_client", jsonAnswer(400, `{"error":"invalid_client"}`), true, "", toolerr.AuthExpired},
		{"unauthorized_client", jsonAnswer(400, `{"error":"unauthorized_client"}`), true, "", toolerr.PermissionDenied},
		{"invalid_scope", jsonAnswer(400, `{"error":"invalid_scope"}`), false, toolerr.UpstreamInvalidResponse, toolerr.PermissionDenied},
		{"Invalid credentials", jsonAnswer(500, invalidCredentials), true, "", toolerr.AuthExpired},
		{"HTTP 503", jsonAnswer(503, `{}`), false, toolerr.UpstreamUnavailable, toolerr.UpstreamUnavailable},
		{"HTTP 429", jsonAnswer(429, `{"message":"API Login Limit"}`), false, toolerr.RateLimited, toolerr.RateLimited},
		// A seat refusal that comes with invalid_grant (as the simulator
		// answers, with 429, and possibly with 400): not a dead grant.
		{"invalid_grant at the login limit, 429", jsonAnswer(429, `{"error":"invalid_grant","error_description":"API Login Limit"}`), false, toolerr.RateLimited, toolerr.RateLimited},
		{"invalid_grant at the login limit, 400", jsonAnswer(400, `{"error":"invalid_grant","error_description":"API Login Limit"}`), false, toolerr.RateLimited, toolerr.RateLimited},
		{"HTTP 200 without a token", jsonAnswer(200, `{"token_type":"Bearer"}`), false, toolerr.UpstreamInvalidResponse, toolerr.UpstreamInvalidResponse},
		// erpgate sends every token as "Authorization: Bearer"; a token of
		// another type must not be used (RFC 6749 section 7.1).
		{"HTTP 200 with a MAC token", jsonAnswer(200, `{"access_token":"at","token_type":"mac","refresh_token":"rt"}`), false, toolerr.UpstreamInvalidResponse, toolerr.UpstreamInvalidResponse},
		{"body broken off", func(w http.ResponseWriter) {
			w.Header().Set("Content-Length", "100")
			_, _ = w.Write([]byte(`{"access_token":`))
		}, false, toolerr.UpstreamUnavailable, toolerr.UpstreamUnavailable},
	} {
		answer = tc.answer
		_, err := OAuth{}.RefreshToken(context.Background(), site, client, hc, "rt")
		var te *toolerr.Error
		switch {
		case errors.Is(err, connector.ErrRefreshTokenDead) != tc.dead:
			t.Errorf("refresh, %s: dead = %v, want %v: %v", tc.name, !tc.dead, tc.dead, err)
		case !tc.dead && (!errors.As(err, &te) || te.Code != tc.refresh):
			t.Errorf("refresh, %s: error = %v, want %s", tc.name, err, tc.refresh)
		}
		_, err = passwordGrant(context.Background(), site, cred, hc)
		if !errors.As(err, &te) || te.Code != tc.password || errors.Is(err, connector.ErrRefreshTokenDead) {
			t.Errorf("password grant, %s: error = %v, want %s", tc.name, err, tc.password)
		}
	}

	// The transport's own error (here: a refused destination) is kept.
	refused := toolerr.New(toolerr.PermissionDenied, "outbound: destination refused")
	_, err := passwordGrant(context.Background(), site, cred, &http.Client{Transport: &countingTransport{fail: refused}})
	if !errors.Is(err, refused) {
		t.Errorf("transport failure = %v", err)
	}
}

func jsonAnswer(status int, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// TestTokenErrorsQuoteNoSecretAsSent: a token endpoint that quotes the
// request body as it arrived, form-encoded, after the words of a refused
// sign-in. Secrets with characters the form encoding changes (a password
// with "@", "&" or a space, a client secret with "+", "/" or "=") then
// reach the answer only in their encoded spelling, which erpgate must not
// quote either: "p%40ss" is the password to whoever reads it.
func TestTokenErrorsQuoteNoSecretAsSent(t *testing.T) {
	const clientSecret, code, verifier, refresh, password = "s3cret+client/XYZ=", "code-ABC-123", "verifier-DEF-456", "refresh+GHI/789=", "p@ss w0rd&more!"
	client := connector.OAuthClient{ID: "cid@Tenant", Secret: secrets.Secret(clientSecret)}
	cred := serviceCredential{client: client, username: "api-user", password: secrets.Secret(password)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"message": "An error has occurred.", "exceptionType": "PX.Data.PXException",
			"exceptionMessage": "Error: Invalid credentials. Please try again. Request: " + string(body),
		})
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	site := connector.Site{Slug: "evil", Kind: Kind, BaseURL: u}
	hc := &http.Client{}
	check := func(what string, err error, sent ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: succeeded", what)
			return
		}
		for _, s := range sent {
			for _, spelt := range []string{s, url.QueryEscape(s)} {
				if strings.Contains(err.Error(), spelt) {
					t.Errorf("%s: error quotes %q: %v", what, spelt, err)
				}
			}
		}
	}
	_, err := OAuth{}.ExchangeCode(context.Background(), site, client, hc, code, "https://gw/cb", verifier)
	check("exchange", err, clientSecret, code, verifier)
	_, err = OAuth{}.RefreshToken(context.Background(), site, client, hc, secrets.Secret(refresh))
	check("refresh", err, clientSecret, refresh)
	_, err = passwordGrant(context.Background(), site, cred, hc)
	check("password grant", err, clientSecret, password)
}

// TestTokenRedirectsNameNoSecretAsHost: a token endpoint that redirects
// off the site to a host whose name quotes what it was sent (each value
// a valid DNS label) is refused, and the error erpgate returns does not
// name that host either.
func TestTokenRedirectsNameNoSecretAsHost(t *testing.T) {
	const clientSecret, code, verifier, refresh, password = "s3cret-client-XYZ", "code-ABC-123", "verifier-DEF-456", "refresh-GHI-789", "passw0rd-JKL-012"
	client := connector.OAuthClient{ID: "cid@Tenant", Secret: secrets.Secret(clientSecret)}
	cred := serviceCredential{client: client, username: "api-user", password: secrets.Secret(password)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		var labels []string
		for _, k := range []string{"client_secret", "code", "refresh_token", "password"} {
			if v := r.PostForm.Get(k); v != "" {
				labels = append(labels, v)
			}
		}
		w.Header().Set("Location", "https://"+strings.Join(labels, ".")+".elsewhere.example/collect")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	site := connector.Site{Slug: "evil", Kind: Kind, BaseURL: u}
	hc := outbound.NewFactory(outbound.DefaultOptions()).Client(site, nil)
	check := func(what string, err error, sent ...string) {
		t.Helper()
		for _, s := range sent {
			if err == nil || strings.Contains(err.Error(), s) {
				t.Errorf("%s: error quotes %q: %v", what, s, err)
			}
		}
	}
	_, err := OAuth{}.ExchangeCode(context.Background(), site, client, hc, code, "https://gw/cb", verifier)
	check("exchange", err, clientSecret, code)
	_, err = OAuth{}.RefreshToken(context.Background(), site, client, hc, secrets.Secret(refresh))
	check("refresh", err, clientSecret, refresh)
	_, err = passwordGrant(context.Background(), site, cred, hc)
	check("password grant", err, clientSecret, password)
}

// TestSignInLookupsQuoteNoToken: after the code exchange erpgate reads
// the person's userinfo (Identify) and, for a registration, the
// administrators' inquiry (CheckAdmin), with their new access token. An
// Acumatica that answers with a redirect quoting that token, off the site
// or to a Location a client cannot read, is refused; the error, which the
// sign-in pages log, must not quote the token.
func TestSignInLookupsQuoteNoToken(t *testing.T) {
	const token = "access-token-of-the-person-42"
	factory := outbound.NewFactory(outbound.DefaultOptions())
	for _, away := range []string{"https://elsewhere.example/collect?t=", "/%zz/collect?t="} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", away+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			w.WriteHeader(http.StatusFound)
		}))
		u, _ := url.Parse(srv.URL)
		site := connector.Site{Slug: "evil", Kind: Kind, BaseURL: u, Settings: json.RawMessage(`{"tenant":"Demo"}`)}
		c := New(Options{})
		hc := factory.Client(site, c.TokenAuthorizer(secrets.Secret(token)))
		_, err := c.Identify(context.Background(), site, hc)
		if err == nil || strings.Contains(err.Error(), token) {
			t.Errorf("Identify, redirected to %s: error quotes the token: %v", away, err)
		}
		_, err = c.CheckAdmin(context.Background(), site, hc, connector.UpstreamUser{ID: "someone@Demo"})
		if err == nil || strings.Contains(err.Error(), token) {
			t.Errorf("CheckAdmin, redirected to %s: error quotes the token: %v", away, err)
		}
		srv.Close()
	}
}
