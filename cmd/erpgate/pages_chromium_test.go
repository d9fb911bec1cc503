package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// chromiumPath is Debian's chromium package; .ci/run installs it.
const chromiumPath = "/usr/bin/chromium"

// TestChromiumSignInPages signs a user in through erpgate's pages in real
// headless Chromium: erpgate's authorize URL, the ERP simulator's login
// form, erpgate's consent page (its text, its security headers) and the
// redirect to the MCP client; and the access-denied page of an Acumatica
// user whose canary inquiry answers 403.
func TestChromiumSignInPages(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Chromium is needed for this test and was not found at %s (%v): install Debian's `chromium` package (apt-get install -y --no-install-recommends chromium; .ci/run does this in CI)", chromiumPath, err)
	}
	frappe, gw, frappeSite := startFrappeOAuthGateway(t, nil)
	acumatica := acumaticatest.NewServer(acumaticatest.Options{})
	defer acumatica.Close()
	acumaticaMCP := acumaticaOAuthSite(t, gw, "acu", acumatica)
	issuer := discoverIssuer(t, gw.URL)

	// The MCP client's redirect URI: a loopback page that records what the
	// browser brought.
	var (
		mu        sync.Mutex
		callbacks []url.Values
	)
	client := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" { // the browser also asks for /favicon.ico
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		callbacks = append(callbacks, r.URL.Query())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html><head><title>MCP client callback</title></head><body><p id="done">Signed in.</p></body></html>`))
	}))
	defer client.Close()
	redirectURI := client.URL + "/callback"
	redirectHost := strings.TrimPrefix(client.URL, "http://")
	const clientName = "erpgate chromium client"
	clientID := registerPublicClient(t, gw.URL, clientName, redirectURI)

	ctx := newChromium(t)
	docs := recordDocumentResponses(t, ctx)

	t.Run("Frappe sign-in, consent and redirect", func(t *testing.T) {
		user := userWithRole(t, frappe, "all-companies")
		state, authURL := authorizeURL(t, gw.URL, clientID, redirectURI, frappeSite.MCPURL)
		signInAtFrappe(t, ctx, authURL, user, clientName)

		// The consent page, as the user sees it.
		text := browserResult(t, ctx, "read the consent page", chromedp.Text(chromedp.CSS("body")))
		for _, want := range []string{
			"Data from your ERP will be sent to an AI model",
			"All data access is logged",
			"automatically redacted",
			"check important figures in the ERP",
			clientName,
			redirectHost,
			"signed in to Test acme as " + user.FullName,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("consent page does not say %q; it says: %s", want, text)
			}
		}
		accept := browserResult(t, ctx, "read the accept button", chromedp.Text(chromedp.CSS(`button[name="decision"][value="accept"]`)))
		if !strings.Contains(accept, "continue") {
			t.Errorf("accept button says %q", accept)
		}
		shot := browserResult(t, ctx, "screenshot the consent page", chromedp.FullScreenshot(100))
		file := filepath.Join(t.TempDir(), "consent.png")
		if err := os.WriteFile(file, shot, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Logf("consent page screenshot: %s (%d bytes)", file, len(shot))
		saveScreenshot(t, ctx, "consent.png")

		// Its security headers, as the browser received them.
		h, ok := docs.last("/oauth/consent")
		if !ok {
			t.Fatal("the browser saw no response for the consent page")
		}
		for name, want := range map[string]string{
			"Content-Security-Policy": "frame-ancestors 'none'",
			"X-Frame-Options":         "DENY",
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "same-origin",
			"Cache-Control":           "no-store",
		} {
			if got := h.Get(name); !strings.Contains(got, want) {
				t.Errorf("consent page header %s = %q, want it to contain %q", name, got, want)
			}
		}
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' "+client.URL) {
			t.Errorf("consent page CSP %q does not let the form go to the client's redirect URI", csp)
		}

		// Clickjacking by double-click: a click landing on the button as
		// the page opens (in a pop-up under the pointer) presses nothing.
		clickAsItOpens(t, ctx, `button[name="decision"][value="accept"]`)
		navigate(t, ctx, "open the consent page again", chromedp.Reload())
		waitForNewTitle(t, ctx, "Allow ", "MCP client callback")
		if held := browserResult(t, ctx, "read whether the button was held", chromedp.Evaluate[bool](`window.erpgateHeldAtOpen === true`)); !held {
			t.Error("the consent button was not held as the page opened")
		}
		if loc := browserResult(t, ctx, "read the URL", chromedp.Location()); !strings.Contains(loc, "/oauth/consent") {
			t.Fatalf("a click as the consent page opened went on to %s", loc)
		}

		browserDo(t, ctx, "accept", chromedp.WaitEnabled(chromedp.CSS(`button[name="decision"][value="accept"]`)), chromedp.Click(chromedp.CSS(`button[name="decision"][value="accept"]`)))
		waitForTitle(t, ctx, "MCP client callback")
		loc := browserResult(t, ctx, "read the final URL", chromedp.Location())
		final, err := url.Parse(loc)
		if err != nil || !strings.HasPrefix(loc, redirectURI+"?") {
			t.Fatalf("browser ended at %s, want %s", loc, redirectURI)
		}
		got := final.Query()
		if got.Get("code") == "" || got.Get("state") != state || got.Get("iss") != issuer {
			t.Errorf("redirect carried code %q, state %q (want %q), iss %q (want %q)",
				got.Get("code"), got.Get("state"), state, got.Get("iss"), issuer)
		}
		if got.Get("error") != "" {
			t.Errorf("redirect carried error %q: %s", got.Get("error"), got.Get("error_description"))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(callbacks) != 1 || callbacks[0].Get("code") != got.Get("code") {
			t.Errorf("the client's redirect URI was asked %d times (%v)", len(callbacks), callbacks)
		}
	})

	t.Run("Acumatica canary 403 shows access denied", func(t *testing.T) {
		user := acumatica.User("no-canary")
		_, authURL := authorizeURL(t, gw.URL, clientID, redirectURI, acumaticaMCP)
		browserDo(t, ctx, "open the authorize URL", chromedp.Navigate(authURL))
		waitForTitle(t, ctx, "Acumatica ERP - Sign In")
		browserDo(t, ctx, "fill in the Acumatica login",
			chromedp.SendKeys(chromedp.CSS(`input[name="`+acumaticatest.FormUsername+`"]`), user.Username),
			chromedp.SendKeys(chromedp.CSS(`input[name="`+acumaticatest.FormPassword+`"]`), user.Password),
			chromedp.Click(chromedp.CSS(`form#login button[type="submit"]`)))
		if title := waitForTitle(t, ctx, "Acumatica ERP - Consent", "Access denied"); title == "Acumatica ERP - Consent" {
			browserDo(t, ctx, "allow on Acumatica's consent page", chromedp.Click(chromedp.CSS(`form#consent button[value="yes"]`)))
			waitForTitle(t, ctx, "Access denied")
		}
		heading := browserResult(t, ctx, "read the heading", chromedp.Text(chromedp.CSS("h1")))
		if heading != "Access denied" {
			t.Errorf("heading %q", heading)
		}
		text := browserResult(t, ctx, "read the page", chromedp.Text(chromedp.CSS("body")))
		for _, want := range []string{"not allowed to use AI assistants", "Ask your ERP administrator"} {
			if !strings.Contains(text, want) {
				t.Errorf("access-denied page does not say %q; it says: %s", want, text)
			}
		}
		saveScreenshot(t, ctx, "access-denied.png")
		if h, ok := docs.last("/sites/acu/oauth/callback"); !ok || h.status != http.StatusForbidden {
			t.Errorf("access-denied page: seen %v, HTTP %d, want 403", ok, h.status)
		}
		if loc := browserResult(t, ctx, "read the final URL", chromedp.Location()); strings.HasPrefix(loc, redirectURI) {
			t.Errorf("a denied user was sent to the client: %s", loc)
		}
	})

	t.Run("an authorization error before consent stays on an erpgate page", func(t *testing.T) {
		mu.Lock()
		before := len(callbacks)
		mu.Unlock()
		_, authURL := authorizeURL(t, gw.URL, clientID, redirectURI, gw.URL+"/sites/nowhere/mcp")
		browserDo(t, ctx, "open an authorize URL for an unknown site", chromedp.Navigate(authURL))
		waitForTitle(t, ctx, "This connection request cannot be used")
		text := browserResult(t, ctx, "read the error page", chromedp.Text(chromedp.CSS("body")))
		if !strings.Contains(text, "does not offer sign-in") || strings.Contains(text, "invalid, unknown or malformed") {
			t.Errorf("error page: %s", text)
		}
		saveScreenshot(t, ctx, "authorize-error.png")
		mu.Lock()
		defer mu.Unlock()
		if len(callbacks) != before {
			t.Errorf("the client's redirect URI was called: %v", callbacks[before:])
		}
	})

	t.Run("a sign-in opened in another browser is ended in both", func(t *testing.T) {
		// Browser A signs in at the ERP and reaches the consent page; its
		// callback URL (the ERP's code and the flow's state) then turns up
		// in browser B, which has none of A's cookies.
		a := newChromium(t)
		var callbackURL string // the ERP's redirect to erpgate, as browser A asked for it
		if err := chromedp.Listen(a, func(ev any) {
			if e, ok := ev.(*network.EventRequestWillBeSent); ok && strings.Contains(e.Request.URL, "/oauth/callback?") {
				mu.Lock()
				callbackURL = e.Request.URL
				mu.Unlock()
			}
		}); err != nil {
			t.Fatal(err)
		}
		user := userWithRole(t, frappe, "one-company")
		_, authURL := authorizeURL(t, gw.URL, clientID, redirectURI, frappeSite.MCPURL)
		signInAtFrappe(t, a, authURL, user, clientName)
		mu.Lock()
		cb, before := callbackURL, len(callbacks)
		mu.Unlock()
		if cb == "" {
			t.Fatal("browser A passed no callback")
		}

		b := newChromium(t)
		browserDo(t, b, "open A's callback URL in browser B", chromedp.Navigate(cb))
		waitForTitle(t, b, "Sign-in started in another browser")
		if text := browserResult(t, b, "read B's page", chromedp.Text(chromedp.CSS("body"))); !strings.Contains(text, "erpgate has ended that sign-in") {
			t.Errorf("browser B's page: %s", text)
		}
		saveScreenshot(t, b, "signin-other-browser.png")

		browserDo(t, a, "accept on the consent page in browser A", chromedp.WaitEnabled(chromedp.CSS(`button[name="decision"][value="accept"]`)), chromedp.Click(chromedp.CSS(`button[name="decision"][value="accept"]`)))
		waitForTitle(t, a, "This sign-in was ended")
		if text := browserResult(t, a, "read A's page", chromedp.Text(chromedp.CSS("body"))); !strings.Contains(text, "connect again to start a new sign-in") {
			t.Errorf("browser A's page: %s", text)
		}
		saveScreenshot(t, a, "signin-ended.png")
		mu.Lock()
		defer mu.Unlock()
		if len(callbacks) != before {
			t.Errorf("the client got a code after the sign-in was opened elsewhere: %v", callbacks[before:])
		}
	})
}

