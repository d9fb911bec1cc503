package frappe

import (
	"slices"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// A user who may not read the documents must hear so at once, not be asked
// to choose a customer first (issue 15, item 4).
func TestRefusedUserGetsNoPickList(t *testing.T) {
	const query = "acme widgets"
	// The trap is real: the name is ambiguous for a user who may read.
	out := mustCall(t, allCompanies, "list_sales_invoices", map[string]any{"customer_query": query})
	if m := out["party_match"].(map[string]any); m["status"] != matchAmbiguous {
		t.Fatalf("%q should be ambiguous for the accounts user, got %v", query, m["status"])
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"list_sales_invoices", map[string]any{"customer_query": query}},
		{"list_sales_invoices", map[string]any{"customer_query": query, "summary": "count"}},
		{"list_payments", map[string]any{"party_type": "Customer", "party_query": query}},
		{"get_sales_summary", map[string]any{"company": visibleCompany(t), "from_date": "2025-01-01", "to_date": "2025-03-31", "customer_query": query}},
		{"get_accounts_receivable", map[string]any{"company": visibleCompany(t), "report_date": "2025-06-30", "customer_query": query}},
		{"get_party_balance", map[string]any{"company": visibleCompany(t), "report_date": "2025-06-30", "party_type": "Customer", "party_query": query}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			out, err := call(t, noAccounting, tc.tool, tc.args)
			if err == nil {
				t.Fatalf("the sales user may not read these documents but got an answer: party_match %v", out["party_match"])
			}
			te := wantCode(t, err, toolerr.PermissionDenied)
			if contains(te.Message, "candidate") {
				t.Fatalf("message speaks of candidates: %q", te.Message)
			}
		})
	}
	// A sales user may read sales orders: the name is still resolved.
	out = mustCall(t, noAccounting, "list_sales_orders", map[string]any{"customer_query": query})
	if m := out["party_match"].(map[string]any); m["status"] != matchAmbiguous {
		t.Fatalf("sales orders: %q should be ambiguous, got %v", query, m["status"])
	}
}

// fieldLimited is the demo accounts user without the Accounts Manager role:
// the simulator hides Sales Invoice base_grand_total and base_net_total and
// Customer default_currency from them (permlevel 1).
const fieldLimited = "field-limited"

// unavailable returns the unavailable_fields of a meta or summary object.
func unavailable(t *testing.T, obj any) []string {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Fatalf("not an object: %v", obj)
	}
	var out []string
	list, _ := m["unavailable_fields"].([]any)
	for _, f := range list {
		out = append(out, f.(string))
	}
	return out
}

// A field hidden by field-level permissions is dropped by Frappe without an
// error. erpgate must say so, and never report a total over it as zero
// (issue 15, item 5).
func TestHiddenFieldsAreReportedUnavailable(t *testing.T) {
	company := visibleCompany(t)
	out := mustCall(t, fieldLimited, "list_sales_invoices", map[string]any{"company": company, "limit": 5})
	if got := unavailable(t, out["meta"]); !slices.Equal(got, []string{"base_grand_total"}) {
		t.Fatalf("meta.unavailable_fields %v, want [base_grand_total]", got)
	}
	rows := out["data"].([]any)
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	for _, r := range rows {
		if _, ok := r.(map[string]any)["grand_total"]; !ok {
			t.Fatalf("row lost a readable field: %v", r)
		}
	}

	out = mustCall(t, fieldLimited, "list_customers", map[string]any{"limit": 5})
	if got := unavailable(t, out["meta"]); !slices.Equal(got, []string{"default_currency"}) {
		t.Fatalf("list_customers meta.unavailable_fields %v, want [default_currency]", got)
	}
	// The accounts manager sees everything and no unavailable fields.
	out = mustCall(t, allCompanies, "list_customers", map[string]any{"limit": 5})
	if got := unavailable(t, out["meta"]); len(got) != 0 {
		t.Fatalf("accounts manager: unavailable_fields %v", got)
	}

	// Totals as the ERP sums them, and as erpgate sums them itself when
	// the search text has a % the ERP cannot match literally.
	juice := docsWhere(t, "Sales Invoice", func(d *frappetest.Doc) bool { return contains(d.Str("customer_name"), "100%") })
	if len(juice) == 0 {
		t.Fatal("no seeded invoice of a customer with % in its name")
	}
	for _, tc := range []struct{ company, currency, search string }{
		{company, "NZD", ""},
		{juice[0].Str("company"), juice[0].Str("currency"), "100%"},
	} {
		docs := docsWhere(t, "Sales Invoice", func(d *frappetest.Doc) bool {
			return d.Str("company") == tc.company && d.Str("currency") == tc.currency &&
				(tc.search == "" || contains(d.Name, tc.search) || contains(d.Str("customer_name"), tc.search))
		})
		if len(docs) == 0 {
			t.Fatalf("%v: no seeded invoices", tc)
		}
		args := map[string]any{"company": tc.company, "currency": tc.currency, "summary": "totals"}
		if tc.search != "" {
			args["search"] = tc.search
		}
		s := mustCall(t, fieldLimited, "list_sales_invoices", args)["summary"].(map[string]any)
		if got := mustInt(t, s["count"]); got != len(docs) {
			t.Fatalf("%v: count %d, want %d", tc, got, len(docs))
		}
		totals := s["totals"].(map[string]any)
		for _, f := range []string{"base_grand_total", "base_net_total"} {
			if v, ok := totals[f]; !ok || v != nil {
				t.Fatalf("%v: totals.%s = %v, want null (the user may not read it)", tc, f, v)
			}
		}
		for _, f := range []string{"grand_total", "net_total"} {
			if got, want := rat(t, totals[f]), sumDocs(docs, f); !ratEq(got, want) {
				t.Fatalf("%v: %s = %s, want %s", tc, f, got.FloatString(2), want.FloatString(2))
			}
		}
		if got := unavailable(t, s); !slices.Equal(got, []string{"base_grand_total", "base_net_total"}) {
			t.Fatalf("%v: summary.unavailable_fields %v", tc, got)
		}
		if !contains(s["note"].(string), "not zero") {
			t.Fatalf("note does not give the reason: %q", s["note"])
		}
	}

	from, to := "2025-01-01", "2025-12-31"
	docs := salesInRange(t, company, from, to)
	for _, groupBy := range []string{"customer", "month", "item"} {
		out = mustCall(t, fieldLimited, "get_sales_summary", map[string]any{"company": company, "from_date": from, "to_date": to, "group_by": groupBy})
		if got := mustInt(t, out["invoice_count"]); got != len(docs) {
			t.Fatalf("%s: invoice_count %d, want %d", groupBy, got, len(docs))
		}
		if v, ok := out["net_sales"]; !ok || v != nil {
			t.Fatalf("%s: net_sales %v, want null", groupBy, v)
		}
		if got := unavailable(t, out); !slices.Equal(got, []string{"base_net_total"}) {
			t.Fatalf("%s: unavailable_fields %v", groupBy, got)
		}
		if groupBy == "item" {
			// Lines are readable: item groups keep their amounts.
			for _, g := range out["groups"].([]any) {
				if g.(map[string]any)["net_sales"] == nil {
					t.Fatalf("item group without net_sales: %v", g)
				}
			}
			continue
		}
		for _, g := range out["groups"].([]any) {
			if v := g.(map[string]any)["net_sales"]; v != nil {
				t.Fatalf("%s: a group's net_sales %v, want null", groupBy, v)
			}
		}
	}
}

