package acumaticatest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A sales order's hold status: a new order is On Hold, releasing it
// (Hold false) opens it, holding it again puts it back On Hold; and the
// change shows in another user's reads.
func TestSalesOrderHoldStatus(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	other := passwordToken(t, s, "office.manager", "api")
	c := s.Data().Records("Customer")[0]
	it := s.Data().Records("StockItem")[0]
	body := `{"CustomerID":{"value":"` + c.String("CustomerID") + `"},"Details":[{"InventoryID":{"value":"` + it.String("InventoryID") + `"},"OrderQty":{"value":1}}]}`
	resp, b := call(t, http.MethodPut, s.entityURL(Version24, "SalesOrder", nil), tok, strings.NewReader(body))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("insert: %d %s", resp.StatusCode, b)
	}
	rec := decodeObject(t, b)
	nbr := strings.Trim(value(t, rec["OrderNbr"]), `"`)
	if value(t, rec["Status"]) != `"On Hold"` || value(t, rec["Hold"]) != "true" {
		t.Errorf("new order %s", b)
	}
	for _, step := range []struct{ hold, status string }{{"false", `"Open"`}, {"true", `"On Hold"`}} {
		req := `{"OrderType":{"value":"SO"},"OrderNbr":{"value":"` + nbr + `"},"Hold":{"value":` + step.hold + `}}`
		resp, b = call(t, http.MethodPut, s.entityURL(Version24, "SalesOrder", nil), tok, strings.NewReader(req))
		if resp.StatusCode != http.StatusOK || value(t, decodeObject(t, b)["Status"]) != step.status {
			t.Errorf("Hold %s: %d %s", step.hold, resp.StatusCode, b)
		}
		status, got := get(t, s.entityURL(Version24, "SalesOrder/SO/"+nbr, nil), other)
		if status != http.StatusOK || value(t, decodeObject(t, got)["Status"]) != step.status {
			t.Errorf("another user reads after Hold %s: %d %s", step.hold, status, got)
		}
	}
}

// An order without a customer fails with the field's error and
// stores nothing.
func TestSalesOrderRequiresCustomer(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	before := len(s.Data().Records("SalesOrder"))
	resp, b := call(t, http.MethodPut, s.entityURL(Version24, "SalesOrder", nil), tok, strings.NewReader(`{"Description":{"value":"no customer"}}`))
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var got struct {
		Error      string         `json:"error"`
		CustomerID map[string]any `json:"CustomerID"`
		OrderNbr   map[string]any `json:"OrderNbr"`
	}
	mustUnmarshal(t, b, &got)
	if got.Error != "Inserting  'SO Order' record raised at least one error. Please review the errors." ||
		got.CustomerID["error"] != "'Customer' cannot be empty." || got.OrderNbr["value"] != "<NEW>" {
		t.Errorf("422 body %s", b)
	}
	if n := len(s.Data().Records("SalesOrder")); n != before {
		t.Errorf("a failed PUT stored an order: %d, was %d", n, before)
	}
}

// sales.viewer reads sales orders but may not save one. An update of an
// order is answered as the real server answers View Only rights: 200 with
// the record as it is, nothing saved (api-facts.md §2.3: "200 does not
// prove the value saved"); inserting one is the form's 403. Other forms
// stay writable.
func TestViewOnlyUserCannotSaveSalesOrders(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "sales.viewer", "api")
	order := s.Data().Records("SalesOrder")[0]
	if status, b := get(t, s.entityURL(Version24, "SalesOrder/"+order.String("OrderType")+"/"+order.String("OrderNbr"), nil), tok); status != http.StatusOK {
		t.Fatalf("read: %d %s", status, b)
	}
	before := len(s.Data().Records("SalesOrder"))
	req := `{"OrderType":{"value":"` + order.String("OrderType") + `"},"OrderNbr":{"value":"` + order.String("OrderNbr") + `"},"note":{"value":"x"},"Description":{"value":"viewer's"}}`
	resp, b := call(t, http.MethodPut, s.entityURL(Version24, "SalesOrder", nil), tok, strings.NewReader(req))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("update PUT: %d %s", resp.StatusCode, b)
	}
	rec := decodeObject(t, b)
	if got, want := value(t, rec["Description"]), jsonString(order.String("Description")); got != want {
		t.Errorf("the answer's Description %s, stored %s", got, want)
	}
	if got, want := value(t, rec["note"]), jsonString(order.Note); got != want {
		t.Errorf("the answer's note %s, stored %s", got, want)
	}
	saved := s.Data().Find("SalesOrder", order.String("OrderType"), order.String("OrderNbr"))
	if saved.Note != order.Note || saved.String("Description") != order.String("Description") {
		t.Errorf("the View Only PUT stored note %q, Description %q", saved.Note, saved.String("Description"))
	}
	c := s.Data().Records("Customer")[0]
	resp, b = call(t, http.MethodPut, s.entityURL(Version24, "SalesOrder", nil), tok,
		strings.NewReader(`{"CustomerID":{"value":"`+c.String("CustomerID")+`"},"Description":{"value":"viewer's"}}`))
	if resp.StatusCode != http.StatusForbidden || string(b) != `{"message":"You have insufficient rights to access the object (SO301000)."}` {
		t.Errorf("insert PUT: %d %s", resp.StatusCode, b)
	}
	if n := len(s.Data().Records("SalesOrder")); n != before {
		t.Errorf("a View Only user's PUT stored an order: %d, was %d", n, before)
	}
	c = s.Data().Records("Customer")[1]
	resp, b = call(t, http.MethodPut, s.entityURL(Version24, "Customer", nil), tok,
		strings.NewReader(`{"CustomerID":{"value":"`+c.String("CustomerID")+`"},"note":{"value":"viewer"}}`))
	if resp.StatusCode != http.StatusOK || s.Data().Find("Customer", c.String("CustomerID")).Note != "viewer" {
		t.Errorf("customer PUT: %d %s", resp.StatusCode, b)
	}
}

