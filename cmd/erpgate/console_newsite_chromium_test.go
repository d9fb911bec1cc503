package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestChromiumConsoleAddsASite: the operator adds a Frappe site from the
// console, as NexWave MCP's /admin page did: the site and its fixed API
// credential, verified at the ERP, and a first service token shown once,
// which a program then uses through /service/mcp with the official MCP
// client. A credential the ERP refuses adds nothing, and the form comes
// back with the reason and what was typed, secrets left out.
func TestChromiumConsoleAddsASite(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	user := userWithRole(t, sim, "service")
	ctx := newChromium(t)

	signInToConsole(t, ctx, gw, "/console")
	submitAndWait(t, ctx, "add a site", "Add a site", chromedp.Click(chromedp.CSS(`#add-site`)))
	saveScreenshot(t, ctx, "console-new-site-kind.png")
	submitAndWait(t, ctx, "choose Frappe", "Add a site", chromedp.Click(chromedp.CSS(`a[href$="kind=frappe"]`)))
	fill := func(secret string) {
		t.Helper()
		for id, v := range map[string]string{"#display_name": "Acme Ltd", "#base_url": sim.URL, "#slug": "acme",
			"#api_api_key": user.APIKey, "#api_api_secret": secret} {
			browserDo(t, ctx, "fill "+id, chromedp.SetValue(chromedp.CSS(id), v))
		}
	}
	fill("not-the-secret")
	submitAndWait(t, ctx, "add with a wrong secret", "Add a site", chromedp.Click(chromedp.CSS(`form.card button[type="submit"]`)))
	problem := browserResult(t, ctx, "read the refusal", chromedp.Text(chromedp.CSS("#problem")))
	if !strings.HasPrefix(problem, "The site was not added") || strings.Contains(problem, "not-the-secret") {
		t.Errorf("refusal %q", problem)
	}
	kept := browserResult(t, ctx, "read the form", chromedp.Evaluate[[]string](
		`[document.querySelector("#display_name").value, document.querySelector("#base_url").value, document.querySelector("#api_api_key").value, document.querySelector("#api_api_secret").value]`))
	if len(kept) != 4 || kept[0] != "Acme Ltd" || kept[1] != sim.URL || kept[2] != "" || kept[3] != "" {
		t.Errorf("the form came back with %q: want the name and address kept, the key and secret (both secret in Frappe) empty", kept)
	}
	var n int
	if err := gw.App.pool.QueryRow(t.Context(), `SELECT count(*) FROM sites`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d sites after the refused credential (%v), want 0", n, err)
	}
	saveScreenshot(t, ctx, "console-new-site-refused.png")

	fill(user.APISecret)
	submitAndWait(t, ctx, "add the site", "Site acme is added", chromedp.Click(chromedp.CSS(`form.card button[type="submit"]`)))
	saveScreenshot(t, ctx, "console-new-site-added.png")
	if id := browserResult(t, ctx, "read the identity", chromedp.Text(chromedp.CSS("#api-identity"))); id != user.Email {
		t.Errorf("verified identity %q, want %s", id, user.Email)
	}
	token := browserResult(t, ctx, "read the token", chromedp.Evaluate[string](`document.querySelector("#token").value`))
	if !strings.HasPrefix(token, "eg") || len(token) < 32 {
		t.Fatalf("token %q", token)
	}
	cs := connect(t, gw.URL+"/service/mcp", map[string]string{"X-Erpgate-Service-Token": token})
	out := mustSucceed(t, callTool(t, cs, "list_companies", map[string]any{}), "list_companies")
	if data, _ := out["data"].([]any); len(data) != len(sim.Data().List("Company")) {
		t.Errorf("list_companies gave %d companies, want the simulator's %d", len(data), len(sim.Data().List("Company")))
	}
	var events int
	if err := gw.App.pool.QueryRow(t.Context(), `SELECT count(*) FROM admin_events WHERE site_slug = 'acme' AND action IN ('create_site', 'delete_site', 'put_api_connection', 'issue_service_token') AND actor_kind = 'operator'`).Scan(&events); err != nil || events < 5 {
		t.Errorf("%d audit events of the operator for acme (%v): want the refused attempt and its undoing, and the site, credential and token", events, err)
	}
}
