package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/erpgate/erpgate/web/pagekit"
)

// TestOAuthRegistrationIsBounded: open registration must not be a way to
// fill the database (issue 14, item 6). Before: 1,000 registrations of
// 15 KiB each were all stored, unknown fields included.
func TestOAuthRegistrationIsBounded(t *testing.T) {
	gw := startGateway(t, "", nil)
	reg := func(extra map[string]any) (int, map[string]any) {
		doc := map[string]any{"redirect_uris": []string{e2eRedirectURI}, "token_endpoint_auth_method": "none", "client_name": "bounded"}
		for k, v := range extra {
			doc[k] = v
		}
		body, _ := json.Marshal(doc)
		return registerStatus(t, gw, string(body))
	}

	status, out := reg(map[string]any{"padding": strings.Repeat("x", 15<<10)})
	if status != http.StatusBadRequest || out["error"] != "invalid_client_metadata" || !strings.Contains(out["error_description"].(string), "8 KiB") {
		t.Errorf("15 KiB registration: HTTP %d %v", status, out)
	}
	status, out = reg(map[string]any{"client_uri": "https://app.example/" + strings.Repeat("x", 2000)})
	if status != http.StatusBadRequest || !strings.Contains(out["error_description"].(string), "client_uri") {
		t.Errorf("2 KiB client_uri: HTTP %d %v", status, out)
	}
	status, out = reg(map[string]any{"contacts": strings.Split(strings.Repeat("a@b.example,", 20), ",")[:20]})
	if status != http.StatusBadRequest || !strings.Contains(out["error_description"].(string), "contacts") {
		t.Errorf("20 contacts: HTTP %d %v", status, out)
	}
	// Fields erpgate does not use are not stored.
	status, out = reg(map[string]any{"padding": strings.Repeat("x", 4<<10), "client_uri": "https://app.example/"})
	if status != http.StatusCreated {
		t.Fatalf("registration with an unknown field: HTTP %d %v", status, out)
	}
	if n := queryInt(t, gw.DBURL, `SELECT octet_length(metadata::text) FROM oauth_clients WHERE id = $1`, out["client_id"]); n > 200 {
		t.Errorf("stored metadata is %d bytes", n)
	}

	// One source registers at most the burst at once (30 by default).
	created, limited := 1, 0
	for range 60 {
		resp, err := http.Post(gw.URL+"/oauth/register", "application/json",
			strings.NewReader(`{"redirect_uris":["`+e2eRedirectURI+`"],"token_endpoint_auth_method":"none"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusCreated:
			created++
		case http.StatusTooManyRequests:
			if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 {
				t.Errorf("429 with Retry-After %q", resp.Header.Get("Retry-After"))
			}
			limited++
		default:
			t.Fatalf("HTTP %d", resp.StatusCode)
		}
	}
	if created > 31 || limited == 0 {
		t.Errorf("%d registrations accepted and %d refused from one source, want at most 31 accepted", created, limited)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM oauth_clients`); n > 31 {
		t.Errorf("%d clients stored", n)
	}
}

// TestOAuthAuthorizeIsBounded: an authorization request's parameters are
// bounded, and one source cannot start sign-ins (or learn sites' ERP
// addresses from the redirect) without limit (issue 14, items 6 and 8).
func TestOAuthAuthorizeIsBounded(t *testing.T) {
	r := newOAuthRig(t)
	status, location, text := pageNoFollow(t, r.authorizeURL(func(q url.Values) { q.Set("state", strings.Repeat("s", 32<<10)) }))
	if status != http.StatusBadRequest || location != "" || !strings.Contains(text, "state") {
		t.Errorf("32 KiB state: HTTP %d to %q: %s", status, location, text)
	}
	// A request line longer than the server reads is refused before.
	if status, location, _ := pageNoFollow(t, r.authorizeURL(func(q url.Values) { q.Set("state", strings.Repeat("s", 600<<10)) })); status != http.StatusRequestHeaderFieldsTooLarge || location != "" {
		t.Errorf("600 KiB state: HTTP %d to %q", status, location)
	}
	if n := queryInt(t, r.gw.DBURL, `SELECT count(*) FROM oauth_signin_flows`); n != 0 {
		t.Errorf("%d sign-in flows stored for a refused request", n)
	}
	if resp := noFollow(t, r.authorizeURL(func(q url.Values) { q.Set("state", strings.Repeat("s", 1024)) })); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("1 KiB state: HTTP %d", resp.StatusCode)
	}

	// Probing slugs, known or not, counts against one budget per source.
	redirects, limited := 0, 0
	for i := range 60 {
		target := r.authorizeURL(nil)
		if i%2 == 1 {
			target = r.authorizeURL(func(q url.Values) { q.Set("resource", r.gw.URL+"/sites/guess"+strconv.Itoa(i)+"/mcp") })
		}
		status, location, text := pageNoFollow(t, target)
		switch {
		case status == http.StatusSeeOther && strings.HasPrefix(location, r.sim.URL):
			redirects++
		case status == http.StatusTooManyRequests:
			limited++
			if !strings.Contains(text, "Too many") {
				t.Errorf("429 page: %s", text)
			}
		case status == http.StatusBadRequest:
		default:
			t.Fatalf("HTTP %d to %q", status, location)
		}
	}
	if limited == 0 || redirects > 16 {
		t.Errorf("%d sign-ins started and %d refused from one source", redirects, limited)
	}
}

// TestOAuthSiteChooserIsRateLimited: /mcp's page that matches a typed ERP
// address against the registry answers one source a bounded number of
// times (issue 14, item 8). Before, it confirmed addresses without limit.
func TestOAuthSiteChooserIsRateLimited(t *testing.T) {
	r := newOAuthRig(t)
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(r.authorizeURL(func(q url.Values) { q.Set("resource", r.gw.URL+"/mcp") }))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	field := func(name string) string {
		m := regexp.MustCompile(`name="` + name + `" value="([^"]+)"`).FindStringSubmatch(string(page))
		if m == nil {
			t.Fatalf("no %s field on the page (HTTP %d)", name, resp.StatusCode)
		}
		return m[1]
	}
	form := url.Values{"flow": {field("flow")}, "csrf": {field("csrf")}}
	answered, limited := 0, 0
	for i := range 30 {
		form.Set("erp_url", "https://erp"+strconv.Itoa(i)+".example")
		resp, err := hc.PostForm(r.gw.URL+"/oauth/site", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusUnprocessableEntity:
			answered++
		case http.StatusTooManyRequests:
			limited++
		default:
			t.Fatalf("HTTP %d", resp.StatusCode)
		}
	}
	if answered > 11 || limited == 0 {
		t.Errorf("%d addresses checked and %d refused from one source", answered, limited)
	}
}

// TestOAuthSourceBehindTrustedProxies: X-Forwarded-For names the source
// only when the request comes from a configured proxy; otherwise anyone
// could escape the limits by sending a new header each time.
func TestOAuthSourceBehindTrustedProxies(t *testing.T) {
	count := func(gw *gateway) (created, limited int) {
		for i := range 40 {
			switch registerFrom(t, gw, "198.51.100."+strconv.Itoa(i+1)) {
			case http.StatusCreated:
				created++
			case http.StatusTooManyRequests:
				limited++
			}
		}
		return created, limited
	}
	if created, limited := count(startGateway(t, "", nil)); limited == 0 {
		t.Errorf("without trusted proxies a new X-Forwarded-For escaped the limit: %d created, %d refused", created, limited)
	}
	if created, limited := count(startGateway(t, "", map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"})); created != 40 {
		t.Errorf("behind a trusted proxy 40 sources were limited as one: %d created, %d refused", created, limited)
	}
}

// TestOAuthRegistrationIsBoundedPerIPv6Site: one holder of an IPv6 /48
// has 65,536 /64s, each a source of its own. Before, registering from a
// new /64 each time escaped the bound (600 of 600 created); now the /64s
// of one /48 share sixteen sources' worth (30 at once each by default),
// and a /64 of another /48 is unaffected.
func TestOAuthRegistrationIsBoundedPerIPv6Site(t *testing.T) {
	gw := startGateway(t, "", map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"})
	register := func(forwardedFor string) int { return registerFrom(t, gw, forwardedFor) }
	start := time.Now()
	statuses := map[int]int{}
	for i := range 600 {
		statuses[register(fmt.Sprintf("2001:db8:42:%x::1", i))]++
	}
	// Sixteen bursts of 30, and what sixteen a minute refilled meanwhile.
	allowed := 16*30 + 16*int(time.Since(start).Minutes()+1)
	if statuses[http.StatusCreated] > allowed || statuses[http.StatusTooManyRequests] == 0 {
		t.Errorf("600 registrations from 600 /64s of one /48: %v, want at most %d created", statuses, allowed)
	}
	if status := register("2001:db8:43::1"); status != http.StatusCreated {
		t.Errorf("a /64 of another /48: HTTP %d", status)
	}
}

// registerFrom registers a public client at gw as if from forwardedFor
// (believed only behind a trusted proxy) and returns the HTTP status.
func registerFrom(t *testing.T, gw *gateway, forwardedFor string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, gw.URL+"/oauth/register",
		strings.NewReader(`{"redirect_uris":["`+e2eRedirectURI+`"],"token_endpoint_auth_method":"none"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", forwardedFor)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestOAuthMetadataDocumentFetchesAreLimitedPerSource: every new URL
// client id, at any endpoint, makes erpgate fetch from a host the caller
// chose; one source gets a bounded number of such fetches (issue 14,
// item 6).
func TestOAuthMetadataDocumentFetchesAreLimitedPerSource(t *testing.T) {
	gw := startGateway(t, "", nil)
	var fetches atomic.Int32
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		http.NotFound(w, r)
	}))
	defer docs.Close()
	for i := range 25 {
		resp, err := http.PostForm(gw.URL+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {"x"},
			"client_id": {docs.URL + "/client-" + strconv.Itoa(i) + ".json"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Fatalf("token request %d: HTTP %d", i, resp.StatusCode)
		}
	}
	if n := fetches.Load(); n > 11 {
		t.Errorf("25 token requests naming new URL client ids made %d fetches, want at most 11", n)
	}
}

// TestMadeUpTokensAreBoundedPerSource: valid tokens are cached, so a token
// that is not valid is the one request that always costs a database
// lookup. One source sending made-up tokens, at either door, must get at
// most its burst of lookups (100, then ten a second) and then 429 with
// Retry-After, while its own valid token and other sources' made-up
// tokens are still answered as before.
func TestMadeUpTokensAreBoundedPerSource(t *testing.T) {
	sim, _, site := startFrappeOAuthGateway(t, loopbackProxyEnv)
	person := connectOAuth(t, site.MCPURL, frappeLogin(userWithRole(t, sim, "all-companies"))).source.current().AccessToken

	madeUp := func(like string, i int) string {
		// The shape of a real token of the door, other bytes.
		return like[:len(like)-8] + fmt.Sprintf("%08d", i)
	}

	for i, door := range []struct{ name, endpoint, valid string }{
		{"service tokens", site.ServiceMCPURL, site.ServiceToken},
		{"access tokens", site.MCPURL, person},
	} {
		t.Run(door.name, func(t *testing.T) {
			attacker, other := fmt.Sprintf("198.51.100.%d", 10+i), fmt.Sprintf("203.0.113.%d", 10+i)
			// The valid token is cached by a lookup that no invalidation
			// overtook: the site was made a moment ago, and a lookup
			// running while its notifications arrive is not kept. The
			// second call, after they have arrived, is.
			for range 2 {
				if status, _, body := mcpCallFrom(t, door.endpoint, door.valid, attacker); status != http.StatusOK {
					t.Fatalf("the valid token: HTTP %d %s", status, body)
				}
				time.Sleep(250 * time.Millisecond)
			}
			start := time.Now()
			statuses := map[int]int{}
			for n := range 300 {
				status, h, body := mcpCallFrom(t, door.endpoint, madeUp(door.valid, n), attacker)
				statuses[status]++
				if status == http.StatusTooManyRequests {
					if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 {
						t.Errorf("429 with Retry-After %q", h.Get("Retry-After"))
					}
					if !strings.Contains(body, "not valid") {
						t.Errorf("429 body: %s", body)
					}
				}
			}
			t.Logf("300 made-up tokens from one source: %v", statuses)
			// The burst, and what ten a second refilled meanwhile.
			allowed := 100 + 10*int(time.Since(start).Seconds()+1)
			if statuses[http.StatusUnauthorized] > allowed || statuses[http.StatusTooManyRequests] == 0 {
				t.Errorf("300 made-up tokens from one source: %v, want at most %d looked up (401) and the rest 429", statuses, allowed)
			}
			if status, _, body := mcpCallFrom(t, door.endpoint, door.valid, attacker); status != http.StatusOK {
				t.Errorf("the attacker's address with its cached valid token: HTTP %d %s", status, body)
			}
			if status, _, body := mcpCallFrom(t, door.endpoint, madeUp(door.valid, 1), other); status != http.StatusUnauthorized {
				t.Errorf("another source's made-up token: HTTP %d %s", status, body)
			}
		})
	}
}

// TestOAuthTokenAndRevocationBodiesAreBounded: /oauth/token and
// /oauth/revoke read their body before they know the client, so, like
// registration and /oauth/authorize, they must bound it. Before, a request
// padded with megabytes (in memory, or as multipart file parts in
// temporary files) was read whole and then served.
func TestOAuthTokenAndRevocationBodiesAreBounded(t *testing.T) {
	r := newOAuthRig(t)
	_, tok := r.exchange(r.code())
	refresh := tok["refresh_token"].(string)
	padding := strings.Repeat("x", 2<<20)
	post := func(path, contentType string, body io.Reader) (int, map[string]any) {
		t.Helper()
		resp, err := http.Post(r.gw.URL+path, contentType, body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	refreshForm := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {r.clientID}}

	padded := url.Values{"padding": {padding}}
	for k, v := range refreshForm {
		padded[k] = v
	}
	if status, out := post("/oauth/token", "application/x-www-form-urlencoded", strings.NewReader(padded.Encode())); status != http.StatusBadRequest {
		t.Errorf("refresh padded with 2 MiB: HTTP %d %v", status, out)
	}
	var mp strings.Builder
	w := multipart.NewWriter(&mp)
	for k, v := range refreshForm {
		_ = w.WriteField(k, v[0])
	}
	fw, _ := w.CreateFormFile("padding", "padding.bin")
	_, _ = io.WriteString(fw, padding)
	_ = w.Close()
	if status, out := post("/oauth/token", w.FormDataContentType(), strings.NewReader(mp.String())); status != http.StatusBadRequest {
		t.Errorf("refresh with a 2 MiB multipart file part: HTTP %d %v", status, out)
	}
	revoke := url.Values{"token": {refresh}, "client_id": {r.clientID}, "padding": {padding}}
	if status, out := post("/oauth/revoke", "application/x-www-form-urlencoded", strings.NewReader(revoke.Encode())); status != http.StatusBadRequest {
		t.Errorf("revocation padded with 2 MiB: HTTP %d %v", status, out)
	}
	// Refused, not served: the refresh token was neither rotated nor
	// revoked, and a normal request still works.
	if status, out, _ := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}); status != http.StatusOK {
		t.Errorf("refresh without padding: HTTP %d %v", status, out)
	}
}

// TestTokensOfADisabledSiteAreBoundedPerSource: a token whose site is
// disabled is valid but cannot be served; it is never cached, so each
// request with it costs the database a lookup, like a made-up token.
// Registration is open, so anyone can own a site, issue tokens and
// disable it: such lookups are bounded per source like made-up tokens'
// (before, 300 of them from one source were all looked up).
func TestTokensOfADisabledSiteAreBoundedPerSource(t *testing.T) {
	sim, gw, site := startFrappeOAuthGateway(t, loopbackProxyEnv)
	person := connectOAuth(t, site.MCPURL, frappeLogin(userWithRole(t, sim, "all-companies"))).source.current().AccessToken
	if err := gw.admin.do(context.Background(), http.MethodPatch, "/sites/"+site.ID, map[string]any{"status": "disabled"}, nil); err != nil {
		t.Fatal(err)
	}
	for i, door := range []struct{ name, endpoint, token string }{
		{"service tokens", site.ServiceMCPURL, site.ServiceToken},
		{"access tokens", site.MCPURL, person},
	} {
		t.Run(door.name, func(t *testing.T) {
			source := fmt.Sprintf("198.51.100.%d", 20+i)
			start := time.Now()
			statuses := map[int]int{}
			for range 300 {
				status, _, _ := mcpCallFrom(t, door.endpoint, door.token, source)
				statuses[status]++
			}
			t.Logf("300 requests with a disabled site's token from one source: %v", statuses)
			allowed := 100 + 10*int(time.Since(start).Seconds()+1)
			if statuses[http.StatusTooManyRequests] == 0 || 300-statuses[http.StatusTooManyRequests] > allowed {
				t.Errorf("300 requests with a disabled site's token from one source: %v, want at most %d looked up and the rest 429", statuses, allowed)
			}
		})
	}
}

// TestMadeUpTokenRequestsAreBoundedPerSource: a token or revocation
// request is a database lookup of its client and of the code or token it
// carries, and needs no authentication. The MCP doors bound the lookups of
// tokens that are not valid per source; the token endpoint did not, so
// one source could make as many lookups as it could send requests (before,
// 300 refresh requests with made-up tokens were all looked up). Failed
// token requests, and revocations, now count with the made-up MCP tokens.
func TestMadeUpTokenRequestsAreBoundedPerSource(t *testing.T) {
	gw := startGateway(t, "", map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"})
	client := registerPublicClient(t, gw.URL, "bounded", e2eRedirectURI)
	post := func(path, source string, form url.Values) (int, http.Header, string) {
		req, _ := http.NewRequest(http.MethodPost, gw.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", source)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(body)
	}
	for i, path := range []string{"/oauth/token", "/oauth/revoke"} {
		t.Run(path, func(t *testing.T) {
			source := fmt.Sprintf("198.51.100.%d", 30+i)
			start := time.Now()
			statuses := map[int]int{}
			for n := range 300 {
				status, h, body := post(path, source, url.Values{"grant_type": {"refresh_token"}, "token": {fmt.Sprintf("made-up-%d", n)},
					"refresh_token": {fmt.Sprintf("made-up-%d", n)}, "client_id": {client}})
				statuses[status]++
				if status == http.StatusTooManyRequests {
					if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 || !strings.Contains(body, "not valid") {
						t.Errorf("429 with Retry-After %q: %s", h.Get("Retry-After"), body)
					}
				}
			}
			t.Logf("300 requests with made-up tokens from one source: %v", statuses)
			allowed := 100 + 10*int(time.Since(start).Seconds()+1)
			if statuses[http.StatusTooManyRequests] == 0 || 300-statuses[http.StatusTooManyRequests] > allowed {
				t.Errorf("300 requests with made-up tokens from one source: %v, want at most %d looked up and the rest 429", statuses, allowed)
			}
			// Another source is answered as before.
			if status, _, body := post(path, fmt.Sprintf("203.0.113.%d", 30+i), url.Values{"grant_type": {"refresh_token"}, "token": {"made-up"},
				"refresh_token": {"made-up"}, "client_id": {client}}); status == http.StatusTooManyRequests {
				t.Errorf("another source: HTTP %d %s", status, body)
			}
		})
	}
}

// TestMadeUpSignInFlowsAreBoundedPerSource: the sign-in steps that name a
// flow (the ERP's callback, the consent page and its form) look the flow
// up in the database on every request, before anything else. Anyone can
// send them, with a browser cookie and a form token of their own making
// and a made-up flow id: each cost a transaction, as many as one source
// liked. They now share the per-source bound of lookups that fail with
// the token doors: one source gets its burst (100, then ten a second)
// and then 429 with Retry-After, while another source is answered as
// before.
func TestMadeUpSignInFlowsAreBoundedPerSource(t *testing.T) {
	_, gw, site := startFrappeOAuthGateway(t, loopbackProxyEnv)
	browser := strings.Repeat("b", 43)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	step := func(kind int, flow, source string) (int, http.Header, string) {
		t.Helper()
		var req *http.Request
		switch kind {
		case 0: // the ERP's callback, in the browser that started the flow
			req, _ = http.NewRequest(http.MethodGet, gw.callbackURL(t, site.Slug)+"?code=c&state="+url.QueryEscape(flow), nil)
		case 1: // the callback in another browser (no cookie)
			req, _ = http.NewRequest(http.MethodGet, gw.callbackURL(t, site.Slug)+"?code=c&state="+url.QueryEscape(flow), nil)
		case 2: // the consent page
			req, _ = http.NewRequest(http.MethodGet, gw.URL+"/oauth/consent?flow="+url.QueryEscape(flow), nil)
		default: // the consent form, its token made for the cookie
			form := url.Values{"flow": {flow}, "csrf": {pagekit.CSRFToken(browser, flow)}, "decision": {"accept"}}
			req, _ = http.NewRequest(http.MethodPost, gw.URL+"/oauth/consent", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if kind != 1 {
			req.AddCookie(&http.Cookie{Name: "erpgate_signin", Value: browser})
		}
		req.Header.Set("X-Forwarded-For", source)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(raw)
	}
	attacker, other := "198.51.100.20", "203.0.113.20"
	start := time.Now()
	statuses := map[int]int{}
	for n := range 300 {
		status, h, _ := step(n%4, fmt.Sprintf("made-up-flow-%08d", n), attacker)
		statuses[status]++
		if status == http.StatusTooManyRequests {
			if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 {
				t.Errorf("429 with Retry-After %q", h.Get("Retry-After"))
			}
		}
	}
	t.Logf("300 made-up sign-in flows from one source: %v", statuses)
	// The burst, and what ten a second refilled meanwhile.
	allowed := 100 + 10*int(time.Since(start).Seconds()+1)
	if statuses[http.StatusBadRequest] > allowed || statuses[http.StatusTooManyRequests] == 0 {
		t.Errorf("300 made-up sign-in flows from one source: %v, want at most %d looked up (400) and the rest 429", statuses, allowed)
	}
	for kind := range 4 {
		if status, _, body := step(kind, "made-up-flow-other", other); status != http.StatusBadRequest {
			t.Errorf("another source's made-up flow (step %d): HTTP %d %s", kind, status, body)
		}
	}
}

// TestMadeUpTokensDoNotLockOutPeopleAtTheSameSource: the bound on tokens
// that are not valid is per source, and people share sources (an office's
// NAT; a hosted AI client's outgoing addresses, which every one of its
// users of every site comes from). Someone there who spends the bound with
// made-up tokens must not lock out a person whose access token is new to
// this replica (just issued or refreshed): a token erpgate signed is
// looked up whatever the bound. One that then fails (revoked, of a
// disabled site) is bounded like a made-up one from then on.
func TestMadeUpTokensDoNotLockOutPeopleAtTheSameSource(t *testing.T) {
	sim, gw, site := startFrappeOAuthGateway(t, loopbackProxyEnv)
	shared := "198.51.100.77"
	first := connectOAuth(t, site.MCPURL, frappeLogin(userWithRole(t, sim, "all-companies"))).source.current().AccessToken
	// Another person's client refreshes their access token, not yet used.
	c := connectOAuth(t, site.MCPURL, frappeLogin(userWithRole(t, sim, "one-company")))
	c.source.expire()
	fresh, err := c.source.Token()
	if err != nil {
		t.Fatal(err)
	}
	spend := sourceSpender(t, site.MCPURL, first, shared)
	if status, body := refusedOnceSpent(spend, func() (int, string) {
		status, _, body := mcpCallFrom(t, site.MCPURL, first[:len(first)-8]+"madeup00", shared)
		return status, body
	}); status != http.StatusTooManyRequests {
		t.Fatalf("made-up tokens from one source until one was refused, and then HTTP %d %s, want the source refused", status, body)
	}
	// The person's first call with it comes from the same source.
	if status, _, body := mcpCallFrom(t, site.MCPURL, fresh.AccessToken, shared); status != http.StatusOK {
		t.Errorf("a signed-in person's new token from the refused source: HTTP %d %s", status, body)
	}
	// A token erpgate signed that fails is bounded like a made-up one.
	if err := gw.admin.do(context.Background(), http.MethodPatch, "/sites/"+site.ID, map[string]any{"status": "disabled"}, nil); err != nil {
		t.Fatal(err)
	}
	statuses := map[int]int{}
	start := time.Now()
	for range 50 {
		status, _, _ := mcpCallFrom(t, site.MCPURL, fresh.AccessToken, shared)
		statuses[status]++
	}
	// One lookup, and what ten a second refilled meanwhile.
	if allowed := 1 + 10*int(time.Since(start).Seconds()+1); 50-statuses[http.StatusTooManyRequests] > allowed {
		t.Errorf("a signed token of a disabled site from the refused source, 50 times: %v, want at most %d looked up", statuses, allowed)
	}
}

// TestMadeUpTokensDoNotLockOutARefreshAtTheSameSource: an access token
// lives an hour, so a person's client at a shared address refreshes it
// there too. Someone there who spends the source's bound with made-up
// tokens kept the refresh at 429 for as long as they went on (the token
// endpoint charged the source's lookups, and let nothing past a spent
// bound): the person was locked out once their access token expired. A
// refresh token erpgate signed is looked up whatever the bound, as an
// access token erpgate signed is at the MCP door; a made-up one of the
// same shape is refused as before.
func TestMadeUpTokensDoNotLockOutARefreshAtTheSameSource(t *testing.T) {
	sim, gw, site := startFrappeOAuthGateway(t, loopbackProxyEnv)
	shared := "198.51.100.78"
	c := connectOAuth(t, site.MCPURL, frappeLogin(userWithRole(t, sim, "all-companies")))
	tok := c.source.current()
	refresh := func(refreshToken string) (int, string) {
		return postFormFrom(t, gw.URL+"/oauth/token", shared,
			url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}, "client_id": {c.source.cfg.ClientID}})
	}
	spend := sourceSpender(t, site.MCPURL, tok.AccessToken, shared)
	madeUp := tok.RefreshToken[:len(tok.RefreshToken)-8] + "madeup00"
	if status, body := refusedOnceSpent(spend, func() (int, string) { return refresh(madeUp) }); status != http.StatusTooManyRequests {
		t.Errorf("a made-up refresh token from the refused source: HTTP %d %s, want 429", status, body)
	}
	spend()
	if status, body := refresh(tok.RefreshToken); status != http.StatusOK {
		t.Errorf("a signed-in person's refresh from the refused source: HTTP %d %s", status, body)
	}
}

// TestMadeUpTokensDoNotLockOutASignOutAtTheSameSource: a client signing
// out revokes its tokens at /oauth/revoke, which charged every request
// to the source's bound on invalid tokens and let nothing past a spent
// one. Someone at a shared address who spent it with made-up tokens
// made a person's sign-out fail with 429: their tokens stayed valid. A
// token erpgate signed is revoked whatever the bound, and then bounded
// like any other; a made-up one of the same shape is refused as before.
func TestMadeUpTokensDoNotLockOutASignOutAtTheSameSource(t *testing.T) {
	sim, gw, site := startFrappeOAuthGateway(t, loopbackProxyEnv)
	shared := "198.51.100.79"
	c := connectOAuth(t, site.MCPURL, frappeLogin(userWithRole(t, sim, "all-companies")))
	tok := c.source.current()
	revoke := func(token string) (int, string) {
		return postFormFrom(t, gw.URL+"/oauth/revoke", shared,
			url.Values{"token": {token}, "token_type_hint": {"refresh_token"}, "client_id": {c.source.cfg.ClientID}})
	}
	spend := sourceSpender(t, site.MCPURL, tok.AccessToken, shared)
	madeUp := tok.RefreshToken[:len(tok.RefreshToken)-8] + "madeup00"
	if status, body := refusedOnceSpent(spend, func() (int, string) { return revoke(madeUp) }); status != http.StatusTooManyRequests {
		t.Errorf("a made-up token's revocation from the refused source: HTTP %d %s, want 429", status, body)
	}
	spend()
	if status, body := revoke(tok.RefreshToken); status != http.StatusOK {
		t.Fatalf("a signed-in person's sign-out from the refused source: HTTP %d %s", status, body)
	}
	// The grant is gone: its access token is refused (from another
	// source, so that the answer is the token's, not the bound's).
	if status, _, body := mcpCallFrom(t, site.MCPURL, tok.AccessToken, "203.0.113.79"); status != http.StatusUnauthorized {
		t.Errorf("the access token after its grant was revoked: HTTP %d %s, want 401", status, body)
	}
	// Revoked, the token is bounded again like a made-up one.
	if status, body := refusedOnceSpent(spend, func() (int, string) { return revoke(tok.RefreshToken) }); status != http.StatusTooManyRequests {
		t.Errorf("the revoked token's revocation again from the refused source: HTTP %d %s, want 429", status, body)
	}
}

// refusedOnceSpent spends the source's bound and sends do's request,
// and returns its answer once it is refused, or the third one. The
// bound refills one lookup every 100 ms, so one may come back between
// spend's last request and do's on a slow machine (a run under the race
// detector saw it); a request the bound covers is refused right after
// spend on one of three tries, and one it does not cover never is.
func refusedOnceSpent(spend func(), do func() (int, string)) (status int, body string) {
	for range 3 {
		spend()
		if status, body = do(); status == http.StatusTooManyRequests {
			break
		}
	}
	return status, body
}

// postFormFrom posts form to target as a client at source (through the
// trusted proxy's X-Forwarded-For) and returns the status and body.
func postFormFrom(t *testing.T, target, source string, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", source)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// sourceSpender returns spend, which sends made-up access tokens of
// signed's shape to mcpURL from source until one is refused: the bound
// refills one every 100 ms, so a check made right after spend meets a
// refused source.
func sourceSpender(t *testing.T, mcpURL, signed, source string) (spend func()) {
	n := 0
	return func() {
		t.Helper()
		for range 400 {
			n++
			if status, _, _ := mcpCallFrom(t, mcpURL, signed[:len(signed)-8]+fmt.Sprintf("%08d", n), source); status == http.StatusTooManyRequests {
				return
			}
		}
		t.Fatal("400 made-up tokens from one source, none refused")
	}
}
