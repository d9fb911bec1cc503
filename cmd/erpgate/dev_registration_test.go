package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
)

// What `erpgate dev` offers for walking registration: for each kind, a
// simulator no site uses, its administrator and non-administrator, and
// where each creates its OAuth client.

// checkRegistrationSummary checks dev.json's registration entries, against
// the seeded simulators where the kind has a seed, and that the summary
// names them.
func checkRegistrationSummary(t *testing.T, summary string, state devState, addrs map[string]string, seeds map[string]devSeed) {
	t.Helper()
	if state.RegisterURL != state.BaseURL+"/register" || !strings.Contains(summary, state.RegisterURL) {
		t.Errorf("register URL %q is not %s/register in dev.json and the summary:\n%s", state.RegisterURL, state.BaseURL, summary)
	}
	listed := map[string]bool{}
	for _, erp := range state.Registration {
		listed[erp.Kind] = true
		if want := "http://" + addrs[devAddrEnv(erp.Kind, "REGISTER_")]; erp.ERPURL != want {
			t.Errorf("%s registration simulator at %s, want %s", erp.Kind, erp.ERPURL, want)
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
		seed, seeded := seeds[erp.Kind]
		admins, others := 0, 0
		for _, u := range erp.Users {
			if admin, known := seed.users[u.Username]; seeded && (!known || admin != u.Admin) {
				t.Errorf("%s: user %s (admin %v) is not so on the simulator", erp.Kind, u.Username, u.Admin)
			}
			if u.Admin {
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
		if seed.tenant != "" && (erp.Tenant != seed.tenant || !strings.Contains(summary, "tenant "+seed.tenant)) {
			t.Errorf("%s: dev.json has tenant %q, want %q named in the summary:\n%s", erp.Kind, erp.Tenant, seed.tenant, summary)
		}
	}
	for kind, seed := range seeds {
		if seed.createClient != nil && !listed[kind] {
			t.Errorf("dev.json lists no %s registration simulator", kind)
		}
	}
}

// devRegBrowser is a cookie-keeping client that does not follow redirects.
type devRegBrowser struct {
	t *testing.T
	c *http.Client
}

func newDevRegBrowser(t *testing.T) *devRegBrowser {
	jar, _ := cookiejar.New(nil)
	return &devRegBrowser{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *devRegBrowser) do(u string, form url.Values) (*http.Response, string) {
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

// signInRegistrationERP signs u in at the ERP's own sign-in page.
func signInRegistrationERP(t *testing.T, erp devRegistrationERP, seed devSeed, u devUser) *devRegBrowser {
	t.Helper()
	b := newDevRegBrowser(t)
	if res, page := b.do(erp.SignInURL, seed.signInForm(u)); res.StatusCode != http.StatusFound {
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

// createRegistrationClients does, on each registration simulator whose
// kind the test knows how to drive, what the registration page tells an
// administrator: sign in and create the OAuth client. The
// non-administrator is refused.
func createRegistrationClients(t *testing.T, state devState, seeds map[string]devSeed) map[string]string {
	t.Helper()
	made := map[string]string{}
	redirect := state.BaseURL + "/oauth/callback"
	for _, erp := range state.Registration {
		seed := seeds[erp.Kind]
		if seed.createClient == nil {
			continue
		}
		non := signInRegistrationERP(t, erp, seed, registrationUser(erp, false))
		if res, _ := non.do(erp.OAuthClientURL, nil); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: the non-administrator opened %s: %d", erp.Kind, erp.OAuthClientURL, res.StatusCode)
		}
		b := signInRegistrationERP(t, erp, seed, registrationUser(erp, true))
		made[erp.Kind] = seed.createClient(t, b, erp, redirect)
	}
	return made
}

// checkRegistrationClientsKept finds the clients made in the first run on
// the restarted simulators.
func checkRegistrationClientsKept(t *testing.T, state devState, seeds map[string]devSeed, made map[string]string) {
	t.Helper()
	for _, erp := range state.Registration {
		seed := seeds[erp.Kind]
		if seed.createClient == nil {
			continue
		}
		id := made[erp.Kind]
		b := signInRegistrationERP(t, erp, seed, registrationUser(erp, true))
		res, body := b.do(seed.clientPage(erp, id), nil)
		if id == "" || res.StatusCode != http.StatusOK || !strings.Contains(body, id) {
			t.Errorf("%s: the OAuth client %q made in the first run is gone after a restart: %d", erp.Kind, id, res.StatusCode)
		}
	}
}
