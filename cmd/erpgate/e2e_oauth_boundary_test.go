package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestOAuthRefreshTokenIsNotAnAccessToken: a refresh token sent as a bearer
// token never authenticates an MCP request (issue 14, item 2). Used that
// way it would never rotate, so reuse detection would never fire.
func TestOAuthRefreshTokenIsNotAnAccessToken(t *testing.T) {
	r := newOAuthRig(t)
	status, tok := r.exchange(r.code())
	if status != http.StatusOK {
		t.Fatalf("exchange: HTTP %d %v", status, tok)
	}
	access, refresh := tok["access_token"].(string), tok["refresh_token"].(string)
	if resp := rawMCP(t, r.site.MCPURL, access); resp.StatusCode != http.StatusOK {
		t.Fatalf("access token: HTTP %d", resp.StatusCode)
	}
	if resp := rawMCP(t, r.site.MCPURL, refresh); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("refresh token as bearer while its access token is valid: HTTP %d, want 401", resp.StatusCode)
	}
	expireAccessTokens(t, r.gw.DBURL)
	if resp := rawMCP(t, r.site.MCPURL, refresh); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("refresh token as bearer after its access token expired: HTTP %d, want 401", resp.StatusCode)
	}
	// The refresh token itself still refreshes.
	if status, out, _ := r.token(map[string][]string{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}); status != http.StatusOK {
		t.Errorf("refresh: HTTP %d %v", status, out)
	}
}

