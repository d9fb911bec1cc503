package acumatica

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

// MCP4Acumatica (seed 000) had per-entity lookups for CRM activities
// (Activity, Email, Event, Task, keyed by NoteID), field-service orders
// and appointments, and project transactions. Each getter reads the
// seeded record by its keys and returns it unwrapped.
func TestActivityFieldServiceAndProjectTransactionGetters(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, c := range []struct {
		tool, entity string
		keys         []string
		field        string
	}{
		{"acumatica_get_activity", "Activity", []string{"NoteID"}, "Summary"},
		{"acumatica_get_email", "Email", []string{"NoteID"}, "Subject"},
		{"acumatica_get_event", "Event", []string{"NoteID"}, "Summary"},
		{"acumatica_get_task", "Task", []string{"NoteID"}, "Summary"},
		{"acumatica_get_service_order", "ServiceOrder", []string{"ServiceOrderType", "ServiceOrderNbr"}, "Description"},
		{"acumatica_get_appointment", "Appointment", []string{"ServiceOrderType", "AppointmentNbr"}, "ServiceOrderNbr"},
		{"acumatica_get_project_transaction", "ProjectTransaction", []string{"Module", "ReferenceNbr"}, "Description"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			h.t = t
			rows := h.sim.Data().Records(c.entity)
			if len(rows) == 0 {
				t.Fatalf("the simulator holds no %s", c.entity)
			}
			rec := rows[len(rows)/2]
			args := map[string]any{}
			for _, k := range c.keys {
				args[k] = fmt.Sprint(rec.Value(k))
			}
			out := h.mustRun(kindFull, c.tool, args)
			got := out["record"].(map[string]any)
			for _, k := range c.keys {
				if fmt.Sprint(got[k]) != fmt.Sprint(rec.Value(k)) {
					t.Errorf("%s = %v, want %v", k, got[k], rec.Value(k))
				}
			}
			if got[c.field] != rec.String(c.field) {
				t.Errorf("%s = %v, want %q", c.field, got[c.field], rec.String(c.field))
			}
		})
	}
	// A project transaction's lines add up to its total.
	h.t = t
	pt := h.sim.Data().Records("ProjectTransaction")[2]
	out := h.mustRun(kindFull, "acumatica_get_project_transaction", map[string]any{
		"Module": pt.String("Module"), "ReferenceNbr": pt.String("ReferenceNbr"), "expand": []string{"Details"}})
	rec := out["record"].(map[string]any)
	lines, _ := rec["Details"].([]any)
	if len(lines) != len(pt.Detail("Details")) || len(lines) == 0 {
		t.Fatalf("Details = %v, want %d lines", rec["Details"], len(pt.Detail("Details")))
	}
	if total := rec["TotalAmount"].(json.Number).String(); total != pt.Decimal("TotalAmount").Format(4) {
		t.Errorf("TotalAmount = %s, want %s", total, pt.Decimal("TotalAmount").Format(4))
	}
}

// As in MCP4Acumatica (seed 000), a document's type key may be left out
// when it is the usual one: an order number alone reads sales order type
// SO, a reference number alone an Invoice, and so on. Another type must
// still be named.
func TestGetterDocumentTypeDefaults(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, c := range []struct {
		tool, entity, typeKey, def, nbrKey string
	}{
		{"acumatica_get_sales_order", "SalesOrder", "OrderType", "SO", "OrderNbr"},
		{"acumatica_get_invoice", "Invoice", "Type", "Invoice", "ReferenceNbr"},
		{"acumatica_get_sales_invoice", "SalesInvoice", "Type", "Invoice", "ReferenceNbr"},
		{"acumatica_get_bill", "Bill", "Type", "Bill", "ReferenceNbr"},
		{"acumatica_get_payment", "Payment", "Type", "Payment", "ReferenceNbr"},
		{"acumatica_get_check", "Check", "Type", "Payment", "ReferenceNbr"},
		{"acumatica_get_purchase_order", "PurchaseOrder", "Type", "Normal", "OrderNbr"},
		{"acumatica_get_purchase_receipt", "PurchaseReceipt", "Type", "Receipt", "ReceiptNbr"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			h.t = t
			var rec, other *acumaticatest.Record
			for _, r := range h.sim.Data().Records(c.entity) {
				if r.String(c.typeKey) == c.def && rec == nil {
					rec = r
				}
				if r.String(c.typeKey) != c.def && other == nil {
					other = r
				}
			}
			if rec == nil {
				t.Fatalf("no %s of type %s", c.entity, c.def)
			}
			out := h.mustRun(kindFull, c.tool, map[string]any{c.nbrKey: rec.String(c.nbrKey)})
			got := out["record"].(map[string]any)
			if got[c.typeKey] != c.def || got[c.nbrKey] != rec.String(c.nbrKey) {
				t.Errorf("read %v %v, want %s %s", got[c.typeKey], got[c.nbrKey], c.def, rec.String(c.nbrKey))
			}
			if keys := out["keys"].(map[string]any); keys[c.typeKey] != c.def {
				t.Errorf("keys = %v", keys)
			}
			if other != nil {
				out := h.mustRun(kindFull, c.tool, map[string]any{c.typeKey: other.String(c.typeKey), c.nbrKey: other.String(c.nbrKey)})
				if got := out["record"].(map[string]any); got[c.typeKey] != other.String(c.typeKey) {
					t.Errorf("named type read %v", got[c.typeKey])
				}
			}
		})
	}
}
