package acumatica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/redact"
)

// The write tools against the simulator: each tool's preview (read as the
// caller, values from the seeded data) and its write, the ERP's refusals
// (a user without the right, validation errors, missing records), and the
// write seen by another user's reads.

// preview runs a write tool's Preview as kind.
func (h *harness) preview(kind userKind, tool string, args map[string]any) (*connector.Preview, error) {
	h.t.Helper()
	t := h.tools[tool]
	raw, err := json.Marshal(args)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := validate(t.Input, raw); err != nil {
		h.t.Fatalf("%s: input schema: %v", tool, err)
	}
	return t.Preview(context.Background(), h.newCall(kind, raw))
}

// execute runs a write tool's Handler as kind with an approved preview,
// as the engine does after the person approved p.
func (h *harness) execute(kind userKind, tool string, args map[string]any, p *connector.Preview) (map[string]any, error) {
	h.t.Helper()
	return h.runCall(tool, func(raw []byte) *connector.Call {
		call := h.newCall(kind, raw)
		if p != nil {
			call.Approved = &connector.Approved{ID: uuid.NewString(), Preview: *p, By: call.Principal.Subject}
		}
		return call
	}, args)
}

// handlerOnly runs a write tool's Handler with no preview before it, to
// reach the ERP's own checks.
func (h *harness) handlerOnly(kind userKind, tool string, args map[string]any) error {
	h.t.Helper()
	raw, _ := json.Marshal(args)
	_, err := h.tools[tool].Handler(context.Background(), h.newCall(kind, raw))
	return err
}

func previewField(t *testing.T, p *connector.Preview, name string) connector.PreviewField {
	t.Helper()
	f, ok := p.Field(name)
	if !ok {
		t.Fatalf("preview has no field %s: %+v", name, p.Fields)
	}
	return f
}

// exemptCustomer is a seeded active customer in the tax-exempt zone, so
// an order's total is the sum of its lines.
func exemptCustomer(t *testing.T, sim *acumaticatest.Simulator) *acumaticatest.Record {
	t.Helper()
	for _, c := range sim.Data().Records("Customer") {
		if c.String("TaxZone") == "EXEMPT" && c.String("Status") == "Active" {
			return c
		}
	}
	t.Fatal("no tax-exempt active customer in the seed")
	return nil
}

func TestCreateSalesOrderPreviewWriteAndRead(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	d := h.sim.Data()
	cust := exemptCustomer(t, h.sim)
	items := d.Records("StockItem")
	priced, unpriced := items[2], items[7]
	args := map[string]any{"CustomerID": cust.String("CustomerID"), "Date": "2026-06-10", "Description": "Spring restock",
		"Details": []any{
			map[string]any{"InventoryID": priced.String("InventoryID"), "OrderQty": 4, "UnitPrice": 12.5},
			map[string]any{"InventoryID": unpriced.String("InventoryID"), "OrderQty": 3},
		}}
	before := len(d.Records("SalesOrder"))

	p, err := h.preview(kindFull, "acumatica_create_sales_order", args)
	if err != nil {
		t.Fatal(err)
	}
	if p.Operation != "create" || p.DocType != "Sales Order" || p.DocName != "" {
		t.Errorf("preview header %+v", p)
	}
	for _, want := range []string{cust.String("CustomerName"), cust.String("CustomerID"), "2 lines", "on hold"} {
		if !strings.Contains(p.Summary, want) {
			t.Errorf("summary %q lacks %q", p.Summary, want)
		}
	}
	if f := previewField(t, p, "CustomerID"); f.After != cust.String("CustomerID")+" ("+cust.String("CustomerName")+")" || f.HasBefore {
		t.Errorf("customer field %+v", f)
	}
	if f := previewField(t, p, "Hold"); !strings.HasPrefix(f.After, "true") {
		t.Errorf("hold field %+v", f)
	}
	rows := p.Tables[0].Rows
	if len(rows) != 2 || rows[0][0] != priced.String("InventoryID") || rows[0][1] != priced.String("Description") ||
		rows[0][2] != "4" || rows[0][3] != priced.String("SalesUOM") || rows[0][4] != "12.5" || rows[0][5] != "50.00" {
		t.Errorf("priced line %v", rows)
	}
	if !strings.Contains(rows[1][4], "price list") || !strings.Contains(rows[1][4], unpriced.Decimal("DefaultPrice").Format(6)) {
		t.Errorf("unpriced line %v, want the item's default price %s", rows[1], unpriced.Decimal("DefaultPrice").Format(6))
	}
	if n := len(d.Records("SalesOrder")); n != before {
		t.Fatalf("the preview wrote: %d orders, was %d", n, before)
	}

	out, err := h.execute(kindFull, "acumatica_create_sales_order", args, p)
	if err != nil {
		t.Fatal(err)
	}
	nbr, _ := out["OrderNbr"].(string)
	if out["OrderType"] != "SO" || nbr == "" || out["Status"] != "On Hold" || out["Hold"] != true || out["CustomerID"] != cust.String("CustomerID") {
		t.Errorf("result %v", out)
	}
	// The seed numbers SO orders up to SO000320; Acumatica continues.
	if nbr != "SO000321" {
		t.Errorf("OrderNbr = %q, want SO000321", nbr)
	}
	// 4 × 12.50 + 3 × the item's default price, in dollars, at the
	// seeded 0.8 euros a dollar (the customer's currency is EUR); the
	// customer is tax exempt.
	if cust.String("CurrencyID") != "EUR" {
		t.Fatalf("the customer's currency is %s, want the seed's EUR", cust.String("CurrencyID"))
	}
	rate, _ := acumaticatest.ParseDecimal("0.8")
	want := acumaticatest.DecimalFromCents(5000) + unpriced.Decimal("DefaultPrice").Mul(rate, 6).Mul(acumaticatest.DecimalFromInt(3), 2)
	if got := fmt.Sprint(out["OrderTotal"]); got != want.String() && got != want.String()+".0" {
		t.Errorf("OrderTotal = %s, want %s", got, want.String())
	}
	if lines, _ := out["Details"].([]any); len(lines) != 2 {
		t.Errorf("details %v", out["Details"])
	}

	// Another user's reads see the order, on hold, with its lines.
	got := h.mustRun(kindNoCanary, "acumatica_get_sales_order", map[string]any{"OrderType": "SO", "OrderNbr": nbr, "expand": []any{"Details"}})
	rec := got["record"].(map[string]any)
	if rec["Status"] != "On Hold" || rec["Hold"] != true || rec["Description"] != "Spring restock" || rec["CustomerID"] != cust.String("CustomerID") ||
		!strings.HasPrefix(fmt.Sprint(rec["Date"]), "2026-06-10") {
		t.Errorf("another user reads %v", rec)
	}
	if lines, _ := rec["Details"].([]any); len(lines) != 2 || lines[1].(map[string]any)["UnitPrice"] == nil {
		t.Errorf("another user reads lines %v", rec["Details"])
	}
	list := h.mustRun(kindService, "acumatica_list_entities", map[string]any{"entity": "SalesOrder", "filterExpression": "OrderNbr eq '" + nbr + "'"})
	if res := list["results"].([]any); len(res) != 1 || res[0].(map[string]any)["Status"] != "On Hold" {
		t.Errorf("list as the service user: %v", list["results"])
	}
}