// registerStatus posts a registration and returns the status and answer.
func registerStatus(t *testing.T, gw *gateway, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(gw.URL+"/oauth/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestOAuthRedirectURIPolicy: registration, Client ID Metadata Documents
// and authorization requests share one redirect-URI policy (issue 14,
// items 5.2 to 5.4).
func TestOAuthRedirectURIPolicy(t *testing.T) {
	r := newOAuthRig(t)
	for _, bad := range []string{"http://127.evil.example/cb", "http://127.0.0.1.nip.io/cb", "ws://127.0.0.1/cb",
		"view-source:https://evil.example/", "jar:https://evil.example/a.jar!/", "filesystem:https://evil.example/temporary/",
		"https://claude.ai@evil.example/cb",
		// A percent-encoded host is decoded by browsers and by the consent
		// page: with a Cyrillic "а" it reads "clаude.ai" and leads to the
		// attacker's xn-- domain.
		"https://cl%D0%B0ude.ai/cb"} {
		body, _ := json.Marshal(map[string]any{"redirect_uris": []string{bad}, "token_endpoint_auth_method": "none"})
		status, out := registerStatus(t, r.gw, string(body))
		if status != http.StatusBadRequest || out["error"] != "invalid_redirect_uri" {
			t.Errorf("register %s: HTTP %d %v", bad, status, out)
		}
	}
	for _, good := range []string{"https://claude.ai/api/mcp/auth_callback", "http://[::1]:8080/cb", "http://localhost/cb", "com.example.app:/cb"} {
		body, _ := json.Marshal(map[string]any{"redirect_uris": []string{good}, "token_endpoint_auth_method": "none"})
		if status, out := registerStatus(t, r.gw, string(body)); status != http.StatusCreated {
			t.Errorf("register %s: HTTP %d %v", good, status, out)
		}
	}
	// Cursor registers its three callbacks in one request; the app-scheme
	// one must not sink the other two.
	cursor := `{"client_name":"Cursor","token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],
		"response_types":["code"],"redirect_uris":["cursor://anysphere.cursor-mcp/oauth/callback",
		"https://www.cursor.com/agents/mcp/oauth/callback","http://localhost:8787/callback"]}`
	if status, out := registerStatus(t, r.gw, cursor); status != http.StatusCreated {
		t.Errorf("register Cursor's callbacks: HTTP %d %v", status, out)
	}

	// A client registered before the policy (stored as it was then) gets
	// nothing at the authorization endpoint: not a redirect, not a code.
	for i, bad := range []string{"https://claude.ai@evil.example/cb", "http://127.evil.example/cb", "jar:https://evil.example/a.jar!/",
		"https://cl%D0%B0ude.ai/cb"} {
		id := fmt.Sprintf("egc_legacy_%d", i)
		execSQL(t, r.gw.DBURL, `INSERT INTO oauth_clients (id, redirect_uris, grant_types, response_types, scope, token_endpoint_auth_method)
			VALUES ($1, $2, '{authorization_code,refresh_token}', '{code}', 'erp:read offline_access', 'none')`, id, []string{bad})
		resp := noFollow(t, r.authorizeURL(func(q url.Values) { q.Set("client_id", id); q.Set("redirect_uri", bad) }))
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("legacy client with %s: HTTP %d, Location %q", bad, resp.StatusCode, resp.Header.Get("Location"))
		}
	}

	// A metadata document listing a fake loopback redirect is refused.
	var docURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": docURL, "redirect_uris": []string{"http://127.0.0.1.nip.io/cb"}})
	}))
	defer srv.Close()
	docURL = srv.URL + "/client.json"
	resp := noFollow(t, r.authorizeURL(func(q url.Values) { q.Set("client_id", docURL); q.Set("redirect_uri", "http://127.0.0.1.nip.io/cb") }))
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Errorf("document with a fake loopback redirect: HTTP %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestOAuthRedirectURIMatchVariesOnlyTheLoopbackPort: a requested redirect
// URI must be one the client registered, character for character, except
// the port of a loopback IP literal (RFC 8252 §7.3). fosite's own loopback
// match also let the scheme change (https to http) and compared decoded
// paths (/a%2Fb for /a/b, /c%62 for /cb).
func TestOAuthRedirectURIMatchVariesOnlyTheLoopbackPort(t *testing.T) {
	r := newOAuthRig(t)
	for _, c := range []struct {
		registered, requested string
		allowed               bool
	}{
		{"http://127.0.0.1/cb", "http://127.0.0.1:54321/cb", true},
		{"http://127.0.0.1:5/cb", "http://127.0.0.1:54321/cb", true},
		{"http://[::1]:8080/cb", "http://[::1]:54321/cb", true},
		{"http://127.0.0.1/cb?x=1", "http://127.0.0.1:54321/cb?x=1", true},
		{"https://app.example/cb", "https://app.example/cb", true},
		{"https://127.0.0.1/cb", "http://127.0.0.1:9/cb", false},
		{"http://127.0.0.1/a/b", "http://127.0.0.1:9/a%2Fb", false},
		{"http://127.0.0.1:5/cb", "http://127.0.0.1:9/c%62", false},
		{"http://127.0.0.1/cb", "http://127.0.0.2:9/cb", false},
		{"http://127.0.0.1/cb", "http://[::1]:9/cb", false},
		{"http://127.0.0.1/cb", "http://localhost:9/cb", false},
		{"http://localhost:3000/cb", "http://localhost:4000/cb", false},
		{"http://127.0.0.1/cb", "http://127.0.0.1:9/cb?x=1", false},
		{"http://127.0.0.1/cb", "http://127.0.0.1:9/CB", false},
		{"https://app.example/cb", "https://app.example:443/cb", false},
	} {
		id := r.register(c.registered)
		resp := noFollow(t, r.authorizeURL(func(q url.Values) { q.Set("client_id", id); q.Set("redirect_uri", c.requested) }))
		if got := resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(resp.Header.Get("Location"), r.sim.URL); got != c.allowed {
			t.Errorf("registered %s, requested %s: HTTP %d to %q, want allowed=%v", c.registered, c.requested,
				resp.StatusCode, resp.Header.Get("Location"), c.allowed)
		}
	}
}

// TestOAuthErrorsBeforeConsentStayOnErpgate: registration is open, so a
// client's redirect URI may be anyone's site. An authorization error before
// the user has approved the client is shown on an erpgate page, never
// sent there with a redirect from an erpgate link (RFC 9700 §4.11.2;
// issue 14, item 5.1). After the consent page, errors go back to the
// client as OAuth errors.
func TestOAuthErrorsBeforeConsentStayOnErpgate(t *testing.T) {
	r := newOAuthRig(t)
	const attacker = "https://attacker.example/cb"
	evil := r.register(attacker)
	for name, mutate := range map[string]func(url.Values){
		"missing PKCE":     func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") },
		"plain PKCE":       func(q url.Values) { q.Set("code_challenge", rigVerifier); q.Set("code_challenge_method", "plain") },
		"unknown resource": func(q url.Values) { q.Set("resource", r.gw.URL+"/sites/nowhere/mcp") },
		"unsupported response type": func(q url.Values) {
			q.Set("response_type", "token")
		},
	} {
		target := r.authorizeURL(func(q url.Values) {
			q.Set("client_id", evil)
			q.Set("redirect_uri", attacker)
			mutate(q)
		})
		status, location, text := pageNoFollow(t, target)
		if status != http.StatusBadRequest || location != "" {
			t.Errorf("%s: HTTP %d to %q", name, status, location)
			continue
		}
		// A plain sentence, not fosite's text.
		if !strings.Contains(text, "cannot be used") || strings.Contains(text, "Make sure that") || strings.Contains(text, "The request is missing") {
			t.Errorf("%s: page says %q", name, text)
		}
	}

	t.Run("the ERP refusing the sign-in is shown on a page", func(t *testing.T) {
		b := r.browser()
		resp, err := b.HC.Get(r.authorizeURL(nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		erp, _ := url.Parse(resp.Header.Get("Location"))
		callback := r.callback(url.Values{"error": {"access_denied"}, "state": {erp.Query().Get("state")}})
		resp, err = b.HC.Get(callback)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(pageText(string(body)), "cancelled") {
			t.Errorf("HTTP %d, Location %q: %s", resp.StatusCode, resp.Header.Get("Location"), pageText(string(body)))
		}
	})

	t.Run("declining on the consent page goes back to the client", func(t *testing.T) {
		b := newHeadlessBrowser(t, e2eRedirectURI, frappeLogin(userWithRole(t, r.sim, "one-company")))
		b.Decision = "deny"
		final, err := b.Run(t.Context(), http.MethodGet, r.authorizeURL(nil), nil)
		if err != nil {
			t.Fatalf("%v (last page %s)", err, pageText(b.LastPage().Body))
		}
		if q := final.Query(); q.Get("error") != "access_denied" || q.Get("state") != "rig-state-1234" || q.Get("iss") != r.gw.URL {
			t.Errorf("answer %v", q)
		}
	})
}

// pageNoFollow sends one GET without following redirects and returns the
// status, the Location and the page's text.
func pageNoFollow(t *testing.T, target string) (int, string, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), pageText(string(body))
}

// TestOAuthConsentShowsTheRealRedirectHost: the consent page names the
// host that will receive the code, also when the request leaves the
// redirect URI to the registration (issue 14, item 5.4).
func TestOAuthConsentShowsTheRealRedirectHost(t *testing.T) {
	r := newOAuthRig(t)
	b := r.browser()
	if _, err := b.Run(t.Context(), http.MethodGet, r.authorizeURL(func(q url.Values) { q.Del("redirect_uri") }), nil); err != nil {
		t.Fatalf("sign-in: %v (last page %s)", err, pageText(b.LastPage().Body))
	}
	for _, p := range b.Pages {
		if strings.Contains(p.URL, "/oauth/consent") {
			if text := pageText(p.Body); !strings.Contains(text, "receive the answers at 127.0.0.1:9 ") {
				t.Errorf("consent page: %s", text)
			}
			return
		}
	}
	t.Fatal("no consent page was shown")
}

// TestOAuthConsentCoversOnlyTheRedirectHostItNamed: the consent page names
// the host that receives the answer, so a consent covers that host only. A
// client may register several redirect URIs; a person who approved it for
// one (a harmless-looking 127.0.0.1) must not have codes sent to another
// (the attacker's https site, where the attacker redeems them with its own
// PKCE verifier) without being asked.
func TestOAuthConsentCoversOnlyTheRedirectHostItNamed(t *testing.T) {
	r := newOAuthRig(t)
	const attacker = "https://attacker.example/cb"
	r.clientID = r.register(e2eRedirectURI, attacker)
	consentShown := func(b *headlessBrowser) string {
		for _, p := range b.Pages {
			if strings.Contains(p.URL, "/oauth/consent") {
				return pageText(p.Body)
			}
		}
		return ""
	}
	signIn := func(redirectURI string) *headlessBrowser {
		t.Helper()
		b := newHeadlessBrowser(t, redirectURI, frappeLogin(r.user))
		final, err := b.Run(t.Context(), http.MethodGet, r.authorizeURL(func(q url.Values) { q.Set("redirect_uri", redirectURI) }), nil)
		if err != nil || final.Query().Get("code") == "" {
			t.Fatalf("sign-in to %s: %v %v (last page %s)", redirectURI, final, err, pageText(b.LastPage().Body))
		}
		return b
	}
	if text := consentShown(signIn(e2eRedirectURI)); !strings.Contains(text, "127.0.0.1:9") {
		t.Fatalf("first consent page: %q", text)
	}
	if text := consentShown(signIn(attacker)); !strings.Contains(text, "attacker.example") {
		t.Errorf("a code went to attacker.example on the consent given for 127.0.0.1; consent page: %q", text)
	}
	// What was approved is not asked again: the same loopback host on
	// another port, and the other host once approved.
	if text := consentShown(signIn("http://127.0.0.1:54321/callback")); text != "" {
		t.Errorf("asked again for 127.0.0.1 on another port: %q", text)
	}
	if text := consentShown(signIn(attacker)); text != "" {
		t.Errorf("asked again for an approved host: %q", text)
	}
	// localhost is a host of its own, but on any port too.
	r.clientID = r.register("http://localhost:3000/cb", "http://localhost:4000/cb")
	if text := consentShown(signIn("http://localhost:3000/cb")); !strings.Contains(text, "localhost:3000") {
		t.Errorf("consent page for localhost: %q", text)
	}
	if text := consentShown(signIn("http://localhost:4000/cb")); text != "" {
		t.Errorf("asked again for localhost on another port: %q", text)
	}
}

// TestOAuthBrowserClientsPassTheCORSPreflight: registration, token and
// revocation answer any origin (Access-Control-Allow-Origin: *), for MCP
// clients that run in a browser. A registration is JSON, which a browser
// only sends after an OPTIONS preflight; answered 405, that preflight
// made the header useless and browser clients could not register.
func TestOAuthBrowserClientsPassTheCORSPreflight(t *testing.T) {
	r := newOAuthRig(t)
	for _, path := range []string{"/oauth/register", "/oauth/token", "/oauth/revoke"} {
		req, _ := http.NewRequest(http.MethodOptions, r.gw.URL+path, nil)
		req.Header.Set("Origin", "https://inspector.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode/100 != 2 || h.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "content-type") ||
			h.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("preflight of %s: HTTP %d %v", path, resp.StatusCode, h)
		}
	}
	// Other methods are still refused.
	req, _ := http.NewRequest(http.MethodPut, r.gw.URL+"/oauth/register", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT /oauth/register: HTTP %d", resp.StatusCode)
	}
}

// TestOAuthConsentNamesCannotTurnTheHostAround: a client's name is its own
// words, registered or published by anyone. A right-to-left override in it
// would run on through the consent sentence and show the redirect host
// reversed: ia.edualc.xyz, the attacker's, reads "zyx.claude.ai". The
// consent page shows names without bidirectional controls.
func TestOAuthConsentNamesCannotTurnTheHostAround(t *testing.T) {
	r := newOAuthRig(t)
	const name = "Claude \u202eDesktop\u2066\u200f"
	body, _ := json.Marshal(map[string]any{"redirect_uris": []string{e2eRedirectURI}, "token_endpoint_auth_method": "none", "client_name": name})
	status, out := registerStatus(t, r.gw, string(body))
	if status != http.StatusCreated {
		t.Fatalf("register: HTTP %d %v", status, out)
	}
	if out["client_name"] != "Claude Desktop" {
		t.Errorf("registered client_name = %+q, want %+q", out["client_name"], "Claude Desktop")
	}
	registered := out["client_id"].(string)

	var docURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": docURL, "client_name": name, "redirect_uris": []string{e2eRedirectURI}})
	}))
	defer srv.Close()
	docURL = srv.URL + "/client.json"

	for _, clientID := range []string{registered, docURL} {
		b := r.browser()
		if _, err := b.Run(t.Context(), http.MethodGet, r.authorizeURL(func(q url.Values) { q.Set("client_id", clientID) }), nil); err != nil {
			t.Fatalf("sign-in with %s: %v (last page %s)", clientID, err, pageText(b.LastPage().Body))
		}
		shown := false
		for _, p := range b.Pages {
			if !strings.Contains(p.URL, "/oauth/consent?") {
				continue
			}
			shown = true
			if strings.ContainsAny(p.Body, "\u202e\u2066\u200f") {
				t.Errorf("consent page for %s carries bidirectional controls: %+q", clientID, pageText(p.Body))
			}
			if !strings.Contains(pageText(p.Body), "Claude Desktop") {
				t.Errorf("consent page for %s does not name the client: %q", clientID, pageText(p.Body))
			}
		}
		if !shown {
			t.Errorf("no consent page for %s", clientID)
		}
	}
}

