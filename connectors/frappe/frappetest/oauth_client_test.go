package frappetest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// postJSON POSTs body as JSON with an Authorization header.
func postJSON(t *testing.T, s *Server, auth, path, body string) resp {
	t.Helper()
	return sendJSON(t, s, http.MethodPost, auth, path, body)
}

// sendJSON sends a JSON body with method as auth.
func sendJSON(t *testing.T, s *Server, method, auth, path, body string) resp {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	return doReq(t, req)
}

var hex10 = regexp.MustCompile(`^[0-9a-f]{10}$`)

func TestInsertOAuthClientSystemManagerOnly(t *testing.T) {
	s := newServer(t, Options{})
	admin := s.User(RoleAdministrator)
	body := `{"app_name":"erpgate","scopes":"all openid","redirect_uris":"https://gw.example/oauth/callback","default_redirect_uri":"https://gw.example/oauth/callback","grant_type":"Authorization Code","response_type":"Code","skip_authorization":0}`
	r := postJSON(t, s, tokenAuth(admin), "/api/resource/OAuth%20Client", body)
	r.expectStatus(t, http.StatusOK)
	doc, _ := r.body["data"].(map[string]any)
	id, _ := doc["client_id"].(string)
	secret, _ := doc["client_secret"].(string)
	if doc["name"] != id || !hex10.MatchString(id) || !hex10.MatchString(secret) || doc["doctype"] != "OAuth Client" || doc["owner"] != admin.Email {
		t.Fatalf("document %s", r.raw)
	}
	c, ok := s.Client(id)
	if !ok || c.Secret != secret || c.AppName != "erpgate" || len(c.RedirectURIs) != 1 || c.SkipAuthorization {
		t.Fatalf("saved client %+v", c)
	}

	// Every other user: 403 PermissionError, nothing saved.
	for _, u := range s.Users() {
		if u.IsSystemManager() {
			continue
		}
		r := postJSON(t, s, tokenAuth(u), "/api/resource/OAuth%20Client", body)
		if r.status != http.StatusForbidden || r.body["exc_type"] != "PermissionError" {
			t.Errorf("%s: %d %s", u.Email, r.status, r.raw)
		}
	}
	if n := len(s.oauth().clients); n != 1 {
		t.Fatalf("%d clients saved", n)
	}

	for _, tc := range []struct{ body, exc, msg string }{
		{`{"scopes":"all openid","default_redirect_uri":"https://gw.example/cb"}`, "MandatoryError", "Error: Value missing for OAuth Client: App Name"},
		{`{"app_name":"x"}`, "MandatoryError", "Error: Value missing for OAuth Client: Default Redirect URI"},
		{`{"app_name":"x","default_redirect_uri":"https://gw.example/cb","grant_type":"Authorization Code","response_type":"Token"}`, "ValidationError",
			"Combination of Grant Type (<code>Authorization Code</code>) and Response Type (<code>Token</code>) not allowed"},
		{`{"app_name":"x","default_redirect_uri":"https://gw.example/cb","grant_type":"Client Credentials"}`, "ValidationError",
			`Grant Type cannot be "Client Credentials". It should be one of "Authorization Code", "Implicit"`},
	} {
		r := postJSON(t, s, tokenAuth(admin), "/api/resource/OAuth%20Client", tc.body)
		exc, _ := r.body["exception"].(string)
		if r.status != 417 || r.body["exc_type"] != tc.exc || !strings.HasSuffix(exc, ": "+tc.msg) {
			t.Errorf("%s: %d %s", tc.body, r.status, r.raw)
		}
	}
}

// browser is a cookie-keeping client that does not follow redirects.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func fetch(t *testing.T, c *http.Client, method, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func signInDesk(t *testing.T, s *Server, c *http.Client, u User) {
	t.Helper()
	res, _ := fetch(t, c, http.MethodPost, s.URL+"/login", url.Values{"usr": {u.Email}, "pwd": {u.Password}, "redirect-to": {"/app"}})
	if res.StatusCode != http.StatusFound {
		t.Fatalf("login %s: %d", u.Email, res.StatusCode)
	}
}

var reCSRF = regexp.MustCompile(`name="csrf_token" value="([0-9a-f]+)"`)

