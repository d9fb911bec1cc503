package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// A write proposed and approved through the real flow, which Frappe then
// refuses (a credit limit below what the customer owes: a 417
// ValidationError): the model is told the tool's error, and the approval
// page says in plain words that Frappe refused the change and quotes
// Frappe's own message, never the words written for the model (the
// exception class, "the ERP refused the change (…)").
func TestChromiumApprovalOfAWriteFrappeRefused(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	site := frappeOAuthSite(t, gw, "acme", sim)
	if err := gw.admin.do(context.Background(), http.MethodPut, "/sites/acme/settings/write_tools", map[string]any{"value": []string{"update_customer"}}, nil); err != nil {
		t.Fatal(err)
	}
	var owing *frappetest.Doc
	for _, d := range sim.Data().List("Sales Invoice") {
		if d.Int("docstatus") == 1 && d.Dec("outstanding_amount").Cents() > 100 && d.Str("party_account_currency") == d.Str("currency") {
			owing = d
			break
		}
	}
	if owing == nil {
		t.Fatal("no seeded Sales Invoice with an outstanding amount")
	}
	user := userWithRole(t, sim, "all-companies")
	client := connectOAuth(t, site.MCPURL, frappeLogin(user))
	args := map[string]any{"customer": owing.Str("customer"), "company": owing.Str("company"), "credit_limit": 1}

	first := callTool(t, client.cs, "update_customer", args)
	if !first.IsError || first.errorCode() != "APPROVAL_REQUIRED" {
		t.Fatalf("the first call: %s", first.Text)
	}
	link := approvalURL.FindString(first.Text)
	ctx := newChromium(t)
	navigate(t, ctx, "open the approval link", chromedp.Navigate(link))
	waitForNewTitle(t, ctx, "Approve a change on Test acme")
	clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, user, "Approve a change on Test acme")
	navigate(t, ctx, "approve", chromedp.WaitEnabled(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
	waitForNewTitle(t, ctx, "Change approved on Test acme")

	// The model is told the tool's error, as before.
	const erpWords = "New credit limit is less than current outstanding amount for the customer. Credit limit has to be atleast "
	again := callTool(t, client.cs, "update_customer", args)
	if !again.IsError || again.errorCode() != "INVALID_ARGUMENT" || !strings.Contains(again.Text, "the ERP refused the change (ValidationError): "+erpWords) {
		t.Fatalf("the call after approval: %s", again.Text)
	}

	navigate(t, ctx, "open the approval link again", chromedp.Navigate(link))
	waitForNewTitle(t, ctx, "Change not carried out on Test acme")
	saveScreenshot(t, ctx, "approval-refused-frappe.png")
	text := pageBody(t, ctx)
	if want := "Frappe/ERPNext refused the change, so nothing was written. It said: “" + erpWords; !strings.Contains(text, want) {
		t.Errorf("the page lacks %q: %s", want, text)
	}
	for _, modelWords := range []string{"ValidationError", "the ERP refused the change (", "HTTP 417"} {
		if strings.Contains(text, modelWords) {
			t.Errorf("the page shows the model's words %q: %s", modelWords, text)
		}
	}
}
