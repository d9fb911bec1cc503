package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// What `erpgate dev` offers for walking registration: two simulators no
// site uses, their administrator and non-administrator, and where each
// creates its OAuth client.

// checkRegistrationSummary checks dev.json's registration entries against
// the seeded simulators and that the summary names them.
func checkRegistrationSummary(t *testing.T, summary string, state devState, addrs map[string]string) {
	t.Helper()
	if state.RegisterURL != state.BaseURL+"/register" || !strings.Contains(summary, state.RegisterURL) {
		t.Errorf("register URL %q is not %s/register in dev.json and the summary:\n%s", state.RegisterURL, state.BaseURL, summary)
	}
	fsim := frappetest.NewHandler(frappetest.Options{})
	asim := acumaticatest.NewHandler(acumaticatest.Options{})
	defer asim.Close()
	isAdmin := map[string]func(string) (known, admin bool){
		"frappe": func(name string) (bool, bool) {
			for _, u := range fsim.Users() {
				if u.Email == name {
					return true, u.IsSystemManager()
				}
			}
			return false, false
		},
		"acumatica": func(name string) (bool, bool) {
			for _, u := range asim.Users() {
				if u.Username == name {
					return true, u.IsAdministrator()
				}
			}
			return false, false
		},
	}
	wantAddr := map[string]string{"frappe": addrs["ERPGATE_DEV_FRAPPE_REGISTER_ADDR"], "acumatica": addrs["ERPGATE_DEV_ACUMATICA_REGISTER_ADDR"]}
	if len(state.Registration) != 2 {
		t.Fatalf("dev.json lists %d registration simulators, want one Frappe and one Acumatica", len(state.Registration))
	}
	for _, erp := range state.Registration {
		if erp.ERPURL != "http://"+wantAddr[erp.Kind] {
			t.Errorf("%s registration simulator at %s, want http://%s", erp.Kind, erp.ERPURL, wantAddr[erp.Kind])
		}
		for _, site := range state.Sites {
			if site.ERPURL == erp.ERPURL {
				t.Errorf("the %s registration simulator is the demo site %s's", erp.Kind, site.Slug)
			}
		}
		for _, s := range []string{erp.ERPURL, erp.SignInURL, erp.OAuthClientURL} {
			if !strings.HasPrefix(s, erp.ERPURL) || !strings.Contains(summary, s) {
				t.Errorf("%s: the summary does not give %s:\n%s", erp.Kind, s, summary)
			}
		}
		admins, others := 0, 0
		for _, u := range erp.Users {
			known, admin := isAdmin[erp.Kind](u.Username)
			if !known || admin != u.Admin {
				t.Errorf("%s: user %s (admin %v) is not so on the simulator", erp.Kind, u.Username, u.Admin)
			}
			if admin {
				admins++
			} else {
				others++
			}
			if !strings.Contains(summary, u.Username) || !strings.Contains(summary, u.Password) {
				t.Errorf("%s: the summary does not give %s's sign-in", erp.Kind, u.Username)
			}
		}
		if admins != 1 || others != 1 {
			t.Errorf("%s: %d administrators and %d others, want one of each", erp.Kind, admins, others)
		}
	}
	if !strings.Contains(summary, "tenant "+asim.Tenant()) {
		t.Errorf("the summary does not name the Acumatica tenant:\n%s", summary)
	}
}

// regBrowser is a cookie-keeping client that does not follow redirects.
type regBrowser struct {
	t *testing.T
	c *http.Client
}

