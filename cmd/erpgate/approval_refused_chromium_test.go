package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// A write proposed and approved through the real flow, which Frappe then
// refuses (a credit limit below what the customer owes: a 417
// ValidationError), saving nothing, so the approval holds: the model is
// told the tool's error, and the approval page, still approved, says in
// plain words that Frappe refused the first try and quotes
// Frappe's own message, never the words written for the model (the
// exception class, "the ERP refused the change (…)").
func TestChromiumApprovalOfAWriteFrappeRefused(t *testing.T) {
	f := newFrappeWrite(t, "update_customer")
	var owing *frappetest.Doc
	for _, d := range f.sim.Data().List("Sales Invoice") {
		if d.Int("docstatus") == 1 && d.Dec("outstanding_amount").Cents() > 100 && d.Str("party_account_currency") == d.Str("currency") {
			owing = d
			break
		}
	}
	if owing == nil {
		t.Fatal("no seeded Sales Invoice with an outstanding amount")
	}
	args := map[string]any{"customer": owing.Str("customer"), "company": owing.Str("company"), "credit_limit": 1}
	ctx, link := f.approve(t, "update_customer", args)

	// The model is told the tool's error, as before.
	const erpWords = "New credit limit is less than current outstanding amount for the customer. Credit limit has to be atleast "
	again := callTool(t, f.client.cs, "update_customer", args)
	if !again.IsError || again.errorCode() != "INVALID_ARGUMENT" || !strings.Contains(again.Text, "the ERP refused the change (ValidationError): "+erpWords) {
		t.Fatalf("the call after approval: %s", again.Text)
	}
	// Frappe saved nothing: the approval holds, and the page says why the
	// first try did not go through.
	approvalPageSays(t, ctx, link, "Change approved on Test acme", "approval-refused-frappe.png",
		"The first try did not go through: Frappe/ERPNext refused the change, so nothing was written. It said: “"+erpWords,
		"ValidationError", "the ERP refused the change (", "HTTP 417")
}

