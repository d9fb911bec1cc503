package frappe

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Frappe v15's own 417 body (frappe/desk/reportview.py raise_invalid_field)
// names the refused field; erpgate reads it and keeps a plain message.
func TestRefusedFieldIsReadFromFrappesBody(t *testing.T) {
	body, err := os.ReadFile("testdata/error_417_field_not_permitted.json")
	if err != nil {
		t.Fatal(err)
	}
	e := upstreamError(http.StatusExpectationFailed, http.Header{}, body)
	if e.Code != toolerr.InvalidArgument {
		t.Fatalf("code %s", e.Code)
	}
	col, ok := refusedColumn(e)
	if !ok || col != "foo" {
		t.Fatalf("refused column %q %v, want foo", col, ok)
	}
	if contains(e.Message, "Traceback") || !contains(e.Message, "Field not permitted in query: foo") {
		t.Fatalf("message %q", e.Message)
	}
	// Another DataError is not a refused field.
	other := []byte(`{"exc_type":"DataError","exception":"frappe.exceptions.DataError: Use of sub-query or function is restricted"}`)
	if _, ok := refusedColumn(upstreamError(http.StatusExpectationFailed, http.Header{}, other)); ok {
		t.Fatal("a sub-query refusal read as a refused field")
	}
}

func TestFieldRef(t *testing.T) {
	for _, tc := range []struct{ expr, column, key string }{
		{"name", "name", "name"},
		{"count(name) as row_count", "name", "row_count"},
		{"sum(base_net_total) as net", "base_net_total", "net"},
		{"`tabSales Invoice Item`.item_code", "item_code", "item_code"},
		{"max(`tabSales Invoice Item`.item_name) as label", "item_name", "label"},
		{"count(distinct `tabSales Invoice`.name) as invoices", "name", "invoices"},
		{"SUM(grand_total) AS total", "grand_total", "total"},
	} {
		col, key := fieldRef(tc.expr)
		if col != tc.column || key != tc.key {
			t.Errorf("fieldRef(%q) = %q, %q; want %q, %q", tc.expr, col, key, tc.column, tc.key)
		}
	}
	fields := []string{"name", "sum(base_net_total) as net", "base_net_total", "grand_total"}
	out, ok := withoutColumn(fields, "base_net_total")
	if !ok || !slices.Equal(out, []string{"name", "grand_total"}) {
		t.Fatalf("withoutColumn: %v %v", out, ok)
	}
	if _, ok := withoutColumn(fields, "status"); ok {
		t.Fatal("withoutColumn found a column that is not selected")
	}
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func FuzzFieldRef(f *testing.F) {
	f.Add("base_net_total", "net", "Sales Invoice Item")
	f.Add("name", "n", "X")
	f.Add("", "", "")
	f.Add("a(b", ") as", "`")
	f.Fuzz(func(t *testing.T, column, alias, table string) {
		// Any text: no panic, and leaving out a field's own column removes it.
		for _, expr := range []string{column, alias, table, column + " as " + alias} {
			col, _ := fieldRef(expr)
			if out, ok := withoutColumn([]string{expr}, col); !ok || len(out) != 0 {
				t.Fatalf("withoutColumn(%q, %q) kept it", expr, col)
			}
		}
		if !identifier.MatchString(column) || !identifier.MatchString(alias) || !identifier.MatchString(table) {
			return
		}
		for expr, key := range map[string]string{
			column:                            column,
			"sum(" + column + ") as " + alias: alias,
			"`tab" + table + "`." + column:    column,
			"count(distinct `tab" + table + "`." + column + ") as " + alias: alias,
		} {
			if c, k := fieldRef(expr); c != column || k != key {
				t.Fatalf("fieldRef(%q) = %q, %q; want %q, %q", expr, c, k, column, key)
			}
		}
	})
}

func FuzzRefusedFieldIn(f *testing.F) {
	f.Add("DataError", "frappe.exceptions.DataError: Field not permitted in query: foo", "Field not permitted in query: foo")
	f.Add("DataError", "", "Field not permitted in query: ")
	f.Add("ValidationError", "", "Field not permitted in query: x")
	f.Fuzz(func(t *testing.T, excType, exception, message string) {
		field, ok := refusedFieldIn(frappeError{ExcType: excType, Exception: exception}, message)
		if !ok {
			return
		}
		if excType != "DataError" || field == "" || contains(field, ";") {
			t.Fatalf("refused field %q from %q / %q / %q", field, excType, exception, message)
		}
		err := toolerr.Wrap(toolerr.InvalidArgument, &refusedField{field: field}, "refused")
		if _, ok := refusedColumn(err); !ok || !errors.As(err, new(*refusedField)) {
			t.Fatal("the refusal does not survive wrapping")
		}
	})
}

func TestRowKeysPresent(t *testing.T) {
	keys := []string{"name", "grand_total", "base_grand_total", "status"}
	for _, tc := range []struct {
		row  string
		want []bool
	}{
		{`{"name":"A","grand_total":1,"base_grand_total":null,"status":"Paid"}`, []bool{true, true, true, true}},
		{`{"name":"A","grand_total":1,"status":"Paid"}`, []bool{true, true, false, true}},
		{`{"status":"Paid","n\u0061me":"A"}`, []bool{true, false, false, true}},
		{`{}`, []bool{false, false, false, false}},
	} {
		if got := rawHas([]byte(tc.row), keys); !slices.Equal(got, tc.want) {
			t.Errorf("rawHas(%s) = %v, want %v", tc.row, got, tc.want)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(tc.row), &m); err != nil {
			t.Fatal(err)
		}
		if got := mapHas(m, keys); !slices.Equal(got, tc.want) {
			t.Errorf("mapHas(%s) = %v, want %v", tc.row, got, tc.want)
		}
	}
}