// signInAtFrappe opens authURL in the browser, signs user in on the Frappe
// simulator's login page and allows Frappe's Confirm Access page when it
// shows, until erpgate's consent page for clientName is open.
func signInAtFrappe(t *testing.T, ctx context.Context, authURL string, user frappetest.User, clientName string) {
	t.Helper()
	browserDo(t, ctx, "open the authorize URL", chromedp.Navigate(authURL))
	logInAtFrappe(t, ctx, user)
	consentTitle := "Allow " + clientName + " to read"
	if title := waitForTitle(t, ctx, "Confirm Access", consentTitle); title == "Confirm Access" {
		browserDo(t, ctx, "allow on Frappe's Confirm Access page", chromedp.Click(chromedp.CSS(`#allow`)))
		waitForTitle(t, ctx, consentTitle)
	}
}

// logInAtFrappe fills in Frappe's login page, once it shows, as user.
func logInAtFrappe(t *testing.T, ctx context.Context, user frappetest.User) {
	t.Helper()
	waitForTitle(t, ctx, "Login")
	browserDo(t, ctx, "fill in the Frappe login",
		chromedp.SendKeys(chromedp.CSS(`input[name="usr"]`), user.Email),
		chromedp.SendKeys(chromedp.CSS(`input[name="pwd"]`), user.Password),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button[type="submit"]`)))
}

// saveScreenshot writes the page as it looks to ERPGATE_TEST_SCREENSHOTS,
// when that names a folder, for a person to look at.
func saveScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if dir := os.Getenv("ERPGATE_TEST_SCREENSHOTS"); dir != "" {
		png := browserResult(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newChromium starts headless Chromium for the test and returns the context
// of its tab, its window focused as a person's browser is when they use
// it (headless Chromium starts its first window unfocused, and the pages
// hold their Approve and consent buttons while the window is not
// focused). Every step runs under the test's deadline of 60 s, so a hang
// fails instead of blocking.
func newChromium(t *testing.T) context.Context { return newChromiumWithin(t, 60*time.Second) }

// newChromiumWithin is newChromium for a test of many pages, with its own
// deadline, and the browser started with extra options when given.
func newChromiumWithin(t *testing.T, deadline time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	base, cancelBase := context.WithTimeout(context.Background(), deadline)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(base, append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1024, 900),
	}, extra...)...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser to exit
		cancelBase()
	})
	if err := chromedp.Do(ctx, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, page.BringToFront, cdp.Empty{})
		return chromedp.Void{}, err
	}); err != nil {
		t.Fatalf("start %s: %v", chromiumPath, err)
	}
	return ctx
}

// browserDo runs browser steps and fails the test with what it was doing.
func browserDo(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v (page: %s)", what, err, currentPage(ctx))
	}
}

// browserResult runs one browser action that returns a value.
func browserResult[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v (page: %s)", what, err, currentPage(ctx))
	}
	return v
}

// currentPage describes the page shown, for failure messages.
func currentPage(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + " " + JSON.stringify(document.title) + ": " + (document.body ? document.body.innerText.slice(0, 400) : "")`))
	if err != nil {
		return "unknown: " + err.Error()
	}
	return s
}

