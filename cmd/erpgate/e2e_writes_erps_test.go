package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestWritesFrappe: writes with approval end to end on the Frappe
// simulator (runWriteSuite), creating draft Sales Orders. The simulator is
// read back through Frappe's own API, as its service user.
func TestWritesFrappe(t *testing.T) {
	sim, gw, site := startFrappeOAuthGateway(t, writesGatewayEnv)
	person := func(role string) writePerson {
		u := userWithRole(t, sim, role)
		return writePerson{ERPUser: u.Email, Login: frappeLogin(u)}
	}
	bot := userWithRole(t, sim, "service")
	erp := func(method string, q url.Values) any {
		var out struct {
			Message any `json:"message"`
		}
		frappeGet(t, sim.URL+"/api/method/"+method+"?"+q.Encode(), bot, &out)
		return out.Message
	}
	company := "Demo Holdings NZ Ltd"
	customer := sim.Data().List("Customer")[0].Name
	item := sim.Data().List("Item")[0].Name
	po := func(n int) string { return fmt.Sprintf("E2E-%d", n) }
	runWriteSuite(t, &writeERP{
		Kind: "frappe", GW: gw, Site: site,
		Alice: person("all-companies"), Bob: person("one-company"), Forbidden: person(frappetest.RoleOrderViewer),
		CreateTool: "create_sales_order",
		CreateArgs: func(n int) map[string]any {
			return map[string]any{
				"customer": customer, "company": company, "delivery_date": "2026-12-31", "po_no": po(n),
				"items": []any{map[string]any{"item_code": item, "qty": n}},
			}
		},
		RoundedArgs: func(n int) map[string]any {
			return map[string]any{
				"customer": customer, "company": company, "delivery_date": "2026-12-31", "po_no": po(n),
				"items": []any{map[string]any{"item_code": item, "qty": n, "rate": json.Number("10.00500000000000000001")}},
			}
		},
		RoundedPrice: "10.00500000000000000001",
		Orders: func() int {
			n, _ := erp("frappe.client.get_count", url.Values{"doctype": {"Sales Order"}}).(float64)
			return int(n)
		},
		OrderWrites: func() int { return sim.RequestCount("/api/resource/Sales Order") },
		ERPRefusal:  "does not have doctype access via role permission for document Sales Order",
		UpdateTool:  "update_customer",
		UpdateArgs:  func(email string) map[string]any { return map[string]any{"customer": customer, "email_id": email} },
		CustomerEmail: func(t *testing.T) string {
			doc, _ := erp("frappe.client.get", url.Values{"doctype": {"Customer"}, "name": {customer}}).(map[string]any)
			email, _ := doc["email_id"].(string)
			return email
		},
		ReadBack: func(t *testing.T, cs *mcp.ClientSession, created map[string]any, n int) {
			name, _ := created["name"].(string)
			if created["docstatus"] != json.Number("0") {
				t.Errorf("create_sales_order returned %v, want a draft", created)
			}
			doc, _ := erp("frappe.client.get", url.Values{"doctype": {"Sales Order"}, "name": {name}}).(map[string]any)
			if doc["po_no"] != po(n) || doc["customer"] != customer || doc["docstatus"] != float64(0) {
				t.Errorf("the ERP's Sales Order %q: %v", name, doc)
			}
			got := mustSucceed(t, callTool(t, cs, "get_document", map[string]any{"doctype": "Sales Order", "name": name}), "get_document")
			if v := findMember(got, "po_no"); len(v) != 1 || v[0] != po(n) {
				t.Errorf("get_document of %s as the caller: po_no %v", name, v)
			}
		},
	})
}

// frappeGet GETs a Frappe API URL as user (token auth) into out.
func frappeGet(t *testing.T, target string, user frappetest.User, out any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+user.APIKey+":"+user.APISecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s", target, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
}