func TestCreateSalesOrderRefused(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	d := h.sim.Data()
	cust := d.Records("Customer")[0]
	item := d.Records("StockItem")[0]
	line := []any{map[string]any{"InventoryID": item.String("InventoryID"), "OrderQty": 1}}
	args := map[string]any{"CustomerID": cust.String("CustomerID"), "Details": line}
	before := len(d.Records("SalesOrder"))

	t.Run("user without the right to enter sales orders", func(t *testing.T) {
		p, err := h.preview(kindSalesViewer, "acumatica_create_sales_order", args)
		if err != nil {
			t.Fatalf("the viewer may read what the preview reads: %v", err)
		}
		_, err = h.execute(kindSalesViewer, "acumatica_create_sales_order", args, p)
		te := wantCode(t, err, toolerr.PermissionDenied, "create as sales.viewer")
		for _, want := range []string{"SO301000", "You have insufficient rights to access the object (SO301000).", "nothing was written"} {
			if !strings.Contains(te.Message, want) {
				t.Errorf("message %q lacks %q", te.Message, want)
			}
		}
	})
	t.Run("missing customer", func(t *testing.T) {
		_, err := h.preview(kindFull, "acumatica_create_sales_order", map[string]any{"CustomerID": "NOSUCHCUST", "Details": line})
		te := wantCode(t, err, toolerr.NotFound, "preview for a missing customer")
		if !strings.Contains(te.Message, "No entity satisfies the condition.") || !strings.Contains(te.Message, "NOSUCHCUST") {
			t.Errorf("message %q", te.Message)
		}
	})
	t.Run("missing item", func(t *testing.T) {
		_, err := h.preview(kindFull, "acumatica_create_sales_order", map[string]any{"CustomerID": cust.String("CustomerID"),
			"Details": []any{map[string]any{"InventoryID": "NOSUCHITEM", "OrderQty": 1}}})
		te := wantCode(t, err, toolerr.NotFound, "preview for a missing item")
		if !strings.Contains(te.Message, "StockItem") || !strings.Contains(te.Message, "NOSUCHITEM") {
			t.Errorf("message %q", te.Message)
		}
	})
	t.Run("the ERP's 422 for records gone since the preview", func(t *testing.T) {
		err := h.handlerOnly(kindFull, "acumatica_create_sales_order", map[string]any{"CustomerID": "NOSUCHCUST",
			"Details": []any{map[string]any{"InventoryID": "NOSUCHITEM", "OrderQty": 1}}})
		te := wantCode(t, err, toolerr.InvalidArgument, "create with a missing customer and item")
		for _, want := range []string{"HTTP 422", "Inserting 'SO Order' record raised at least one error.",
			"CustomerID: 'Customer' cannot be found in the system;", "Details line 1 InventoryID: 'Inventory ID' cannot be found in the system.", "Nothing was written"} {
			if !strings.Contains(te.Message, want) {
				t.Errorf("message %q lacks %q", te.Message, want)
			}
		}
	})
	t.Run("quantity", func(t *testing.T) {
		_, err := h.preview(kindFull, "acumatica_create_sales_order", map[string]any{"CustomerID": cust.String("CustomerID"),
			"Details": []any{map[string]any{"InventoryID": item.String("InventoryID"), "OrderQty": 0}}})
		wantCode(t, err, toolerr.InvalidArgument, "zero quantity")
	})
	if n := len(d.Records("SalesOrder")); n != before {
		t.Errorf("refused calls wrote: %d orders, was %d", n, before)
	}
}

func TestUpdateCustomerPreviewWriteAndRead(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	cust := h.sim.Data().Records("Customer")[4]
	id := cust.String("CustomerID")
	args := map[string]any{"CustomerID": id, "MainContact": map[string]any{"Email": "orders@new-domain.example.com", "Attention": "Accounts payable"},
		"CreditLimit": 25000, "CreditVerificationRules": map[string]any{"CreditVerification": "Limit"}}

	p, err := h.preview(kindFull, "acumatica_update_customer", args)
	if err != nil {
		t.Fatal(err)
	}
	if p.Operation != "update" || p.DocType != "Customer" || p.DocName != id || p.Version == "" {
		t.Errorf("preview header %+v", p)
	}
	if len(p.Fields) != 4 {
		t.Errorf("preview shows %d fields, want exactly the 4 set: %+v", len(p.Fields), p.Fields)
	}
	for name, want := range map[string][2]string{
		"MainContact/Email":                          {cust.Link("MainContact").String("Email"), "orders@new-domain.example.com"},
		"MainContact/Attention":                      {"", "Accounts payable"},
		"CreditLimit":                                {cust.Decimal("CreditLimit").Format(4), "25000"},
		"CreditVerificationRules/CreditVerification": {"Limit and Days Past Due", "Limit"},
	} {
		f := previewField(t, p, name)
		if !f.HasBefore || f.Before != want[0] || f.After != want[1] {
			t.Errorf("%s: %q → %q, want %q → %q", name, f.Before, f.After, want[0], want[1])
		}
	}
	if !strings.Contains(p.Summary, cust.String("CustomerName")) {
		t.Errorf("summary %q", p.Summary)
	}

	out, err := h.execute(kindFull, "acumatica_update_customer", args, p)
	if err != nil {
		t.Fatal(err)
	}
	fields := out["fields"].(map[string]any)
	if out["CustomerID"] != id || fields["MainContact/Email"] != "orders@new-domain.example.com" || fmt.Sprint(fields["CreditLimit"]) != "25000.0" ||
		fields["CreditVerificationRules/CreditVerification"] != "Limit" {
		t.Errorf("result %v", out)
	}
	// (The PUT's answer prints the value it was sent short, as the graph
	// holds it; reads print the column's scale.)
	// Idempotent: the same call again (a fresh preview and approval)
	// changes nothing and answers the same.
	again := h.mustRun(kindFull, "acumatica_update_customer", args)
	if fmt.Sprint(again["fields"]) != fmt.Sprint(out["fields"]) {
		t.Errorf("repeated: %v, first %v", again["fields"], out["fields"])
	}

	// Another user's reads see the change.
	got := h.mustRun(kindNoCanary, "acumatica_get_customer", map[string]any{"CustomerID": id, "expand": []any{"MainContact", "CreditVerificationRules"}})
	rec := got["record"].(map[string]any)
	mc := rec["MainContact"].(map[string]any)
	if mc["Email"] != "orders@new-domain.example.com" || mc["Attention"] != "Accounts payable" || fmt.Sprint(rec["CreditLimit"]) != "25000.0000" ||
		rec["CreditVerificationRules"].(map[string]any)["CreditVerification"] != "Limit" ||
		fmt.Sprint(rec["CreditVerificationRules"].(map[string]any)["CreditLimit"]) != "25000.0000" {
		t.Errorf("another user reads %v", rec)
	}
	if mc["Phone1"] != cust.Link("MainContact").String("Phone1") {
		t.Errorf("a field not set changed: Phone1 %v", mc["Phone1"])
	}
	list := h.mustRun(kindService, "acumatica_list_customers", map[string]any{"search": id})
	if res := list["results"].([]any); len(res) != 1 || fmt.Sprint(res[0].(map[string]any)["CreditLimit"]) != "25000.0000" {
		t.Errorf("list as the service user: %v", list["results"])
	}
}

