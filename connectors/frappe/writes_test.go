package frappe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Write tools run against a simulator of their own, so their writes do not
// change the shared one the read tests use. Each test previews as the
// engine does, then runs the Handler with the preview approved.

const orderViewer = frappetest.RoleOrderViewer

func writeSim(t *testing.T) *frappetest.Server {
	t.Helper()
	s := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(s.Close)
	return s
}

// proposed is a previewed write, ready to be executed.
type proposed struct {
	inv     invocation
	tool    connector.Tool
	raw     json.RawMessage
	preview *connector.Preview
}

// propose validates args against the tool's input schema and runs its
// Preview as role.
func propose(t *testing.T, s *frappetest.Server, role, name string, args map[string]any) (*proposed, error) {
	t.Helper()
	tool := toolByName(t, name)
	raw, err := validArgs(t, tool, args)
	if err != nil {
		t.Fatalf("%s: arguments fail the input schema: %v", name, err)
	}
	p := &proposed{inv: invocation{role: role, sim: s}, tool: tool, raw: raw}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.preview, err = tool.Preview(ctx, p.inv.newCall(t, raw))
	return p, err
}

func mustPropose(t *testing.T, s *frappetest.Server, role, name string, args map[string]any) *proposed {
	t.Helper()
	p, err := propose(t, s, role, name, args)
	if err != nil {
		t.Fatalf("%s preview: %v", name, err)
	}
	if p.preview == nil || p.preview.Summary == "" {
		t.Fatalf("%s: empty preview %+v", name, p.preview)
	}
	return p
}

// execute runs the Handler as the engine does after approval.
func (p *proposed) execute(t *testing.T) (map[string]any, error) {
	t.Helper()
	c := p.inv.newCall(t, p.raw)
	c.Approved = &connector.Approved{ID: "test-approval", Preview: *p.preview, By: p.inv.role}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := p.tool.Handler(ctx, c)
	if err != nil {
		return nil, err
	}
	return checkResult(t, p.tool, out)
}

func (p *proposed) mustExecute(t *testing.T) map[string]any {
	t.Helper()
	out, err := p.execute(t)
	if err != nil {
		t.Fatalf("%s: %v", p.tool.Name, err)
	}
	return out
}

func field(t *testing.T, p *connector.Preview, name string) connector.PreviewField {
	t.Helper()
	f, ok := p.Field(name)
	if !ok {
		t.Fatalf("preview has no field %s: %+v", name, p.Fields)
	}
	return f
}

// seeded helpers: expected values come from the simulator's seeded data.

func seededCompany(t *testing.T, s *frappetest.Server) *frappetest.Doc {
	t.Helper()
	for _, c := range s.Data().List("Company") {
		if c.Str("default_currency") == "NZD" {
			return c
		}
	}
	t.Fatal("no NZD company")
	return nil
}

// seededCustomer returns an enabled customer billed in currency.
func seededCustomer(t *testing.T, s *frappetest.Server, currency string) *frappetest.Doc {
	t.Helper()
	for _, c := range s.Data().List("Customer") {
		if c.Int("disabled") == 0 && c.Str("default_currency") == currency {
			return c
		}
	}
	t.Fatalf("no enabled %s customer", currency)
	return nil
}

func seededItems(t *testing.T, s *frappetest.Server, n int) []*frappetest.Doc {
	t.Helper()
	var out []*frappetest.Doc
	for _, it := range s.Data().List("Item") {
		if it.Int("disabled") == 0 && len(out) < n {
			out = append(out, it)
		}
	}
	return out
}

func seededWhere(t *testing.T, s *frappetest.Server, doctype string, keep func(*frappetest.Doc) bool) *frappetest.Doc {
	t.Helper()
	for _, d := range s.Data().List(doctype) {
		if keep(d) {
			return d
		}
	}
	t.Fatalf("no seeded %s for this test", doctype)
	return nil
}

// readAs fetches a document through the API as role, the way another
// user's read sees it.
func readAs(t *testing.T, s *frappetest.Server, role, doctype, name string) map[string]any {
	t.Helper()
	out, err := invocation{role: role, sim: s}.call(t, "get_document", map[string]any{"doctype": doctype, "name": name})
	if err != nil {
		t.Fatalf("get_document %s %s as %s: %v", doctype, name, role, err)
	}
	return out["document"].(map[string]any)
}

