package acumatica

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// proposedOrder is a sales order for cust of one of the third stock item
// at 10, described by description, and its preview as kind.
func (h *harness) proposedOrder(t *testing.T, kind userKind, cust *acumaticatest.Record, description string) (map[string]any, *connector.Preview) {
	t.Helper()
	args := map[string]any{"CustomerID": cust.String("CustomerID"), "Description": description,
		"Details": []any{map[string]any{"InventoryID": h.sim.Data().Records("StockItem")[2].String("InventoryID"), "OrderQty": 1, "UnitPrice": 10}}}
	p, err := h.preview(kind, "acumatica_create_sales_order", args)
	if err != nil {
		t.Fatal(err)
	}
	return args, p
}

// An approved write's failure says it wrote nothing (toolerr's
// NothingWritten, which keeps the approval for the same call) exactly when
// that is certain: any failure before its PUT was sent (the handler's
// reads write nothing), and Acumatica's refusals of the PUT that say it
// did not save it (409 long operation, 429 licence queue, 403, 422), in
// Acumatica's own words (TestARefusalNotInAcumaticasShapeAfterThePutIsAnOutcomeNotKnown). A
// PUT that failed in a way that may have saved it (any 5xx, a
// PXException too) is never flagged, and is told as an outcome not
// known.
func TestApprovedWriteFailuresSayWhetherNothingWasWritten(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	d := h.sim.Data()
	cust := exemptCustomer(t, h.sim)
	orders := h.sim.PathPrefix() + "/entity/Default/24.200.001/SalesOrder"
	customers := h.sim.PathPrefix() + "/entity/Default/24.200.001/Customer"
	for _, c := range []struct {
		name    string
		fault   acumaticatest.Fault
		nothing bool
	}{
		{"the read of the customer before the PUT fails (500)", acumaticatest.Fault{PathPrefix: customers, Times: 1, Status: http.StatusInternalServerError, Body: `{"message":"An error has occurred."}`}, true},
		{"the read of the customer before the PUT is refused (403)", acumaticatest.Fault{PathPrefix: customers, Times: 1, Status: http.StatusForbidden, Body: `{"message":"You have insufficient rights to access the object (AR303000)."}`}, true},
		{"the PUT meets a long operation (409)", acumaticatest.Fault{PathPrefix: orders, Times: 1, Status: http.StatusConflict, Body: `{"message":"A long operation is running for this screen in the current session. Please try again later."}`}, true},
		{"the PUT is throttled (429)", acumaticatest.Fault{PathPrefix: orders, Times: 1, Status: http.StatusTooManyRequests, Body: "The custom error module does not recognize this error."}, true},
		{"the PUT is throttled (429, the documented sentence)", acumaticatest.Fault{PathPrefix: orders, Times: 1, Status: http.StatusTooManyRequests, Body: `{"message":"The number of requests has exceeded the limit imposed by the license"}`}, true},
		{"the PUT is refused for the user's rights (403)", acumaticatest.Fault{PathPrefix: orders, Times: 1, Status: http.StatusForbidden, Body: `{"message":"You have insufficient rights to access the object (SO301000)."}`}, true},
		{"the PUT is refused by validation (422)", acumaticatest.Fault{PathPrefix: orders, Times: 1, Status: http.StatusUnprocessableEntity, Body: `{"error":"Inserting 'Sales Order' record raised at least one error.","CustomerID":{"value":"X","error":"'Customer' cannot be empty."}}`}, true},
		// A 500 PXException is the same answer whether the save was
		// rolled back or Acumatica's code failed after it committed
		// (RowPersisted with TranStatus.Completed, a Persist override
		// after base.Persist, the saved record read back for the
		// answer): never certain.
		{"the PUT meets a PXException (500)", acumaticatest.Fault{PathPrefix: orders, Times: 1, Status: http.StatusInternalServerError, Body: `{"message":"An error has occurred.","exceptionMessage":"The document is on hold.","exceptionType":"PX.Data.PXException"}`}, false},
		{"the PUT saves, then reading the saved order back answers 'No entity satisfies the condition' (500)", acumaticatest.Fault{PathPrefix: orders, Times: 1, Status: http.StatusInternalServerError, Body: `{"message":"An error has occurred.","exceptionMessage":"No entity satisfies the condition.","exceptionType":"PX.Api.ContractBased.NoEntitySatisfiesTheConditionException"}`, AfterServing: true}, false},
		{"the PUT saves, then a PXException after the commit answers 500", acumaticatest.Fault{PathPrefix: orders, Times: 1, Status: http.StatusInternalServerError, Body: `{"message":"An error has occurred.","exceptionMessage":"Error: An error occurred during processing of the field Description.","exceptionType":"PX.Data.PXException"}`, AfterServing: true}, false},
		{"the PUT fails with a 500 that may have saved it", acumaticatest.Fault{PathPrefix: orders, Times: 1, Status: http.StatusBadGateway, Body: `{"message":"Bad gateway"}`}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			args, p := h.proposedOrder(t, kindFull, cust, c.name)
			before := len(d.Records("SalesOrder"))
			h.sim.SetFault(c.fault)
			defer h.sim.ClearFaults()
			_, err := h.execute(kindFull, "acumatica_create_sales_order", args, p)
			if err == nil {
				t.Fatal("the write succeeded through the fault")
			}
			if got := toolerr.NothingWritten(err); got != c.nothing {
				t.Errorf("NothingWritten = %v, want %v (%v)", got, c.nothing, err)
			}
			if c.nothing && len(d.Records("SalesOrder")) != before {
				t.Errorf("a write said to have written nothing saved an order")
			}
			if !c.nothing {
				if te := asToolErr(err); te == nil || !strings.HasPrefix(string(te.Code), "UPSTREAM_") || strings.Contains(strings.ToLower(te.Message), "nothing was written") {
					t.Errorf("a PUT that may have saved is told as %v, want an outcome not known that never says nothing was written", err)
				}
			}
		})
	}

}

