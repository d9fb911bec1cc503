package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// oauthJargon is wording that must never reach a person on an erpgate
// page: OAuth error codes and fosite's descriptions, which are for
// developers (issue 16). Before the page kit, the sign-in pages said
// "invalid_client: a URL client id must use https." and "(error code
// invalid_request)".
var oauthJargon = []string{
	"invalid_request", "invalid_client", "invalid_scope", "invalid_state", "invalid_target", "invalid_grant",
	"unsupported_response_type", "unsupported_response_mode", "unauthorized_client", "access_denied", "server_error",
	"The request is missing a required parameter", "Client authentication failed", "invalid, unknown or malformed",
	"The authorization server does not support", "The requested scope is invalid", "error code", "fosite",
}

// TestOAuthErrorPagesSpeakPlainly walks the sign-in's error paths in a
// client that follows no redirect and reads each page: an erpgate page,
// with a heading and the kit's policy, and none of fosite's wording.
func TestOAuthErrorPagesSpeakPlainly(t *testing.T) {
	r := newOAuthRig(t)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	authorize := func(mutate func(q url.Values)) func() (*http.Response, error) {
		return func() (*http.Response, error) { return hc.Get(r.authorizeURL(mutate)) }
	}
	for _, tc := range []struct {
		name string
		do   func() (*http.Response, error)
	}{
		{"an unknown client", authorize(func(q url.Values) { q.Set("client_id", "no-such-client") })},
		{"a redirect URI the client did not register", authorize(func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:9/elsewhere") })},
		{"no PKCE", authorize(func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") })},
		{"plain PKCE", authorize(func(q url.Values) { q.Set("code_challenge_method", "plain") })},
		{"an implicit grant", authorize(func(q url.Values) { q.Set("response_type", "token") })},
		{"no response type", authorize(func(q url.Values) { q.Del("response_type") })},
		{"a short state", authorize(func(q url.Values) { q.Set("state", "abc") })},
		{"an unknown site", authorize(func(q url.Values) { q.Set("resource", r.gw.URL+"/sites/nowhere/mcp") })},
		{"no resource", authorize(func(q url.Values) { q.Del("resource") })},
		{"a URL client id over http", authorize(func(q url.Values) { q.Set("client_id", "http://client.example/oauth/metadata.json") })},
		{"an oversized state", authorize(func(q url.Values) { q.Set("state", strings.Repeat("s", 2000)) })},
		{"a callback nobody started", func() (*http.Response, error) {
			return hc.Get(r.gw.URL + "/oauth/callback?state=egf_unknown&code=x")
		}},
		{"a consent page without a sign-in", func() (*http.Response, error) {
			return hc.Get(r.gw.URL + "/oauth/consent?flow=egf_unknown")
		}},
		{"a consent post without a form", func() (*http.Response, error) {
			return hc.PostForm(r.gw.URL+"/oauth/consent", url.Values{"decision": {"accept"}})
		}},
		{"a site choice without a sign-in", func() (*http.Response, error) {
			return hc.PostForm(r.gw.URL+"/oauth/site", url.Values{"erp_url": {"https://erp.example"}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := tc.do()
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body := string(raw)
			if resp.StatusCode < 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("HTTP %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), pageText(body))
			}
			if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") || !strings.Contains(body, "<h1>") {
				t.Errorf("not an erpgate page: CSP %q: %s", resp.Header.Get("Content-Security-Policy"), pageText(body))
			}
			for _, phrase := range oauthJargon {
				if strings.Contains(strings.ToLower(body), strings.ToLower(phrase)) {
					t.Errorf("the page says %q: %s", phrase, pageText(body))
				}
			}
		})
	}
}