// rawAPI sends one request to the simulator as role and returns status
// and body.
func rawAPI(t *testing.T, s *frappetest.Server, role, method, path string, body any) (int, []byte) {
	t.Helper()
	u := s.User(role)
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.URL+path, rd)
	req.Header.Set("Authorization", "token "+u.APIKey+":"+u.APISecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestCreateSalesOrderPreviewAndWrite(t *testing.T) {
	s := writeSim(t)
	comp := seededCompany(t, s)
	cust := seededCustomer(t, s, "NZD")
	items := seededItems(t, s, 2)
	p := mustPropose(t, s, allCompanies, "create_sales_order", map[string]any{
		"customer": cust.Name, "company": comp.Name, "transaction_date": "2026-06-15", "delivery_date": "2026-06-30", "po_no": "PO-TEST-1",
		"items": []any{
			map[string]any{"item_code": items[0].Name, "qty": 3, "rate": 12.5},
			map[string]any{"item_code": items[1].Name, "qty": 2},
		},
	})
	pv := p.preview
	if pv.Operation != "create" || pv.DocType != "Sales Order" || pv.DocName != "" || pv.Version != "" {
		t.Errorf("preview header %+v", pv)
	}
	if f := field(t, pv, "customer"); f.After != cust.Name || f.HasBefore {
		t.Errorf("customer field %+v", f)
	}
	if f := field(t, pv, "currency"); f.After != "NZD" {
		t.Errorf("currency field %+v", f)
	}
	rows := pv.Tables[0].Rows
	want0 := []string{items[0].Name, items[0].Str("item_name"), "3", items[0].Str("stock_uom"), "12.5", "37.50"}
	want1 := []string{items[1].Name, items[1].Str("item_name"), "2", items[1].Str("stock_uom"), "price list rate", ""}
	if fmt.Sprint(rows[0]) != fmt.Sprint(want0) || fmt.Sprint(rows[1]) != fmt.Sprint(want1) {
		t.Errorf("rows %q, want %q and %q", rows, want0, want1)
	}
	if !strings.Contains(pv.Summary, cust.Str("customer_name")) || !strings.Contains(pv.Summary, "price list") {
		t.Errorf("summary %q", pv.Summary)
	}

	// Execute with both rates given so the net total is known from the
	// arguments; the ERP adds the company's default tax, at the rate its
	// seeded orders in that currency carry.
	p = mustPropose(t, s, allCompanies, "create_sales_order", map[string]any{
		"customer": cust.Name, "company": comp.Name, "transaction_date": "2026-06-15", "delivery_date": "2026-06-30",
		"items": []any{
			map[string]any{"item_code": items[0].Name, "qty": 3, "rate": 10},
			map[string]any{"item_code": items[1].Name, "qty": 2, "rate": 100},
		},
	})
	if !strings.Contains(p.preview.Summary, "net total 230.00 NZD") {
		t.Errorf("summary %q", p.preview.Summary)
	}
	taxed := seededWhere(t, s, "Sales Order", func(d *frappetest.Doc) bool {
		return d.Str("company") == comp.Name && d.Str("currency") == "NZD" && len(d.Table("taxes")) > 0
	})
	rate := taxed.Table("taxes")[0].Dec("rate").Rat()
	wantTotal := new(big.Rat).Mul(big.NewRat(230, 1), new(big.Rat).Add(big.NewRat(1, 1), new(big.Rat).Quo(rate, big.NewRat(100, 1))))
	out := p.mustExecute(t)
	top := 0
	for _, so := range s.Data().List("Sales Order") {
		var n int
		if _, err := fmt.Sscanf(so.Name, "SAL-ORD-2026-%05d", &n); err == nil && n > top {
			top = n
		}
	}
	wantName := fmt.Sprintf("SAL-ORD-2026-%05d", top+1)
	if out["name"] != wantName || out["erp_status"] != "Draft" || fmt.Sprint(out["docstatus"]) != "0" || out["currency"] != "NZD" {
		t.Errorf("result %v, want %s Draft 0 NZD", out, wantName)
	}
	if rat(t, out["grand_total"]).Cmp(wantTotal) != 0 {
		t.Errorf("grand_total %v, want %s", out["grand_total"], wantTotal.FloatString(2))
	}
	if !strings.HasSuffix(out["url"].(string), "/app/sales-order/"+wantName) {
		t.Errorf("url %v", out["url"])
	}

	// Another user with read permission sees the new order, in lists and
	// in full.
	doc := readAs(t, s, noAccounting, "Sales Order", wantName)
	if doc["customer"] != cust.Name || doc["owner"] != s.User(allCompanies).Email || fmt.Sprint(doc["docstatus"]) != "0" {
		t.Errorf("read back %v", doc)
	}
	if lines := doc["items"].([]any); len(lines) != 2 || lines[1].(map[string]any)["item_name"] != items[1].Str("item_name") {
		t.Errorf("items %v", doc["items"])
	}
	list, err := invocation{role: noAccounting, sim: s}.call(t, "list_sales_orders", map[string]any{"customer": cust.Name, "limit": 100})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprint(list["data"]), wantName) {
		t.Errorf("list_sales_orders for %s lacks %s", cust.Name, wantName)
	}
	// The shared seeded data is untouched.
	if s.Data().Get("Sales Order", wantName) != nil || testSim(t).Data().Get("Sales Order", wantName) != nil {
		t.Error("the write changed the shared seeded dataset")
	}
}

func TestCreateSalesOrderRefusals(t *testing.T) {
	s := writeSim(t)
	comp := seededCompany(t, s)
	cust := seededCustomer(t, s, "NZD")
	item := seededItems(t, s, 1)[0]
	args := func(customer, delivery string) map[string]any {
		return map[string]any{"customer": customer, "company": comp.Name, "transaction_date": "2026-06-15", "delivery_date": delivery,
			"items": []any{map[string]any{"item_code": item.Name, "qty": 1}}}
	}

	// A user who may read but not create Sales Orders: the preview reads,
	// the ERP refuses the write with its own words.
	p := mustPropose(t, s, orderViewer, "create_sales_order", args(cust.Name, "2026-06-30"))
	_, err := p.execute(t)
	if e := wantCode(t, err, toolerr.PermissionDenied); !strings.Contains(e.Message, "does not have doctype access via role permission for document Sales Order") {
		t.Errorf("message %q", e.Message)
	}

	// A customer that does not exist: NOT_FOUND with the ERP's words.
	_, err = propose(t, s, allCompanies, "create_sales_order", args("No Such Customer Ltd", "2026-06-30"))
	if e := wantCode(t, err, toolerr.NotFound); !strings.Contains(e.Message, "Customer No Such Customer Ltd not found") {
		t.Errorf("message %q", e.Message)
	}

	// A delivery date before the order date: refused in the preview, and
	// by the ERP (417 ValidationError) when the handler is reached.
	_, err = propose(t, s, allCompanies, "create_sales_order", args(cust.Name, "2026-06-01"))
	wantCode(t, err, toolerr.InvalidArgument)
	p = mustPropose(t, s, allCompanies, "create_sales_order", args(cust.Name, "2026-06-30"))
	bad := map[string]any{}
	_ = json.Unmarshal(p.raw, &bad)
	bad["delivery_date"] = "2026-06-01"
	p.raw, _ = json.Marshal(bad)
	_, err = p.execute(t)
	if e := wantCode(t, err, toolerr.InvalidArgument); !strings.Contains(e.Message, "Expected Delivery Date should be after Sales Order Date") {
		t.Errorf("message %q", e.Message)
	}

	// A fraction of an item sold in whole units, past the preview (which
	// refuses it when the user may read the unit): ERPNext's
	// UOMMustBeIntegerError, INVALID_ARGUMENT with its words.
	whole := seededWhere(t, s, "Item", func(d *frappetest.Doc) bool {
		u := s.Data().Get("UOM", d.Str("stock_uom"))
		return d.Int("disabled") == 0 && u != nil && u.Int("must_be_whole_number") == 1
	})
	p = mustPropose(t, s, allCompanies, "create_sales_order", map[string]any{"customer": cust.Name, "company": comp.Name, "delivery_date": "2026-06-30",
		"items": []any{map[string]any{"item_code": whole.Name, "qty": 2}}})
	p.raw = bytes.Replace(p.raw, []byte(`"qty":2`), []byte(`"qty":2.5`), 1)
	_, err = p.execute(t)
	if e := wantCode(t, err, toolerr.InvalidArgument); !strings.Contains(e.Message, "UOMMustBeIntegerError") || !strings.Contains(e.Message, "Row 1: Quantity (2.5) cannot be a fraction. To allow this, disable 'Must be Whole Number' in UOM "+whole.Str("stock_uom")) {
		t.Errorf("message %q", e.Message)
	}

	// A disabled customer: the preview says so.
	disabled := seededWhere(t, s, "Customer", func(d *frappetest.Doc) bool { return d.Int("disabled") == 1 })
	_, err = propose(t, s, allCompanies, "create_sales_order", args(disabled.Name, "2026-06-30"))
	wantCode(t, err, toolerr.InvalidArgument)
}