// TestAcumaticasOwnRefusalsOfThePutKeepTheApproval walks Acumatica's own
// refusals of a PUT, as recorded (testdata/samples) or documented
// (shared/erp-api/acumatica/api-facts.md §3) and as the simulator
// answers them: each says nothing was saved, so the failure is flagged
// NothingWritten (the approval holds for the same call) and no order is
// saved. A 422 naming only the fields and lines Acumatica refused,
// without a record-level error, is Acumatica's too.
func TestAcumaticasOwnRefusalsOfThePutKeepTheApproval(t *testing.T) {
	sample := func(name string) string {
		raw, err := os.ReadFile(filepath.Join("testdata", "samples", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	h := newHarness(t, harnessOptions{noRetry: true})
	d := h.sim.Data()
	cust := exemptCustomer(t, h.sim)
	orders := h.sim.PathPrefix() + "/entity/Default/24.200.001/SalesOrder"
	for _, c := range []struct {
		name   string
		status int
		body   string
	}{
		{"400, an empty body (recorded)", http.StatusBadRequest, sample("customer-put-empty-body-400.json")},
		{"400, the simulator's invalid entity", http.StatusBadRequest, `{"message":"The request is invalid.","modelState":{"entity":["Unknown field Foo."]}}`},
		{"403, the object", http.StatusForbidden, `{"message":"You have insufficient rights to access the object (SO301000)."}`},
		{"403, the form", http.StatusForbidden, `{"message":"You have insufficient rights to access the Sales Orders (SO301000) form."}`},
		{"409, a long operation", http.StatusConflict, `{"message":"A long operation is running for this screen in the current session. Please try again later."}`},
		{"412, If-None-Match", http.StatusPreconditionFailed, `{"message":"The entity already exists in the database and cannot be inserted."}`},
		{"412, If-Match", http.StatusPreconditionFailed, `{"message":"There is no entity with these keys in the database."}`},
		{"422, a detail line's error (recorded)", http.StatusUnprocessableEntity, sample("bill-put-422-detail-error.json")},
		{"422, a field's error only", http.StatusUnprocessableEntity, `{"id":"b6410d82-9476-ef11-8c65-ac198e472cfe","rowNumber":1,"CustomerID":{"value":"NOSUCHCUST","error":"'Customer' cannot be found in the system."},"OrderNbr":{"value":"<NEW>"}}`},
		{"422, a detail line's error only", http.StatusUnprocessableEntity, `{"id":"b6410d82-9476-ef11-8c65-ac198e472cfe","rowNumber":1,"Details":[{"id":"b8410d82-9476-ef11-8c65-ac198e472cfe","rowNumber":1,"InventoryID":{"value":"NOSUCHITEM","error":"'Inventory ID' cannot be found in the system."}}]}`},
		{"429, the licence (IIS)", http.StatusTooManyRequests, "The custom error module does not recognize this error."},
		{"429, the licence (documented)", http.StatusTooManyRequests, `{"message":"The number of requests has exceeded the limit imposed by the license"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			args, p := h.proposedOrder(t, kindFull, cust, c.name)
			before := len(d.Records("SalesOrder"))
			h.sim.SetFault(acumaticatest.Fault{PathPrefix: orders, Times: 1, Status: c.status, Body: c.body})
			defer h.sim.ClearFaults()
			_, err := h.execute(kindFull, "acumatica_create_sales_order", args, p)
			if err == nil {
				t.Fatal("the write succeeded through the refusal")
			}
			if !toolerr.NothingWritten(err) {
				t.Errorf("Acumatica's own %d is not flagged as having written nothing (the approval would be spent): %v", c.status, err)
			}
			if te := asToolErr(err); te == nil || strings.HasPrefix(string(te.Code), "UPSTREAM_") {
				t.Errorf("told as %v, want Acumatica's refusal, not an outcome not known", err)
			}
			if len(d.Records("SalesOrder")) != before {
				t.Errorf("a refused PUT saved an order")
			}
		})
	}
}

// TestA422NamingOnlyTheRefusedFieldsKeepsTheApproval: Acumatica refuses
// the approved order's PUT with the entity carrying errors only on the
// customer and a line's item (no record-level error: the simulator's
// FieldErrorsOnly). Nothing was saved: the approval holds, and the
// person is told in Acumatica's words which field it refused.
func TestA422NamingOnlyTheRefusedFieldsKeepsTheApproval(t *testing.T) {
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{FieldErrorsOnly: true}})
	d := h.sim.Data()
	before := len(d.Records("SalesOrder"))
	err := h.handlerOnly(kindFull, "acumatica_create_sales_order", map[string]any{"CustomerID": "NOSUCHCUST",
		"Details": []any{map[string]any{"InventoryID": "NOSUCHITEM", "OrderQty": 1}}})
	te := wantCode(t, err, toolerr.InvalidArgument, "a 422 naming only the refused fields")
	if !toolerr.NothingWritten(err) {
		t.Errorf("not flagged as having written nothing: %v", err)
	}
	for _, want := range []string{"HTTP 422", "CustomerID: 'Customer' cannot be found in the system", "Details line 1 InventoryID: 'Inventory ID' cannot be found in the system", "Nothing was written"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("message %q lacks %q", te.Message, want)
		}
	}
	if want := "'Customer' cannot be found in the system. Line 1: 'Inventory ID' cannot be found in the system."; te.ERPSaid != want {
		t.Errorf("Acumatica said %q, want %q", te.ERPSaid, want)
	}
	if len(d.Records("SalesOrder")) != before {
		t.Errorf("a refused PUT saved an order")
	}
}
