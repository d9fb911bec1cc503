package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// oauthRig is a gateway with a Frappe OAuth site and a client registered
// by dynamic registration, driven by hand to test what a well-behaved
// client never does.
type oauthRig struct {
	t        *testing.T
	gw       *gateway
	sim      *frappetest.Server
	site     devSite
	clientID string
	user     frappetest.User
}

func newOAuthRig(t *testing.T) *oauthRig {
	t.Helper()
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	r := &oauthRig{t: t, gw: gw, sim: sim, site: site, user: userWithRole(t, sim, "all-companies")}
	r.clientID = r.register(e2eRedirectURI)
	return r
}

// register registers a public client and returns its id.
func (r *oauthRig) register(redirectURIs ...string) string {
	r.t.Helper()
	body, _ := json.Marshal(map[string]any{"redirect_uris": redirectURIs, "token_endpoint_auth_method": "none", "client_name": "rig"})
	resp, err := http.Post(r.gw.URL+"/oauth/register", "application/json", strings.NewReader(string(body)))
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusCreated || out["client_id"] == "" {
		r.t.Fatalf("register: HTTP %d %v", resp.StatusCode, out)
	}
	return out["client_id"].(string)
}

const rigVerifier = "rig-verifier-0123456789-0123456789-0123456789"

func s256(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorizeQuery is a correct authorization request, which mutate may
// spoil.
func (r *oauthRig) authorizeURL(mutate func(q url.Values)) string {
	q := url.Values{
		"response_type": {"code"}, "client_id": {r.clientID}, "redirect_uri": {e2eRedirectURI},
		"state": {"rig-state-1234"}, "code_challenge": {s256(rigVerifier)}, "code_challenge_method": {"S256"},
		"resource": {r.site.MCPURL}, "scope": {"erp:read"},
	}
	if mutate != nil {
		mutate(q)
	}
	return r.gw.URL + "/oauth/authorize?" + q.Encode()
}

// browser returns a headless browser that signs in as the rig's user.
func (r *oauthRig) browser() *headlessBrowser {
	return newHeadlessBrowser(r.t, e2eRedirectURI, frappeLogin(r.user))
}

// code runs a whole sign-in and returns the code.
func (r *oauthRig) code() string {
	r.t.Helper()
	b := r.browser()
	final, err := b.Run(context.Background(), http.MethodGet, r.authorizeURL(nil), nil)
	if err != nil {
		r.t.Fatalf("sign-in: %v", err)
	}
	if final.Query().Get("iss") != r.gw.URL || final.Query().Get("code") == "" {
		r.t.Fatalf("authorization response %s lacks code or iss", final)
	}
	return final.Query().Get("code")
}

// token posts to the token endpoint.
func (r *oauthRig) token(form url.Values) (int, map[string]any, http.Header) {
	r.t.Helper()
	form.Set("client_id", r.clientID)
	resp, err := http.PostForm(r.gw.URL+"/oauth/token", form)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, resp.Header
}

func (r *oauthRig) exchange(code string) (int, map[string]any) {
	status, out, h := r.token(url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {e2eRedirectURI}, "code_verifier": {rigVerifier}, "resource": {r.site.MCPURL}})
	if h.Get("Cache-Control") != "no-store" {
		r.t.Errorf("token response Cache-Control = %q", h.Get("Cache-Control"))
	}
	return status, out
}

// callback is the rig's site's redirect URI with q, as the ERP would send
// the browser back.
func (r *oauthRig) callback(q url.Values) string {
	return r.gw.callbackURL(r.t, r.site.Slug) + "?" + q.Encode()
}