func TestUpdateCustomer(t *testing.T) {
	s := writeSim(t)
	comp := seededCompany(t, s)
	cust := seededWhere(t, s, "Customer", func(d *frappetest.Doc) bool {
		return d.Int("disabled") == 0 && d.Str("email_id") != "" && d.Str("customer_primary_contact") == ""
	})
	// A change proposed now and executed after someone else saved the
	// customer.
	stale := mustPropose(t, s, allCompanies, "update_customer", map[string]any{"customer": cust.Name, "mobile_no": "+64 21 555 0101"})

	p := mustPropose(t, s, allCompanies, "update_customer", map[string]any{
		"customer": cust.Name, "email_id": "billing@new.example", "credit_limit": 987654.5, "company": comp.Name,
	})
	pv := p.preview
	if pv.Operation != "update" || pv.DocName != cust.Name || pv.Version != cust.Str("modified") {
		t.Errorf("preview header %+v, want version %s", pv, cust.Str("modified"))
	}
	if f := field(t, pv, "email_id"); f.Before != cust.Str("email_id") || !f.HasBefore || f.After != "billing@new.example" {
		t.Errorf("email field %+v", f)
	}
	if f := field(t, pv, "credit_limits"); f.Before != "" || f.After != "987654.5" || !strings.Contains(f.Label, comp.Name) {
		t.Errorf("credit field %+v", f)
	}
	if len(pv.Fields) != 2 || len(pv.Warnings) != 1 || !strings.Contains(pv.Warnings[0], "creates one") {
		t.Errorf("preview shows fields the call does not set, or no warning about the Contact: %+v", pv)
	}
	out := p.mustExecute(t)
	if out["email_id"] != "billing@new.example" || out["modified"] == cust.Str("modified") {
		t.Errorf("result %v", out)
	}
	limits := out["credit_limits"].([]any)
	if len(limits) != 1 || limits[0].(map[string]any)["company"] != comp.Name || rat(t, limits[0].(map[string]any)["credit_limit"]).Cmp(big.NewRat(9876545, 10)) != 0 {
		t.Errorf("credit limits %v", limits)
	}
	// Another user reads the change, and ERPNext made the primary Contact.
	doc := readAs(t, s, noAccounting, "Customer", cust.Name)
	if doc["email_id"] != "billing@new.example" || doc["customer_primary_contact"] != cust.Str("customer_name") {
		t.Errorf("read back email %v, primary contact %v", doc["email_id"], doc["customer_primary_contact"])
	}

	// The stale change: the ERP's timestamp check refuses it,
	// APPROVAL_EXPIRED, nothing written.
	_, err := stale.execute(t)
	if e := wantCode(t, err, toolerr.ApprovalExpired); !strings.Contains(e.Message, "Document has been modified after you have opened it") {
		t.Errorf("message %q", e.Message)
	}
	if doc := readAs(t, s, allCompanies, "Customer", cust.Name); doc["mobile_no"] != nil {
		t.Errorf("after the refused write: mobile %v", doc["mobile_no"])
	}

	// Now the customer has a primary Contact, from which ERPNext fetches
	// its e-mail and mobile: the tool refuses to set them on the customer.
	_, err = propose(t, s, allCompanies, "update_customer", map[string]any{"customer": cust.Name, "email_id": "second@new.example"})
	if e := wantCode(t, err, toolerr.InvalidArgument); !strings.Contains(e.Message, "primary Contact") {
		t.Errorf("message %q", e.Message)
	}

	// Idempotent: the same credit limit applied again sets the same value
	// (a fresh preview, since modified moved on).
	again := mustPropose(t, s, allCompanies, "update_customer", map[string]any{"customer": cust.Name, "credit_limit": 987654.5, "company": comp.Name})
	if f := field(t, again.preview, "credit_limits"); f.Before != "987654.5" {
		t.Errorf("before %q", f.Before)
	}
	if out := again.mustExecute(t); len(out["credit_limits"].([]any)) != 1 {
		t.Errorf("repeat %v", out)
	}

	// A user without write permission on Customer: the ERP's 403.
	p = mustPropose(t, s, orderViewer, "update_customer", map[string]any{"customer": cust.Name, "credit_limit": 5, "company": comp.Name})
	_, err = p.execute(t)
	if e := wantCode(t, err, toolerr.PermissionDenied); !strings.Contains(e.Message, "does not have doctype access via role permission for document Customer") {
		t.Errorf("message %q", e.Message)
	}

	// Nothing to change, or a customer that does not exist.
	_, err = propose(t, s, allCompanies, "update_customer", map[string]any{"customer": cust.Name})
	wantCode(t, err, toolerr.InvalidArgument)
	_, err = propose(t, s, allCompanies, "update_customer", map[string]any{"customer": "Nobody Ltd", "email_id": "a@b.example"})
	wantCode(t, err, toolerr.NotFound)
}

