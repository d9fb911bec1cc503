package acumaticatest

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func uiBrowser(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func uiFetch(t *testing.T, c *http.Client, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	var res *http.Response
	var err error
	if form == nil {
		res, err = c.Get(u)
	} else {
		res, err = c.PostForm(u, form)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// uiSignIn signs u in at the login page and returns where it sent them.
func uiSignIn(t *testing.T, s *Server, c *http.Client, username, password string) string {
	t.Helper()
	res, page := uiFetch(t, c, s.Origin+s.PathPrefix()+PathUILogin, url.Values{"UserName": {username}, "Password": {password},
		"ReturnUrl": {s.PathPrefix() + PathMain + "?ScreenId=" + ScreenConnectedApps}})
	if res.StatusCode != http.StatusFound {
		t.Fatalf("sign in %s: %d %s", username, res.StatusCode, page)
	}
	return res.Header.Get("Location")
}

var (
	reUIToken  = regexp.MustCompile(`name="__RequestVerificationToken" value="([0-9a-f]+)"`)
	reClientID = regexp.MustCompile(`<dd id="client-id">([^<]+)</dd>`)
	reSecret   = regexp.MustCompile(`<dd id="client-secret">([^<]+)</dd>`)
	reGUIDID   = regexp.MustCompile(`^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}@Demo$`)
)

func TestConnectedApplicationsScreen(t *testing.T) {
	for _, prefix := range []string{"", "/AcumaticaERP"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			s := newTestServer(t, Options{PathPrefix: prefix})
			screen := s.URL + PathMain + "?ScreenId=" + ScreenConnectedApps
			guest := uiBrowser(t)
			res, _ := uiFetch(t, guest, screen, nil)
			if loc := res.Header.Get("Location"); res.StatusCode != http.StatusFound ||
				loc != prefix+PathUILogin+"?ReturnUrl="+url.QueryEscape(prefix+PathMain+"?ScreenId="+ScreenConnectedApps) {
				t.Fatalf("guest: %d %s", res.StatusCode, loc)
			}
			bad := uiBrowser(t)
			if res, page := uiFetch(t, bad, s.URL+PathUILogin, url.Values{"UserName": {"admin"}, "Password": {"wrong"}}); res.StatusCode != http.StatusOK ||
				!strings.Contains(page, "Invalid credentials. Please try again.") {
				t.Fatalf("wrong password: %d %s", res.StatusCode, page)
			}

			non := uiBrowser(t)
			office := s.User(RoleNonAdmin)
			uiSignIn(t, s, non, office.Username, office.Password)
			if res, page := uiFetch(t, non, screen, nil); res.StatusCode != http.StatusForbidden ||
				!strings.Contains(page, "You have insufficient rights to access the object (SM303010).") {
				t.Fatalf("non-administrator: %d %s", res.StatusCode, page)
			}

			c := uiBrowser(t)
			admin := s.User(RoleFull)
			if loc := uiSignIn(t, s, c, admin.Username, admin.Password); loc != prefix+PathMain+"?ScreenId="+ScreenConnectedApps {
				t.Fatalf("signed in to %s", loc)
			}
			res, page := uiFetch(t, c, screen, nil)
			m := reUIToken.FindStringSubmatch(page)
			if res.StatusCode != http.StatusOK || m == nil || !strings.Contains(page, DefaultCodeClientGUID+"@Demo") || strings.Contains(page, DefaultCodeClientSecret) {
				t.Fatalf("screen: %d %s", res.StatusCode, page)
			}
			redirect := "https://gw.example/oauth/callback"
			form := url.Values{"ClientName": {"erpgate"}, "Flow": {FlowAuthorizationCode}, "RedirectUri": {redirect}}
			if res, _ := uiFetch(t, c, screen, form); res.StatusCode != http.StatusBadRequest {
				t.Fatalf("without the verification token: %d", res.StatusCode)
			}
			form.Set("__RequestVerificationToken", m[1])
			noRedirect := url.Values{"ClientName": {"erpgate"}, "Flow": {FlowAuthorizationCode}, "__RequestVerificationToken": {m[1]}}
			before := len(s.Clients())
			if res, page := uiFetch(t, c, screen, noRedirect); res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, "needs a redirect URI") || len(s.Clients()) != before {
				t.Fatalf("no redirect URI: %d %s", res.StatusCode, page)
			}
			res, page = uiFetch(t, c, screen, form)
			id, secret := reClientID.FindStringSubmatch(page), reSecret.FindStringSubmatch(page)
			if res.StatusCode != http.StatusOK || id == nil || secret == nil || !reGUIDID.MatchString(id[1]) {
				t.Fatalf("save: %d %s", res.StatusCode, page)
			}
			client := Client{ID: id[1], Secret: secret[1]}
			saved := s.clientByID(client.ID)
			if saved == nil || saved.Name != "erpgate" || saved.Secret != client.Secret || saved.Flow != FlowAuthorizationCode {
				t.Fatalf("saved %+v", saved)
			}

			// The application signs people in as the instance would.
			authorize := func(redirect string) (*url.URL, error) {
				return CompleteAuthorization(nil, authorizeURL(s, client, redirect, "api openid profile email offline_access", "st", ""), admin.Username, admin.Password)
			}
			if _, err := authorize(redirect + "/other"); err == nil {
				t.Error("a redirect URI that is not the registered one was accepted")
			}
			loc, err := authorize(redirect)
			if err != nil {
				t.Fatal(err)
			}
			codeForm := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect}}
			status, body := tokenRequest(t, s, codeForm, client.ID, "not-the-secret")
			if status != http.StatusBadRequest || string(body) != `{"error":"invalid_client"}` {
				t.Fatalf("wrong secret: %d %s", status, body)
			}
			if status, tr := exchange(t, s, client, codeForm); status != http.StatusOK || tr.AccessToken == "" {
				t.Fatalf("right secret: %d %+v", status, tr)
			}
		})
	}
}

func TestAddUser(t *testing.T) {
	s := newTestServer(t, Options{})
	u := User{Username: "second.admin", Password: "second-P@ss1", FirstName: "Second", LastName: "Admin", Email: "second.admin@demo-company.com", Roles: []string{AdministratorRole}}
	if err := s.AddUser(u); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser(User{Username: "ADMIN", Password: "x"}); err == nil {
		t.Fatal("a second user named admin was added")
	}
	c := uiBrowser(t)
	uiSignIn(t, s, c, u.Username, u.Password)
	if res, _ := uiFetch(t, c, s.URL+PathMain+"?ScreenId="+ScreenConnectedApps, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("added administrator: %d", res.StatusCode)
	}
	// The administrators' inquiry lists the new user's role.
	tok := passwordToken(t, s, u.Username, "api")
	status, b := get(t, s.URL+"/t/Demo/api/odata/gi/MCPAdmin?$filter="+url.QueryEscape("Username eq 'second.admin'"), tok)
	if status != http.StatusOK || !strings.Contains(string(b), `"Rolename":"Administrator"`) {
		t.Fatalf("MCPAdmin: %d %s", status, b)
	}
}