// The same on Acumatica: a user whose roles do not allow saving sales
// orders proposes one and approves it; Acumatica refuses the save (403).
// The model is told the tool's error, and the page says plainly that
// Acumatica does not allow this ERP user the change, quoting Acumatica.
func TestChromiumApprovalOfAWriteAcumaticaRefused(t *testing.T) {
	needChromium(t)
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	mcpURL := acumaticaOAuthSite(t, gw, "acu", sim)
	if err := gw.admin.do(context.Background(), http.MethodPut, "/sites/acu/settings/write_tools", map[string]any{"value": []string{"acumatica_create_sales_order"}}, nil); err != nil {
		t.Fatal(err)
	}
	user := sim.User(acumaticatest.RoleSalesViewer)
	client := connectOAuth(t, mcpURL, acumaticaLogin(user))
	args := map[string]any{"CustomerID": sim.Data().Records("Customer")[0].String("CustomerID"),
		"Details": []any{map[string]any{"InventoryID": sim.Data().Records("StockItem")[0].String("InventoryID"), "OrderQty": 1}}}

	first := callTool(t, client.cs, "acumatica_create_sales_order", args)
	if !first.IsError || first.errorCode() != "APPROVAL_REQUIRED" {
		t.Fatalf("the first call: %s", first.Text)
	}
	link := approvalURL.FindString(first.Text)
	ctx := newChromium(t)
	navigate(t, ctx, "open the approval link", chromedp.Navigate(link))
	waitForNewTitle(t, ctx, "Approve a change on Acumatica acu")
	navigate(t, ctx, "start the sign-in", chromedp.Click(chromedp.CSS(`form[action$="/sign-in"] button`)))
	finishAcumaticaSignIn(t, ctx, user, "Approve a change on Acumatica acu")
	navigate(t, ctx, "approve", chromedp.WaitEnabled(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
	waitForNewTitle(t, ctx, "Change approved on Acumatica acu")

	const erpWords = "You have insufficient rights to access the object (SO301000)."
	again := callTool(t, client.cs, "acumatica_create_sales_order", args)
	if !again.IsError || again.errorCode() != "PERMISSION_DENIED" || !strings.Contains(again.Text, "this user's roles do not allow changes on the form") {
		t.Fatalf("the call after approval: %s", again.Text)
	}

	approvalPageSays(t, ctx, link, "Change approved on Acumatica acu", "approval-refused-acumatica.png",
		"The first try did not go through: Acumatica does not allow this ERP user to make the change, so nothing was written. It said: “"+erpWords+"” The approval still holds.",
		"SalesOrder record", "HTTP 403", "An administrator has to grant the right")
}

// An approved write whose answer is lost (a proxy in front of Frappe
// answers 502): the page says its outcome is not known in plain words,
// never the model's ("HTTP 502", "which does not mean there are no
// records", which is about reads).
func TestChromiumApprovalOfAWriteWhoseAnswerIsLostFrappe(t *testing.T) {
	f := newFrappeWrite(t, "add_comment")
	args := map[string]any{"doctype": "Customer", "name": f.sim.Data().List("Customer")[0].Name, "text": "Called about the overdue invoice."}
	ctx, link := f.approve(t, "add_comment", args)

	f.sim.SetFault(frappetest.Fault{PathPrefix: "/api/method/frappe.desk.form.utils.add_comment", Status: http.StatusBadGateway, Times: 1,
		Body: []byte("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>")})
	again := callTool(t, f.client.cs, "add_comment", args)
	if !again.IsError || again.errorCode() != "UPSTREAM_UNAVAILABLE" || !strings.Contains(again.Text, "The outcome of the approved change is not known") {
		t.Fatalf("the call after approval: %s", again.Text)
	}
	approvalPageSays(t, ctx, link, "Outcome not known on Test acme", "approval-answer-lost-frappe.png",
		"Frappe/ERPNext, or a server in front of it, failed before its answer came.",
		"HTTP 502", "no records", "What erpgate saw")
}

// A sales order proposed and approved through the real flow, which Frappe
// creates with its rate rounded to the currency's two places: the model
// is told the tool's error, as before, and the page says in plain words
// which draft Frappe saved and what differs, never the model's words (the
// API's "line 1 rate", a link, "correct or delete it") after "What
// erpgate saw".
func TestChromiumApprovalOfAWriteMadeNotAsApprovedFrappe(t *testing.T) {
	f := newFrappeWrite(t, "create_sales_order")
	const approvedRate = "10.00500000000000000001"
	args := map[string]any{"customer": f.sim.Data().List("Customer")[0].Name, "company": "Demo Holdings NZ Ltd", "delivery_date": "2026-12-31",
		"po_no": "ROUNDED-1", "items": []any{map[string]any{"item_code": f.sim.Data().List("Item")[0].Name, "qty": 1, "rate": json.Number(approvedRate)}}}
	ctx, link := f.approve(t, "create_sales_order", args)

	again := callTool(t, f.client.cs, "create_sales_order", args)
	if !again.IsError || again.errorCode() != "INVALID_ARGUMENT" || !strings.Contains(again.Text, "but not as approved") {
		t.Fatalf("the call after approval: %s", again.Text)
	}
	var found struct {
		Data []struct {
			Name string `json:"name"`
		} `json:"data"`
	}
	frappeGet(t, f.sim.URL+"/api/resource/Sales Order?"+url.Values{"filters": {`[["po_no","=","ROUNDED-1"]]`}}.Encode(), userWithRole(t, f.sim, "service"), &found)
	if len(found.Data) != 1 {
		t.Fatal("Frappe holds no sales order with the PO number ROUNDED-1")
	}
	approvalPageSays(t, ctx, link, "Change carried out, not as approved on Test acme", "approval-not-as-approved-frappe.png",
		"Frappe/ERPNext saved draft Sales Order "+found.Data[0].Name+" with line 1's rate 10.01 where you approved "+approvedRate+".",
		"What erpgate saw", "line 1 rate", "correct or delete it", "/app/sales-order/", "the ERP created")
}

// frappeWrite is a Frappe site, acme, offering one write tool, and a person
// of it signed in through the official SDK client.
type frappeWrite struct {
	sim    *frappetest.Server
	gw     *gateway
	user   frappetest.User
	client *oauthMCPClient
}

func newFrappeWrite(t *testing.T, tool string) frappeWrite {
	t.Helper()
	needChromium(t)
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	if err := gw.admin.do(context.Background(), http.MethodPut, "/sites/acme/settings/write_tools", map[string]any{"value": []string{tool}}, nil); err != nil {
		t.Fatal(err)
	}
	user := userWithRole(t, sim, "all-companies")
	return frappeWrite{sim: sim, gw: gw, user: user, client: connectOAuth(t, site.MCPURL, frappeLogin(user))}
}

// approve calls tool with args, which is answered APPROVAL_REQUIRED, then
// opens the approval page in Chromium, signs in at Frappe as the person
// and approves. It returns the browser and the page's address.
func (f frappeWrite) approve(t *testing.T, tool string, args map[string]any) (context.Context, string) {
	t.Helper()
	first := callTool(t, f.client.cs, tool, args)
	if !first.IsError || first.errorCode() != "APPROVAL_REQUIRED" {
		t.Fatalf("the first call: %s", first.Text)
	}
	link := approvalURL.FindString(first.Text)
	ctx := newChromium(t)
	navigate(t, ctx, "open the approval link", chromedp.Navigate(link))
	waitForNewTitle(t, ctx, "Approve a change on Test acme")
	clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, f.user, "Approve a change on Test acme")
	navigate(t, ctx, "approve", chromedp.WaitEnabled(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
	waitForNewTitle(t, ctx, "Change approved on Test acme")
	return ctx, link
}

// approvalPageSays opens the approval page at link again, once the call
// after approval has run, and checks that it shows want and none of the
// words written for the model.
func approvalPageSays(t *testing.T, ctx context.Context, link, title, screenshot, want string, modelWords ...string) {
	t.Helper()
	navigate(t, ctx, "open the approval link again", chromedp.Navigate(link))
	waitForNewTitle(t, ctx, title)
	saveScreenshot(t, ctx, screenshot)
	text := pageBody(t, ctx)
	if !strings.Contains(text, want) {
		t.Errorf("the page lacks %q: %s", want, text)
	}
	for _, w := range modelWords {
		if strings.Contains(text, w) {
			t.Errorf("the page shows the model's words %q: %s", w, text)
		}
	}
}