func TestUpdateCustomerCreditLimitBelowOutstanding(t *testing.T) {
	s := writeSim(t)
	inv := seededWhere(t, s, "Sales Invoice", func(d *frappetest.Doc) bool {
		return d.Int("docstatus") == 1 && d.Dec("outstanding_amount").Cents() > 100 && d.Str("party_account_currency") == d.Str("currency")
	})
	p := mustPropose(t, s, allCompanies, "update_customer", map[string]any{"customer": inv.Str("customer"), "credit_limit": 1, "company": inv.Str("company")})
	_, err := p.execute(t)
	if e := wantCode(t, err, toolerr.InvalidArgument); !strings.Contains(e.Message, "New credit limit is less than current outstanding amount for the customer") {
		t.Errorf("message %q", e.Message)
	}
}

func TestAddComment(t *testing.T) {
	s := writeSim(t)
	so := seededWhere(t, s, "Sales Order", func(d *frappetest.Doc) bool { return d.Int("docstatus") == 1 })
	text := "Call <b>Acme</b> before dispatch.\nThanks"
	p := mustPropose(t, s, allCompanies, "add_comment", map[string]any{"doctype": "Sales Order", "name": so.Name, "text": text})
	if p.preview.DocName != so.Name || field(t, p.preview, "content").After != text || field(t, p.preview, "comment_email").After != s.User(allCompanies).Email {
		t.Errorf("preview %+v", p.preview)
	}
	out := p.mustExecute(t)
	if out["reference_name"] != so.Name || out["comment_email"] != s.User(allCompanies).Email || out["doctype"] != "Comment" {
		t.Errorf("result %v", out)
	}
	// Another user lists the document's comments and sees it, as text.
	q := url.Values{"fields": {`["name","content","comment_email","comment_type"]`}, "filters": {`[["reference_name","=","` + so.Name + `"]]`}}
	status, body := rawAPI(t, s, noAccounting, http.MethodGet, "/api/resource/Comment?"+q.Encode(), nil)
	if status != 200 || !strings.Contains(string(body), `Call &lt;b&gt;Acme&lt;/b&gt; before dispatch.<br>Thanks`) || !strings.Contains(string(body), out["name"].(string)) {
		t.Errorf("comments as another user: %d %s", status, body)
	}

	// A document type not on the list: INVALID_ARGUMENT naming the allowed ones.
	tool := toolByName(t, "add_comment")
	c := invocation{role: allCompanies, sim: s}.newCall(t, json.RawMessage(`{"doctype":"User","name":"Administrator","text":"hi"}`))
	_, err := tool.Preview(context.Background(), c)
	if e := wantCode(t, err, toolerr.InvalidArgument); !strings.Contains(e.Message, "Sales Order") || !strings.Contains(e.Message, "Supplier") {
		t.Errorf("message %q", e.Message)
	}
	// A document that does not exist.
	_, err = propose(t, s, allCompanies, "add_comment", map[string]any{"doctype": "Sales Order", "name": "SAL-ORD-1999-00001", "text": "x"})
	wantCode(t, err, toolerr.NotFound)
	// A document this user may not read (another company's order).
	other := seededWhere(t, s, "Sales Order", func(d *frappetest.Doc) bool { return d.Str("company") != "Demo Holdings NZ Ltd" })
	_, err = propose(t, s, oneCompany, "add_comment", map[string]any{"doctype": "Sales Order", "name": other.Name, "text": "x"})
	wantCode(t, err, toolerr.PermissionDenied)
}

func TestSubmitDocument(t *testing.T) {
	s := writeSim(t)
	draft := seededWhere(t, s, "Sales Order", func(d *frappetest.Doc) bool { return d.Int("docstatus") == 0 })
	p := mustPropose(t, s, allCompanies, "submit_document", map[string]any{"doctype": "Sales Order", "name": draft.Name})
	pv := p.preview
	if pv.Operation != "submit" || pv.DocName != draft.Name || pv.Version != draft.Str("modified") || len(pv.Warnings) == 0 || !strings.Contains(pv.Warnings[0], "cannot be undone") {
		t.Errorf("preview %+v", pv)
	}
	out := p.mustExecute(t)
	if fmt.Sprint(out["docstatus"]) != "1" || (out["erp_status"] != "To Deliver and Bill" && out["erp_status"] != "To Bill") {
		t.Errorf("result %v", out)
	}
	if rat(t, out["grand_total"]).Cmp(draft.Dec("grand_total").Rat()) != 0 {
		t.Errorf("grand_total %v, want %v", out["grand_total"], draft.Dec("grand_total"))
	}
	if doc := readAs(t, s, noAccounting, "Sales Order", draft.Name); fmt.Sprint(doc["docstatus"]) != "1" {
		t.Errorf("another user reads docstatus %v", doc["docstatus"])
	}
	// Submitting it again: the preview refuses a submitted document, and
	// so does the handler when the document was submitted after approval.
	_, err := propose(t, s, allCompanies, "submit_document", map[string]any{"doctype": "Sales Order", "name": draft.Name})
	if e := wantCode(t, err, toolerr.InvalidArgument); !strings.Contains(e.Message, "already submitted") {
		t.Errorf("message %q", e.Message)
	}
	_, err = p.execute(t)
	wantCode(t, err, toolerr.ApprovalExpired)
	cancelled := seededWhere(t, s, "Sales Order", func(d *frappetest.Doc) bool { return d.Int("docstatus") == 2 })
	_, err = propose(t, s, allCompanies, "submit_document", map[string]any{"doctype": "Sales Order", "name": cancelled.Name})
	wantCode(t, err, toolerr.InvalidArgument)

	// A draft invoice, submitted by an accounts user.
	si := seededWhere(t, s, "Sales Invoice", func(d *frappetest.Doc) bool { return d.Int("docstatus") == 0 })
	out = mustPropose(t, s, allCompanies, "submit_document", map[string]any{"doctype": "Sales Invoice", "name": si.Name}).mustExecute(t)
	if fmt.Sprint(out["docstatus"]) != "1" || out["erp_status"] == "Draft" {
		t.Errorf("invoice result %v", out)
	}
}