// The two contract fields over the customer's one credit limit column
// stay equal whichever is written.
func TestCustomerCreditLimitFieldsAgree(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	id := s.Data().Records("Customer")[2].String("CustomerID")
	for _, body := range []string{`"CreditLimit":{"value":1234}`, `"CreditVerificationRules":{"CreditLimit":{"value":4321}}`} {
		resp, b := call(t, http.MethodPut, s.entityURL(Version24, "Customer", nil), tok, strings.NewReader(`{"CustomerID":{"value":"`+id+`"},`+body+`}`))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
		c := s.Data().Find("Customer", id)
		if c.Decimal("CreditLimit") != c.Link("CreditVerificationRules").Decimal("CreditLimit") {
			t.Errorf("after %s: %s and %s", body, c.Decimal("CreditLimit"), c.Link("CreditVerificationRules").Decimal("CreditLimit"))
		}
	}
}

// Saving a note on a completed order leaves its lines and totals as they
// were: the graph recomputes amounts from the same prices, and shipped
// quantities stay shipped.
func TestNoteOnCompletedOrderKeepsLines(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	var order *Record
	for _, r := range s.Data().Records("SalesOrder") {
		if r.String("Status") == "Completed" {
			order = r
			break
		}
	}
	req := `{"OrderType":{"value":"` + order.String("OrderType") + `"},"OrderNbr":{"value":"` + order.String("OrderNbr") + `"},"note":{"value":"done"}}`
	if resp, b := call(t, http.MethodPut, s.entityURL(Version24, "SalesOrder", nil), tok, strings.NewReader(req)); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	saved := s.Data().Find("SalesOrder", order.String("OrderType"), order.String("OrderNbr"))
	if saved.Note != "done" || saved.String("Status") != "Completed" || saved.Decimal("OrderTotal") != order.Decimal("OrderTotal") {
		t.Errorf("saved %s %s %s", saved.Note, saved.String("Status"), saved.Decimal("OrderTotal"))
	}
	for i, l := range saved.Detail("Details") {
		was := order.Detail("Details")[i]
		if l.Decimal("OpenQty") != was.Decimal("OpenQty") || l.Decimal("Amount") != was.Decimal("Amount") {
			t.Errorf("line %d: open %s amount %s, was %s %s", i+1, l.Decimal("OpenQty"), l.Decimal("Amount"), was.Decimal("OpenQty"), was.Decimal("Amount"))
		}
	}
}

// SetViewOnly lowers a user to View Only on a form: their customer update
// is answered 200 with the customer as it is, and nothing is saved.
func TestSetViewOnly(t *testing.T) {
	s := newTestServer(t, Options{})
	s.SetViewOnly("office.manager", "AR303000")
	tok := passwordToken(t, s, "office.manager", "api")
	c := s.Data().Records("Customer")[3]
	resp, b := call(t, http.MethodPut, s.entityURL(Version24, "Customer", nil), tok,
		strings.NewReader(`{"CustomerID":{"value":"`+c.String("CustomerID")+`"},"CustomerName":{"value":"Renamed by a viewer"}}`))
	if resp.StatusCode != http.StatusOK || value(t, decodeObject(t, b)["CustomerName"]) != jsonString(c.String("CustomerName")) {
		t.Errorf("PUT: %d %s", resp.StatusCode, b)
	}
	if n := s.Data().Find("Customer", c.String("CustomerID")).String("CustomerName"); n != c.String("CustomerName") {
		t.Errorf("stored CustomerName %q", n)
	}
}

