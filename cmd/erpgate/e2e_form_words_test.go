package main

import (
	"context"
	"html"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// formRefusal is a form post that breaks one rule of a new site: the
// fields to send over a valid form, and the sentence the page must show.
type formRefusal struct {
	name   string
	kind   string
	fields map[string]string // by the registration form's names
	want   string            // the registration page's sentence
	// wantConsole is the console's sentence, when its label differs ("" for
	// a case only the registration form has).
	wantConsole string
	consoleOnly bool
}

// consoleNames are the console's names of the registration form's fields.
var consoleNames = map[string]string{"display_name": "display_name", "base_url": "base_url", "slug": "slug",
	"default_company": "setting_default_company", "tenant": "setting_tenant",
	"endpoint_name": "setting_endpoint_name", "endpoint_version": "setting_endpoint_version"}

func formRefusals() []formRefusal {
	long := func(n int) string { return strings.Repeat("a", n) }
	return []formRefusal{
		{name: "display name with a control character", kind: "frappe", fields: map[string]string{"display_name": "Acme\x01Ltd"},
			want: "Name of the site holds a control character.", wantConsole: "Display name holds a control character."},
		{name: "display name not UTF-8", kind: "frappe", fields: map[string]string{"display_name": "Acme \xff Ltd"},
			want: "Name of the site is not valid text.", wantConsole: "Display name is not valid text."},
		{name: "display name too long", kind: "frappe", fields: map[string]string{"display_name": long(201)},
			want: "Name of the site is longer than 200 characters.", wantConsole: "Display name is longer than 200 characters."},
		{name: "display name blank", kind: "frappe", fields: map[string]string{"display_name": ""},
			want: "Name of the site is empty.", wantConsole: "Display name is empty."},
		{name: "address not UTF-8", kind: "frappe", fields: map[string]string{"base_url": "http://127.0.0.1/\xff"},
			want: "The ERP's address is not valid text.", wantConsole: "ERP address is not valid text."},
		{name: "address with a control character", kind: "frappe", fields: map[string]string{"base_url": "https://erp.example.com/a\x01"},
			want: "The ERP's address holds a control character.", wantConsole: "ERP address holds a control character."},
		{name: "address without a scheme", kind: "frappe", fields: map[string]string{"base_url": "erp.example.com"},
			want: "The ERP's address must start with https://, like https://erp.example.com.", wantConsole: "ERP address must start with https://, like https://erp.example.com."},
		{name: "address of another scheme", kind: "frappe", fields: map[string]string{"base_url": "ftp://erp.example.com"},
			want: "The ERP's address must start with https://, like https://erp.example.com.", wantConsole: "ERP address must start with https://, like https://erp.example.com."},
		{name: "address without a host", kind: "frappe", fields: map[string]string{"base_url": "https://"},
			want: "The ERP's address must name a host, like https://erp.example.com.", wantConsole: "ERP address must name a host, like https://erp.example.com."},
		{name: "address with a password", kind: "frappe", fields: map[string]string{"base_url": "https://admin:pw@erp.example.com"},
			want: "The ERP's address must not hold a user name or password.", wantConsole: "ERP address must not hold a user name or password."},
		{name: "address with a query", kind: "frappe", fields: map[string]string{"base_url": "https://erp.example.com/?a=1"},
			want: "The ERP's address must not have a query (a ? and what follows it).", wantConsole: "ERP address must not have a query (a ? and what follows it)."},
		{name: "address with a fragment", kind: "frappe", fields: map[string]string{"base_url": "https://erp.example.com/#top"},
			want: "The ERP's address must not have a fragment (a # and what follows it).", wantConsole: "ERP address must not have a fragment (a # and what follows it)."},
		{name: "frappe address with a path", kind: "frappe", fields: map[string]string{"base_url": "https://erp.example.com/app"},
			want: "The ERP's address must be the site's address without a path, like https://erp.example.com.", wantConsole: "ERP address must be the site's address without a path, like https://erp.example.com."},
		{name: "acumatica address with a bad path", kind: "acumatica", fields: map[string]string{"base_url": "https://erp.example.com/a%20b"},
			want:        "The ERP's address has a path erpgate cannot use: write it like /AcumaticaERP, with letters, digits, -, _, . and ~ between single slashes.",
			wantConsole: "ERP address has a path erpgate cannot use: write it like /AcumaticaERP, with letters, digits, -, _, . and ~ between single slashes."},
		{name: "acumatica address with a long path", kind: "acumatica", fields: map[string]string{"base_url": "https://erp.example.com/" + long(100) + "/" + long(100)},
			want: "The ERP's address has a path longer than 200 characters.", wantConsole: "ERP address has a path longer than 200 characters."},
		{name: "address with a bad port", kind: "frappe", fields: map[string]string{"base_url": "https://erp.example.com:99999"},
			want: "The ERP's address has a port that is not valid.", wantConsole: "ERP address has a port that is not valid."},
		{name: "plain http", kind: "frappe", fields: map[string]string{"base_url": "http://erp.example.com"},
			want:        "The ERP's address must start with https://; http:// is only for this machine and configured development hosts.",
			wantConsole: "ERP address must start with https://; http:// is only for this machine and configured development hosts."},
		{name: "bad host name", kind: "frappe", fields: map[string]string{"base_url": "https://exa_mple.com"},
			want:        "The ERP's address has a host name that is not valid: use letters, digits, - and dots, and write international names in their xn-- form.",
			wantConsole: "ERP address has a host name that is not valid: use letters, digits, - and dots, and write international names in their xn-- form."},
		{name: "bad IP address", kind: "frappe", fields: map[string]string{"base_url": "https://[fe80::1%25eth0]"},
			want: "The ERP's address has a host that is not a valid IP address.", wantConsole: "ERP address has a host that is not a valid IP address."},
		{name: "long host name", kind: "frappe", fields: map[string]string{"base_url": "https://" + strings.Repeat(long(60)+".", 5) + "com"},
			want: "The ERP's address has a host name longer than 253 characters.", wantConsole: "ERP address has a host name longer than 253 characters."},
		{name: "default company with a control character", kind: "frappe", fields: map[string]string{"default_company": "Acme\x01Ltd"},
			want: "Default company holds a control character."},
		{name: "default company too long", kind: "frappe", fields: map[string]string{"default_company": long(141)},
			want: "Default company is longer than 140 characters."},
		{name: "default company not UTF-8", kind: "frappe", fields: map[string]string{"default_company": "Acme \xff"},
			want: "Default company is not valid text."},
		{name: "tenant with NUL", kind: "acumatica", fields: map[string]string{"tenant": "A\x00B"},
			want: "Tenant holds a control character."},
		{name: "tenant with a slash", kind: "acumatica", fields: map[string]string{"tenant": "a/b"},
			want: `Tenant must not hold /, \, ?, # or %.`},
		{name: "tenant dot dot", kind: "acumatica", fields: map[string]string{"tenant": ".."},
			want: "Tenant is not a tenant login name."},
		{name: "tenant too long", kind: "acumatica", fields: map[string]string{"tenant": long(129)},
			want: "Tenant is longer than 128 characters."},
		{name: "tenant not UTF-8", kind: "acumatica", fields: map[string]string{"tenant": "T\xff"},
			want: "Tenant is not valid text."},
		{name: "endpoint name", kind: "acumatica", fields: map[string]string{"endpoint_name": "My Endpoint"},
			want: "Endpoint name must be letters, digits and underscores, starting with a letter, at most 64."},
		{name: "endpoint version", kind: "acumatica", fields: map[string]string{"endpoint_version": "v1"},
			want: "Endpoint version is not a version such as 24.200.001."},
		{name: "default endpoint version", kind: "acumatica", fields: map[string]string{"endpoint_version": "23.200.001"},
			want: "Endpoint version must be 24.200.001 or 25.200.001 for the Default endpoint."},
		{name: "slug", kind: "frappe", consoleOnly: true, fields: map[string]string{"slug": "Acme Ltd"},
			wantConsole: "Short name must be 1 to 48 of a-z, 0-9 and -, starting and ending with a letter or digit."},
		{name: "reserved slug", kind: "frappe", consoleOnly: true, fields: map[string]string{"slug": "admin"},
			wantConsole: "Short name is one erpgate keeps for itself; choose another."},
		{name: "slug like a UUID", kind: "frappe", consoleOnly: true, fields: map[string]string{"slug": "0195d1f4-0000-7000-8000-000000000000"},
			wantConsole: "Short name looks like a site id; choose another."},
		{name: "slug taken", kind: "frappe", consoleOnly: true, fields: map[string]string{"slug": "taken"},
			wantConsole: "Short name is already in use; choose another."},
	}
}

// validForm is a form of kind that passes every rule, by the registration
// form's names.
func validForm(kind string, i int) map[string]string {
	f := map[string]string{"display_name": "Acme Ltd", "base_url": "http://127.0.0.1:1", "slug": "acme-" + strconv.Itoa(i)}
	if kind == "acumatica" {
		f["tenant"], f["endpoint_name"], f["endpoint_version"] = "Company", "Default", "24.200.001"
	} else {
		f["default_company"] = "Acme"
	}
	return f
}

var problemOf = regexp.MustCompile(`<p class="error" role="alert" id="(?:start-error|problem)">([^<]*)</p>`)

// shownValue is the value the page's input named name shows.
func shownValue(page, name string) (string, bool) {
	m := regexp.MustCompile(`<input[^>]*name="` + regexp.QuoteMeta(name) + `"[^>]*value="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		return "", false
	}
	return html.UnescapeString(m[1]), true
}

// checkRefusal checks a page's refusal: the sentence, no setting keys or
// Go quoting, and the person's input kept.
func checkRefusal(t *testing.T, page, want string, sent map[string]string, names map[string]string) {
	t.Helper()
	m := problemOf.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no refusal on the page: %s", pageText(page))
	}
	problem := html.UnescapeString(m[1])
	if problem != want {
		t.Errorf("the page says %q, want %q", problem, want)
	}
	for _, bad := range []string{`\x`, `\u`, `"`, "Settings", "settings", "base URL", "base_url", "display_name", "default_company", "endpoint_", "slug", "tenant \"", "%!"} {
		if strings.Contains(problem, bad) {
			t.Errorf("the refusal %q holds %q", problem, bad)
		}
	}
	for field, v := range sent {
		v = strings.TrimSpace(v)
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			continue // not shown as sent: the page cannot
		}
		if got, ok := shownValue(page, names[field]); !ok || got != v {
			t.Errorf("%s came back as %q (found %v), want %q", field, got, ok, v)
		}
	}
}

