package main

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// devSeed is what the dev tests know of one kind's demo from its
// simulator's seeded data (read from fresh simulators, never from the demo
// hook under test), beyond what they check for every registered kind.
type devSeed struct {
	// credentials are the service connection and string settings that
	// dev.json and the summary must give.
	credentials map[string]string
	// users are the simulator's users, each marked if an administrator.
	users map[string]bool
	// read is a read call the demo site's service token makes.
	read func(t *testing.T, site devSite) (tool string, args map[string]any)
	// write is the write tool the service token proposes with proposal,
	// for approver to approve.
	write, approver string
	proposal        map[string]any

	// For the registration simulator: its tenant, which the summary must
	// name (if the ERP has tenants); the form of its sign-in page; how its
	// administrator creates an OAuth client on it (returning its id) and
	// the page that then shows that client.
	tenant       string
	signInForm   func(u devUser) url.Values
	createClient func(t *testing.T, b *devRegBrowser, erp devRegistrationERP, redirect string) string
	clientPage   func(erp devRegistrationERP, id string) string
}

var (
	reRegFrappeCSRF = regexp.MustCompile(`name="csrf_token" value="([0-9a-f]+)"`)
	reRegAcuToken   = regexp.MustCompile(`name="__RequestVerificationToken" value="([0-9a-f]+)"`)
	reRegClientID   = regexp.MustCompile(`<dd id="client-id">([^<]+)</dd>`)
)

// devSeeds are the seeds of the kinds the dev tests know by name.
func devSeeds(t *testing.T) map[string]devSeed {
	t.Helper()
	fsim := frappetest.NewHandler(frappetest.Options{})
	asim := acumaticatest.NewHandler(acumaticatest.Options{})
	defer asim.Close()
	bot, login := fsim.User("service"), asim.ServiceLogin()
	fusers, ausers := map[string]bool{}, map[string]bool{}
	for _, u := range fsim.Users() {
		fusers[u.Email] = u.IsSystemManager()
	}
	for _, u := range asim.Users() {
		ausers[u.Username] = u.IsAdministrator()
	}
	return map[string]devSeed{
		"frappe": {
			credentials: map[string]string{"api_key": bot.APIKey, "api_secret": bot.APISecret},
			users:       fusers,
			read: func(*testing.T, devSite) (string, map[string]any) {
				return "get_current_user", map[string]any{}
			},
			write: "create_sales_order", approver: fsim.User(frappetest.RoleAdministrator).Email,
			proposal: map[string]any{"customer": fsim.Data().List("Customer")[0].Name, "company": "Demo Holdings NZ Ltd", "delivery_date": "2026-12-31",
				"items": []any{map[string]any{"item_code": fsim.Data().List("Item")[0].Name, "qty": 1}}},
			signInForm: func(u devUser) url.Values {
				return url.Values{"usr": {u.Username}, "pwd": {u.Password}, "redirect-to": {"/app"}}
			},
			createClient: createFrappeRegistrationClient,
			clientPage: func(erp devRegistrationERP, id string) string {
				return erp.ERPURL + "/app/oauth-client/" + url.PathEscape(id)
			},
		},
		"acumatica": {
			credentials: map[string]string{"client_id": login.ClientID, "client_secret": login.ClientSecret,
				"username": login.Username, "password": login.Password, "tenant": login.Tenant},
			users: ausers,
			read: func(t *testing.T, site devSite) (string, map[string]any) {
				return "acumatica_get_customer", map[string]any{"CustomerID": firstAcumaticaCustomer(t, site)}
			},
			write: "acumatica_create_sales_order", approver: asim.User(acumaticatest.RoleFull).Username + "@" + login.Tenant,
			proposal: map[string]any{"CustomerID": asim.Data().Records("Customer")[0].String("CustomerID"),
				"Details": []any{map[string]any{"InventoryID": asim.Data().Records("StockItem")[0].String("InventoryID"), "OrderQty": 1}}},
			tenant: asim.Tenant(),
			signInForm: func(u devUser) url.Values {
				return url.Values{"UserName": {u.Username}, "Password": {u.Password}}
			},
			createClient: createAcumaticaRegistrationClient,
			clientPage:   func(erp devRegistrationERP, _ string) string { return erp.OAuthClientURL },
		},
	}
}

// createFrappeRegistrationClient fills Frappe's OAuth Client form.
func createFrappeRegistrationClient(t *testing.T, b *devRegBrowser, erp devRegistrationERP, redirect string) string {
	t.Helper()
	res, page := b.do(erp.OAuthClientURL, nil)
	m := reRegFrappeCSRF.FindStringSubmatch(page)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("frappe: OAuth Client form: %d %s", res.StatusCode, page)
	}
	form := url.Values{"csrf_token": {m[1]}, "app_name": {"erpgate"}, "scopes": {"all openid"}, "redirect_uris": {redirect},
		"default_redirect_uri": {redirect}, "grant_type": {"Authorization Code"}, "response_type": {"Code"}}
	res, _ = b.do(erp.OAuthClientURL, form)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("frappe: save the OAuth Client: %d", res.StatusCode)
	}
	res, page = b.do(erp.ERPURL+res.Header.Get("Location"), nil)
	return registrationClientID(t, erp, res, page)
}

// createAcumaticaRegistrationClient fills Acumatica's Connected
// Applications form.
func createAcumaticaRegistrationClient(t *testing.T, b *devRegBrowser, erp devRegistrationERP, redirect string) string {
	t.Helper()
	res, page := b.do(erp.OAuthClientURL, nil)
	m := reRegAcuToken.FindStringSubmatch(page)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("acumatica: Connected Applications: %d %s", res.StatusCode, page)
	}
	form := url.Values{"__RequestVerificationToken": {m[1]}, "ClientName": {"erpgate"}, "Flow": {acumaticatest.FlowAuthorizationCode}, "RedirectUri": {redirect}}
	res, page = b.do(erp.OAuthClientURL, form)
	return registrationClientID(t, erp, res, page)
}

// registrationClientID reads the client id off the saved client's page.
func registrationClientID(t *testing.T, erp devRegistrationERP, res *http.Response, page string) string {
	t.Helper()
	id := reRegClientID.FindStringSubmatch(page)
	if res.StatusCode != http.StatusOK || id == nil {
		t.Fatalf("%s: the saved client's page: %d %s", erp.Kind, res.StatusCode, page)
	}
	return id[1]
}

func firstAcumaticaCustomer(t *testing.T, site devSite) string {
	t.Helper()
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	defer cs.Close()
	r := callTool(t, cs, "acumatica_list_customers", map[string]any{})
	if r.IsError {
		t.Fatalf("acumatica_list_customers: %s", r.Text)
	}
	results, _ := r.Structured["results"].([]any)
	if len(results) == 0 {
		t.Fatalf("no customers: %v", r.Structured)
	}
	id, _ := results[0].(map[string]any)["CustomerID"].(string)
	if id == "" {
		t.Fatalf("first customer has no CustomerID: %v", results[0])
	}
	return id
}