func TestDeskOAuthClientForm(t *testing.T) {
	s := newServer(t, Options{})
	guest := browser(t)
	if res, _ := fetch(t, guest, http.MethodGet, s.URL+"/app/oauth-client/new", nil); res.StatusCode != http.StatusFound ||
		res.Header.Get("Location") != "/login?redirect-to=%2Fapp%2Foauth-client%2Fnew" {
		t.Fatalf("guest: %d %s", res.StatusCode, res.Header.Get("Location"))
	}

	sales := browser(t)
	signInDesk(t, s, sales, s.User(RoleNonAdministrator))
	if res, page := fetch(t, sales, http.MethodGet, s.URL+"/app/oauth-client/new", nil); res.StatusCode != http.StatusForbidden || !strings.Contains(page, "Not Permitted") {
		t.Fatalf("non-administrator: %d %s", res.StatusCode, page)
	}

	c := browser(t)
	signInDesk(t, s, c, s.User(RoleAdministrator))
	res, page := fetch(t, c, http.MethodGet, s.URL+"/app/oauth-client/new", nil)
	m := reCSRF.FindStringSubmatch(page)
	if res.StatusCode != http.StatusOK || m == nil || !strings.Contains(page, `<label for="redirect_uris">Redirect URIs</label>`) {
		t.Fatalf("form: %d %s", res.StatusCode, page)
	}
	form := url.Values{"app_name": {"erpgate"}, "scopes": {"all openid"}, "redirect_uris": {"https://gw.example/oauth/callback"},
		"default_redirect_uri": {"https://gw.example/oauth/callback"}, "grant_type": {"Authorization Code"}, "response_type": {"Code"}}
	if res, _ := fetch(t, c, http.MethodPost, s.URL+"/app/oauth-client/new", form); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("without the CSRF token: %d", res.StatusCode)
	}
	form.Set("csrf_token", m[1])
	res, _ = fetch(t, c, http.MethodPost, s.URL+"/app/oauth-client/new", form)
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/app/oauth-client/") {
		t.Fatalf("save: %d %s", res.StatusCode, loc)
	}
	id := strings.TrimPrefix(loc, "/app/oauth-client/")
	saved, ok := s.Client(id)
	if !ok || saved.AppName != "erpgate" || saved.SkipAuthorization {
		t.Fatalf("saved %+v", saved)
	}
	_, page = fetch(t, c, http.MethodGet, s.URL+loc, nil)
	if !strings.Contains(page, `<dd id="client-id">`+id+`</dd>`) || !strings.Contains(page, `<dd id="client-secret">`+saved.Secret+`</dd>`) {
		t.Fatalf("document page %s", page)
	}
	// A form error keeps what was typed and saves nothing.
	form.Del("app_name")
	res, page = fetch(t, c, http.MethodPost, s.URL+"/app/oauth-client/new", form)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, "Value missing for OAuth Client: App Name") ||
		!strings.Contains(page, `https://gw.example/oauth/callback</textarea>`) || len(s.oauth().clients) != 1 {
		t.Fatalf("form error: %d %s", res.StatusCode, page)
	}
}