// An older or customised site lacks a field: Frappe refuses the query with
// 417 "Field not permitted in query". erpgate asks again without it and
// says so; a filter on such a field is refused, never dropped.
func TestMissingFieldsAreAskedAgainWithout(t *testing.T) {
	older := frappetest.NewServer(frappetest.Options{MissingFields: map[string][]string{
		"Sales Invoice": {"net_total", "is_return"},
		"Customer":      {"customer_type"},
	}})
	t.Cleanup(older.Close)
	inv := invocation{role: allCompanies, sim: older}
	company := visibleCompany(t)

	out, err := inv.call(t, "list_customers", map[string]any{"limit": 5, "order_by": "name"})
	if err != nil {
		t.Fatalf("list_customers on an older site: %v", err)
	}
	if got := unavailable(t, out["meta"]); !slices.Equal(got, []string{"customer_type"}) {
		t.Fatalf("unavailable_fields %v", got)
	}
	want := mustCall(t, allCompanies, "list_customers", map[string]any{"limit": 5, "order_by": "name"})["data"].([]any)
	got := out["data"].([]any)
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("%d customers, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].(map[string]any)["name"] != want[i].(map[string]any)["name"] {
			t.Fatalf("row %d: %v, want %v", i, got[i], want[i])
		}
	}

	before := older.RequestCount("/api/resource/Sales Invoice")
	out, err = inv.call(t, "list_sales_invoices", map[string]any{"company": company, "limit": 5})
	if err != nil {
		t.Fatalf("list_sales_invoices on an older site: %v", err)
	}
	if got := unavailable(t, out["meta"]); !slices.Equal(got, []string{"is_return", "net_total"}) {
		t.Fatalf("unavailable_fields %v", got)
	}
	// Frappe names one refused field at a time: one more request each.
	if n := older.RequestCount("/api/resource/Sales Invoice") - before; n != 3 {
		t.Fatalf("%d list requests for two missing fields, want 3", n)
	}

	docs := docsWhere(t, "Sales Invoice", func(d *frappetest.Doc) bool {
		return d.Str("company") == company && d.Str("currency") == "NZD"
	})
	out, err = inv.call(t, "list_sales_invoices", map[string]any{"company": company, "currency": "NZD", "summary": "totals"})
	if err != nil {
		t.Fatalf("totals on an older site: %v", err)
	}
	s := out["summary"].(map[string]any)
	totals := s["totals"].(map[string]any)
	if v, ok := totals["net_total"]; !ok || v != nil {
		t.Fatalf("net_total %v, want null", v)
	}
	if got, want := rat(t, totals["grand_total"]), sumDocs(docs, "grand_total"); !ratEq(got, want) {
		t.Fatalf("grand_total %s, want %s", got.FloatString(2), want.FloatString(2))
	}
	if got := mustInt(t, s["count"]); got != len(docs) {
		t.Fatalf("count %d, want %d", got, len(docs))
	}

	// A filter on the missing field would widen the list if dropped.
	_, err = inv.call(t, "list_sales_invoices", map[string]any{"company": company, "is_return": true})
	te := wantCode(t, err, toolerr.InvalidArgument)
	if !contains(te.Message, "is_return") {
		t.Fatalf("message %q does not name the field", te.Message)
	}
}
