package main

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

var redirectURIField = regexp.MustCompile(`<code id="v-redirect">([^<]+)</code>`)

// TestRegistrationOfAnotherTenantIsRefused: one Acumatica instance serves
// several tenants, each with its own administrators. An administrator of
// one tenant (Demo, the simulator's) starts a registration for another
// tenant of the same instance (Victim), creates the OAuth client in their
// own tenant (client id GUID@Demo) and signs in there. Even where the
// instance answers the other tenant's administrators' inquiry for their
// token (here: a user of the same name is Victim's Administrator, as the
// built-in admin is in every tenant), nothing is registered and the page
// names the tenant they signed in to. Before, the site was created for
// tenant Victim with Demo's administrator as its owner, and Victim's own
// administrators were told it is already registered.
func TestRegistrationOfAnotherTenantIsRefused(t *testing.T) {
	gw := startGateway(t, "", nil)
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	t.Cleanup(sim.Close)
	admin := sim.User(acumaticatest.RoleFull)
	sim.SetFault(acumaticatest.Fault{PathPrefix: "/t/Victim/api/odata/gi/MCPAdmin", Status: http.StatusOK,
		Body: `{"value":[{"Username":"` + admin.Username + `","Rolename":"Administrator"}]}`})

	status, text := registerAcumaticaOverHTTP(t, gw, sim, "Victim", admin)
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites`); n != 0 {
		t.Fatalf("%d sites registered by %s@%s for tenant Victim (HTTP %d): %s", n, admin.Username, sim.Tenant(), status, text)
	}
	for _, want := range []string{"You are not an administrator of this ERP", "signed in to tenant " + sim.Tenant(), "Victim", "nothing was registered"} {
		if !strings.Contains(text, want) {
			t.Errorf("HTTP %d: the page does not say %q: %s", status, want, text)
		}
	}
	if status != http.StatusForbidden {
		t.Errorf("HTTP %d, want 403", status)
	}
}

// registerAcumaticaOverHTTP walks a registration of sim's instance for
// tenant at gw as a browser would: the start, an OAuth client created in
// sim's own tenant with the page's redirect URI, user's sign-in at the
// ERP and the ERP's redirect back. It returns the last answer's status
// and text.
func registerAcumaticaOverHTTP(t *testing.T, gw *gateway, sim *acumaticatest.Server, tenant string, user acumaticatest.User) (int, string) {
	t.Helper()
	visitor := newRegistrationClient(t, gw.URL)
	form := url.Values{"csrf": {visitor.csrf("/register")}, "kind": {"acumatica"}, "display_name": {"Victim Ltd"},
		"base_url": {sim.URL}, "tenant": {tenant}, "endpoint_name": {"Default"}, "endpoint_version": {"24.200.001"}}
	status, h, page := visitor.do(http.MethodPost, "/register", form, nil)
	if status != http.StatusSeeOther {
		t.Fatalf("start: HTTP %d %s", status, pageText(page))
	}
	regPath := strings.TrimPrefix(h.Get("Location"), gw.URL)
	status, _, page = visitor.do(http.MethodGet, regPath, nil, nil)
	m := redirectURIField.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		t.Fatalf("client step: HTTP %d %s", status, pageText(page))
	}
	client := sim.RegisterClient(html.UnescapeString(m[1]))
	if !strings.HasSuffix(client.ID, "@"+sim.Tenant()) {
		t.Fatalf("client id %q is not tenant %s's", client.ID, sim.Tenant())
	}
	csrf := csrfField.FindStringSubmatch(page)[1]
	status, h, page = visitor.do(http.MethodPost, regPath+"/client",
		url.Values{"csrf": {csrf}, "client_id": {client.ID}, "client_secret": {client.Secret}}, nil)
	if status != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), sim.URL) {
		t.Fatalf("client: HTTP %d to %q %s", status, h.Get("Location"), pageText(page))
	}
	back, err := acumaticatest.CompleteAuthorization(nil, h.Get("Location"), user.Username, user.Password)
	if err != nil || back == nil {
		t.Fatalf("sign in at the ERP: %v", err)
	}
	status, _, page = visitor.do(http.MethodGet, strings.TrimPrefix(back.String(), gw.URL), nil, nil)
	return status, strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(page, " "))), " ")
}

// TestRegistrationOfATenantSpeltInAnotherCaseIsRefused: Acumatica's tenant
// login names ignore case (the simulator's, and /t/{tenant} on IIS), so
// tenant "DEMO" at an instance is tenant "Demo", registered already. Its
// administrator registering it again is told it is registered, and no
// second site for the one tenant appears. Before, the unique index
// compared the tenant with case, and a second site was created.
func TestRegistrationOfATenantSpeltInAnotherCaseIsRefused(t *testing.T) {
	gw := startGateway(t, "", nil)
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	t.Cleanup(sim.Close)
	admin := sim.User(acumaticatest.RoleFull)
	if status, text := registerAcumaticaOverHTTP(t, gw, sim, sim.Tenant(), admin); status != http.StatusSeeOther {
		t.Fatalf("first registration: HTTP %d %s", status, text)
	}
	status, text := registerAcumaticaOverHTTP(t, gw, sim, strings.ToUpper(sim.Tenant()), admin)
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites`); n != 1 {
		t.Fatalf("%d sites for tenant %s (the second as %s, HTTP %d): %s", n, sim.Tenant(), strings.ToUpper(sim.Tenant()), status, text)
	}
	if status != http.StatusConflict || !strings.Contains(text, "is already registered") {
		t.Errorf("HTTP %d: %s", status, text)
	}
}