// TestCreatedClientSignIn: a client made on the doctype works as Frappe's
// would: exact redirect URIs, its scopes only, the Confirm Access page with
// skip_authorization off, and an id_token signed with its secret (the
// secret itself is never compared by get_token).
func TestCreatedClientSignIn(t *testing.T) {
	s := newServer(t, Options{})
	redirect := "https://gw.example/oauth/callback"
	client := s.AddClient(OAuthClient{AppName: "erpgate", RedirectURIs: []string{redirect}})
	admin := s.User(RoleAdministrator)
	c := browser(t)
	signInDesk(t, s, c, admin)
	authorize := func(q url.Values) (*http.Response, string) {
		return fetch(t, c, http.MethodGet, s.URL+"/api/method/frappe.integrations.oauth2.authorize?"+q.Encode(), nil)
	}
	base := url.Values{"client_id": {client.ID}, "response_type": {"code"}, "redirect_uri": {redirect}, "scope": {"all openid"}, "state": {"st"}}
	for _, tc := range []struct {
		key, value, want string
	}{
		{"redirect_uri", redirect + "/", "mismatching_redirect_uri"},
		{"redirect_uri", "https://GW.example/oauth/callback", "mismatching_redirect_uri"},
		{"scope", "all openid profile", "invalid_scope"},
		{"client_id", "nosuchclient", "invalid_client_id"},
	} {
		q := url.Values{}
		for k, v := range base {
			q[k] = v
		}
		q.Set(tc.key, tc.value)
		res, body := authorize(q)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"error":"`+tc.want+`"`) {
			t.Errorf("%s=%s: %d %s", tc.key, tc.value, res.StatusCode, body)
		}
	}
	res, page := authorize(base)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "Confirm Access") || !strings.Contains(page, "erpgate would like to access") {
		t.Fatalf("confirm access: %d %s", res.StatusCode, page)
	}
	res, _ = fetch(t, c, http.MethodGet, s.URL+"/api/method/frappe.integrations.oauth2.approve?"+base.Encode(), nil)
	loc, _ := url.Parse(res.Header.Get("Location"))
	code := loc.Query().Get("code")
	if res.StatusCode != http.StatusFound || code == "" {
		t.Fatalf("approve: %d %s", res.StatusCode, loc)
	}
	// A wrong client_secret does not matter to Frappe's get_token.
	res, body := fetch(t, http.DefaultClient, http.MethodPost, s.URL+"/api/method/frappe.integrations.oauth2.get_token", url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "client_id": {client.ID}, "client_secret": {"wrong"}})
	var tok struct {
		IDToken string `json:"id_token"`
	}
	if err := json.Unmarshal([]byte(body), &tok); res.StatusCode != http.StatusOK || err != nil || tok.IDToken == "" {
		t.Fatalf("get_token: %d %s", res.StatusCode, body)
	}
	parts := strings.Split(tok.IDToken, ".")
	if len(parts) != 3 {
		t.Fatalf("id_token %s", tok.IDToken)
	}
	verify := func(secret string) bool {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(parts[0] + "." + parts[1]))
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		return hmac.Equal(sig, mac.Sum(nil))
	}
	if !verify(client.Secret) || verify("wrong") {
		t.Fatal("the id_token is not signed with the client secret alone")
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Aud   string   `json:"aud"`
		Email string   `json:"email"`
		Roles []string `json:"roles"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil || claims.Aud != client.ID || claims.Email != admin.Email || !strings.Contains(strings.Join(claims.Roles, ","), SystemManager) {
		t.Fatalf("claims %s", raw)
	}
}

func TestAddUser(t *testing.T) {
	s := newServer(t, Options{})
	u := User{Email: "new.admin@demo.example", FullName: "New Admin", Password: "pw-1", Role: "extra-admin", Roles: []string{SystemManager}}
	s.AddUser(u)
	c := browser(t)
	signInDesk(t, s, c, u)
	if res, _ := fetch(t, c, http.MethodGet, s.URL+"/app/oauth-client/new", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("added administrator: %d", res.StatusCode)
	}
	u.Roles = []string{"Sales User"}
	s.AddUser(u)
	if got := s.User("extra-admin"); got.IsSystemManager() || len(s.Users()) != len(demoUsers())+1 {
		t.Fatalf("replaced user %+v, %d users", got, len(s.Users()))
	}
}

// openid_profile is oauthlib's userinfo endpoint: only an OAuth Bearer
// token with the openid scope gets the profile.
func TestOpenIDProfileNeedsAnOpenIDBearerToken(t *testing.T) {
	s := newServer(t, Options{})
	admin := s.User(RoleAdministrator)
	path := "/api/method/frappe.integrations.oauth2.openid_profile"
	if r := call(t, s, "Bearer "+s.IssueAccessToken(admin.Email, time.Hour), path, nil); r.status != http.StatusOK || r.body["email"] != admin.Email {
		t.Fatalf("openid bearer: %d %s", r.status, r.raw)
	}
	if r := call(t, s, "Bearer "+s.tokens.issue(admin.Email, time.Hour, "all"), path, nil); r.status != http.StatusForbidden || r.body["error"] != "insufficient_scope" {
		t.Fatalf("bearer without openid: %d %s", r.status, r.raw)
	}
	if r := call(t, s, tokenAuth(admin), path, nil); r.status != http.StatusUnauthorized || r.body["error"] != "invalid_token" || r.body["status_code"] == nil {
		t.Fatalf("API key: %d %s", r.status, r.raw)
	}
	c := browser(t)
	signInDesk(t, s, c, admin)
	if res, body := fetch(t, c, http.MethodGet, s.URL+path, nil); res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `"error":"invalid_token"`) {
		t.Fatalf("session cookie: %d %s", res.StatusCode, body)
	}
}

// TestAuthorizeRefusesRepeatedParameters: oauthlib 3.2.2, which Frappe v15
// pins, refuses an authorization request that repeats client_id,
// response_type, redirect_uri, scope or state before anything else
// (AuthorizationCodeGrant.validate_authorization_request: "Duplicate %s
// parameter.", InvalidRequestFatalError, HTTP 400); the first value does
// not win. Other parameters may repeat.
func TestAuthorizeRefusesRepeatedParameters(t *testing.T) {
	s := newServer(t, Options{})
	redirect := "https://gw.example/oauth/callback"
	client := s.AddClient(OAuthClient{AppName: "erpgate", RedirectURIs: []string{redirect}})
	c := browser(t)
	signInDesk(t, s, c, s.User(RoleAdministrator))
	base := url.Values{"client_id": {client.ID}, "response_type": {"code"}, "redirect_uri": {redirect}, "scope": {"all openid"}, "state": {"st"}}
	for _, key := range []string{"client_id", "response_type", "redirect_uri", "scope", "state"} {
		q := url.Values{}
		for k, v := range base {
			q[k] = v
		}
		q.Add(key, q.Get(key))
		res, body := fetch(t, c, http.MethodGet, s.URL+"/api/method/frappe.integrations.oauth2.authorize?"+q.Encode(), nil)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"error":"invalid_request"`) ||
			!strings.Contains(body, `"description":"Duplicate `+key+` parameter."`) {
			t.Errorf("%s twice: %d %s", key, res.StatusCode, body)
		}
	}
	q := url.Values{}
	for k, v := range base {
		q[k] = v
	}
	q.Add("nonce", "a")
	q.Add("nonce", "b")
	if res, page := fetch(t, c, http.MethodGet, s.URL+"/api/method/frappe.integrations.oauth2.authorize?"+q.Encode(), nil); res.StatusCode != http.StatusOK || !strings.Contains(page, "Confirm Access") {
		t.Errorf("nonce twice: %d %s", res.StatusCode, page)
	}
}