func TestUpdateCustomerRefused(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	cust := h.sim.Data().Records("Customer")[5]
	id := cust.String("CustomerID")
	args := map[string]any{"CustomerID": id, "MainContact": map[string]any{"Phone1": "+1 (555) 123-0000"}}

	t.Run("changed since approval", func(t *testing.T) {
		p, err := h.preview(kindFull, "acumatica_update_customer", args)
		if err != nil {
			t.Fatal(err)
		}
		// Someone else changes the phone after the approval page was read.
		h.mustRun(kindNoCanary, "acumatica_update_customer", map[string]any{"CustomerID": id, "MainContact": map[string]any{"Phone1": "+1 (555) 999-9999"}})
		_, err = h.execute(kindFull, "acumatica_update_customer", args, p)
		te := wantCode(t, err, toolerr.ApprovalExpired, "update after a change")
		if !strings.Contains(te.Message, "MainContact/Phone1") {
			t.Errorf("message %q", te.Message)
		}
		got := h.mustRun(kindFull, "acumatica_get_customer", map[string]any{"CustomerID": id, "expand": []any{"MainContact"}})
		if ph := got["record"].(map[string]any)["MainContact"].(map[string]any)["Phone1"]; ph != "+1 (555) 999-9999" {
			t.Errorf("the refused write wrote: Phone1 %v", ph)
		}
	})
	t.Run("missing customer", func(t *testing.T) {
		_, err := h.preview(kindFull, "acumatica_update_customer", map[string]any{"CustomerID": "NOSUCHCUST", "CreditLimit": 1})
		wantCode(t, err, toolerr.NotFound, "preview of a missing customer")
		// A PUT with If-Match: * never inserts the customer it names.
		before := len(h.sim.Data().Records("Customer"))
		wantCode(t, h.handlerOnly(kindFull, "acumatica_update_customer", map[string]any{"CustomerID": "NOSUCHCUST", "CreditLimit": 1}),
			toolerr.NotFound, "update of a missing customer")
		if n := len(h.sim.Data().Records("Customer")); n != before {
			t.Errorf("the update inserted a customer: %d, was %d", n, before)
		}
	})
	t.Run("empty string clears", func(t *testing.T) {
		other := h.sim.Data().Records("Customer")[6]
		out := h.mustRun(kindFull, "acumatica_update_customer", map[string]any{"CustomerID": other.String("CustomerID"), "MainContact": map[string]any{"Phone1": ""}})
		if out["fields"].(map[string]any)["MainContact/Phone1"] != nil {
			t.Errorf("result %v", out)
		}
		if ph := h.sim.Data().Find("Customer", other.String("CustomerID")).Link("MainContact").String("Phone1"); ph != "" {
			t.Errorf("stored Phone1 %q", ph)
		}
	})
	t.Run("no field", func(t *testing.T) {
		_, err := h.preview(kindFull, "acumatica_update_customer", map[string]any{"CustomerID": id})
		wantCode(t, err, toolerr.InvalidArgument, "no field to change")
	})
	t.Run("user without the customer form", func(t *testing.T) {
		_, err := h.preview(kindNoAR, "acumatica_update_customer", args)
		wantCode(t, err, toolerr.PermissionDenied, "preview as ar.clerk")
	})
}

// A user with View Only rights on the Customers form: Acumatica answers
// the PUT 200 with the customer as it is. The tool reports the fields that
// did not take, with the values Acumatica holds, instead of success.
func TestUpdateCustomerNotSaved(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	cust := h.sim.Data().Records("Customer")[7]
	id := cust.String("CustomerID")
	h.sim.SetViewOnly(h.sim.User(kindNoCanary.role).Username, "AR303000")
	args := map[string]any{"CustomerID": id, "MainContact": map[string]any{"Email": "viewer@new-domain.example.com"}, "CreditLimit": 25000}
	_, err := h.run(kindNoCanary, "acumatica_update_customer", args)
	te := wantCode(t, err, toolerr.PermissionDenied, "update with View Only rights")
	for _, want := range []string{"accepted", "did not save", "MainContact/Email", strconv.Quote(cust.Link("MainContact").String("Email")),
		"CreditLimit", cust.Decimal("CreditLimit").Format(4), "rights"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("message %q lacks %q", te.Message, want)
		}
	}
	if e := h.sim.Data().Find("Customer", id).Link("MainContact").String("Email"); e != cust.Link("MainContact").String("Email") {
		t.Errorf("stored Email %q", e)
	}
}