// noFollow sends one GET without following redirects.
func noFollow(t *testing.T, target string) *http.Response {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestOAuthRefusals(t *testing.T) {
	r := newOAuthRig(t)

	t.Run("metadata advertises what MCP clients need", func(t *testing.T) {
		resp, err := http.Get(r.gw.URL + "/.well-known/oauth-authorization-server")
		if err != nil {
			t.Fatal(err)
		}
		var md map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&md)
		resp.Body.Close()
		if md["issuer"] != r.gw.URL || md["client_id_metadata_document_supported"] != true ||
			md["authorization_response_iss_parameter_supported"] != true || md["registration_endpoint"] != r.gw.URL+"/oauth/register" {
			t.Errorf("metadata = %v", md)
		}
		if m, _ := json.Marshal(md["code_challenge_methods_supported"]); string(m) != `["S256"]` {
			t.Errorf("code_challenge_methods_supported = %s", m)
		}
		resp = rawMCP(t, r.site.MCPURL, "")
		want := `Bearer resource_metadata="` + r.gw.URL + `/.well-known/oauth-protected-resource/sites/acme/mcp", scope="erp:read"`
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want {
			t.Errorf("HTTP %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		// The generic door too, and the document its challenge names
		// (RFC 9728) is about /mcp and names erpgate as its
		// authorization server.
		resp = rawMCP(t, r.gw.URL+"/mcp", "")
		resp.Body.Close()
		want = `Bearer resource_metadata="` + r.gw.URL + `/.well-known/oauth-protected-resource/mcp", scope="erp:read"`
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want {
			t.Errorf("/mcp: HTTP %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		resp, err = http.Get(r.gw.URL + "/.well-known/oauth-protected-resource/mcp")
		if err != nil {
			t.Fatal(err)
		}
		var prm struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&prm)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || prm.Resource != r.gw.URL+"/mcp" || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != r.gw.URL {
			t.Errorf("/mcp resource metadata: HTTP %d %+v", resp.StatusCode, prm)
		}
	})

	t.Run("an MCP URL whose slug no site could have is not found", func(t *testing.T) {
		// Upper case, reserved, UUID-shaped, too long, a leading "-": none
		// is a resource of this server, so no challenge sends a client to
		// sign in for it.
		for _, slug := range []string{"Acme", "api", "6f1c1f9e-4b7a-4c43-9d1e-2a4f3f0b8c11", strings.Repeat("a", 49), "-acme", "ac_me"} {
			resp := rawMCP(t, r.gw.URL+"/sites/"+slug+"/mcp", "")
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound || resp.Header.Get("WWW-Authenticate") != "" {
				t.Errorf("%s: HTTP %d, WWW-Authenticate %q", slug, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
		}
	})

	for name, mutate := range map[string]func(url.Values){
		"missing PKCE": func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") },
		"plain PKCE":   func(q url.Values) { q.Set("code_challenge", rigVerifier); q.Set("code_challenge_method", "plain") },
		// RFC 6749 §3.1 and §4.1.2.1: a parameter sent more than once is
		// an invalid request, as Frappe's oauthlib also answers it; the
		// first value does not win.
		"a repeated redirect_uri": func(q url.Values) { q.Add("redirect_uri", "https://attacker.example/callback") },
		"a repeated resource":     func(q url.Values) { q.Add("resource", q.Get("resource")) },
		"a repeated state":        func(q url.Values) { q.Add("state", "rig-state-5678") },
	} {
		t.Run(name+" is refused on a page, not sent to the client's redirect URI", func(t *testing.T) {
			// Before the user has approved the client, an error stays on
			// erpgate (RFC 9700 §4.11.2): registration is open.
			resp := noFollow(t, r.authorizeURL(mutate))
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
				t.Fatalf("HTTP %d to %q", resp.StatusCode, resp.Header.Get("Location"))
			}
		})
	}

	t.Run("a redirect URI that was not registered gets nothing", func(t *testing.T) {
		for _, bad := range []string{"http://127.0.0.1:9/elsewhere", "https://attacker.example/callback"} {
			resp := noFollow(t, r.authorizeURL(func(q url.Values) { q.Set("redirect_uri", bad) }))
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
				t.Errorf("%s: HTTP %d, Location %q", bad, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
	})

	t.Run("a loopback redirect may use another port", func(t *testing.T) {
		resp := noFollow(t, r.authorizeURL(func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:54321/callback") }))
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), r.sim.URL) {
			t.Errorf("HTTP %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})

	t.Run("an unknown resource is refused", func(t *testing.T) {
		resp := noFollow(t, r.authorizeURL(func(q url.Values) { q.Set("resource", r.gw.URL+"/sites/nowhere/mcp") }))
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("HTTP %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})

	t.Run("a code works once; reusing it revokes its tokens", func(t *testing.T) {
		code := r.code()
		status, first := r.exchange(code)
		if status != http.StatusOK || first["access_token"] == nil || first["refresh_token"] == nil {
			t.Fatalf("first exchange: HTTP %d %v", status, first)
		}
		if resp := rawMCP(t, r.site.MCPURL, first["access_token"].(string)); resp.StatusCode != http.StatusOK {
			t.Fatalf("fresh token: HTTP %d", resp.StatusCode)
		}
		status, second := r.exchange(code)
		if status != http.StatusBadRequest || second["error"] != "invalid_grant" {
			t.Errorf("second exchange: HTTP %d %v", status, second)
		}
		if resp := rawMCP(t, r.site.MCPURL, first["access_token"].(string)); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("token of a reused code: HTTP %d", resp.StatusCode)
		}
	})

	t.Run("a wrong PKCE verifier is refused and does not spend the code", func(t *testing.T) {
		// Someone who saw the code in a redirect, without the verifier,
		// must not be able to spoil the real client's sign-in with it.
		code := r.code()
		status, out, _ := r.token(url.Values{"grant_type": {"authorization_code"}, "code": {code},
			"redirect_uri": {e2eRedirectURI}, "code_verifier": {"not-the-verifier-0123456789-0123456789-01"}})
		if status != http.StatusBadRequest || out["error"] != "invalid_grant" {
			t.Errorf("HTTP %d %v", status, out)
		}
		status, out, _ = r.token(url.Values{"grant_type": {"authorization_code"}, "code": {code},
			"redirect_uri": {e2eRedirectURI}})
		if status != http.StatusBadRequest || out["error"] != "invalid_grant" {
			t.Errorf("no verifier: HTTP %d %v", status, out)
		}
		if status, out := r.exchange(code); status != http.StatusOK || out["access_token"] == nil {
			t.Fatalf("the real client's exchange after the attempts: HTTP %d %v", status, out)
		}
		if status, out := r.exchange(code); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
			t.Errorf("the code redeemed twice: HTTP %d %v", status, out)
		}
	})

	t.Run("refresh tokens rotate; reuse after the grace period revokes the family", func(t *testing.T) {
		_, tok := r.exchange(r.code())
		r1 := tok["refresh_token"].(string)
		refresh := func(rt string) (int, map[string]any) {
			status, out, _ := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
			return status, out
		}
		status, second := refresh(r1)
		if status != http.StatusOK || second["refresh_token"] == r1 {
			t.Fatalf("refresh: HTTP %d %v", status, second)
		}
		// Within the grace period a concurrent refresh with r1 still works.
		if status, out := refresh(r1); status != http.StatusOK {
			t.Fatalf("refresh within grace: HTTP %d %v", status, out)
		}
		execSQL(t, r.gw.DBURL, `UPDATE oauth_tokens SET used_at = now() - interval '1 hour' WHERE kind = 'refresh' AND used_at IS NOT NULL`)
		if status, out := refresh(r1); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
			t.Errorf("reuse after grace: HTTP %d %v", status, out)
		}
		if status, out := refresh(second["refresh_token"].(string)); status != http.StatusBadRequest {
			t.Errorf("the family's newest refresh token still works: HTTP %d %v", status, out)
		}
		if resp := rawMCP(t, r.site.MCPURL, second["access_token"].(string)); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the family's access token still works: HTTP %d", resp.StatusCode)
		}
	})

	t.Run("a token for one site is refused at another and at /mcp", func(t *testing.T) {
		other := frappetest.NewServer(frappetest.Options{})
		defer other.Close()
		b := frappeOAuthSite(t, r.gw, "beta", other)
		_, tok := r.exchange(r.code())
		at := tok["access_token"].(string)
		resp := rawMCP(t, b.MCPURL, at)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "/sites/beta/mcp") {
			t.Errorf("site B: HTTP %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		if resp := rawMCP(t, r.gw.URL+"/mcp", at); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("/mcp: HTTP %d", resp.StatusCode)
		}
		if resp := rawMCP(t, r.site.MCPURL, at); resp.StatusCode != http.StatusOK {
			t.Errorf("own site: HTTP %d", resp.StatusCode)
		}
	})

	t.Run("an expired sign-in state is refused", func(t *testing.T) {
		b := r.browser()
		resp, err := b.HC.Get(r.authorizeURL(nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		erp, _ := url.Parse(resp.Header.Get("Location"))
		state := erp.Query().Get("state")
		execSQL(t, r.gw.DBURL, `UPDATE oauth_signin_flows SET expires_at = now() - interval '1 minute'`)
		_, err = b.Run(context.Background(), http.MethodGet, r.callback(url.Values{"code": {"x"}, "state": {state}}), nil)
		if p := b.LastPage(); err == nil || p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "expired") {
			t.Errorf("HTTP %d: %s", p.Status, pageText(p.Body))
		}
	})

	// Bound to the browser: TestOAuthCallbackInAnotherBrowserEndsTheSignIn.
	t.Run("a state is single-use", func(t *testing.T) {
		b := r.browser()
		resp, err := b.HC.Get(r.authorizeURL(nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		erp, _ := url.Parse(resp.Header.Get("Location"))
		state := erp.Query().Get("state")
		callback := r.callback(url.Values{"code": {"not-a-code"}, "state": {state}})
		_, _ = b.Run(context.Background(), http.MethodGet, callback, nil)
		if p := b.LastPage(); p.Status != http.StatusBadGateway {
			t.Errorf("first use with a bad code: HTTP %d: %s", p.Status, pageText(p.Body))
		}
		_, _ = b.Run(context.Background(), http.MethodGet, callback, nil)
		if p := b.LastPage(); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "cannot be used again") {
			t.Errorf("second use: HTTP %d: %s", p.Status, pageText(p.Body))
		}
	})

	t.Run("a forged CSRF token is refused", func(t *testing.T) {
		// A user who has not consented yet, so the consent form is shown.
		b := newHeadlessBrowser(t, e2eRedirectURI, frappeLogin(userWithRole(t, r.sim, "one-company")))
		b.Fields["csrf"] = "forged-token"
		_, err := b.Run(context.Background(), http.MethodGet, r.authorizeURL(nil), nil)
		p := b.LastPage()
		if err == nil || p.Status != http.StatusForbidden || !strings.Contains(p.Body, "CSRF") {
			t.Errorf("HTTP %d: %s", p.Status, pageText(p.Body))
		}
	})

	t.Run("a confidential client authenticates with its secret", func(t *testing.T) {
		body := `{"redirect_uris":["` + e2eRedirectURI + `"],"token_endpoint_auth_method":"client_secret_basic","client_name":"confidential"}`
		resp, err := http.Post(r.gw.URL+"/oauth/register", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var reg map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&reg)
		resp.Body.Close()
		secret, _ := reg["client_secret"].(string)
		if resp.StatusCode != http.StatusCreated || secret == "" || reg["token_endpoint_auth_method"] != "client_secret_basic" {
			t.Fatalf("register: HTTP %d %v", resp.StatusCode, reg)
		}
		public := r.clientID
		r.clientID = reg["client_id"].(string)
		defer func() { r.clientID = public }()
		exchange := func(code, secret string) int {
			form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {e2eRedirectURI}, "code_verifier": {rigVerifier}}
			req, _ := http.NewRequest(http.MethodPost, r.gw.URL+"/oauth/token", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.SetBasicAuth(url.QueryEscape(r.clientID), url.QueryEscape(secret))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if status := exchange(r.code(), "wrong-secret"); status != http.StatusUnauthorized {
			t.Errorf("wrong secret: HTTP %d", status)
		}
		if status := exchange(r.code(), secret); status != http.StatusOK {
			t.Errorf("right secret: HTTP %d", status)
		}
	})

	t.Run("registered clients live in Postgres: another replica knows them", func(t *testing.T) {
		other := startGateway(t, r.gw.DBURL, map[string]string{"ERPGATE_ENCRYPTION_KEYS": r.gw.Keys})
		target := strings.Replace(r.authorizeURL(func(q url.Values) {
			q.Set("resource", strings.Replace(r.site.MCPURL, r.gw.URL, other.URL, 1))
		}), r.gw.URL, other.URL, 1)
		resp := noFollow(t, target)
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), r.sim.URL) {
			t.Errorf("HTTP %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})

	t.Run("a client metadata document naming another client_id is a clean error", func(t *testing.T) {
		var docURL string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"client_id": docURL + "-other", "redirect_uris": []string{e2eRedirectURI}})
		}))
		defer srv.Close()
		docURL = srv.URL + "/client.json"
		resp := noFollow(t, r.authorizeURL(func(q url.Values) { q.Set("client_id", docURL) }))
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("HTTP %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
}

// TestOAuthGenericEndpoint signs in through /mcp: the user types their
// ERP's address, which is matched by origin; nothing lists the sites.
func TestOAuthGenericEndpoint(t *testing.T) {
	sim, gw, _ := startFrappeOAuthGateway(t, nil)
	user := userWithRole(t, sim, "one-company")

	t.Run("an unknown address is not matched and nothing is listed", func(t *testing.T) {
		b := newHeadlessBrowser(t, e2eRedirectURI, map[string]string{"erp_url": "https://unknown.example.com"})
		_, err := tryConnectOAuth(t, gw.URL+"/mcp", b)
		p := b.LastPage()
		if err == nil || p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "no ERP at that address") ||
			strings.Contains(p.Body, "acme") || strings.Contains(p.Body, sim.URL) {
			t.Errorf("HTTP %d: %s", p.Status, pageText(p.Body))
		}
	})

	t.Run("the typed address picks the site", func(t *testing.T) {
		fields := frappeLogin(user)
		fields["erp_url"] = sim.URL + "/app/home"
		c := connectOAuth(t, gw.URL+"/mcp", fields)
		out := mustSucceed(t, callTool(t, c.cs, "get_current_user", nil), "get_current_user")
		if out["user"] != user.Email {
			t.Errorf("get_current_user = %v", out)
		}
	})
}

// TestOAuthDisabledSiteGetsNoNewTokens: a disabled site's MCP URL refuses
// its tokens, and its token endpoint must not mint new ones either: neither
// from a refresh token nor from a code issued just before. A client that
// kept refreshing would get a token that 401s, refresh again, and never be
// told to sign in (where it would learn the site is disabled).
func TestOAuthDisabledSiteGetsNoNewTokens(t *testing.T) {
	r := newOAuthRig(t)
	_, tok := r.exchange(r.code())
	code := r.code()
	if err := r.gw.admin.do(t.Context(), http.MethodPatch, "/sites/"+r.site.ID, map[string]any{"status": "disabled"}, nil); err != nil {
		t.Fatal(err)
	}
	if resp := rawMCP(t, r.site.MCPURL, tok["access_token"].(string)); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("access token of a disabled site: HTTP %d", resp.StatusCode)
	}
	if status, out, _ := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}}); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Errorf("refresh at a disabled site: HTTP %d %v", status, out)
	}
	if status, out := r.exchange(code); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Errorf("code exchange at a disabled site: HTTP %d %v", status, out)
	}
	// Enabled again, the refresh token works: it was refused, not spent.
	if err := r.gw.admin.do(t.Context(), http.MethodPatch, "/sites/"+r.site.ID, map[string]any{"status": "active"}, nil); err != nil {
		t.Fatal(err)
	}
	if status, out, _ := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}}); status != http.StatusOK {
		t.Errorf("refresh after the site was enabled again: HTTP %d %v", status, out)
	}
}

// TestOAuthResponseModeQueryIsAccepted: the metadata advertises
// response_modes_supported ["query"], so a client that names it explicitly
// must get the same sign-in as one that leaves it out; the modes erpgate
// does not give (fragment, form_post) stay refused on a page.
func TestOAuthResponseModeQueryIsAccepted(t *testing.T) {
	r := newOAuthRig(t)
	resp := noFollow(t, r.authorizeURL(func(q url.Values) { q.Set("response_mode", "query") }))
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), r.sim.URL) {
		t.Errorf("response_mode=query: HTTP %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	b := r.browser()
	final, err := b.Run(t.Context(), http.MethodGet, r.authorizeURL(func(q url.Values) { q.Set("response_mode", "query") }), nil)
	if err != nil || final.Query().Get("code") == "" || final.Query().Get("iss") != r.gw.URL {
		t.Errorf("sign-in with response_mode=query: %v %v (last page %s)", final, err, pageText(b.LastPage().Body))
	}
	for _, mode := range []string{"fragment", "form_post"} {
		resp := noFollow(t, r.authorizeURL(func(q url.Values) { q.Set("response_mode", mode) }))
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("response_mode=%s: HTTP %d to %q", mode, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

// TestOAuthRefreshGraceEndsOnceTheFamilyMovesOn: a rotated refresh token
// keeps working for the grace period so that two concurrent refreshes with
// it both succeed. Once a token issued after it has itself been used, a
// request with the old token is no longer concurrent with anything: it is
// reuse (a copy that leaked), and revokes the family, grace or not.
func TestOAuthRefreshGraceEndsOnceTheFamilyMovesOn(t *testing.T) {
	r := newOAuthRig(t)
	refresh := func(rt string) (int, map[string]any) {
		status, out, _ := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
		return status, out
	}
	_, tok := r.exchange(r.code())
	r1 := tok["refresh_token"].(string)
	status, second := refresh(r1)
	if status != http.StatusOK {
		t.Fatalf("refresh: HTTP %d %v", status, second)
	}
	// Concurrent with the first: still fine.
	status, sibling := refresh(r1)
	if status != http.StatusOK {
		t.Fatalf("refresh within grace: HTTP %d %v", status, sibling)
	}
	status, third := refresh(second["refresh_token"].(string))
	if status != http.StatusOK {
		t.Fatalf("refresh with the successor: HTTP %d %v", status, third)
	}
	if status, out := refresh(r1); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Errorf("the first token after its successor was used: HTTP %d %v", status, out)
	}
	for name, rt := range map[string]string{"newest": third["refresh_token"].(string), "sibling": sibling["refresh_token"].(string)} {
		if status, out := refresh(rt); status != http.StatusBadRequest {
			t.Errorf("the family's %s refresh token still works: HTTP %d %v", name, status, out)
		}
	}
	if resp := rawMCP(t, r.site.MCPURL, third["access_token"].(string)); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the family's access token still works: HTTP %d", resp.StatusCode)
	}
}

// TestOAuthRefreshGraceGivesOneBranchOnly: the attack the grace period
// opens. A thief holding a copy of a refresh token uses it within the grace
// after the real client's refresh, and gets a second branch of the family.
// Each branch then uses each of its tokens once, so reuse detection would
// never fire and both would live until the grant ends. Only one child of a
// token may be carried on: once one is used, its siblings end, and a
// sibling used after that is reuse, which revokes the family, whichever
// side it is.
func TestOAuthRefreshGraceGivesOneBranchOnly(t *testing.T) {
	r := newOAuthRig(t)
	refresh := func(rt string) (int, map[string]any) {
		status, out, _ := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
		return status, out
	}
	for _, thiefFirst := range []bool{false, true} {
		_, tok := r.exchange(r.code())
		r1 := tok["refresh_token"].(string)
		status, real := refresh(r1)
		if status != http.StatusOK {
			t.Fatalf("refresh: HTTP %d %v", status, real)
		}
		status, stolen := refresh(r1)
		if status != http.StatusOK {
			t.Fatalf("refresh within grace: HTTP %d %v", status, stolen)
		}
		first, second := real, stolen
		if thiefFirst {
			first, second = stolen, real
		}
		status, moved := refresh(first["refresh_token"].(string))
		if status != http.StatusOK {
			t.Fatalf("thief first %v: the first branch's refresh: HTTP %d %v", thiefFirst, status, moved)
		}
		if status, out := refresh(second["refresh_token"].(string)); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
			t.Errorf("thief first %v: the other branch still refreshes: HTTP %d %v", thiefFirst, status, out)
		}
		if status, out := refresh(moved["refresh_token"].(string)); status != http.StatusBadRequest {
			t.Errorf("thief first %v: the family outlived a reused branch: HTTP %d %v", thiefFirst, status, out)
		}
		for name, at := range map[string]string{"moved on": moved["access_token"].(string), "other branch": second["access_token"].(string)} {
			if resp := rawMCP(t, r.site.MCPURL, at); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("thief first %v: the %s access token still works: HTTP %d", thiefFirst, name, resp.StatusCode)
			}
		}
	}
}

// TestOAuthRefreshGraceKeepsEitherAnswer: two concurrent refreshes with one
// token both get tokens, and the client may keep either answer: the one it
// keeps goes on refreshing.
func TestOAuthRefreshGraceKeepsEitherAnswer(t *testing.T) {
	r := newOAuthRig(t)
	refresh := func(rt string) (int, map[string]any) {
		status, out, _ := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
		return status, out
	}
	for _, keepSecond := range []bool{false, true} {
		_, tok := r.exchange(r.code())
		r1 := tok["refresh_token"].(string)
		_, a := refresh(r1)
		_, b := refresh(r1)
		kept := a
		if keepSecond {
			kept = b
		}
		rt := kept["refresh_token"].(string)
		for i := range 3 {
			status, out := refresh(rt)
			if status != http.StatusOK {
				t.Fatalf("keep second %v: refresh %d of the kept answer: HTTP %d %v", keepSecond, i, status, out)
			}
			rt = out["refresh_token"].(string)
			if resp := rawMCP(t, r.site.MCPURL, out["access_token"].(string)); resp.StatusCode != http.StatusOK {
				t.Errorf("keep second %v: access token of refresh %d: HTTP %d", keepSecond, i, resp.StatusCode)
			}
		}
	}
}
