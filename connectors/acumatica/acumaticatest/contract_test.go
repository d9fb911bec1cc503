package acumaticatest

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// Every entity with data answers GET by key and by id, with the keys in
// URL order and display values (Type "Credit Memo", OrderType "SO").
func TestGetByKeyEveryEntity(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	ds := s.Data()
	for _, e := range ds.Entities() {
		rows := ds.Records(e)
		rec := rows[len(rows)/2]
		var segs []string
		for _, k := range KeyFields(e) {
			segs = append(segs, url.PathEscape(keyString(rec.Fields[k])))
		}
		status, b := get(t, s.entityURL(Version24, e+"/"+strings.Join(segs, "/"), nil), tok)
		if status != http.StatusOK {
			t.Errorf("%s by key %v: %d %.200s", e, segs, status, b)
			continue
		}
		obj := decodeObject(t, b)
		if got := strings.Trim(string(obj["id"]), `"`); got != rec.ID {
			t.Errorf("%s by key: id %s, want %s", e, got, rec.ID)
		}
		for _, k := range KeyFields(e) {
			if got, want := value(t, obj[k]), InquiryValue(rec.Fields[k]); got != want {
				t.Errorf("%s.%s = %s, want %s", e, k, got, want)
			}
		}
		status, b2 := get(t, s.entityURL(Version25, e+"/"+rec.ID, nil), tok)
		if status != http.StatusOK || string(decodeObject(t, b2)["id"]) != string(obj["id"]) {
			t.Errorf("%s by id: %d %.200s", e, status, b2)
		}
	}
}

func TestKeyLookupVariants(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	cm := s.Data().Find("Invoice", "Credit Memo", "AR000015")
	if cm == nil {
		t.Fatal("dataset lacks credit memo AR000015")
	}
	for _, path := range []string{"Invoice/Credit%20Memo/AR000015", "Invoice/Credit%20Memo|AR000015",
		"invoice/credit%20memo/ar000015", "Invoice/Credit%20Memo/AR000015%20%20"} {
		status, b := get(t, s.entityURL(Version24, path, nil), tok)
		if status != http.StatusOK || !strings.Contains(string(b), cm.ID) {
			t.Errorf("GET %s: %d %.200s", path, status, b)
		}
	}
	// Integer keys.
	c := s.Data().Records("Contact")[0]
	if status, _ := get(t, s.entityURL(Version24, "Contact/"+keyString(c.Fields["ContactID"]), nil), tok); status != http.StatusOK {
		t.Errorf("Contact by int key: %d", status)
	}
}

// A missing record is not a 404: it is Acumatica's 500.
func TestMissingRecordBody(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	want := `{"message":"An error has occurred.","exceptionMessage":"No entity satisfies the condition.","exceptionType":"PX.Api.ContractBased.NoEntitySatisfiesTheConditionException"}`
	for _, path := range []string{"Customer/NOSUCH", "SalesOrder/SO/SO999999", "SalesOrder/SO",
		"Customer/00000000-0000-0000-0000-000000000000"} {
		resp, b := call(t, http.MethodGet, s.entityURL(Version24, path, nil), tok, nil)
		if resp.StatusCode != http.StatusInternalServerError || string(b) != want {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("content type %q", ct)
		}
	}
}