// TestOAuthConsentBoundsAPublishedClientName: a registered client's name
// is at most 200 characters, but a Client ID Metadata Document's is
// whatever its publisher wrote, up to the document's 5 KiB. The consent
// page names the client in its heading and again before the host that
// receives the answers: a name of thousands of characters would bury
// that host, the one fact a person can check, under the publisher's
// text. The page shows a published name cut to 200 characters, as a
// registered one.
func TestOAuthConsentBoundsAPublishedClientName(t *testing.T) {
	r := newOAuthRig(t)
	const tail = "the-end-of-the-name"
	name := "Claude " + strings.Repeat("Desktop ", 500) + tail
	var docURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": docURL, "client_name": name, "redirect_uris": []string{e2eRedirectURI}})
	}))
	defer srv.Close()
	docURL = srv.URL + "/client.json"

	b := r.browser()
	if _, err := b.Run(t.Context(), http.MethodGet, r.authorizeURL(func(q url.Values) { q.Set("client_id", docURL) }), nil); err != nil {
		t.Fatalf("sign-in: %v (last page %s)", err, pageText(b.LastPage().Body))
	}
	shown := false
	for _, p := range b.Pages {
		if !strings.Contains(p.URL, "/oauth/consent?") {
			continue
		}
		shown = true
		// The whole page (pageText gives its first 400 characters).
		if !strings.Contains(p.Body, "Claude Desktop Desktop") || !strings.Contains(p.Body, "127.0.0.1:9") {
			t.Errorf("the consent page does not name the client and its host: %s", pageText(p.Body))
		}
		if strings.Contains(p.Body, tail) || strings.Contains(p.Body, strings.Repeat("Desktop ", 30)) {
			t.Errorf("the consent page shows the client's name of %d characters whole (a page of %d bytes)", len(name), len(p.Body))
		}
	}
	if !shown {
		t.Error("no consent page")
	}
}