func TestAddNote(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	d := h.sim.Data()
	// C000001 has a seeded note (every tenth customer is a key account).
	cust := d.Find("Customer", "C000001")
	if cust == nil || cust.Note == "" {
		t.Fatal("seed: C000001 has no note")
	}
	args := map[string]any{"entity": "Customer", "CustomerID": "C000001", "text": "Called 2 Dec: prefers e-mail."}
	p, err := h.preview(kindFull, "acumatica_add_note", args)
	if err != nil {
		t.Fatal(err)
	}
	f := previewField(t, p, "note")
	if f.Before != cust.Note || f.After != cust.Note+"\nCalled 2 Dec: prefers e-mail." || p.DocType != "Customer" || p.DocName != "C000001" {
		t.Errorf("preview %+v, note %+v", p, f)
	}
	out, err := h.execute(kindFull, "acumatica_add_note", args, p)
	if err != nil {
		t.Fatal(err)
	}
	if out["note"] != f.After {
		t.Errorf("saved note %q, want %q", out["note"], f.After)
	}
	got := h.mustRun(kindService, "acumatica_get_customer", map[string]any{"CustomerID": "C000001"})
	if got["record"].(map[string]any)["note"] != f.After {
		t.Errorf("another user reads note %q", got["record"].(map[string]any)["note"])
	}

	t.Run("sales invoice without a note", func(t *testing.T) {
		var inv *acumaticatest.Record
		for _, r := range d.Records("SalesInvoice") {
			if r.Note == "" {
				inv = r
				break
			}
		}
		a := map[string]any{"entity": "SalesInvoice", "Type": inv.String("Type"), "ReferenceNbr": inv.String("ReferenceNbr"), "text": "Customer disputes line 2."}
		p, err := h.preview(kindFull, "acumatica_add_note", a)
		if err != nil {
			t.Fatal(err)
		}
		if f := previewField(t, p, "note"); f.Before != "" || f.After != "Customer disputes line 2." {
			t.Errorf("note %+v", f)
		}
		if _, err := h.execute(kindFull, "acumatica_add_note", a, p); err != nil {
			t.Fatal(err)
		}
		if n := d.Find("SalesInvoice", inv.String("Type"), inv.String("ReferenceNbr")).Note; n != "Customer disputes line 2." {
			t.Errorf("stored note %q", n)
		}
	})
	t.Run("note changed since approval", func(t *testing.T) {
		order := d.Records("SalesOrder")[10]
		a := map[string]any{"entity": "SalesOrder", "OrderType": order.String("OrderType"), "OrderNbr": order.String("OrderNbr"), "text": "Ship with the next truck."}
		p, err := h.preview(kindFull, "acumatica_add_note", a)
		if err != nil {
			t.Fatal(err)
		}
		h.mustRun(kindNoCanary, "acumatica_add_note", map[string]any{"entity": "SalesOrder", "OrderType": order.String("OrderType"),
			"OrderNbr": order.String("OrderNbr"), "text": "Someone else's note."})
		_, err = h.execute(kindFull, "acumatica_add_note", a, p)
		wantCode(t, err, toolerr.ApprovalExpired, "note after a change")
		if n := d.Find("SalesOrder", order.String("OrderType"), order.String("OrderNbr")).Note; n != "Someone else's note." {
			t.Errorf("stored note %q", n)
		}
	})
	t.Run("sales viewer on a sales order", func(t *testing.T) {
		// The order gets a note first, so the message can show the note
		// Acumatica kept.
		seeded := d.Records("SalesOrder")[11]
		h.mustRun(kindFull, "acumatica_add_note", map[string]any{"entity": "SalesOrder", "OrderType": seeded.String("OrderType"),
			"OrderNbr": seeded.String("OrderNbr"), "text": "Ship by air."})
		order := d.Find("SalesOrder", seeded.String("OrderType"), seeded.String("OrderNbr"))
		if order.Note != "Ship by air." {
			t.Fatalf("stored note %q", order.Note)
		}
		a := map[string]any{"entity": "SalesOrder", "OrderType": order.String("OrderType"), "OrderNbr": order.String("OrderNbr"), "text": "x"}
		// View Only rights: Acumatica answers the PUT 200 with the order
		// as it is; the tool must not report the note as added.
		_, err := h.run(kindSalesViewer, "acumatica_add_note", a)
		te := wantCode(t, err, toolerr.PermissionDenied, "note as sales.viewer")
		for _, want := range []string{"accepted", "did not save", "note", strconv.Quote(order.Note), "rights"} {
			if !strings.Contains(te.Message, want) {
				t.Errorf("message %q lacks %q", te.Message, want)
			}
		}
		if n := d.Find("SalesOrder", order.String("OrderType"), order.String("OrderNbr")).Note; n != order.Note {
			t.Errorf("the refused note was stored: %q", n)
		}
		// The same user may annotate a customer.
		h.mustRun(kindSalesViewer, "acumatica_add_note", map[string]any{"entity": "Customer", "CustomerID": "C000002", "text": "Viewer note."})
	})
	t.Run("missing order", func(t *testing.T) {
		_, err := h.preview(kindFull, "acumatica_add_note", map[string]any{"entity": "SalesOrder", "OrderType": "SO", "OrderNbr": "SO999999", "text": "x"})
		wantCode(t, err, toolerr.NotFound, "note on a missing order")
	})
	t.Run("keys of another entity", func(t *testing.T) {
		_, err := h.preview(kindFull, "acumatica_add_note", map[string]any{"entity": "SalesOrder", "CustomerID": "C000001", "text": "x"})
		te := wantCode(t, err, toolerr.InvalidArgument, "note with a customer's key on an order")
		if !strings.Contains(te.Message, "OrderType and OrderNbr") {
			t.Errorf("message %q", te.Message)
		}
	})
}