// TestWritesAcumatica: writes with approval end to end on the Acumatica
// simulator (runWriteSuite), creating sales orders on hold.
func TestWritesAcumatica(t *testing.T) {
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", writesGatewayEnv)
	ctx := context.Background()
	site, err := registerAcumaticaService(ctx, gw.admin, devState{}, acumaticaService(sim.ServiceLogin()), "acu", "Acumatica acu", sim.URL)
	if err != nil {
		t.Fatal(err)
	}
	client := sim.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(ctx, site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}
	person := func(role string) writePerson {
		u := sim.User(role)
		return writePerson{ERPUser: u.Username + "@" + sim.Tenant(), Login: acumaticaLogin(u)}
	}
	customer := sim.Data().Records("Customer")[0].String("CustomerID")
	item := sim.Data().Records("StockItem")[0].String("InventoryID")
	description := func(n int) string { return fmt.Sprintf("E2E order %d", n) }
	runWriteSuite(t, &writeERP{
		Kind: "acumatica", GW: gw, Site: site,
		Alice: person(acumaticatest.RoleFull), Bob: person(acumaticatest.RoleNonAdmin), Forbidden: person(acumaticatest.RoleSalesViewer),
		CreateTool: "acumatica_create_sales_order",
		CreateArgs: func(n int) map[string]any {
			return map[string]any{
				"CustomerID": customer, "Description": description(n),
				"Details": []any{map[string]any{"InventoryID": item, "OrderQty": n}},
			}
		},
		RoundedArgs: func(n int) map[string]any {
			return map[string]any{
				"CustomerID": customer, "Description": description(n),
				"Details": []any{map[string]any{"InventoryID": item, "OrderQty": n, "UnitPrice": json.Number("10.00000050000000000001")}},
			}
		},
		RoundedPrice: "10.00000050000000000001",
		Orders:       func() int { return len(sim.Data().Records("SalesOrder")) },
		OrderWrites:  func() int { return sim.RequestCount("/entity/Default/24.200.001/SalesOrder") },
		ERPRefusal:   "You have insufficient rights to access the object (SO301000).",
		UpdateTool:   "acumatica_update_customer",
		UpdateArgs: func(email string) map[string]any {
			return map[string]any{"CustomerID": customer, "MainContact": map[string]any{"Email": email}}
		},
		CustomerEmail: func(t *testing.T) string {
			rec := sim.Data().Find("Customer", customer)
			if rec == nil || rec.Link("MainContact") == nil {
				t.Fatalf("the simulator has no customer %s with a main contact", customer)
			}
			return rec.Link("MainContact").String("Email")
		},
		ReadBack: func(t *testing.T, cs *mcp.ClientSession, created map[string]any, n int) {
			nbr, _ := created["OrderNbr"].(string)
			rec := sim.Data().Find("SalesOrder", "SO", nbr)
			if rec == nil {
				t.Fatalf("the simulator has no sales order SO %q (the tool returned %v)", nbr, created)
			}
			if rec.String("Description") != description(n) || !rec.Bool("Hold") || rec.String("Status") != "On Hold" || rec.String("CustomerID") != customer {
				t.Errorf("the simulator's SO %s: Description %q, Hold %v, Status %q, CustomerID %q", nbr, rec.String("Description"), rec.Bool("Hold"), rec.String("Status"), rec.String("CustomerID"))
			}
			got := mustSucceed(t, callTool(t, cs, "acumatica_get_sales_order", map[string]any{"OrderType": "SO", "OrderNbr": nbr}), "acumatica_get_sales_order")
			if d := findMember(got, "Description"); len(d) == 0 {
				t.Errorf("acumatica_get_sales_order of SO %s as the caller: %v", nbr, got)
			}
		},
	})
}

