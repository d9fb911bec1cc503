package acumatica

import (
	"slices"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

func TestListEntitiesForEveryUserKind(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, kind := range userKinds {
		t.Run(kind.name, func(t *testing.T) {
			h.t = t
			for _, entity := range []string{"Customer", "SalesOrder", "StockItem", "Bill"} {
				out, err := h.run(kind, "acumatica_list_entities", map[string]any{"entity": entity, "top": 5})
				if deniedTo(kind, entity) {
					wantCode(t, err, toolerr.PermissionDenied, entity)
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", entity, err)
				}
				rows := out["results"].([]any)
				if len(rows) != 5 || out["truncated"] != true || out["recordsReturned"].(interface{ String() string }).String() != "5" {
					t.Errorf("%s: %d rows, truncated %v, returned %v", entity, len(rows), out["truncated"], out["recordsReturned"])
				}
				if out["paginationSupported"] != false || !strings.Contains(out["actionRequired"].(string), "does NOT support pagination") {
					t.Errorf("%s: envelope = %v %v", entity, out["paginationSupported"], out["actionRequired"])
				}
			}
		})
	}
}

// The filter goes to Acumatica verbatim; the rows are exactly those the
// data holds.
func TestListEntitiesFilterPassThrough(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	want := 0
	for _, r := range h.sim.Data().Records("SalesOrder") {
		if r.String("Status") == "Open" && r.String("OrderType") == "SO" {
			want++
		}
	}
	if want == 0 {
		t.Fatal("no open SO orders in the data")
	}
	out := h.mustRun(kindFull, "acumatica_list_entities", map[string]any{
		"entity": "SalesOrder", "filterExpression": "Status eq 'Open' and OrderType eq 'SO'", "top": 1000, "select": []string{"OrderType", "OrderNbr", "Status"}})
	rows := out["results"].([]any)
	if len(rows) != want || out["truncated"] != false {
		t.Fatalf("%d rows (truncated %v), want %d", len(rows), out["truncated"], want)
	}
	if _, ok := out["actionRequired"]; ok {
		t.Error("actionRequired on a complete result")
	}
	for _, r := range rows {
		if r.(map[string]any)["Status"] != "Open" {
			t.Fatalf("row %v does not match the filter", r)
		}
	}
}

// At the site's cap the envelope tells the model to narrow, not to page.
func TestListEntitiesTruncatesAtTheSiteCap(t *testing.T) {
	h := newHarness(t, harnessOptions{settings: `{"tenant":"Demo","max_records":20}`})
	out := h.mustRun(kindFull, "acumatica_list_entities", map[string]any{"entity": "Customer", "top": 500})
	if n := len(out["results"].([]any)); n != 20 {
		t.Fatalf("%d rows, want the cap of 20", n)
	}
	if out["recordLimit"].(interface{ String() string }).String() != "20" || out["truncated"] != true {
		t.Fatalf("envelope = %v", out)
	}
	msg := out["actionRequired"].(string)
	for _, want := range []string{"truncated at 20 records", "Do NOT call this tool again", "narrow"} {
		if !strings.Contains(msg, want) {
			t.Errorf("actionRequired lacks %q: %s", want, msg)
		}
	}
}

func TestListEntitiesRefusals(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	_, err := h.run(kindFull, "acumatica_list_entities", map[string]any{"entity": "Users"})
	wantCode(t, err, toolerr.PermissionDenied, "denylisted entity")
	_, err = h.run(kindFull, "acumatica_list_entities", map[string]any{"entity": "UserPassword"})
	wantCode(t, err, toolerr.PermissionDenied, "denylisted entity pattern")
	_, err = h.run(kindFull, "acumatica_list_entities", map[string]any{"entity": "Contact", "expand": []string{"UserInfo"}})
	wantCode(t, err, toolerr.PermissionDenied, "denylisted expand")
	te := wantCode(t, func() error {
		_, err := h.run(kindFull, "acumatica_list_entities", map[string]any{"entity": "Customer", "expand": []string{"MainContact/Address"}})
		return err
	}(), toolerr.InvalidArgument, "nested expand")
	if !strings.Contains(te.Message, "one level") {
		t.Errorf("message = %s", te.Message)
	}
	if n := h.sim.RequestCount("/entity/Default/24.200.001/Contact") + h.sim.RequestCount("/entity/Default/24.200.001/Customer"); n != 0 {
		t.Errorf("refused requests reached Acumatica %d times", n)
	}
}

// An inquiry entity (keyless, read with a PUT that expands Results) has
// nothing to list: Acumatica answers a GET list of one with a 500
// CannotOptimizeException. The tool refuses it before asking, and its
// guidance fits an entity without keys: no select, expand or by-key advice.
func TestListEntitiesInquiryEntity(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, name := range []string{"InventorySummaryInquiry", "inventorysummaryinquiry", "CompaniesStructure"} {
		_, err := h.run(kindFull, "acumatica_list_entities", map[string]any{"entity": name})
		te := wantCode(t, err, toolerr.InvalidArgument, name)
		for _, want := range []string{"inquiry", "no records to list", "acumatica_run_inquiry"} {
			if !strings.Contains(te.Message, want) {
				t.Errorf("%s: message lacks %q: %s", name, want, te.Message)
			}
		}
		for _, bad := range []string{"select", "expand", "by key", "no records.", "optimis"} {
			if strings.Contains(te.Message, bad) {
				t.Errorf("%s: message has %q: %s", name, bad, te.Message)
			}
		}
	}
	if n := h.sim.RequestCount("/entity/Default/24.200.001/InventorySummaryInquiry") + h.sim.RequestCount("/entity/Default/24.200.001/CompaniesStructure"); n != 0 {
		t.Errorf("refused requests reached Acumatica %d times", n)
	}
}

// A v4-style filter sent to the contract API: Acumatica rejects it, and
// the guidance names the dialect, the real fields and that nothing ran.
func TestListEntitiesBadFilterGuidance(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	_, err := h.run(kindFull, "acumatica_list_entities", map[string]any{"entity": "Customer", "filterExpression": "contains(CustomerName,'Acme')"})
	te := wantCode(t, err, toolerr.InvalidArgument, "v4 function")
	for _, want := range []string{"never ran", "substringof('text', Field)", "OData v3", "CustomerName"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("message lacks %q: %s", want, te.Message)
		}
	}
	_, err = h.run(kindFull, "acumatica_list_entities", map[string]any{"entity": "Customer", "filterExpression": "customername eq 'Acme'"})
	te = wantCode(t, err, toolerr.InvalidArgument, "wrong case")
	if !strings.Contains(te.Message, `did you mean CustomerName`) {
		t.Errorf("no field suggestion: %s", te.Message)
	}
}