func TestSubmitDocumentChangedAfterApproval(t *testing.T) {
	s := writeSim(t)
	draft := seededWhere(t, s, "Sales Order", func(d *frappetest.Doc) bool {
		return d.Int("docstatus") == 0 && d.Str("company") == "Demo Holdings NZ Ltd"
	})
	p := mustPropose(t, s, allCompanies, "submit_document", map[string]any{"doctype": "Sales Order", "name": draft.Name})
	// Someone edits the draft in the ERP after the approval.
	status, body := rawAPI(t, s, allCompanies, http.MethodPut, "/api/resource/Sales%20Order/"+draft.Name, map[string]any{"po_no": "CHANGED"})
	if status != 200 {
		t.Fatalf("edit: %d %s", status, body)
	}
	_, err := p.execute(t)
	wantCode(t, err, toolerr.ApprovalExpired)
	if doc := readAs(t, s, allCompanies, "Sales Order", draft.Name); fmt.Sprint(doc["docstatus"]) != "0" {
		t.Errorf("submitted anyway: %v", doc["docstatus"])
	}

	// The ERP's own check, when the document changes after the connector
	// read it: frappe.client.submit with a stale modified is a 417
	// TimestampMismatchError, which the connector reads as APPROVAL_EXPIRED.
	status, body = rawAPI(t, s, allCompanies, http.MethodPost, "/api/method/frappe.client.submit",
		map[string]any{"doc": map[string]any{"doctype": "Sales Order", "name": draft.Name, "modified": draft.Str("modified")}})
	if status != 417 || !strings.Contains(string(body), `"exc_type":"TimestampMismatchError"`) {
		t.Fatalf("stale submit: %d %s", status, body)
	}
	if e := writeError(status, http.Header{}, body); e.Code != toolerr.ApprovalExpired {
		t.Errorf("mapped to %v", e)
	}
	// A user without submit permission: the ERP's 403.
	fresh := readAs(t, s, allCompanies, "Sales Order", draft.Name)
	status, body = rawAPI(t, s, orderViewer, http.MethodPost, "/api/method/frappe.client.submit",
		map[string]any{"doc": map[string]any{"doctype": "Sales Order", "name": draft.Name, "modified": fresh["modified"]}})
	if status != 403 || writeError(status, http.Header{}, body).Code != toolerr.PermissionDenied {
		t.Errorf("submit without the right: %d %s", status, body)
	}
}

func TestWriteErrorFromERPBodies(t *testing.T) {
	s := writeSim(t)
	cust := seededCustomer(t, s, "NZD")
	// A submitted order may not be edited: UpdateAfterSubmitError, 417.
	sub := seededWhere(t, s, "Sales Order", func(d *frappetest.Doc) bool { return d.Int("docstatus") == 1 })
	status, body := rawAPI(t, s, allCompanies, http.MethodPut, "/api/resource/Sales%20Order/"+sub.Name, map[string]any{"po_no": "X"})
	if e := writeError(status, http.Header{}, body); status != 417 || e.Code != toolerr.InvalidArgument || !strings.Contains(e.Message, "Not allowed to change po_no after submission") {
		t.Errorf("edit submitted: %d %s -> %v", status, body, e)
	}
	// A missing link, with HTML cleaned from the ERP's message.
	status, body = rawAPI(t, s, allCompanies, http.MethodPost, "/api/resource/Sales%20Order", map[string]any{
		"customer": cust.Name, "company": "Nowhere Ltd", "delivery_date": "2026-07-01", "items": []any{map[string]any{"item_code": "NOPE", "qty": 1}}})
	e := writeError(status, http.Header{}, body)
	if status != 417 || !strings.Contains(string(body), "LinkValidationError") || e.Code != toolerr.InvalidArgument || !strings.Contains(e.Message, "Could not find Company: Nowhere Ltd, Row #1: Item Code: NOPE") {
		t.Errorf("links: %d %s -> %v", status, body, e)
	}
	// Frappe's duplicate answer (sample 16) and HTML in a 403 message.
	dup := []byte(`{"exc_type":"DuplicateEntryError","_server_messages":"[\"{\\\"message\\\": \\\"Customer <strong>Acme Corp</strong> already exists\\\", \\\"title\\\": \\\"Duplicate Name\\\", \\\"indicator\\\": \\\"red\\\"}\"]"}`)
	if e := writeError(409, http.Header{}, dup); e.Code != toolerr.InvalidArgument || !strings.Contains(e.Message, "Customer Acme Corp already exists") {
		t.Errorf("duplicate -> %v", e)
	}
}

func FuzzWriteError(f *testing.F) {
	f.Add(417, []byte(`{"exc_type":"TimestampMismatchError","_server_messages":"[\"{\\\"message\\\": \\\"x\\\"}\"]"}`))
	f.Add(403, []byte(`{"exc_type":"PermissionError"}`))
	f.Add(409, []byte(`not json`))
	f.Add(500, []byte(``))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 599 || (status >= 200 && status < 300) {
			return
		}
		e := writeError(status, http.Header{}, body)
		if e == nil || e.Code == "" || e.Message == "" {
			t.Fatalf("writeError(%d, %q) = %v", status, body, e)
		}
	})
}