// TestWritesFrappeSalesUnitIsTheApprovedUnit: an item sold in another
// unit than it is stocked in (ERPNext's sales_uom, here a box of 12 of an
// item stocked by the piece) is ordered in the unit the approval page
// showed. ERPNext puts a line that names no uom in the item's sales unit,
// so the qty the person approved as pieces would otherwise be boxes:
// twelve times as many.
func TestWritesFrappeSalesUnitIsTheApprovedUnit(t *testing.T) {
	const code = "HW-1005"
	sim := frappetest.NewServer(frappetest.Options{SalesUnits: map[string]frappetest.SalesUnit{code: {UOM: "Box", Factor: 12}}})
	defer sim.Close()
	stockUnit := sim.Data().Get("Item", code).Str("stock_uom")
	if stockUnit == "" || stockUnit == "Box" {
		t.Fatalf("the seeded item %s is stocked in %q", code, stockUnit)
	}
	gw := startGateway(t, "", writesGatewayEnv)
	site := frappeOAuthSite(t, gw, "units", sim)
	alice := userWithRole(t, sim, "all-companies")
	bot := userWithRole(t, sim, "service")
	e := &writeERP{Kind: "frappe", GW: gw, Site: site, CreateTool: "create_sales_order",
		Alice: writePerson{ERPUser: alice.Email, Login: frappeLogin(alice)}}
	e.enableWrites(t, "")
	c := e.connectWriter(t, e.Alice, pathPlain)
	args := map[string]any{
		"customer": sim.Data().List("Customer")[0].Name, "company": "Demo Holdings NZ Ltd", "delivery_date": "2026-12-31",
		"items": []any{map[string]any{"item_code": code, "qty": 2}},
	}
	link := e.approvalRequired(t, callTool(t, c.cs, e.CreateTool, args))
	// The page shows the line as 2 of the stock unit.
	var rows string
	queryRow(t, gw.DBURL, `SELECT preview->'tables'->0->'rows'->>0 FROM pending_actions WHERE id = $1`, []any{actionID(t, link)}, &rows)
	var row []string
	if err := json.Unmarshal([]byte(rows), &row); err != nil || len(row) < 4 || row[0] != code || row[2] != "2" || row[3] != stockUnit {
		t.Fatalf("the preview's line is %s, want %s, qty 2 in %s", rows, code, stockUnit)
	}
	e.approve(t, link, e.Alice)
	created := mustSucceed(t, callTool(t, c.cs, e.CreateTool, args), "the approved call")
	var out struct {
		Message struct {
			Items []struct {
				UOM      string  `json:"uom"`
				Qty      float64 `json:"qty"`
				StockQty float64 `json:"stock_qty"`
			} `json:"items"`
		} `json:"message"`
	}
	frappeGet(t, sim.URL+"/api/method/frappe.client.get?"+url.Values{"doctype": {"Sales Order"}, "name": {fmt.Sprint(created["name"])}}.Encode(), bot, &out)
	if len(out.Message.Items) != 1 {
		t.Fatalf("the ERP's order %v has %d lines", created["name"], len(out.Message.Items))
	}
	if l := out.Message.Items[0]; l.UOM != stockUnit || l.StockQty != 2 {
		t.Errorf("the ERP ordered %v %s (%v in the stock unit); the person approved 2 %s", l.Qty, l.UOM, l.StockQty, stockUnit)
	}
}