// waitForTitle waits until a loaded page's title starts with one of
// prefixes and returns that prefix. Evaluation errors while a navigation
// replaces the document are retried; the browser context's deadline ends
// the wait.
func waitForTitle(t *testing.T, ctx context.Context, prefixes ...string) string {
	t.Helper()
	last := ""
	for {
		title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState === "complete" ? document.title : ""`))
		if err == nil {
			last = title
			for _, p := range prefixes {
				if strings.HasPrefix(title, p) {
					return p
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for a page titled %q: last title %q: %v", prefixes, last, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// documentResponses records the HTTP responses of the pages the tab loads.
type documentResponses struct {
	mu   sync.Mutex
	list []documentResponse
}

type documentResponse struct {
	url     string
	status  int
	headers http.Header
}

func (r documentResponse) Get(name string) string { return r.headers.Get(name) }

func recordDocumentResponses(t *testing.T, ctx context.Context) *documentResponses {
	t.Helper()
	d := &documentResponses{}
	err := chromedp.Listen(ctx, func(ev any) {
		e, ok := ev.(*network.EventResponseReceived)
		if !ok || e.Type != network.ResourceTypeDocument || e.Response == nil {
			return
		}
		h := http.Header{}
		for k, v := range e.Response.Headers {
			if s, ok := v.(string); ok {
				// Chromium joins repeated headers with a newline.
				for _, part := range strings.Split(s, "\n") {
					h.Add(k, part)
				}
			}
		}
		d.mu.Lock()
		d.list = append(d.list, documentResponse{url: e.Response.URL, status: int(e.Response.Status), headers: h})
		d.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// last returns the latest page response whose path is path.
func (d *documentResponses) last(path string) (documentResponse, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := len(d.list) - 1; i >= 0; i-- {
		if u, err := url.Parse(d.list[i].url); err == nil && u.Path == path {
			return d.list[i], true
		}
	}
	return documentResponse{}, false
}

// discoverIssuer reads erpgate's issuer from its server metadata.
func discoverIssuer(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md struct {
		Issuer string `json:"issuer"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil || md.Issuer == "" {
		t.Fatalf("server metadata: HTTP %d, issuer %q, %v", resp.StatusCode, md.Issuer, err)
	}
	return md.Issuer
}

// registerPublicClient registers an MCP client dynamically (RFC 7591) and
// returns its client id.
func registerPublicClient(t *testing.T, base, name, redirectURI string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"client_name": name, "redirect_uris": []string{redirectURI}, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
	})
	resp, err := http.Post(base+"/oauth/register", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || resp.StatusCode != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("register client: HTTP %d, client id %q, %v", resp.StatusCode, reg.ClientID, err)
	}
	return reg.ClientID
}

// authorizeURL builds an authorization request with PKCE S256 for the MCP
// URL resource and returns its state and URL.
func authorizeURL(t *testing.T, base, clientID, redirectURI, resource string) (state, u string) {
	t.Helper()
	verifier, state := rand.Text()+rand.Text(), rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {clientID},
		"redirect_uri":          {redirectURI},
		"state":                 {state},
		"scope":                 {"erp:read"},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
		"resource":              {resource},
	}
	return state, base + "/oauth/authorize?" + q.Encode()
}
