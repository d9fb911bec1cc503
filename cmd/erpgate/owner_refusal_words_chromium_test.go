package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// apiWords are the admin API's words, which a person's page must not show:
// connection types and credential fields by their API names, the kinds of
// refusal, sites by their quoted slug.
var apiWords = []string{"api_token", "api_key", "api_secret", "credential field", "expects:", "invalid_request", "not_found",
	"conflict:", "site “",
	// A tool error's words for a model: its HTTP status, and advice for
	// someone signed in to an AI client.
	"HTTP 401", "the operator", "sign in again",
	// A sentence's first letter capitalised byte by byte: a broken
	// character where a quotation mark opened it.
	"\uFFFD"}

// TestChromiumOwnerPageRefusalsInPlainWords: on the owner's page of a
// site registered with only its OAuth client (as self-service registration
// leaves it), the refusals an owner can meet are plain sentences, on the
// page and in its recent activity: a service token before the fixed API
// credential, an API credential with a field left blank (a space passes
// the browser's required check) or a wrong secret, and a person's access revoked twice (two
// tabs, or a second click on a stale page). Before, the activity said
// "Site “plain” has no api_token connection", the form "Missing credential
// field: api_key (this kind of site expects: api_key, api_secret)", a wrong
// secret "The ERP did not accept the credentials for this connection (HTTP
// 401); sign in again or ask the operator to renew the API credential", the
// people section "ERP user “…” has not connected to site “plain”". A
// refusal recorded before events kept a sentence said only "refused".
func TestChromiumOwnerPageRefusalsInPlainWords(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	var site siteResponse
	if err := gw.admin.do(context.Background(), http.MethodPost, "/sites",
		map[string]any{"slug": "plain", "kind": "frappe", "display_name": "Plain Ltd", "base_url": sim.URL}, &site); err != nil {
		t.Fatal(err)
	}
	client := sim.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(context.Background(), site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
	person := userWithRole(t, sim, "all-companies")
	connectOAuth(t, site.MCPURL, frappeLogin(person))
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	// The operator's refused calls, which the owner's activity shows too.
	if err := gw.admin.do(context.Background(), http.MethodDelete, "/sites/"+site.ID+"/connections/api_token", nil, nil); err == nil {
		t.Fatal("removing a connection the site lacks was not refused")
	}
	if err := gw.admin.do(context.Background(), http.MethodPatch, "/sites/plain", map[string]any{"status": "paused"}, nil); err == nil {
		t.Fatal("an unknown status was not refused")
	}
	// A refusal recorded before events kept a sentence (migration 00037).
	execSQL(t, gw.DBURL, `INSERT INTO admin_events (occurred_at, site_id, site_slug, actor_kind, actor, action, outcome, reason)
		VALUES (now() - interval '1 day', $1, 'plain', 'erp_admin', $2, 'update_site', 'refused',
		'invalid_request: settings: invalid Frappe settings: default_company must be at most 140 characters')`, site.ID, admin.Email)

	ctx := newChromium(t)
	manageURL := gw.URL + "/sites/plain/manage"
	navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
	waitForNewTitle(t, ctx, "Manage site plain")
	clickAndSignInAtFrappe(t, ctx, `form[action$="/manage/sign-in"] button`, admin, "Manage Plain Ltd")

	problem := func(what, section string) string {
		t.Helper()
		text := browserResult(t, ctx, "read the refusal "+what, chromedp.Text(chromedp.CSS(`section[aria-labelledby="`+section+`"] p.error`)))
		for _, words := range apiWords {
			if strings.Contains(text, words) {
				t.Errorf("%s: the page says %q, with the API's %q", what, text, words)
			}
		}
		return text
	}

	navigate(t, ctx, "issue a token before the API credential",
		chromedp.SetValue(chromedp.CSS("#token_name"), "nightly"),
		chromedp.Click(chromedp.CSS(`form[action$="/manage/tokens"] button`)))
	waitForNewTitle(t, ctx, "Manage Plain Ltd")
	if got := problem("a token without a credential", "tokens"); !strings.Contains(got, "fixed API credential") {
		t.Errorf("token refusal %q", got)
	}

	navigate(t, ctx, "give a blank API key",
		chromedp.SetValue(chromedp.CSS("#cred_api_key"), " "),
		chromedp.SetValue(chromedp.CSS("#cred_api_secret"), "s3cret"),
		chromedp.Click(chromedp.CSS(`form[action$="/manage/api-credential"] button`)))
	waitForNewTitle(t, ctx, "Manage Plain Ltd")
	if got := problem("a blank API key", "api"); !strings.Contains(got, "The field “API key of the Frappe user the service connection runs as” is empty") {
		t.Errorf("credential refusal %q", got)
	}
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="api"]`, "TestChromiumOwnerPageRefusalsInPlainWords-api.png")

	navigate(t, ctx, "give a wrong API secret",
		chromedp.SetValue(chromedp.CSS("#cred_api_key"), admin.APIKey),
		chromedp.SetValue(chromedp.CSS("#cred_api_secret"), "not-the-secret"),
		chromedp.Click(chromedp.CSS(`form[action$="/manage/api-credential"] button`)))
	waitForNewTitle(t, ctx, "Manage Plain Ltd")
	if got := problem("a wrong API secret", "api"); !strings.Contains(got, "The ERP did not accept this credential") || !strings.Contains(got, "nothing was saved") {
		t.Errorf("credential refusal %q", got)
	}
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="api"]`, "TestChromiumOwnerPageRefusalsInPlainWords-api-wrong.png")

	// Two tabs: the second revokes someone the first already did.
	navigate(t, ctx, "revoke the person, keeping the form", chromedp.Evaluate[chromedp.Void](`(() => {
		const f = document.querySelector('form[action$="/manage/people/revoke"]');
		sessionStorage.setItem("stale", f.outerHTML);
		f.submit();
	})()`))
	waitForNewTitle(t, ctx, "Manage Plain Ltd")
	if text := pageBody(t, ctx); !strings.Contains(text, "That person's access through erpgate is revoked") {
		t.Fatalf("first revocation: %s", text)
	}
	navigate(t, ctx, "revoke from the stale page", chromedp.Evaluate[chromedp.Void](`(() => {
		const holder = document.createElement("div");
		holder.innerHTML = sessionStorage.getItem("stale");
		const f = holder.firstElementChild;
		document.body.appendChild(f);
		f.submit();
	})()`))
	waitForNewTitle(t, ctx, "Manage Plain Ltd")
	if got := problem("a second revocation", "people"); !strings.Contains(got, person.Email) {
		t.Errorf("second revocation %q", got)
	}
	saveScreenshot(t, ctx, "TestChromiumOwnerPageRefusalsInPlainWords.png")

	rows := browserResult(t, ctx, "read the recent activity", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('section[aria-labelledby="activity"] tr')].map(r => r.innerText.replace(/\s+/g, " ").trim()).filter(r => r.includes("refused"))`))
	if len(rows) != 7 {
		t.Fatalf("%d refused rows, want 7: %q", len(rows), rows)
	}
	if !strings.Contains(rows[6], "changed the site refused: What was entered was not accepted; nothing was changed.") {
		t.Errorf("the refusal from before sentences: %q", rows[6])
	}
	for _, row := range rows {
		for _, words := range append(apiWords, "Site “", "“active”") {
			if strings.Contains(row, words) {
				t.Errorf("activity %q says %q, the API's words", row, words)
			}
		}
	}
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="activity"]`, "TestChromiumOwnerPageRefusalsInPlainWords-activity.png")
}