// TestWritesShowExponentNumbersInPlainDecimals: JSON lets a number be
// written with an exponent, and a model may send a credit limit of 0.1e7.
// The approval page shows it as 1000000, never as "0.1e7", which a person
// reads as 0.1; the ERP gets the same value.
func TestWritesShowExponentNumbersInPlainDecimals(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", writesGatewayEnv)
	site := frappeOAuthSite(t, gw, "numbers", sim)
	alice := userWithRole(t, sim, "all-companies")
	bot := userWithRole(t, sim, "service")
	e := &writeERP{Kind: "frappe", GW: gw, Site: site, CreateTool: "update_customer",
		Alice: writePerson{ERPUser: alice.Email, Login: frappeLogin(alice)}}
	e.enableWrites(t, "")
	c := e.connectWriter(t, e.Alice, pathPlain)
	const company = "Demo Holdings NZ Ltd"
	customer := sim.Data().List("Customer")[0].Name
	args := map[string]any{"customer": customer, "company": company, "credit_limit": json.Number("0.1e7")}
	link := e.approvalRequired(t, callTool(t, c.cs, e.CreateTool, args))
	page := e.decideIn(t, e.browser(e.Alice), link, "approve")
	if got := e.actionStatus(t, link); got != "approved" {
		t.Fatalf("the action is %q; last page HTTP %d: %s", got, page.Status, pageText(page.Body))
	}
	text := html.UnescapeString(page.Body)
	if strings.Contains(text, "0.1e7") || !strings.Contains(text, "1000000") {
		t.Errorf("the approver's page does not show the credit limit 0.1e7 as 1000000: %s", pageText(page.Body))
	}
	mustSucceed(t, callTool(t, c.cs, e.CreateTool, args), "the approved call")
	var out struct {
		Message struct {
			CreditLimits []struct {
				Company     string  `json:"company"`
				CreditLimit float64 `json:"credit_limit"`
			} `json:"credit_limits"`
		} `json:"message"`
	}
	frappeGet(t, sim.URL+"/api/method/frappe.client.get?"+url.Values{"doctype": {"Customer"}, "name": {customer}}.Encode(), bot, &out)
	found := false
	for _, l := range out.Message.CreditLimits {
		if l.Company == company {
			found = true
			if l.CreditLimit != 1000000 {
				t.Errorf("the ERP's credit limit for %s is %v, want 1000000", company, l.CreditLimit)
			}
		}
	}
	if !found {
		t.Errorf("the ERP's customer has no credit limit for %s: %+v", company, out.Message.CreditLimits)
	}
}

// TestWritesWarnOfANameMixingLookalikeScripts: another user of the site
// made a customer whose name imitates a real one with a Cyrillic letter
// (о for o), and a model orders for it. The approval page shows both
// names alike, so it warns that the name mixes scripts.
func TestWritesWarnOfANameMixingLookalikeScripts(t *testing.T) {
	const lookalike = "100% Pure Juice C\u043e Pty Ltd"
	sim := frappetest.NewServer(frappetest.Options{ExtraCustomers: []string{lookalike}})
	defer sim.Close()
	if sim.Data().Get("Customer", "100% Pure Juice Co Pty Ltd") == nil {
		t.Fatal("the seeded customer the lookalike imitates is missing")
	}
	gw := startGateway(t, "", writesGatewayEnv)
	site := frappeOAuthSite(t, gw, "lookalike", sim)
	alice := userWithRole(t, sim, "all-companies")
	e := &writeERP{Kind: "frappe", GW: gw, Site: site, CreateTool: "create_sales_order",
		Alice: writePerson{ERPUser: alice.Email, Login: frappeLogin(alice)}}
	e.enableWrites(t, "")
	c := e.connectWriter(t, e.Alice, pathPlain)
	args := map[string]any{
		"customer": lookalike, "company": "Demo Holdings NZ Ltd", "delivery_date": "2026-12-31",
		"items": []any{map[string]any{"item_code": sim.Data().List("Item")[0].Name, "qty": 1}},
	}
	link := e.approvalRequired(t, callTool(t, c.cs, e.CreateTool, args))
	page := e.decide(t, link, e.Alice, "reject")
	if got := e.actionStatus(t, link); got != "rejected" {
		t.Fatalf("the action is %q; last page HTTP %d: %s", got, page.Status, pageText(page.Body))
	}
	text := html.UnescapeString(page.Body)
	if !strings.Contains(text, lookalike) {
		t.Fatalf("the approver's page does not show the customer: %s", pageText(page.Body))
	}
	if !strings.Contains(text, "Latin and Cyrillic") {
		t.Errorf("the approver's page does not warn that %q mixes Latin and Cyrillic letters", lookalike)
	}
}
