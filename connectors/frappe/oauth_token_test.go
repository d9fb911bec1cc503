package frappe

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// echoingTokenEndpoint is a hostile or careless get_token that quotes
// every value it was sent (client secret, code, verifier, refresh token)
// in its answer: in the OAuth error fields, in Frappe's own exception
// fields and as plain text.
func echoingTokenEndpoint(t *testing.T, status int, contentType string) connector.Site {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		var all []string
		for k, v := range r.PostForm {
			all = append(all, k+"="+strings.Join(v, ","))
		}
		echo := strings.Join(all, " ")
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		if contentType == "text/html" {
			_, _ = w.Write([]byte("<html>" + echo + "</html>"))
			return
		}
		msgs, _ := json.Marshal([]string{`{"message": "` + echo + `"}`})
		_ = json.NewEncoder(w).Encode(map[string]any{
			"error": "invalid_request", "error_description": echo, "error_uri": "https://x/" + echo,
			"exception": "frappe.exceptions.ValidationError: " + echo, "exc_type": "ValidationError",
			"_server_messages": string(msgs), "message": echo,
		})
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return connector.Site{Slug: "evil", Kind: Kind, BaseURL: u}
}

// TestTokenErrorsQuoteNoSecret: whatever get_token answers, the error
// erpgate returns (shown to MCP clients, written to logs) never contains
// a value erpgate sent it.
func TestTokenErrorsQuoteNoSecret(t *testing.T) {
	const clientSecret, code, verifier, refresh = "s3cret-client-XYZ", "code-ABC-123", "verifier-DEF-456", "refresh-GHI-789"
	client := connector.OAuthClient{ID: "cid", Secret: secrets.Secret(clientSecret)}
	for _, status := range []int{200, 400, 401, 403, 404, 417, 429, 500, 502} {
		for _, ct := range []string{"application/json", "text/html"} {
			site := echoingTokenEndpoint(t, status, ct)
			hc := &http.Client{}
			_, err := (&Connector{}).ExchangeCode(context.Background(), site, client, hc, code, "https://gw/cb", verifier)
			if err == nil {
				t.Fatalf("HTTP %d %s: exchange succeeded", status, ct)
			}
			for _, s := range []string{clientSecret, code, verifier} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("HTTP %d %s: exchange error quotes %q: %v", status, ct, s, err)
				}
			}
			_, err = (&Connector{}).RefreshToken(context.Background(), site, client, hc, secrets.Secret(refresh))
			if err == nil {
				t.Fatalf("HTTP %d %s: refresh succeeded", status, ct)
			}
			for _, s := range []string{clientSecret, refresh} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("HTTP %d %s: refresh error quotes %q: %v", status, ct, s, err)
				}
			}
		}
	}
}

// TestTokenRedirectsQuoteNoSecret: a get_token that answers with a
// redirect off the site, its Location quoting every value it was sent, is
// refused by the outbound transport without being followed, and the
// error erpgate returns (written to logs) does not carry that Location.
func TestTokenRedirectsQuoteNoSecret(t *testing.T) {
	const clientSecret, code, verifier, refresh = "s3cret-client-XYZ", "code-ABC-123", "verifier-DEF-456", "refresh-GHI-789"
	client := connector.OAuthClient{ID: "cid", Secret: secrets.Secret(clientSecret)}
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		for _, away := range []string{"https://elsewhere.example/collect", "/other-app/collect", "/%zz/collect"} {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = r.ParseForm()
				w.Header().Set("Location", away+"?"+r.PostForm.Encode())
				w.WriteHeader(status)
			}))
			u, _ := url.Parse(srv.URL)
			site := connector.Site{Slug: "evil", Kind: Kind, BaseURL: u}
			hc := factory.Client(site, nil)
			_, err := (&Connector{}).ExchangeCode(context.Background(), site, client, hc, code, "https://gw/cb", verifier)
			for _, s := range []string{clientSecret, code, verifier} {
				if err == nil || strings.Contains(err.Error(), s) {
					t.Errorf("HTTP %d to %s: exchange error quotes %q: %v", status, away, s, err)
				}
			}
			_, err = (&Connector{}).RefreshToken(context.Background(), site, client, hc, secrets.Secret(refresh))
			for _, s := range []string{clientSecret, refresh} {
				if err == nil || strings.Contains(err.Error(), s) {
					t.Errorf("HTTP %d to %s: refresh error quotes %q: %v", status, away, s, err)
				}
			}
			srv.Close()
		}
	}
}

