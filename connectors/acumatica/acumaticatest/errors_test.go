package acumaticatest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestUnauthorized(t *testing.T) {
	s := newTestServer(t, Options{})
	idOnly := passwordToken(t, s, "admin", "openid")
	for _, tok := range []string{"", "not-a-token", idOnly} {
		resp, b := call(t, http.MethodGet, s.entityURL(Version24, "Customer", nil), tok, nil)
		if resp.StatusCode != http.StatusUnauthorized || string(b) != `{"message":"Authorization has been denied for this request."}` {
			t.Errorf("token %q: %d %s", tok, resp.StatusCode, b)
		}
	}
}

func TestPerUserRights(t *testing.T) {
	s := newTestServer(t, Options{})
	clerk := passwordToken(t, s, "ar.clerk", "api")
	for entity, screen := range map[string]string{"Customer": "AR303000", "Invoice": "AR301000", "Payment": "AR302000"} {
		resp, b := call(t, http.MethodGet, s.entityURL(Version24, entity, nil), clerk, nil)
		want := `{"message":"You have insufficient rights to access the object (` + screen + `)."}`
		if resp.StatusCode != http.StatusForbidden || string(b) != want {
			t.Errorf("%s: %d %s", entity, resp.StatusCode, b)
		}
	}
	for _, entity := range []string{"SalesOrder", "StockItem", "Vendor", "Bill"} {
		if status, b := get(t, s.entityURL(Version24, entity+"?$top=1", nil), clerk); status != http.StatusOK {
			t.Errorf("clerk %s: %d %.200s", entity, status, b)
		}
	}
}

func TestPutEmptyBodyAnd422(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	resp, b := call(t, http.MethodPut, s.entityURL(Version24, "Customer", nil), tok, strings.NewReader(""))
	if resp.StatusCode != http.StatusBadRequest || string(b) != string(readSample(t, "customer-put-empty-body-400.json")) {
		t.Errorf("empty PUT: %d %s", resp.StatusCode, b)
	}
	body := `{"Customer":{"value":"NOSUCH"},"Details":[{"InventoryID":{"value":"BOGUS-1"},"Qty":{"value":2}}]}`
	resp, b = call(t, http.MethodPut, s.entityURL(Version24, "Invoice", nil), tok, strings.NewReader(body))
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("422: %d %s", resp.StatusCode, b)
	}
	var got struct {
		Error        string           `json:"error"`
		Customer     map[string]any   `json:"Customer"`
		ReferenceNbr map[string]any   `json:"ReferenceNbr"`
		Details      []map[string]any `json:"Details"`
	}
	mustUnmarshal(t, b, &got)
	if !strings.HasPrefix(got.Error, "Inserting  '") || !strings.HasSuffix(got.Error, "' record raised at least one error. Please review the errors.") ||
		got.Customer["error"] != "'Customer' cannot be found in the system." || got.ReferenceNbr["value"] != "<NEW>" ||
		len(got.Details) != 1 || got.Details[0]["InventoryID"].(map[string]any)["error"] != "'Inventory ID' cannot be found in the system." {
		t.Errorf("422 body %s", b)
	}
	if n := len(s.Data().Records("Invoice")); n != 320 {
		t.Errorf("a failed PUT must not store anything: %d invoices", n)
	}
}

// TestA422WithFieldErrorsOnly: under Options.FieldErrorsOnly a PUT that
// fails validation is answered with the entity carrying its fields' and
// lines' errors and no record-level error; nothing is saved.
func TestA422WithFieldErrorsOnly(t *testing.T) {
	s := newTestServer(t, Options{FieldErrorsOnly: true})
	tok := passwordToken(t, s, "admin", "api")
	body := `{"Customer":{"value":"NOSUCH"},"Details":[{"InventoryID":{"value":"BOGUS-1"},"Qty":{"value":2}}]}`
	resp, b := call(t, http.MethodPut, s.entityURL(Version24, "Invoice", nil), tok, strings.NewReader(body))
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("422: %d %s", resp.StatusCode, b)
	}
	var got map[string]any
	mustUnmarshal(t, b, &got)
	if _, ok := got["error"]; ok {
		t.Errorf("a record-level error: %s", b)
	}
	cust, _ := got["Customer"].(map[string]any)
	lines, _ := got["Details"].([]any)
	if got["id"] == nil || cust["error"] != "'Customer' cannot be found in the system." || len(lines) != 1 ||
		lines[0].(map[string]any)["InventoryID"].(map[string]any)["error"] != "'Inventory ID' cannot be found in the system." {
		t.Errorf("422 body %s", b)
	}
	if n := len(s.Data().Records("Invoice")); n != 320 {
		t.Errorf("a failed PUT must not store anything: %d invoices", n)
	}
}