func TestListEntitiesMissingEntityAndEndpoint(t *testing.T) {
	h := newHarness(t, harnessOptions{settings: `{"tenant":"Demo","endpoint_version":"25.200.001"}`})
	_, err := h.run(kindFull, "acumatica_list_entities", map[string]any{"entity": "Widget"})
	te := wantCode(t, err, toolerr.NotFound, "unknown entity")
	if !strings.Contains(te.Message, `"Widget" does not exist in endpoint Default/25.200.001`) {
		t.Errorf("message = %s", te.Message)
	}

	h = newHarness(t, harnessOptions{settings: `{"tenant":"Demo","endpoint_name":"Custom","endpoint_version":"1.0"}`})
	_, err = h.run(kindFull, "acumatica_list_entities", map[string]any{"entity": "Customer"})
	te = wantCode(t, err, toolerr.NotFound, "unknown endpoint")
	for _, want := range []string{"no endpoint Custom/1.0", "Default/24.200.001", "Default/25.200.001"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("message lacks %q: %s", want, te.Message)
		}
	}
}

func TestListEntitiesOn25(t *testing.T) {
	h := newHarness(t, harnessOptions{settings: `{"tenant":"Demo","endpoint_version":"25.200.001"}`})
	out := h.mustRun(kindService, "acumatica_list_entities", map[string]any{"entity": "Vendor", "top": 3})
	if out["endpoint"] != "Default/25.200.001" || len(out["results"].([]any)) != 3 {
		t.Fatalf("out = %v", out)
	}
}