// countingTransport stands for the outbound transport: every token
// request must go through the client passed in.
type countingTransport struct {
	reqs []*http.Request
	fail error
}

func (rt *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.reqs = append(rt.reqs, r)
	if rt.fail != nil {
		return nil, rt.fail
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestTokenRequestsOnTheWire: what get_token receives (through the client
// passed in, credentials in the body, the PKCE verifier, no scope) and how
// its answers are read.
func TestTokenRequestsOnTheWire(t *testing.T) {
	var form url.Values
	var authz string
	answer := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"at-1","refresh_token":"rt-2","expires_in":3600,"token_type":"Bearer","scope":"all openid"}`))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/method/frappe.integrations.oauth2.get_token" || r.Method != http.MethodPost {
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
	client := connector.OAuthClient{ID: "cid", Secret: "csecret"}
	rt := &countingTransport{}
	hc := &http.Client{Transport: rt}

	tok, err := (&Connector{}).ExchangeCode(context.Background(), site, client, hc, "the-code", "https://gw/cb", "the-verifier")
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{"grant_type": {"authorization_code"}, "code": {"the-code"}, "redirect_uri": {"https://gw/cb"},
		"code_verifier": {"the-verifier"}, "client_id": {"cid"}, "client_secret": {"csecret"}}
	if form.Encode() != want.Encode() || authz != "" || len(rt.reqs) != 1 {
		t.Errorf("exchange sent %v (Authorization %q) in %d requests through the client; want %v in the body", form, authz, len(rt.reqs), want)
	}
	if tok.AccessToken != "at-1" || tok.RefreshToken != "rt-2" || tok.ExpiresIn != time.Hour || tok.Scope != "all openid" {
		t.Errorf("token = %+v", tok)
	}

	// A refresh answered without a new refresh token keeps the one presented.
	answer = func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"at-3","expires_in":"60"}`))
	}
	tok, err = (&Connector{}).RefreshToken(context.Background(), site, connector.OAuthClient{ID: "cid"}, hc, "rt-2")
	want = url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt-2"}, "client_id": {"cid"}}
	if err != nil || form.Encode() != want.Encode() || len(rt.reqs) != 2 {
		t.Fatalf("refresh sent %v through the client %d times: %v", form, len(rt.reqs), err)
	}
	if tok.AccessToken != "at-3" || tok.RefreshToken != "rt-2" || tok.ExpiresIn != time.Minute {
		t.Errorf("token = %+v", tok)
	}

	for _, tc := range []struct {
		name   string
		answer func(http.ResponseWriter)
		dead   bool
		code   toolerr.Code
	}{
		{"invalid_grant", jsonAnswer(400, `{"error":"invalid_grant"}`), true, ""},
		{"invalid_client", jsonAnswer(400, `{"error":"invalid_client"}`), true, ""},
		{"invalid_request", jsonAnswer(400, `{"error":"invalid_request"}`), false, toolerr.InvalidArgument},
		{"HTTP 503", jsonAnswer(503, `{"exc_type":"ServiceUnavailable"}`), false, toolerr.UpstreamUnavailable},
		{"HTTP 429", jsonAnswer(429, `{}`), false, toolerr.RateLimited},
		{"HTTP 200 without a token", jsonAnswer(200, `{"token_type":"Bearer"}`), false, toolerr.UpstreamInvalidResponse},
		{"HTTP 200 with an error", jsonAnswer(200, `{"error":"invalid_grant"}`), false, toolerr.UpstreamInvalidResponse},
		{"HTTP 200 not JSON", jsonAnswer(200, `<html>`), false, toolerr.UpstreamInvalidResponse},
		// erpgate sends every token as "Authorization: Bearer"; a token of
		// another type must not be used (RFC 6749 section 7.1).
		{"HTTP 200 with a MAC token", jsonAnswer(200, `{"access_token":"at","token_type":"mac","refresh_token":"rt"}`), false, toolerr.UpstreamInvalidResponse},
		{"HTTP 200 with a DPoP token", jsonAnswer(200, `{"access_token":"at","token_type":"DPoP"}`), false, toolerr.UpstreamInvalidResponse},
		{"body broken off", func(w http.ResponseWriter) {
			w.Header().Set("Content-Length", "100")
			_, _ = w.Write([]byte(`{"access_token":`))
		}, false, toolerr.UpstreamUnavailable},
	} {
		answer = tc.answer
		_, err := (&Connector{}).RefreshToken(context.Background(), site, client, hc, "rt")
		var te *toolerr.Error
		switch {
		case errors.Is(err, connector.ErrRefreshTokenDead) != tc.dead:
			t.Errorf("%s: dead = %v, want %v: %v", tc.name, !tc.dead, tc.dead, err)
		case !tc.dead && (!errors.As(err, &te) || te.Code != tc.code):
			t.Errorf("%s: error = %v, want %s", tc.name, err, tc.code)
		}
	}

	// The transport's own error (here: a refused destination) is kept.
	refused := toolerr.New(toolerr.PermissionDenied, "outbound: destination refused")
	_, err = (&Connector{}).RefreshToken(context.Background(), site, client, &http.Client{Transport: &countingTransport{fail: refused}}, "rt")
	if !errors.Is(err, refused) || errors.Is(err, connector.ErrRefreshTokenDead) {
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

// TestTokenRedirectsNameNoSecretAsHost: a get_token that redirects off
// the site to a host whose name quotes what it was sent (the client
// secret, the code, the refresh token, each a valid DNS label) is
// refused, and the error erpgate returns (written to logs) does not name
// that host either.
func TestTokenRedirectsNameNoSecretAsHost(t *testing.T) {
	const clientSecret, code, verifier, refresh = "s3cret-client-XYZ", "code-ABC-123", "verifier-DEF-456", "refresh-GHI-789"
	client := connector.OAuthClient{ID: "cid", Secret: secrets.Secret(clientSecret)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		labels := []string{r.PostForm.Get("client_secret"), r.PostForm.Get("code"), r.PostForm.Get("refresh_token"), "elsewhere", "example"}
		w.Header().Set("Location", "https://"+strings.Join(slices.DeleteFunc(labels, func(s string) bool { return s == "" }), ".")+"/collect")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	site := connector.Site{Slug: "evil", Kind: Kind, BaseURL: u}
	hc := factory.Client(site, nil)
	_, err := (&Connector{}).ExchangeCode(context.Background(), site, client, hc, code, "https://gw/cb", verifier)
	for _, s := range []string{clientSecret, code} {
		if err == nil || strings.Contains(err.Error(), s) {
			t.Errorf("exchange error quotes %q: %v", s, err)
		}
	}
	_, err = (&Connector{}).RefreshToken(context.Background(), site, client, hc, secrets.Secret(refresh))
	for _, s := range []string{clientSecret, refresh} {
		if err == nil || strings.Contains(err.Error(), s) {
			t.Errorf("refresh error quotes %q: %v", s, err)
		}
	}
}

// TestSignInLookupsQuoteNoToken: after the code exchange erpgate asks the
// ERP who signed in (Identify) and, for a registration, whether they
// administer it (CheckAdmin), with their new access token. An ERP that
// answers with a redirect quoting the token it was sent, off the site or
// to a Location a client cannot read, is refused; the error, which the
// sign-in pages log, must not quote the token.
func TestSignInLookupsQuoteNoToken(t *testing.T) {
	const token = "access-token-of-the-person-42"
	for _, away := range []string{"https://elsewhere.example/collect?t=", "/%zz/collect?t="} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", away+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			w.WriteHeader(http.StatusFound)
		}))
		u, _ := url.Parse(srv.URL)
		site := connector.Site{Slug: "evil", Kind: Kind, BaseURL: u}
		c := New()
		hc := factory.Client(site, c.TokenAuthorizer(secrets.Secret(token)))
		_, err := c.Identify(context.Background(), site, hc)
		if err == nil || strings.Contains(err.Error(), token) {
			t.Errorf("Identify, redirected to %s: error quotes the token: %v", away, err)
		}
		_, err = c.CheckAdmin(context.Background(), site, hc, connector.UpstreamUser{ID: "someone@example.com"})
		if err == nil || strings.Contains(err.Error(), token) {
			t.Errorf("CheckAdmin, redirected to %s: error quotes the token: %v", away, err)
		}
		srv.Close()
	}
}
