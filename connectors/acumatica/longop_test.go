package acumatica

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// longOperationSentence is Acumatica's 409 (swagger 25.200.001,
// EntityController_409 and InvokeAction_409).
const longOperationSentence = "A long operation is running for this screen in the current session. Please try again later."

// startLongOperation starts, as kind and in the session of kind's calls, a
// processing action on sales order so: Acumatica runs it as a long
// operation that holds the Sales Orders form for that session. It returns
// the status URL to poll.
func (h *harness) startLongOperation(kind userKind, orderType, orderNbr string) string {
	h.t.Helper()
	body := `{"entity":{"OrderType":{"value":"` + orderType + `"},"OrderNbr":{"value":"` + orderNbr + `"}},"parameters":{}}`
	req, err := http.NewRequest(http.MethodPost, h.site.BaseURL.String()+"/entity/Default/24.200.001/SalesOrder/SalesOrderCreateShipment", bytes.NewReader([]byte(body)))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.newCall(kind, nil).HTTP.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Location") == "" {
		h.t.Fatalf("the action answered %d, want 202 and a status URL", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// pollUntilDone polls a long operation's status as kind until Acumatica
// answers 204 (done).
func (h *harness) pollUntilDone(kind userKind, status string) {
	h.t.Helper()
	for range 5 {
		req, _ := http.NewRequest(http.MethodGet, h.srv.URL+status, nil)
		resp, err := h.newCall(kind, nil).HTTP.Do(req)
		if err != nil {
			h.t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusNoContent {
			return
		}
	}
	h.t.Fatal("the long operation did not end")
}

// TestALongOperationOnTheFormIsRetryableNotUnexpected: while a long
// operation holds the Sales Orders form for the user's session, Acumatica
// answers 409 "A long operation is running…". A read is told so, as a
// retryable UPSTREAM_UNAVAILABLE with a retry hint and Acumatica's
// sentence, never as an unexpected answer; an approved sales order that
// meets it is told as not written, retryable, and once the operation is
// done the same order is written once.
func TestALongOperationOnTheFormIsRetryableNotUnexpected(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	d := h.sim.Data()
	so := d.Records("SalesOrder")[4]
	noteArgs := map[string]any{"entity": "SalesOrder", "OrderType": so.String("OrderType"), "OrderNbr": so.String("OrderNbr"), "text": "Call the customer back."}
	noteBefore := so.Note
	notePreview, err := h.preview(kindFull, "acumatica_add_note", noteArgs)
	if err != nil {
		t.Fatal(err)
	}
	status := h.startLongOperation(kindFull, so.String("OrderType"), so.String("OrderNbr"))

	_, err = h.run(kindFull, "acumatica_get_sales_order", map[string]any{"OrderType": so.String("OrderType"), "OrderNbr": so.String("OrderNbr")})
	te := wantCode(t, err, toolerr.UpstreamUnavailable, "a read of the form a long operation holds")
	if !te.Retryable() || te.RetryAfter <= 0 || !strings.Contains(te.Message, longOperationSentence) || strings.Contains(te.Message, "unexpected") {
		t.Errorf("read: retryable %v, retry after %v, message %q; want retryable, a retry hint and Acumatica's sentence", te.Retryable(), te.RetryAfter, te.Message)
	}
	// Another form in the same session is served.
	h.mustRun(kindFull, "acumatica_get_customer", map[string]any{"CustomerID": so.String("CustomerID")})

	cust := exemptCustomer(t, h.sim)
	args := map[string]any{"CustomerID": cust.String("CustomerID"), "Description": "During a long operation",
		"Details": []any{map[string]any{"InventoryID": d.Records("StockItem")[2].String("InventoryID"), "OrderQty": 2, "UnitPrice": 10}}}
	before := len(d.Records("SalesOrder"))
	p, err := h.preview(kindFull, "acumatica_create_sales_order", args)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.execute(kindFull, "acumatica_create_sales_order", args, p)
	var got *toolerr.Error
	if !errors.As(err, &got) || !got.Retryable() || got.RetryAfter <= 0 {
		t.Fatalf("write during the long operation: %v; want a retryable error with a retry hint", err)
	}
	if got.Code == toolerr.UpstreamUnavailable || got.Code == toolerr.UpstreamInvalidResponse || got.Code == toolerr.UpstreamTimeout {
		// The engine tells these codes of an approved write as "outcome
		// not known": Acumatica refused it before it ran.
		t.Errorf("write: code %s would be told as an unknown outcome; Acumatica wrote nothing", got.Code)
	}
	if !strings.Contains(got.Message, "Nothing was written") || !strings.Contains(got.ERPSaid, longOperationSentence) {
		t.Errorf("write: message %q, ERP said %q; want nothing written and Acumatica's sentence", got.Message, got.ERPSaid)
	}
	if n := len(d.Records("SalesOrder")); n != before {
		t.Fatalf("%d orders after the refused write, had %d", n, before)
	}

	// An approved note whose handler re-reads the order first meets the
	// 409 on that read: still nothing written, never an unknown outcome.
	_, err = h.execute(kindFull, "acumatica_add_note", noteArgs, notePreview)
	got = nil
	if !errors.As(err, &got) || !got.Retryable() || got.RetryAfter <= 0 || got.Code == toolerr.UpstreamUnavailable ||
		!strings.Contains(got.Message, "Nothing was written") || !strings.Contains(got.ERPSaid, longOperationSentence) {
		t.Errorf("approved note during the long operation: %v (ERP said %q); want a retryable refusal, nothing written, in Acumatica's words", err, errERPSaid(got))
	}
	if now := h.sim.Data().ByID("SalesOrder", so.ID).Note; now != noteBefore {
		t.Errorf("the order's note is %q, was %q: the refused note was written", now, noteBefore)
	}

	h.pollUntilDone(kindFull, status)
	if _, err := h.execute(kindFull, "acumatica_create_sales_order", args, p); err != nil {
		t.Fatalf("the same write once the operation is done: %v", err)
	}
	if n := len(d.Records("SalesOrder")); n != before+1 {
		t.Errorf("%d orders after the retry, had %d: want exactly one more", n, before)
	}
}

func errERPSaid(e *toolerr.Error) string {
	if e == nil {
		return ""
	}
	return e.ERPSaid
}