// loopbackFrom is an HTTP client that does not follow redirects and
// connects from 127.0.0.n, so that each case is its own source for the
// registration's limit per source.
func loopbackFrom(n int) *http.Client {
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, byte(n/250), byte(2+n%250))}}
	return &http.Client{Jar: jar, Transport: &http.Transport{DialContext: d.DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// TestNewSiteFormsRefuseInPlainWords posts, to the registration's start
// and to the console's new-site form, a site that breaks each rule of the
// registry and the connectors' settings, and reads the refusal: a
// sentence naming the form's own label, no setting key, no Go-quoted
// bytes, and what the person typed still in the form. Before, the pages
// showed the messages as the layers wrote them for the admin API
// ("Settings: invalid Acumatica settings: tenant \"A\x00B\" is not ...").
func TestNewSiteFormsRefuseInPlainWords(t *testing.T) {
	gw := startGateway(t, "", nil)
	if err := gw.admin.do(context.Background(), http.MethodPost, "/sites",
		map[string]any{"slug": "taken", "kind": "frappe", "display_name": "Taken", "base_url": "http://127.0.0.1:2"}, nil); err != nil {
		t.Fatal(err)
	}
	console := newConsoleBrowser(t, gw.URL)
	if status, _, _ := console.signIn(gw.AdminToken); status != http.StatusSeeOther {
		t.Fatalf("console sign-in: HTTP %d", status)
	}
	for i, c := range formRefusals() {
		form := validForm(c.kind, i)
		for k, v := range c.fields {
			form[k] = v
		}
		if !c.consoleOnly {
			t.Run("register/"+c.name, func(t *testing.T) {
				b := &registrationClient{t: t, base: gw.URL, hc: loopbackFrom(i)}
				values := url.Values{"csrf": {b.csrf("/register")}, "kind": {c.kind}}
				for k, v := range form {
					if k != "slug" {
						values.Set(k, v)
					}
				}
				status, _, page := b.do(http.MethodPost, "/register", values, nil)
				if status != http.StatusBadRequest {
					t.Errorf("HTTP %d, want 400", status)
				}
				sent := map[string]string{}
				for k, v := range form {
					if k != "slug" {
						sent[k] = v
					}
				}
				checkRefusal(t, page, c.want, sent, map[string]string{"display_name": "display_name", "base_url": "base_url",
					"default_company": "default_company", "tenant": "tenant", "endpoint_name": "endpoint_name", "endpoint_version": "endpoint_version"})
			})
		}
		t.Run("console/"+c.name, func(t *testing.T) {
			values := url.Values{"csrf": {console.csrfOf("/console/sites/new?kind=" + c.kind)}, "kind": {c.kind}}
			for k, v := range form {
				values.Set(consoleNames[k], v)
			}
			status, page, _ := console.do(http.MethodPost, "/console/sites/new", values)
			if status != http.StatusUnprocessableEntity {
				t.Errorf("HTTP %d, want 422", status)
			}
			want := c.wantConsole
			if want == "" {
				want = c.want
			}
			checkRefusal(t, page, "Nothing was saved: "+want, form, consoleNames)
		})
	}
}
