package acumatica

import (
	"net/http"
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