// TestWriteErrorsFromAcumaticasBodies answers the create's PUT with
// Acumatica's own error bodies (samples recorded from real instances, and
// the PXException shape of a server-side refusal) and checks what the
// model reads: the ERP's words, cleaned, with the fields it names.
func TestWriteErrorsFromAcumaticasBodies(t *testing.T) {
	sample := func(name string) string {
		raw, err := os.ReadFile(filepath.Join("testdata", "samples", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	orders := "/entity/Default/24.200.001/SalesOrder"
	cases := []struct {
		name   string
		status int
		body   string
		code   toolerr.Code
		want   []string
		// said is Acumatica's own words, as the approval page quotes
		// them (toolerr.Error.ERPSaid): no HTTP status, no entity or
		// field names of the API, no exception class.
		said string
	}{
		{"422 with a detail line's error", 422, sample("bill-put-422-detail-error.json"), toolerr.InvalidArgument,
			[]string{"HTTP 422", "Inserting 'AP Transactions' record raised at least one error. Please review the errors.",
				"Details line 1 Project: Project 'TES2323T ' cannot be found in the system", "Nothing was written"},
			"Inserting 'AP Transactions' record raised at least one error. Please review the errors. Line 1: Project 'TES2323T ' cannot be found in the system."},
		{"400 empty body", 400, sample("customer-put-empty-body-400.json"), toolerr.InvalidArgument,
			[]string{"HTTP 400", "The request is invalid. The request body should not be empty.", "Nothing was written"},
			"The request is invalid. The request body should not be empty."},
		{"403", 403, `{"message":"You have insufficient rights to access the object (SO301000)."}`, toolerr.PermissionDenied,
			[]string{"Sales Orders (SO301000)", "You have insufficient rights to access the object (SO301000).", "nothing was written"},
			"You have insufficient rights to access the object (SO301000)."},
		{"500 PXException", 500, `{"message":"An error has occurred.","exceptionMessage":"Error: The document cannot be saved:\r\n   the period is closed.","exceptionType":"PX.Data.PXException","stackTrace":"   at PX.Data.PXGraph.Persist()"}`,
			// The same answer comes from a failure after the save committed:
			// an outcome not known, never "nothing was written".
			toolerr.UpstreamUnavailable, []string{"HTTP 500", "PXException: Error: The document cannot be saved: the period is closed.", "look at the document in Acumatica"},
			"Error: The document cannot be saved: the period is closed."},
		{"500 other", 500, `{"message":"An error has occurred.","exceptionMessage":"Boom","exceptionType":"System.NullReferenceException","stackTrace":"   at X.Y()"}`,
			toolerr.UpstreamUnavailable, []string{"HTTP 500", "NullReferenceException: Boom", "look at the document in Acumatica"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{noRetry: true})
			h.userToken(kindFull.role)
			h.sim.SetFault(acumaticatest.Fault{PathPrefix: h.sim.PathPrefix() + orders, Status: tc.status, Body: tc.body})
			err := h.handlerOnly(kindFull, "acumatica_create_sales_order", map[string]any{"CustomerID": "C000001",
				"Details": []any{map[string]any{"InventoryID": h.sim.Data().Records("StockItem")[0].String("InventoryID"), "OrderQty": 1}}})
			te := wantCode(t, err, tc.code, tc.name)
			for _, w := range tc.want {
				if !strings.Contains(te.Message, w) {
					t.Errorf("message lacks %q: %s", w, te.Message)
				}
			}
			if strings.Contains(te.Message, "   at ") || strings.Contains(te.Message, "X.Y()") {
				t.Errorf("a stack trace reached the message: %s", te.Message)
			}
			if te.ERPSaid != tc.said {
				t.Errorf("Acumatica said %q, want %q", te.ERPSaid, tc.said)
			}
		})
	}
}

// FuzzWriteErrorBodies feeds arbitrary 422 and 400 bodies to the parsers
// of Acumatica's write errors: they never panic, always give
// INVALID_ARGUMENT, and keep messages to one line.
func FuzzWriteErrorBodies(f *testing.F) {
	for _, name := range []string{"bill-put-422-detail-error.json", "customer-put-empty-body-400.json", "customer-put-200.json"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "samples", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"error":"x","A":{"B":{"value":1,"error":"bad\nline"}},"L":[{"error":"row"},{"F":{"error":"f"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		op := contractOp{entity: "SalesOrder"}
		te := asToolErr(validationError(body, op))
		if te == nil || te.Code != toolerr.InvalidArgument || strings.ContainsAny(te.Message, "\r\n") {
			t.Fatalf("422 %q: %v", body, te)
		}
		if d := badRequestDetail(body, ""); strings.ContainsAny(d, "\r\n") {
			t.Fatalf("400 %q: %q", body, d)
		}
	})
}

// The preview reads the lines' items 20 to a list request, not one
// request each, and still names an item that does not exist.
func TestCreateSalesOrderPreviewReadsItemsInBatches(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	items := h.sim.Data().Records("StockItem")
	if len(items) < 25 {
		t.Fatalf("seed has %d stock items", len(items))
	}
	var lines []any
	for _, it := range items[:25] {
		lines = append(lines, map[string]any{"InventoryID": it.String("InventoryID"), "OrderQty": 1})
	}
	args := map[string]any{"CustomerID": "C000001", "Details": lines}
	h.userToken(kindFull.role)
	path := h.sim.PathPrefix() + "/entity/Default/24.200.001/StockItem"
	before := h.sim.RequestCount(path)
	p, err := h.preview(kindFull, "acumatica_create_sales_order", args)
	if err != nil {
		t.Fatal(err)
	}
	if n := h.sim.RequestCount(path) - before; n != 2 {
		t.Errorf("%d item requests for 25 lines, want 2", n)
	}
	if len(p.Tables[0].Rows) != 25 || p.Tables[0].Rows[24][0] != items[24].String("InventoryID") {
		t.Errorf("rows %v", p.Tables[0].Rows)
	}
	args["Details"] = append(lines[:3:3], map[string]any{"InventoryID": "NOSUCHITEM", "OrderQty": 1})
	_, err = h.preview(kindFull, "acumatica_create_sales_order", args)
	if te := wantCode(t, err, toolerr.NotFound, "a missing item among others"); !strings.Contains(te.Message, "NOSUCHITEM") {
		t.Errorf("message %q", te.Message)
	}
}

// The write tools work the same on a site using Default/25.200.001.
func TestWriteToolsOnEndpoint25(t *testing.T) {
	h := newHarness(t, harnessOptions{settings: `{"tenant":"Demo","endpoint_version":"25.200.001"}`})
	d := h.sim.Data()
	item := d.Records("StockItem")[3]
	out := h.mustRun(kindFull, "acumatica_create_sales_order", map[string]any{"CustomerID": "C000002",
		"Details": []any{map[string]any{"InventoryID": item.String("InventoryID"), "OrderQty": 2}}})
	if out["Status"] != "On Hold" || out["endpoint"] != "Default/25.200.001" {
		t.Errorf("create: %v", out)
	}
	up := h.mustRun(kindFull, "acumatica_update_customer", map[string]any{"CustomerID": "C000002",
		"MainContact": map[string]any{"Email": "billing@c2.example.com"}, "CreditVerificationRules": map[string]any{"CreditDaysPastDue": 45}})
	if f := up["fields"].(map[string]any); f["MainContact/Email"] != "billing@c2.example.com" || fmt.Sprint(f["CreditVerificationRules/CreditDaysPastDue"]) != "45" {
		t.Errorf("update: %v", up)
	}
	note := h.mustRun(kindFull, "acumatica_add_note", map[string]any{"entity": "SalesOrder", "OrderType": "SO", "OrderNbr": out["OrderNbr"], "text": "Rush."})
	if note["note"] != "Rush." {
		t.Errorf("note: %v", note)
	}
}

// asShown is p as the engine stores and shows it: the values of a
// sensitive shape (a card number in a note) redacted, as in a result.
func asShown(t *testing.T, p *connector.Preview) *connector.Preview {
	t.Helper()
	r := redact.New(redact.Rules{})
	out := *p
	out.Fields = append([]connector.PreviewField(nil), p.Fields...)
	for i, f := range out.Fields {
		for _, v := range []*string{&out.Fields[i].Before, &out.Fields[i].After} {
			if *v != "" {
				m, _ := r.Apply(map[string]any{f.Name: *v})
				*v = m.(map[string]any)[f.Name].(string)
			}
		}
	}
	return &out
}

// A note holding a card number is redacted on the approval page, so the
// person approves a note whose before they could not read whole: the
// write compares the record's version instead, and still refuses a note
// changed since.
func TestAddNoteToANoteThePageRedacted(t *testing.T) {
	// Acumatica's clock moves: each save has its own LastModified.
	var ticks atomic.Int64
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{Now: func() time.Time {
		return acumaticatest.DefaultNow.Add(time.Duration(ticks.Add(1)) * time.Second)
	}}})
	d := h.sim.Data()
	const card = "Card on file 4111 1111 1111 1111."
	var orders []*acumaticatest.Record
	for _, o := range d.Records("SalesOrder") {
		if o.Note == "" {
			orders = append(orders, o)
		}
	}
	keys := func(o *acumaticatest.Record) map[string]any {
		return map[string]any{"entity": "SalesOrder", "OrderType": o.String("OrderType"), "OrderNbr": o.String("OrderNbr")}
	}
	with := func(m map[string]any, text string) map[string]any {
		out := map[string]any{"text": text}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	for _, o := range orders[:2] {
		h.mustRun(kindFull, "acumatica_add_note", with(keys(o), card))
	}

	a := with(keys(orders[0]), "Refunded 3 Dec.")
	p, err := h.preview(kindFull, "acumatica_add_note", a)
	if err != nil {
		t.Fatal(err)
	}
	shown := asShown(t, p)
	if f := previewField(t, shown, "note"); strings.Contains(f.Before, "4111") || !strings.Contains(f.Before, redact.Placeholder) {
		t.Fatalf("the page's note %q", f.Before)
	}
	out, err := h.execute(kindFull, "acumatica_add_note", a, shown)
	if err != nil {
		t.Fatalf("a note approved as the page showed it: %v", err)
	}
	if want := card + "\nRefunded 3 Dec."; out["note"] != want || d.Find("SalesOrder", orders[0].String("OrderType"), orders[0].String("OrderNbr")).Note != want {
		t.Errorf("saved note %q, want %q", out["note"], want)
	}

	b := with(keys(orders[1]), "Refunded 4 Dec.")
	p, err = h.preview(kindFull, "acumatica_add_note", b)
	if err != nil {
		t.Fatal(err)
	}
	h.mustRun(kindNoCanary, "acumatica_add_note", with(keys(orders[1]), "Someone else's note."))
	_, err = h.execute(kindFull, "acumatica_add_note", b, asShown(t, p))
	wantCode(t, err, toolerr.ApprovalExpired, "a redacted note changed after approval")
}

// TestASalesOrderAcumaticaRoundedIsNotReportedAsApproved: Acumatica keeps
// a quantity and a unit price to its column's scale (6 places, api-facts.md
// §2.2) and saves a value with more places rounded. The order is made, but
// not as approved: the call must say so, naming the order and each value
// that differs, not report it as the approved one.
func TestASalesOrderAcumaticaRoundedIsNotReportedAsApproved(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	cust := exemptCustomer(t, h.sim)
	item := h.sim.Data().Records("StockItem")[2]
	args := map[string]any{"CustomerID": cust.String("CustomerID"), "Details": []any{
		map[string]any{"InventoryID": item.String("InventoryID"), "OrderQty": 2, "UnitPrice": 12.5},
		map[string]any{"InventoryID": item.String("InventoryID"), "OrderQty": 1.23456789, "UnitPrice": 19.9999999},
	}}
	p, err := h.preview(kindFull, "acumatica_create_sales_order", args)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Line 2's OrderQty 1.23456789 has more than six decimal places", "Line 2's UnitPrice 19.9999999 has more than six decimal places"} {
		if !strings.Contains(strings.Join(p.Warnings, " "), want) {
			t.Errorf("the preview does not warn %q: %q", want, p.Warnings)
		}
	}
	out, err := h.execute(kindFull, "acumatica_create_sales_order", args, p)
	if err == nil {
		t.Fatalf("the order Acumatica rounded was reported as the approved one: %v", out)
	}
	te := wantCode(t, err, toolerr.InvalidArgument, "a rounded order")
	for _, want := range []string{"SO000321", "not as approved", "line 2 OrderQty 1.234568, approved 1.23456789", "line 2 UnitPrice 20.0, approved 19.9999999"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("the error does not say %q: %s", want, te.Message)
		}
	}
	if strings.Contains(te.Message, "line 1") {
		t.Errorf("the error names line 1, saved as approved: %s", te.Message)
	}
	// The approval page's words: the order and each difference as people
	// read them, never the API's field names.
	if want := "sales order SO000321, on hold, with line 2's quantity 1.234568 where you approved 1.23456789; line 2's unit price 20.0 where you approved 19.9999999"; te.ERPSaid != want {
		t.Errorf("for the page: %q, want %q", te.ERPSaid, want)
	}
}

// TestSalesOrderPreviewTotalIsTheSumOfItsLines: Acumatica rounds each
// line's amount to the currency's two places and adds the rounded amounts
// up. The preview's total must be the sum of the line amounts it shows:
// three lines of 0.333 at 1.00 are 0.33 each, 0.99 (not 0.999 rounded
// once, 1.00), the total Acumatica saves for a tax-exempt customer.
func TestSalesOrderPreviewTotalIsTheSumOfItsLines(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	cust := exemptCustomer(t, h.sim)
	var lines []any
	for _, it := range h.sim.Data().Records("StockItem")[:3] {
		lines = append(lines, map[string]any{"InventoryID": it.String("InventoryID"), "OrderQty": 0.333, "UnitPrice": 1})
	}
	args := map[string]any{"CustomerID": cust.String("CustomerID"), "Details": lines}
	p, err := h.preview(kindFull, "acumatica_create_sales_order", args)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range p.Tables[0].Rows {
		if row[5] != "0.33" {
			t.Errorf("line amount %q, want 0.33", row[5])
		}
	}
	if !strings.Contains(p.Summary, "0.99 "+cust.String("CurrencyID")) {
		t.Errorf("summary %q, want a total of 0.99 %s", p.Summary, cust.String("CurrencyID"))
	}
	out, err := h.execute(kindFull, "acumatica_create_sales_order", args, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(out["OrderTotal"]); got != "0.99" {
		t.Errorf("Acumatica saved OrderTotal %s, want 0.99", got)
	}
}

// TestUpdateCustomerRoundedIsNotToldAsNotSaved: Acumatica keeps a credit
// limit to four places (money, api-facts.md §2.2) and saves 25000.12345 as
// 25000.1235. The limit changed, so the call must not say it was not
// saved for lack of rights: it says Acumatica saved it, and as what.
func TestUpdateCustomerRoundedIsNotToldAsNotSaved(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	cust := h.sim.Data().Records("Customer")[7]
	id := cust.String("CustomerID")
	_, err := h.run(kindFull, "acumatica_update_customer", map[string]any{"CustomerID": id, "CreditLimit": 25000.12345})
	saved := h.sim.Data().Find("Customer", id).Decimal("CreditLimit")
	if saved.Format(4) != "25000.1235" {
		t.Fatalf("the simulator saved CreditLimit %s, want 25000.1235", saved.Format(4))
	}
	if err == nil {
		t.Fatal("the rounded credit limit was reported as the approved one")
	}
	te := wantCode(t, err, toolerr.InvalidArgument, "a rounded credit limit")
	for _, want := range []string{id, "not as approved", "CreditLimit 25000.1235, approved 25000.12345"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("message %q lacks %q", te.Message, want)
		}
	}
	if strings.Contains(te.Message, "View Only") || strings.Contains(te.Message, "did not save") {
		t.Errorf("a saved change is told as not saved: %s", te.Message)
	}
	// The approval page's words: the field by its label, not CreditLimit.
	if want := "the customer " + id + " with its credit limit 25000.1235 where you approved 25000.12345"; te.ERPSaid != want {
		t.Errorf("for the page: %q, want %q", te.ERPSaid, want)
	}
}

// TestWriteToolsAdvertiseWhetherTheyOnlyAdd: MCP's destructiveHint is
// false only for a tool that makes additive changes. An order on hold and
// a note (appended to the record's note) add to the ERP;
// acumatica_update_customer replaces a customer's values.
func TestWriteToolsAdvertiseWhetherTheyOnlyAdd(t *testing.T) {
	want := map[string]bool{"acumatica_create_sales_order": false, "acumatica_add_note": false, "acumatica_update_customer": true}
	for _, tool := range New(Options{}).Tools() {
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

// A key with a slash cannot travel in the URL (Acumatica reads it as two
// key segments; api-facts.md §1.1: such a record "must be addressed by
// ID"). The write tools find the record as the getters do, with a filter
// on its key fields, instead of reporting an existing customer missing.
func TestWriteToolsFindRecordsWhoseKeyHasASlash(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	const id = "AB/01"
	status := h.putInERP(kindFull, "Customer", map[string]any{"CustomerID": id, "CustomerName": "Slash and Sons", "CustomerClass": "WHOLESALE"}, "If-None-Match")
	if status != http.StatusOK || h.sim.Data().Find("Customer", id) == nil {
		t.Fatalf("seed: PUT Customer %s: HTTP %d", id, status)
	}

	note := map[string]any{"entity": "Customer", "CustomerID": id, "text": "Slash in the key."}
	p, err := h.preview(kindFull, "acumatica_add_note", note)
	if err != nil {
		t.Fatalf("add_note preview: %v", err)
	}
	if _, err := h.execute(kindFull, "acumatica_add_note", note, p); err != nil {
		t.Fatalf("add_note: %v", err)
	}
	if n := h.sim.Data().Find("Customer", id).Note; n != "Slash in the key." {
		t.Errorf("stored note %q", n)
	}

	upd := map[string]any{"CustomerID": id, "MainContact": map[string]any{"Email": "ap@slash.example.com"}}
	p, err = h.preview(kindFull, "acumatica_update_customer", upd)
	if err != nil {
		t.Fatalf("update_customer preview: %v", err)
	}
	if _, err := h.execute(kindFull, "acumatica_update_customer", upd, p); err != nil {
		t.Fatalf("update_customer: %v", err)
	}
	if got := h.sim.Data().Find("Customer", id).Link("MainContact").String("Email"); got != "ap@slash.example.com" {
		t.Errorf("stored e-mail %q", got)
	}

	order := map[string]any{"CustomerID": id, "Details": []any{map[string]any{"InventoryID": h.sim.Data().Records("StockItem")[0].String("InventoryID"), "OrderQty": 1, "UnitPrice": 10}}}
	if _, err := h.preview(kindFull, "acumatica_create_sales_order", order); err != nil {
		t.Fatalf("create_sales_order preview: %v", err)
	}
	if h.sim.RequestCount("/entity/Default/24.200.001/Customer/AB") != 0 {
		t.Error("a key with a slash was put in the URL path")
	}
}

// TestCreateSalesOrderLinesAreInTheApprovedUnit: Acumatica takes a line's
// OrderQty in its UOM, which defaults to the item's sales unit. The
// approval page names that unit for each line, and the order is made in
// the unit the person approved, even when the item's sales unit changed
// in Acumatica since (a box of many for the piece approved).
func TestCreateSalesOrderLinesAreInTheApprovedUnit(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	d := h.sim.Data()
	cust := exemptCustomer(t, h.sim)
	item := d.Records("StockItem")[0]
	unit, id := item.String("SalesUOM"), item.String("InventoryID")
	if unit == "" {
		t.Fatalf("the seeded item %s has no sales unit", id)
	}
	args := map[string]any{"CustomerID": cust.String("CustomerID"), "Details": []any{map[string]any{"InventoryID": id, "OrderQty": 2}}}
	p, err := h.preview(kindFull, "acumatica_create_sales_order", args)
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(p.Tables[0].Columns, "Unit")
	if col < 0 || p.Tables[0].Rows[0][col] != unit {
		t.Fatalf("the preview's lines %v %v do not name the unit %s of the quantity", p.Tables[0].Columns, p.Tables[0].Rows, unit)
	}

	// After the approval, the item's sales unit changes in Acumatica.
	other := "BOX"
	if unit == other {
		other = "PACK"
	}
	status := h.putInERP(kindFull, "StockItem", map[string]any{"InventoryID": id, "SalesUOM": other}, "If-Match")
	if got := d.Find("StockItem", id).String("SalesUOM"); status != http.StatusOK || got != other {
		t.Fatalf("the item's sales unit is %q after the PUT (HTTP %d)", got, status)
	}

	out, err := h.execute(kindFull, "acumatica_create_sales_order", args, p)
	if err != nil {
		t.Fatal(err)
	}
	nbr, _ := out["OrderNbr"].(string)
	rec := d.Find("SalesOrder", "SO", nbr)
	if rec == nil || len(rec.Details["Details"]) != 1 {
		t.Fatalf("the simulator has no one-line order SO %q (the tool returned %v)", nbr, out)
	}
	if got := rec.Details["Details"][0].String("UOM"); got != unit {
		t.Errorf("the order's line is 2 %s; the person approved 2 %s", got, unit)
	}
}

// TestCreateSalesOrderInAnotherCurrencyThanApprovedIsNotMade: the person
// approves an order whose amounts the page shows in the customer's
// currency; before the call runs, another user changes the customer's
// currency in Acumatica, which a new order takes. The order must not be
// made in the other currency: nothing is written (APPROVAL_EXPIRED).
func TestCreateSalesOrderInAnotherCurrencyThanApprovedIsNotMade(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	d := h.sim.Data()
	cust := exemptCustomer(t, h.sim)
	id, approved := cust.String("CustomerID"), cust.String("CurrencyID")
	if approved == "" {
		t.Fatalf("the seeded customer %s has no currency", id)
	}
	item := d.Records("StockItem")[2]
	args := map[string]any{"CustomerID": id, "Details": []any{map[string]any{"InventoryID": item.String("InventoryID"), "OrderQty": 4, "UnitPrice": 12.5}}}
	p, err := h.preview(kindFull, "acumatica_create_sales_order", args)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := p.Field("CurrencyID"); !ok || f.After != approved {
		t.Errorf("the preview's currency %+v (%v), want %s", f, ok, approved)
	}
	if !strings.Contains(p.Summary, "50.00 "+approved) {
		t.Fatalf("summary %q, want 50.00 %s", p.Summary, approved)
	}

	// After the approval, another user gives the customer another currency.
	other := "EUR"
	if approved == other {
		other = "GBP"
	}
	status := h.putInERP(kindNoCanary, "Customer", map[string]any{"CustomerID": id, "CurrencyID": other}, "If-Match")
	if got := d.Find("Customer", id).String("CurrencyID"); status != http.StatusOK || got != other {
		t.Fatalf("the customer's currency is %q after the PUT (HTTP %d)", got, status)
	}

	before := len(d.Records("SalesOrder"))
	out, err := h.execute(kindFull, "acumatica_create_sales_order", args, p)
	if err == nil {
		t.Fatalf("an order approved at 50.00 %s was made for a customer now in %s: %v", approved, other, out)
	}
	te := wantCode(t, err, toolerr.ApprovalExpired, "an order whose customer's currency changed")
	if !strings.Contains(te.Message, approved) || !strings.Contains(te.Message, other) {
		t.Errorf("the error does not name both currencies: %s", te.Message)
	}
	if n := len(d.Records("SalesOrder")); n != before {
		t.Errorf("an order was made: %d orders, were %d", n, before)
	}
}

// changeOnPut is a transport that, before it sends the first PUT to
// entity, sends the PUT body first (another user's change landing between
// the tool's last read and its write).
type changeOnPut struct {
	next   http.RoundTripper
	entity string
	url    string
	body   []byte
	done   atomic.Bool
}

func (c *changeOnPut) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+c.entity) && c.done.CompareAndSwap(false, true) {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodPut, c.url, strings.NewReader(string(c.body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("If-Match", "*")
		req.Header.Set("Authorization", r.Header.Get("Authorization"))
		resp, err := c.next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("the change before the PUT: HTTP %d", resp.StatusCode)
		}
	}
	return c.next.RoundTrip(r)
}

// TestCreateSalesOrderSavedInAnotherCurrencyIsToldNotAsApproved: the
// customer's currency changes after the tool's check and before its PUT
// (Acumatica has no ETag). The order is made in the other currency; the
// call says so, as made but not as approved, never as the approved order.
func TestCreateSalesOrderSavedInAnotherCurrencyIsToldNotAsApproved(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	d := h.sim.Data()
	cust := exemptCustomer(t, h.sim)
	id, approved := cust.String("CustomerID"), cust.String("CurrencyID")
	item := d.Records("StockItem")[2]
	args := map[string]any{"CustomerID": id, "Details": []any{map[string]any{"InventoryID": item.String("InventoryID"), "OrderQty": 4, "UnitPrice": 12.5}}}
	p, err := h.preview(kindFull, "acumatica_create_sales_order", args)
	if err != nil {
		t.Fatal(err)
	}
	other := "EUR"
	if approved == other {
		other = "GBP"
	}
	change, _ := json.Marshal(map[string]any{"CustomerID": map[string]any{"value": id}, "CurrencyID": map[string]any{"value": other}})
	out, err := h.runCall("acumatica_create_sales_order", func(raw []byte) *connector.Call {
		call := h.newCall(kindFull, raw)
		next := call.HTTP.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		hc := *call.HTTP
		hc.Transport = &changeOnPut{next: next, entity: "SalesOrder", url: h.site.BaseURL.String() + "/entity/Default/24.200.001/Customer", body: change}
		call.HTTP = &hc
		call.Approved = &connector.Approved{ID: uuid.NewString(), Preview: *p, By: call.Principal.Subject}
		return call
	}, args)
	if got := d.Find("Customer", id).String("CurrencyID"); got != other {
		t.Fatalf("the customer's currency did not change before the PUT: %q", got)
	}
	if err == nil {
		t.Fatalf("an order approved in %s and saved in %s was told as the approved order: %v", approved, other, out)
	}
	if !errors.Is(err, connector.ErrNotAsApproved) {
		t.Fatalf("err = %v, want the order told as made, not as approved", err)
	}
	te := wantCode(t, err, toolerr.InvalidArgument, "an order saved in another currency")
	if want := "CurrencyID " + other + ", approved " + approved; !strings.Contains(te.Message, want) {
		t.Errorf("the error does not say %q: %s", want, te.Message)
	}
	if want := "the currency " + other + " where you approved " + approved; !strings.Contains(te.ERPSaid, want) {
		t.Errorf("for the page: %q, want it to say %q", te.ERPSaid, want)
	}
}