// TestWriteArgumentsAttacks: names and text come from the model. A name
// that tries to reach another document through the URL path finds
// nothing or is refused, markup in a comment is stored as text, and a document the
// user may not read is refused by the ERP before anything is written.
func TestWriteArgumentsAttacks(t *testing.T) {
	s := writeSim(t)
	so := seededWhere(t, s, "Sales Order", func(d *frappetest.Doc) bool { return d.Str("company") != "Demo Holdings NZ Ltd" })
	cust := seededCustomer(t, s, "NZD")
	for _, name := range []string{so.Name + "?x=1", so.Name + "#frag"} {
		_, err := propose(t, s, allCompanies, "add_comment", map[string]any{"doctype": "Sales Order", "name": name, "text": "x"})
		wantCode(t, err, toolerr.NotFound)
		_, err = propose(t, s, allCompanies, "submit_document", map[string]any{"doctype": "Sales Order", "name": name})
		wantCode(t, err, toolerr.NotFound)
	}
	// A name with a ".." step is never sent (TestNamesCannotStepToAnotherAddress).
	for _, name := range []string{"../Customer/" + cust.Name, so.Name + "/../../Customer/" + cust.Name} {
		_, err := propose(t, s, allCompanies, "add_comment", map[string]any{"doctype": "Sales Order", "name": name, "text": "x"})
		wantCode(t, err, toolerr.InvalidArgument)
		_, err = propose(t, s, allCompanies, "submit_document", map[string]any{"doctype": "Sales Order", "name": name})
		wantCode(t, err, toolerr.InvalidArgument)
	}
	// Another company's documents, for a user limited to one company.
	_, err := propose(t, s, oneCompany, "submit_document", map[string]any{"doctype": "Sales Order", "name": so.Name})
	wantCode(t, err, toolerr.PermissionDenied)

	// Script in a comment is escaped, never markup in the ERP.
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	out := mustPropose(t, s, allCompanies, "add_comment", map[string]any{"doctype": "Customer", "name": cust.Name, "text": evil}).mustExecute(t)
	q := url.Values{"fields": {`["content"]`}, "filters": {`[["name","=","` + out["name"].(string) + `"]]`}}
	_, body := rawAPI(t, s, allCompanies, http.MethodGet, "/api/resource/Comment?"+q.Encode(), nil)
	if strings.Contains(string(body), "<script") || strings.Contains(string(body), "<img") || !strings.Contains(string(body), "&lt;img src=x onerror=alert(2)&gt;") {
		t.Errorf("comment content %s", body)
	}
	// Nothing was written by the refused calls: the only Comment is the one above.
	_, body = rawAPI(t, s, allCompanies, http.MethodGet, "/api/resource/Comment?limit_page_length=100", nil)
	if n := strings.Count(string(body), `"name"`); n != 1 {
		t.Errorf("%d comments after the refused calls: %s", n, body)
	}
}

// TestASalesOrderTheERPChangedIsNotReportedAsApproved: the ERP can create
// an order other than the one approved. A user who may not read a
// customer's currency (permlevel 1) is shown the company's, and the ERP
// takes the customer's; a rate with more places than the currency has is
// rounded. Before, both came back as a success, the person none the
// wiser. Now the call fails, naming the draft and what differs.
func TestASalesOrderTheERPChangedIsNotReportedAsApproved(t *testing.T) {
	s := writeSim(t)
	comp := seededCompany(t, s)
	item := seededItems(t, s, 1)[0]
	// Items sold in a unit that may be split (Kg) and in whole units (Nos).
	withUOM := func(whole int64) *frappetest.Doc {
		return seededWhere(t, s, "Item", func(d *frappetest.Doc) bool {
			u := s.Data().Get("UOM", d.Str("stock_uom"))
			return d.Int("disabled") == 0 && u != nil && u.Int("must_be_whole_number") == whole
		})
	}
	split, whole := withUOM(0), withUOM(1)
	for _, tc := range []struct {
		name, role, currency string
		item                 *frappetest.Doc
		qty, rate            float64
		says                 []string
		warns                string
	}{
		{"a currency the user may not read", noAccounting, "USD", item, 3, 10, []string{"currency USD, approved " + comp.Str("default_currency")}, ""},
		{"a rate with three places", allCompanies, comp.Str("default_currency"), item, 3, 10.005, []string{"line 1 rate 10.01, approved 10.005"},
			"Line 1's rate 10.005 has more than two decimal places"},
		// ERPNext rounds a qty to float_precision (3) half up.
		{"a qty with four places", allCompanies, comp.Str("default_currency"), split, 1.2345, 10, []string{"line 1 qty 1.235, approved 1.2345"},
			"Line 1's qty 1.2345 has more than three decimal places"},
		{"a whole-unit qty the ERP rounds to a whole number", allCompanies, comp.Str("default_currency"), whole, 2.0004, 10, []string{"line 1 qty 2, approved 2.0004"},
			"Line 1's qty 2.0004 has more than three decimal places"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cust := seededCustomer(t, s, tc.currency)
			p := mustPropose(t, s, tc.role, "create_sales_order", map[string]any{
				"customer": cust.Name, "company": comp.Name, "transaction_date": "2026-06-15", "delivery_date": "2026-06-30",
				"items": []any{map[string]any{"item_code": tc.item.Name, "qty": tc.qty, "rate": tc.rate}},
			})
			if tc.warns != "" && !strings.Contains(strings.Join(p.preview.Warnings, " "), tc.warns) {
				t.Errorf("the preview does not warn %q: %q", tc.warns, p.preview.Warnings)
			}
			out, err := p.execute(t)
			if err == nil {
				t.Fatalf("the ERP's different order was reported as the approved one: %v", out)
			}
			for _, want := range append(tc.says, "SAL-ORD-2026-", "not as approved") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
		})
	}
}