// A keyless inquiry entity is read with a PUT that expands Results; a GET
// list of one is the real 500 CannotOptimizeException (api-facts.md §3.2,
// recorded for InventorySummaryInquiry), not an empty list.
func TestInquiryEntityList(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	var got struct {
		Message, ExceptionMessage, ExceptionType, StackTrace string
	}
	for _, name := range []string{"InventorySummaryInquiry", "AccountSummaryInquiry", "CompaniesStructure"} {
		status, b := get(t, s.entityURL(Version24, name, nil), tok)
		mustUnmarshal(t, b, &got)
		if status != http.StatusInternalServerError || got.Message != "An error has occurred." ||
			got.ExceptionType != "PX.Api.ContractBased.OptimizedExport.CannotOptimizeException" ||
			!strings.HasPrefix(got.ExceptionMessage, "Optimization cannot be performed.The following fields cause the error:\r\n") ||
			!strings.Contains(got.StackTrace, "CanOptimize") {
			t.Errorf("GET %s: %d %s", name, status, b)
		}
		if name == "InventorySummaryInquiry" && got.ExceptionMessage != "Optimization cannot be performed.The following fields cause the error:\r\n"+
			"ExpandByLotSerialNbr: View Filter has BQL delegate\r\nInventoryID: View Filter has BQL delegate\r\nLocationID: View Filter has BQL delegate\r\n"+
			"Subitem: View Filter has BQL delegate\r\nWarehouseID: View Filter has BQL delegate\r\n" {
			t.Errorf("GET %s: message %q", name, got.ExceptionMessage)
		}
	}
	// A keyless entity that is not an inquiry is a list form: its GET list
	// is a list.
	if status, b := get(t, s.entityURL(Version24, "UnitsOfMeasure", nil), tok); status != http.StatusOK {
		t.Errorf("GET UnitsOfMeasure: %d %s", status, b)
	}
}

func TestUnknownEntityVersionEndpoint(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	for _, u := range []string{s.entityURL(Version24, "Branch", nil), s.URL + "/entity/Default/26.200.001/Customer",
		s.URL + "/entity/Manufacturing/24.200.001/Customer", s.entityURL(Version25, "NoSuchEntity/1", nil)} {
		status, b := get(t, u, tok)
		if status != http.StatusNotFound || !strings.Contains(string(b), `"message":"No HTTP resource was found`) {
			t.Errorf("GET %s: %d %s", u, status, b)
		}
	}
}

// TestListAnswerHasItsLength: a list answer announces its length, as the
// recorded one does (customer-list-top1-200.meta.json: Content-Length,
// no Transfer-Encoding), even when it is far longer than net/http would
// measure by itself.
func TestListAnswerHasItsLength(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	resp, b := call(t, http.MethodGet, s.entityURL(Version24, "Customer", nil), tok, nil)
	if resp.StatusCode != http.StatusOK || len(b) < 8<<10 {
		t.Fatalf("GET Customer: %d, %d bytes (want a long list)", resp.StatusCode, len(b))
	}
	if resp.ContentLength != int64(len(b)) || len(resp.TransferEncoding) > 0 {
		t.Errorf("Content-Length %d, Transfer-Encoding %v, body %d bytes", resp.ContentLength, resp.TransferEncoding, len(b))
	}
}

func TestListPaging(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	all := s.Data().Records("SalesOrder")
	status, b := get(t, s.entityURL(Version24, "SalesOrder", nil), tok)
	if status != http.StatusOK || len(decodeList(t, b)) != len(all) {
		t.Fatalf("no $top must return all %d records: %d", len(all), status)
	}
	status, b = get(t, s.entityURL(Version24, "SalesOrder", url.Values{"$top": {"5"}, "$skip": {"10"}}), tok)
	list := decodeList(t, b)
	if status != http.StatusOK || len(list) != 5 {
		t.Fatalf("$top=5&$skip=10: %d, %d rows", status, len(list))
	}
	for i, row := range list {
		if got := value(t, row["OrderNbr"]); got != `"`+all[10+i].String("OrderNbr")+`"` {
			t.Errorf("row %d OrderNbr %s, want %s", i, got, all[10+i].String("OrderNbr"))
		}
		if string(row["rowNumber"]) != strconv.Itoa(i+1) {
			t.Errorf("row %d rowNumber %s", i, row["rowNumber"])
		}
		if _, ok := row["Details"]; ok {
			t.Error("details must not appear without $expand")
		}
	}
	status, b = get(t, s.entityURL(Version24, "SalesOrder", url.Values{"$skip": {"100000"}}), tok)
	if status != http.StatusOK || string(b) != "[]" {
		t.Errorf("past the end: %d %s", status, b)
	}
}