func TestListCustomersForEveryUserKind(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	cust := h.sim.Data().Records("Customer")[4]
	for _, kind := range userKinds {
		t.Run(kind.name, func(t *testing.T) {
			h.t = t
			out, err := h.run(kind, "acumatica_list_customers", nil)
			if kind == kindNoAR {
				wantCode(t, err, toolerr.PermissionDenied, "customers without AR rights")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := len(out["results"].([]any)); n != min(100, len(h.sim.Data().Records("Customer"))) {
				t.Errorf("%d customers", n)
			}
			// Literal search: a quote in the text is data, not syntax.
			out = h.mustRun(kind, "acumatica_list_customers", map[string]any{"search": cust.String("CustomerName")})
			rows := out["results"].([]any)
			if len(rows) == 0 || rows[0].(map[string]any)["CustomerID"] != cust.String("CustomerID") {
				t.Errorf("search %q = %v", cust.String("CustomerName"), rows)
			}
			out = h.mustRun(kind, "acumatica_list_customers", map[string]any{"search": "O'Brien", "status": "Active"})
			if out["truncated"] != false {
				t.Errorf("quoted search = %v", out)
			}
		})
	}
}

// A string function compared with true ("substringof('x', F) eq true",
// textbook OData v3 that models write) makes the contract API answer no
// rows and no error. As MCP4Acumatica does (seed 000, its
// normalizeODataFilter), the comparison is dropped so the bare function
// reaches Acumatica: the rows are those the data holds, never a false
// "no records".
func TestListEntitiesStringFunctionEqTrue(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	var want []string
	for _, r := range h.sim.Data().Records("Customer") {
		if strings.Contains(strings.ToLower(r.String("CustomerName")), "foods") {
			want = append(want, r.String("CustomerID"))
		}
	}
	if len(want) == 0 {
		t.Fatal("no customer name contains foods: the case proves nothing")
	}
	for _, filter := range []string{
		"substringof('foods', CustomerName) eq true",
		"substringof('foods',CustomerName)  eq  true",
		"(substringof('foods', CustomerName) eq true) and CustomerID ne 'none'",
		"true eq substringof('foods', CustomerName)",
	} {
		out := h.mustRun(kindFull, "acumatica_list_entities", map[string]any{
			"entity": "Customer", "filterExpression": filter, "top": 1000, "select": []string{"CustomerID", "CustomerName"}})
		var got []string
		for _, r := range out["results"].([]any) {
			got = append(got, r.(map[string]any)["CustomerID"].(string))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", filter, got, want)
		}
	}
	// A string literal that reads like the comparison is left alone.
	out := h.mustRun(kindFull, "acumatica_list_entities", map[string]any{
		"entity": "Customer", "filterExpression": "CustomerName eq 'substringof(x) eq true'", "top": 5})
	if n := len(out["results"].([]any)); n != 0 {
		t.Errorf("literal: %d rows", n)
	}
}

// Acumatica does not support a $filter on the fields of detail lines: its
// results are unpredictable (api-facts.md §1.2, Acumatica's "$filter"
// page). A filter through a collection (Details/InventoryID) would list
// some orders holding the item and leave out others, and the model would
// take the answer as complete; it is refused before anything is sent. A
// path through a linked entity (MainContact/Email) is supported and still
// goes through.
func TestListEntitiesRefusesFilterOnDetailLines(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	// An item some orders hold on a line other than the first.
	holding := map[string]int{}
	firstLine := map[string]int{}
	for _, r := range h.sim.Data().Records("SalesOrder") {
		seen := map[string]bool{}
		for i, l := range r.Detail("Details") {
			id := l.String("InventoryID")
			if i == 0 {
				firstLine[id]++
			}
			if !seen[id] {
				holding[id]++
				seen[id] = true
			}
		}
	}
	item := ""
	for id, n := range holding {
		if n > firstLine[id] && (item == "" || id < item) {
			item = id
		}
	}
	if item == "" {
		t.Fatal("no item on a later line of an order in the data")
	}
	out, err := h.run(kindFull, "acumatica_list_entities", map[string]any{
		"entity": "SalesOrder", "filterExpression": "Details/InventoryID eq '" + item + "'", "top": 1000})
	if err == nil {
		t.Fatalf("a filter on detail lines listed %d orders (truncated %v) as if complete; %d orders hold %s",
			len(out["results"].([]any)), out["truncated"], holding[item], item)
	}
	te := wantCode(t, err, toolerr.InvalidArgument, "filter on Details/InventoryID")
	for _, want := range []string{"Details/InventoryID", "detail lines", "not sent"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("message lacks %q: %s", want, te.Message)
		}
	}

	// Through a linked entity to its lines: the same.
	_, err = h.run(kindFull, "acumatica_list_entities", map[string]any{
		"entity": "Customer", "filterExpression": "MainContact/Activities/Summary eq 'Call'"})
	if te := wantCode(t, err, toolerr.InvalidArgument, "filter on MainContact/Activities/Summary"); !strings.Contains(te.Message, "MainContact/Activities") {
		t.Errorf("message = %s", te.Message)
	}

	c := h.sim.Data().Records("Customer")[0]
	email := c.Link("MainContact").String("Email")
	out = h.mustRun(kindFull, "acumatica_list_entities", map[string]any{
		"entity": "Customer", "filterExpression": "MainContact/Email eq '" + email + "'", "select": []string{"CustomerID"}})
	rows := out["results"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["CustomerID"] != c.String("CustomerID") {
		t.Fatalf("filter on MainContact/Email = %v, want %s", rows, c.String("CustomerID"))
	}
}