// The site's default company is read when a call names none: changed
// between the approval and the write, it must not move the approved order
// or credit limit to another company than the page showed.
func TestADefaultCompanyChangedAfterApprovalIsNotWrittenTo(t *testing.T) {
	s := writeSim(t)
	approved := seededCompany(t, s)
	var other *frappetest.Doc
	for _, c := range s.Data().List("Company") {
		if c.Name != approved.Name {
			other = c
			break
		}
	}
	if other == nil {
		t.Fatal("the seed has one company")
	}
	settings := func(company string) string { return `{"default_company":` + strconv.Quote(company) + `}` }
	cust := seededCustomer(t, s, approved.Str("default_currency"))
	item := seededItems(t, s, 1)[0]

	order := mustProposeWith(t, s, settings(approved.Name), "create_sales_order", map[string]any{
		"customer": cust.Name, "transaction_date": "2026-06-15", "delivery_date": "2026-06-30",
		"items": []any{map[string]any{"item_code": item.Name, "qty": 1, "rate": 10}},
	})
	if f := field(t, order.preview, "company"); f.After != approved.Name {
		t.Fatalf("the page shows company %q", f.After)
	}
	order.inv.settings = settings(other.Name)
	out, err := order.execute(t)
	switch {
	case err != nil:
		wantCode(t, err, toolerr.ApprovalExpired)
	default:
		if got := readAs(t, s, allCompanies, "Sales Order", out["name"].(string))["company"]; got != approved.Name {
			t.Errorf("the order approved for %s was written to %v", approved.Name, got)
		}
	}

	limit := mustProposeWith(t, s, settings(approved.Name), "update_customer", map[string]any{"customer": cust.Name, "credit_limit": 4321})
	limit.inv.settings = settings(other.Name)
	out, err = limit.execute(t)
	switch {
	case err != nil:
		wantCode(t, err, toolerr.ApprovalExpired)
	default:
		for _, row := range out["credit_limits"].([]any) {
			if m := row.(map[string]any); m["company"] == other.Name {
				t.Errorf("the credit limit approved for %s was written for %s: %v", approved.Name, other.Name, out["credit_limits"])
			}
		}
	}
}

// mustProposeWith is mustPropose with the site's settings.
func mustProposeWith(t *testing.T, s *frappetest.Server, settings, name string, args map[string]any) *proposed {
	t.Helper()
	tool := toolByName(t, name)
	raw, err := validArgs(t, tool, args)
	if err != nil {
		t.Fatalf("%s: arguments fail the input schema: %v", name, err)
	}
	p := &proposed{inv: invocation{role: allCompanies, sim: s, settings: settings}, tool: tool, raw: raw}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if p.preview, err = tool.Preview(ctx, p.inv.newCall(t, raw)); err != nil {
		t.Fatalf("%s preview: %v", name, err)
	}
	return p
}

// TestSalesOrderPreviewTotalIsTheSumOfItsLines: ERPNext rounds each
// line's amount to the currency's precision (flt(rate * qty, 2)) and adds
// the rounded amounts up into the net total. The approval page shows each
// line's amount rounded so; its net total must be their sum, the total
// the ERP saves, not the exact sum rounded once. Three lines of 0.333 at
// 1.00 are 0.33 each: 0.99, where the exact sum 0.999 rounds to 1.00.
func TestSalesOrderPreviewTotalIsTheSumOfItsLines(t *testing.T) {
	s := writeSim(t)
	// The company with no default sales tax: its grand total is its net
	// total.
	comp := seededWhere(t, s, "Company", func(d *frappetest.Doc) bool { return d.Str("default_currency") == "USD" })
	cust := seededCustomer(t, s, "USD")
	var lines []any
	for _, it := range s.Data().List("Item") {
		u := s.Data().Get("UOM", it.Str("stock_uom"))
		if it.Int("disabled") == 0 && u != nil && u.Int("must_be_whole_number") == 0 && len(lines) < 3 {
			lines = append(lines, map[string]any{"item_code": it.Name, "qty": 0.333, "rate": 1})
		}
	}
	if len(lines) < 3 {
		t.Fatal("the seed has fewer than three items sold in a unit that may be split")
	}
	p := mustPropose(t, s, allCompanies, "create_sales_order", map[string]any{
		"customer": cust.Name, "company": comp.Name, "transaction_date": "2026-06-15", "delivery_date": "2026-06-30", "items": lines,
	})
	for _, row := range p.preview.Tables[0].Rows {
		if row[len(row)-1] != "0.33" {
			t.Errorf("line amount %q, want 0.33", row[len(row)-1])
		}
	}
	if !strings.Contains(p.preview.Summary, "net total 0.99 USD") {
		t.Errorf("summary %q, want net total 0.99 USD (the sum of the lines shown)", p.preview.Summary)
	}
	out := p.mustExecute(t)
	if rat(t, out["grand_total"]).Cmp(big.NewRat(99, 100)) != 0 {
		t.Errorf("the ERP saved grand_total %v, want 0.99", out["grand_total"])
	}
}

// TestWriteToolsAdvertiseWhetherTheyOnlyAdd: MCP's destructiveHint is
// false only for a tool that makes additive changes. A draft order and a
// comment add to the ERP; update_customer replaces a customer's values and
// submit_document ends a draft for good.
func TestWriteToolsAdvertiseWhetherTheyOnlyAdd(t *testing.T) {
	want := map[string]bool{"create_sales_order": false, "add_comment": false, "update_customer": true, "submit_document": true}
	for _, tool := range (&Connector{}).Tools() {
		if tool.Effect == connector.Read {
			continue
		}
		destructive, ok := want[tool.Name]
		if !ok {
			t.Errorf("%s: a write tool this test does not know", tool.Name)
			continue
		}
		delete(want, tool.Name)
		if got := tool.Hints().Destructive; got != destructive {
			t.Errorf("%s: destructiveHint %v, want %v", tool.Name, got, destructive)
		}
	}
	for name := range want {
		t.Errorf("%s: not in the catalogue", name)
	}
}