func TestSelectAndExpand(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	so := s.Data().Find("SalesOrder", "SO", "SO000002")
	u := s.entityURL(Version24, "SalesOrder/SO/SO000002", url.Values{"$select": {"OrderNbr,Status,Details/InventoryID"}, "$expand": {"Details"}})
	status, b := get(t, u, tok)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, b)
	}
	keys := topLevelKeys(t, b)
	want := []string{"id", "rowNumber", "note", "Details", "OrderNbr", "Status", "custom", "_links"}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("keys %v, want %v", keys, want)
	}
	obj := decodeObject(t, b)
	var lines []map[string]any
	mustUnmarshal(t, obj["Details"], &lines)
	if len(lines) != len(so.Detail("Details")) {
		t.Fatalf("%d lines, want %d", len(lines), len(so.Detail("Details")))
	}
	for i, l := range lines {
		if l["InventoryID"].(map[string]any)["value"] != so.Detail("Details")[i].String("InventoryID") {
			t.Errorf("line %d %v", i, l)
		}
		if _, ok := l["OrderQty"]; ok {
			t.Errorf("line %d has unselected OrderQty", i)
		}
	}

	// Nested: Customer MainContact and MainContact/Address.
	c := s.Data().Records("Customer")[3]
	_, b = get(t, s.entityURL(Version24, "Customer/"+c.String("CustomerID"), url.Values{"$expand": {"MainContact"}}), tok)
	obj = decodeObject(t, b)
	var mc map[string]any
	mustUnmarshal(t, obj["MainContact"], &mc)
	if _, ok := mc["Address"]; ok {
		t.Error("expanding MainContact alone must not expand its Address")
	}
	if mc["Email"].(map[string]any)["value"] != c.Link("MainContact").String("Email") {
		t.Errorf("MainContact.Email = %v", mc["Email"])
	}
	_, b = get(t, s.entityURL(Version24, "Customer/"+c.String("CustomerID"), url.Values{"$expand": {"MainContact,MainContact/Address"}}), tok)
	obj = decodeObject(t, b)
	mustUnmarshal(t, obj["MainContact"], &mc)
	addr, _ := mc["Address"].(map[string]any)
	if addr == nil || addr["City"].(map[string]any)["value"] != c.Link("MainContact").Link("Address").String("City") {
		t.Errorf("MainContact/Address = %v", mc["Address"])
	}

	// Unknown $select field: 500 KeyNotFoundException.
	resp, b := call(t, http.MethodGet, s.entityURL(Version24, "Invoice", url.Values{"$select": {"CustomerID"}}), tok, nil)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(b), `"exceptionType":"System.Collections.Generic.KeyNotFoundException"`) {
		t.Errorf("unknown $select: %d %s", resp.StatusCode, b)
	}
}

func TestEntityRoot(t *testing.T) {
	s := newTestServer(t, Options{})
	status, b := get(t, s.URL+"/entity", "")
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, b)
	}
	var root struct {
		Version   map[string]string `json:"version"`
		Endpoints []struct{ Name, Version, Href string }
	}
	mustUnmarshal(t, b, &root)
	if root.Version["acumaticaBuildVersion"] == "" || len(root.Endpoints) != 2 ||
		root.Endpoints[1].Href != "/entity/Default/25.200.001/" {
		t.Errorf("root %s", b)
	}
}

func TestActions(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	so := s.Data().Records("SalesOrder")[4]
	body := `{"entity":{"OrderType":{"value":"` + so.String("OrderType") + `"},"OrderNbr":{"value":"` + so.String("OrderNbr") + `"}},"parameters":{}}`
	resp, _ := call(t, http.MethodPost, s.entityURL(Version24, "SalesOrder/CancelSalesOrder", nil), tok, strings.NewReader(body))
	if resp.StatusCode != http.StatusNoContent || !strings.HasSuffix(resp.Header.Get("Location"), "/SalesOrder/"+so.ID) {
		t.Errorf("action: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = call(t, http.MethodPost, s.entityURL(Version24, "SalesOrder/NoSuchAction", nil), tok, strings.NewReader(body))
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown action: %d", resp.StatusCode)
	}
	resp, _ = call(t, http.MethodPost, s.entityURL(Version24, "SalesOrder", nil), tok, strings.NewReader(body))
	if resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("POST without action: %d", resp.StatusCode)
	}
}