// TestChromiumOwnerPageEndpointRefusalInPlainWords: an Acumatica API
// credential checked against an endpoint the instance does not have is
// refused on the owner's page by the settings form's labels, not by the
// settings' JSON names. Before: "The site's endpoint Custom/24.200.001
// does not exist on this Acumatica instance (HTTP 404); correct the site's
// endpoint_name and endpoint_version settings; nothing was saved."
func TestChromiumOwnerPageEndpointRefusalInPlainWords(t *testing.T) {
	needChromium(t)
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	acumaticaOAuthSite(t, gw, "acu", sim)
	admin := sim.User(acumaticatest.RoleFull)
	var service acumaticatest.Client
	for _, c := range sim.Clients() {
		if c.Flow == acumaticatest.FlowPassword {
			service = c
		}
	}
	api := sim.User("service")

	ctx := newChromium(t)
	navigate(t, ctx, "open the owner page", chromedp.Navigate(gw.URL+"/sites/acu/manage"))
	waitForNewTitle(t, ctx, "Manage site acu")
	navigate(t, ctx, "start the sign-in", chromedp.Click(chromedp.CSS(`form[action$="/manage/sign-in"] button`)))
	finishAcumaticaSignIn(t, ctx, admin, "Manage Acumatica acu")
	navigate(t, ctx, "name an endpoint the instance lacks",
		chromedp.SetValue(chromedp.CSS("#setting_endpoint_name"), "Custom"),
		chromedp.Click(chromedp.CSS(`form[action$="/manage/settings"] button`)))
	waitForNewTitle(t, ctx, "Manage Acumatica acu")
	if text := pageBody(t, ctx); !strings.Contains(text, "The site's settings are saved.") {
		t.Fatalf("after saving: %s", text)
	}
	navigate(t, ctx, "give the API credential",
		chromedp.SetValue(chromedp.CSS("#cred_client_id"), service.ID),
		chromedp.SetValue(chromedp.CSS("#cred_client_secret"), service.Secret),
		chromedp.SetValue(chromedp.CSS("#cred_username"), api.Username),
		chromedp.SetValue(chromedp.CSS("#cred_password"), api.Password),
		chromedp.Click(chromedp.CSS(`form[action$="/manage/api-credential"] button`)))
	waitForNewTitle(t, ctx, "Manage Acumatica acu")
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="api"]`, "TestChromiumOwnerPageEndpointRefusalInPlainWords.png")
	got := browserResult(t, ctx, "read the refusal", chromedp.Text(chromedp.CSS(`section[aria-labelledby="api"] p.error`)))
	if !strings.Contains(got, "Endpoint name") || !strings.Contains(got, "Custom/24.200.001") || !strings.Contains(got, "nothing was saved") {
		t.Errorf("refusal %q, want it to name the form's Endpoint name and the endpoint", got)
	}
	for _, words := range []string{"endpoint_name", "endpoint_version", "HTTP 404"} {
		if strings.Contains(got, words) {
			t.Errorf("refusal %q says %q", got, words)
		}
	}
	rows := browserResult(t, ctx, "read the recent activity", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('section[aria-labelledby="activity"] tr')].map(r => r.innerText.replace(/\s+/g, " ").trim()).filter(r => r.includes("refused"))`))
	if len(rows) != 1 || strings.Contains(rows[0], "endpoint_") {
		t.Errorf("refused rows %q", rows)
	}
}