func newRegBrowser(t *testing.T) *regBrowser {
	jar, _ := cookiejar.New(nil)
	return &regBrowser{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *regBrowser) do(u string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	var res *http.Response
	var err error
	if form == nil {
		res, err = b.c.Get(u)
	} else {
		res, err = b.c.PostForm(u, form)
	}
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

var (
	reRegFrappeCSRF = regexp.MustCompile(`name="csrf_token" value="([0-9a-f]+)"`)
	reRegAcuToken   = regexp.MustCompile(`name="__RequestVerificationToken" value="([0-9a-f]+)"`)
	reRegClientID   = regexp.MustCompile(`<dd id="client-id">([^<]+)</dd>`)
)

// signInRegistrationERP signs u in at the ERP's own sign-in page.
func signInRegistrationERP(t *testing.T, erp devRegistrationERP, u devUser) *regBrowser {
	t.Helper()
	b := newRegBrowser(t)
	form := url.Values{"usr": {u.Username}, "pwd": {u.Password}, "redirect-to": {"/app"}}
	if erp.Kind == "acumatica" {
		form = url.Values{"UserName": {u.Username}, "Password": {u.Password}}
	}
	if res, page := b.do(erp.SignInURL, form); res.StatusCode != http.StatusFound {
		t.Fatalf("%s: sign in as %s: %d %s", erp.Kind, u.Username, res.StatusCode, page)
	}
	return b
}

func registrationUser(erp devRegistrationERP, admin bool) devUser {
	for _, u := range erp.Users {
		if u.Admin == admin {
			return u
		}
	}
	return devUser{}
}

// createRegistrationClients does, on each registration simulator, what the
// registration page tells an administrator: sign in and create the OAuth
// client. The non-administrator is refused.
func createRegistrationClients(t *testing.T, state devState) map[string]string {
	t.Helper()
	made := map[string]string{}
	redirect := state.BaseURL + "/oauth/callback"
	for _, erp := range state.Registration {
		non := signInRegistrationERP(t, erp, registrationUser(erp, false))
		if res, _ := non.do(erp.OAuthClientURL, nil); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: the non-administrator opened %s: %d", erp.Kind, erp.OAuthClientURL, res.StatusCode)
		}
		b := signInRegistrationERP(t, erp, registrationUser(erp, true))
		res, page := b.do(erp.OAuthClientURL, nil)
		var form url.Values
		if erp.Kind == "frappe" {
			m := reRegFrappeCSRF.FindStringSubmatch(page)
			if res.StatusCode != http.StatusOK || m == nil {
				t.Fatalf("frappe: OAuth Client form: %d %s", res.StatusCode, page)
			}
			form = url.Values{"csrf_token": {m[1]}, "app_name": {"erpgate"}, "scopes": {"all openid"}, "redirect_uris": {redirect},
				"default_redirect_uri": {redirect}, "grant_type": {"Authorization Code"}, "response_type": {"Code"}}
			res, _ = b.do(erp.OAuthClientURL, form)
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("frappe: save the OAuth Client: %d", res.StatusCode)
			}
			res, page = b.do(erp.ERPURL+res.Header.Get("Location"), nil)
		} else {
			m := reRegAcuToken.FindStringSubmatch(page)
			if res.StatusCode != http.StatusOK || m == nil {
				t.Fatalf("acumatica: Connected Applications: %d %s", res.StatusCode, page)
			}
			form = url.Values{"__RequestVerificationToken": {m[1]}, "ClientName": {"erpgate"}, "Flow": {acumaticatest.FlowAuthorizationCode}, "RedirectUri": {redirect}}
			res, page = b.do(erp.OAuthClientURL, form)
		}
		id := reRegClientID.FindStringSubmatch(page)
		if res.StatusCode != http.StatusOK || id == nil {
			t.Fatalf("%s: the saved client's page: %d %s", erp.Kind, res.StatusCode, page)
		}
		made[erp.Kind] = id[1]
	}
	return made
}

// checkRegistrationClientsKept finds the clients made in the first run on
// the restarted simulators.
func checkRegistrationClientsKept(t *testing.T, state devState, made map[string]string) {
	t.Helper()
	for _, erp := range state.Registration {
		id := made[erp.Kind]
		b := signInRegistrationERP(t, erp, registrationUser(erp, true))
		page := erp.OAuthClientURL
		if erp.Kind == "frappe" {
			page = erp.ERPURL + "/app/oauth-client/" + url.PathEscape(id)
		}
		res, body := b.do(page, nil)
		if id == "" || res.StatusCode != http.StatusOK || !strings.Contains(body, id) {
			t.Errorf("%s: the OAuth client %q made in the first run is gone after a restart: %d", erp.Kind, id, res.StatusCode)
		}
	}
}