func TestPutInsertUpdateDelete(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	c := s.Data().Records("Customer")[1]
	it := s.Data().Records("StockItem")[5]
	body := `{"CustomerID":{"value":"` + c.String("CustomerID") + `"},"Details":[{"InventoryID":{"value":"` + it.String("InventoryID") + `"},"OrderQty":{"value":3}}]}`
	resp, b := call(t, http.MethodPut, s.entityURL(Version24, "SalesOrder?$expand=Details", nil), tok, strings.NewReader(body))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("insert: %d %s", resp.StatusCode, b)
	}
	var out struct {
		ID        string         `json:"id"`
		OrderNbr  map[string]any `json:"OrderNbr"`
		OrderType map[string]any `json:"OrderType"`
		Details   []json.RawMessage
	}
	mustUnmarshal(t, b, &out)
	if out.OrderNbr["value"] != "SO000321" || out.OrderType["value"] != "SO" || len(out.Details) != 1 {
		t.Errorf("inserted %s", b)
	}
	if !strings.Contains(string(b), `"OrderQty":{"value":3.0}`) {
		t.Errorf("insert response prints graph-computed decimals short: %.500s", b)
	}
	// The graph prices the line from the item and totals the order with
	// the customer's tax zone's rate; the new order is on hold.
	amount := it.Decimal("DefaultPrice").MulInt(3)
	total := amount + amount.Mul(taxRates[c.String("TaxZone")], 2)
	for _, want := range []string{`"OrderTotal":{"value":` + shortDecimal(total) + `}`, `"Amount":{"value":` + shortDecimal(amount) + `}`,
		`"Status":{"value":"On Hold"}`, `"Hold":{"value":true}`, `"CurrencyID":{"value":"` + c.String("CurrencyID") + `"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("insert response lacks %s: %.3000s", want, b)
		}
	}
	nbr := out.OrderNbr["value"].(string)
	if s.Data().Find("SalesOrder", "SO", nbr) == nil {
		t.Fatalf("order %s not stored", nbr)
	}
	req := `{"OrderType":{"value":"SO"},"OrderNbr":{"value":"` + nbr + `"},"Description":{"value":"changed"}}`
	resp, b = call(t, http.MethodPut, s.entityURL(Version24, "SalesOrder", nil), tok, strings.NewReader(req))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"Description":{"value":"changed"}`) {
		t.Errorf("update: %d %.300s", resp.StatusCode, b)
	}
	r, _ := http.NewRequest(http.MethodPut, s.entityURL(Version24, "SalesOrder", nil), strings.NewReader(req))
	r.Header.Set("Authorization", "Bearer "+tok)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("If-None-Match", "*")
	if resp, err := http.DefaultClient.Do(r); err != nil || resp.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("If-None-Match on an existing record: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	resp, _ = call(t, http.MethodDelete, s.entityURL(Version24, "SalesOrder/SO/"+nbr, nil), tok, nil)
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("delete: %d", resp.StatusCode)
	}
	if status, _ := get(t, s.entityURL(Version24, "SalesOrder/SO/"+nbr, nil), tok); status != http.StatusInternalServerError {
		t.Errorf("deleted order still answers %d", status)
	}
}

// shortDecimal prints d as the graph prints values it computed in memory:
// the shortest exact form with at least one fractional digit.
func shortDecimal(d Decimal) string {
	out := d.String()
	if !strings.Contains(out, ".") {
		out += ".0"
	}
	return out
}