// Decimals are stored with their column's SQL scale (api-facts.md §2.2:
// quantities and unit prices 6 places, money 4), so a value sent with more
// places is saved rounded, half away from zero, and read back so; a line's
// amount comes from the saved values. The value is read from the JSON text
// exactly: 0.30000000000000004 (the float64 nearest 0.1+0.2) is a number
// like any other, and 4.1 is not 4.0999999999999996.
func TestDecimalsAreSavedWithTheirColumnScale(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	c := s.Data().Records("Customer")[0]
	it := s.Data().Records("StockItem")[0]
	line := func(qty, price string) string {
		return `{"InventoryID":{"value":"` + it.String("InventoryID") + `"},"OrderQty":{"value":` + qty + `},"UnitPrice":{"value":` + price + `}}`
	}
	body := `{"CustomerID":{"value":"` + c.String("CustomerID") + `"},"Details":[` +
		line("1.23456789", "19.9999999") + `,` + line("0.1", "0.30000000000000004") + `,` + line("4.1", "2.0000005") + `]}`
	resp, b := call(t, http.MethodPut, s.entityURL(Version24, "SalesOrder", url.Values{"$expand": {"Details"}}), tok, strings.NewReader(body))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("insert: %d %s", resp.StatusCode, b)
	}
	saved := decodeObject(t, b)
	// The PUT's answer prints the values short (computed in memory);
	// a read prints them with the column's scale.
	check := func(what string, details json.RawMessage, want [][3]string) {
		t.Helper()
		var lines []map[string]json.RawMessage
		mustUnmarshal(t, details, &lines)
		if len(lines) != len(want) {
			t.Fatalf("%s: %d lines: %s", what, len(lines), details)
		}
		for i, w := range want {
			got := [3]string{value(t, lines[i]["OrderQty"]), value(t, lines[i]["UnitPrice"]), value(t, lines[i]["Amount"])}
			if got != w {
				t.Errorf("%s: line %d OrderQty, UnitPrice, Amount %v, want %v", what, i+1, got, w)
			}
		}
	}
	check("the PUT's answer", saved["Details"], [][3]string{{"1.234568", "20.0", "24.69"}, {"0.1", "0.3", "0.03"}, {"4.1", "2.000001", "8.2"}})
	nbr := strings.Trim(value(t, saved["OrderNbr"]), `"`)
	status, got := get(t, s.entityURL(Version24, "SalesOrder/SO/"+nbr, url.Values{"$expand": {"Details"}}), tok)
	if status != http.StatusOK {
		t.Fatalf("read back: %d %s", status, got)
	}
	check("a read", decodeObject(t, got)["Details"], [][3]string{{"1.234568", "20.000000", "24.6900"}, {"0.100000", "0.300000", "0.0300"}, {"4.100000", "2.000001", "8.2000"}})
}

// An item's Default Price (Stock Items, Price/Cost tab) is in the base
// currency, USD. A line of an order in another currency that sends no
// unit price takes it converted at the order's rate, as Acumatica does
// when no price list has a price in the order's currency: 0.8 EUR a
// dollar, the EUR rate (1.25 USD a euro) the demo company is seeded with.
func TestSalesOrderLineInAForeignCurrencyTakesTheConvertedDefaultPrice(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	var cust *Record
	for _, c := range s.Data().Records("Customer") {
		if c.String("CurrencyID") == "EUR" {
			cust = c
			break
		}
	}
	if cust == nil {
		t.Fatal("no customer in EUR in the seed")
	}
	it := s.Data().Records("StockItem")[3]
	body := `{"CustomerID":{"value":"` + cust.String("CustomerID") + `"},"Details":[{"InventoryID":{"value":"` + it.String("InventoryID") + `"},"OrderQty":{"value":2}}]}`
	resp, b := call(t, http.MethodPut, s.entityURL(Version24, "SalesOrder", url.Values{"$expand": {"Details"}}), tok, strings.NewReader(body))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("insert: %d %s", resp.StatusCode, b)
	}
	var got struct {
		CurrencyID, BaseCurrencyID struct{ Value string }
		CurrencyRate               struct{ Value json.Number }
		Details                    []struct {
			UnitPrice, Amount struct{ Value json.Number }
		}
	}
	mustUnmarshal(t, b, &got)
	price := it.Decimal("DefaultPrice").Mul(mustDecimal("0.8"), 6)
	if got.CurrencyID.Value != "EUR" || got.BaseCurrencyID.Value != "USD" || got.CurrencyRate.Value.String() != "1.25" {
		t.Errorf("order in %s, base %s, rate %s; want EUR, USD, 1.25", got.CurrencyID.Value, got.BaseCurrencyID.Value, got.CurrencyRate.Value)
	}
	if len(got.Details) != 1 {
		t.Fatalf("%d lines: %s", len(got.Details), b)
	}
	if p, _ := ParseDecimal(got.Details[0].UnitPrice.Value.String()); p != price {
		t.Errorf("unit price %s, want %s (the default price %s USD at 0.8)", got.Details[0].UnitPrice.Value, price, it.Decimal("DefaultPrice"))
	}
	if a, _ := ParseDecimal(got.Details[0].Amount.Value.String()); a != price.Mul(DecimalFromInt(2), 2) {
		t.Errorf("amount %s, want %s", got.Details[0].Amount.Value, price.Mul(DecimalFromInt(2), 2))
	}
}