// TestFractionalQtyOfAWholeUnitIsRefusedAtPreview: ERPNext refuses a qty
// that is not whole, after rounding it to three places, for an item counted
// in a unit that must be whole (Nos). The preview says so, before anyone is
// asked to approve an order the ERP would refuse; a unit that may be split
// (Kg), and a qty that rounds to a whole number, are proposed as before.
func TestFractionalQtyOfAWholeUnitIsRefusedAtPreview(t *testing.T) {
	s := writeSim(t)
	comp := seededCompany(t, s)
	cust := seededCustomer(t, s, comp.Str("default_currency"))
	withUOM := func(whole int64) *frappetest.Doc {
		return seededWhere(t, s, "Item", func(d *frappetest.Doc) bool {
			u := s.Data().Get("UOM", d.Str("stock_uom"))
			return d.Int("disabled") == 0 && u != nil && u.Int("must_be_whole_number") == whole
		})
	}
	split, whole := withUOM(0), withUOM(1)
	order := func(item *frappetest.Doc, qty float64) map[string]any {
		return map[string]any{"customer": cust.Name, "company": comp.Name, "transaction_date": "2026-06-15", "delivery_date": "2026-06-30",
			"items": []any{map[string]any{"item_code": split.Name, "qty": 1, "rate": 10}, map[string]any{"item_code": item.Name, "qty": qty, "rate": 10}}}
	}
	_, err := propose(t, s, allCompanies, "create_sales_order", order(whole, 2.5))
	var te *toolerr.Error
	if !errors.As(err, &te) || te.Code != toolerr.InvalidArgument {
		t.Fatalf("a qty of 2.5 %s: %v, want INVALID_ARGUMENT", whole.Str("stock_uom"), err)
	}
	for _, want := range []string{"line 2", whole.Name, whole.Str("stock_uom"), "2.5", "whole"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("the refusal does not say %q: %s", want, te.Message)
		}
	}
	mustPropose(t, s, allCompanies, "create_sales_order", order(split, 2.5))
	mustPropose(t, s, allCompanies, "create_sales_order", order(whole, 2.0004))
}

// Frappe's refusal of an approved write (a ValidationError 417, a 403, a
// 404, a duplicate 409) rolled the request back: it is flagged as having
// written nothing (toolerr's NothingWritten, which keeps the approval for
// the same call). A document changed since the approval
// (TimestampMismatchError: that approval no longer holds) and a failure
// that may have saved (a 5xx) are not.
func TestERPRefusalsOfAWriteSayNothingWasWritten(t *testing.T) {
	s := writeSim(t)
	inv := seededWhere(t, s, "Sales Invoice", func(d *frappetest.Doc) bool {
		return d.Int("docstatus") == 1 && d.Dec("outstanding_amount").Cents() > 100 && d.Str("party_account_currency") == d.Str("currency")
	})
	p := mustPropose(t, s, allCompanies, "update_customer", map[string]any{"customer": inv.Str("customer"), "credit_limit": 1, "company": inv.Str("company")})
	_, err := p.execute(t)
	if wantCode(t, err, toolerr.InvalidArgument); !toolerr.NothingWritten(err) {
		t.Errorf("Frappe's ValidationError of an approved update: %v, not flagged as having written nothing", err)
	}
	for _, c := range []struct {
		status  int
		body    string
		nothing bool
	}{
		{403, `{"exc_type":"PermissionError","_server_messages":"[\"{\\\"message\\\": \\\"Not permitted\\\"}\"]"}`, true},
		{404, `{"exc_type":"DoesNotExistError"}`, true},
		{409, `{"exc_type":"DuplicateEntryError"}`, true},
		{417, `{"exc_type":"LinkValidationError"}`, true},
		{417, `{"exc_type":"TimestampMismatchError"}`, false},
		{500, `{"exc_type":"OperationalError"}`, false},
		{502, `<html>Bad Gateway</html>`, false},
	} {
		if got := toolerr.NothingWritten(writeError(c.status, http.Header{}, []byte(c.body))); got != c.nothing {
			t.Errorf("%d %s: NothingWritten %v, want %v", c.status, c.body, got, c.nothing)
		}
	}
}

// A failure of an approved write's handler before it sent its write
// request (a read of the customer it updates failed) wrote nothing, and
// is flagged so (toolerr's NothingWritten); a failure of the write request
// that may have saved (a 502 from a proxy) is not.
func TestAFailureBeforeTheWriteRequestSaysNothingWasWritten(t *testing.T) {
	s := writeSim(t)
	inv := seededWhere(t, s, "Sales Invoice", func(d *frappetest.Doc) bool {
		return d.Int("docstatus") == 1 && d.Str("party_account_currency") == d.Str("currency")
	})
	args := map[string]any{"customer": inv.Str("customer"), "credit_limit": 1000000, "company": inv.Str("company")}
	bad := frappetest.Fault{PathPrefix: "/api/resource/Customer", Status: http.StatusBadGateway, Body: []byte("<html>502 Bad Gateway</html>")}

	p := mustPropose(t, s, allCompanies, "update_customer", args)
	s.SetFault(bad) // every request, retries too: the read fails
	_, err := p.execute(t)
	s.ClearFaults()
	if err == nil || !toolerr.NothingWritten(err) {
		t.Errorf("the read before the write failed: %v, NothingWritten %v; want flagged", err, toolerr.NothingWritten(err))
	}

	// The read passes, the PUT meets the proxy's 502: it may have saved.
	p = mustPropose(t, s, allCompanies, "update_customer", args)
	s.SetFault(frappetest.Fault{PathPrefix: "/api/resource/Customer", Times: 1, Delay: time.Millisecond})
	bad.Times = 1
	s.SetFault(bad)
	_, err = p.execute(t)
	s.ClearFaults()
	if err == nil || toolerr.NothingWritten(err) {
		t.Errorf("the write request met a 502: %v, NothingWritten %v; want not flagged", err, toolerr.NothingWritten(err))
	}
}
