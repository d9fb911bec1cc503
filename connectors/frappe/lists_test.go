package frappe

import (
	"math/big"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Expected values below are computed from the simulator's seeded documents
// (sim.Data()), never from a second copy of the tool's query.

func rowNames(rows []map[string]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r["name"].(string)
	}
	sort.Strings(out)
	return out
}

func docNames(docs []*frappetest.Doc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Name
	}
	sort.Strings(out)
	return out
}

func TestDirectoryListsWalkEverySeededRecord(t *testing.T) {
	enabled := func(d *frappetest.Doc) bool { return d.Int("disabled") == 0 }
	for _, tc := range []struct {
		tool, doctype string
		keep          func(*frappetest.Doc) bool
	}{
		{"list_companies", "Company", func(*frappetest.Doc) bool { return true }},
		{"list_customers", "Customer", enabled},
		{"list_suppliers", "Supplier", enabled},
		{"list_items", "Item", enabled},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			want := docsWhere(t, tc.doctype, tc.keep)
			if len(want) == 0 {
				t.Fatalf("the seeded data has no %s: the test would prove nothing", tc.doctype)
			}
			rows := walk(t, allCompanies, tc.tool, map[string]any{"limit": 7})
			if !slices.Equal(rowNames(rows), docNames(want)) {
				t.Fatalf("walked %d, want %d", len(rows), len(want))
			}
			count := mustCall(t, allCompanies, tc.tool, map[string]any{"summary": "count"})
			if got := mustInt(t, count["summary"].(map[string]any)["count"]); got != len(rows) {
				t.Fatalf("count %d, walk %d", got, len(rows))
			}
		})
	}
}

func TestCompanyScopedListsWalkEachCompany(t *testing.T) {
	for _, tc := range []struct{ tool, doctype, disabledField string }{
		{"list_warehouses", "Warehouse", "disabled"},
		{"list_accounts", "Account", "disabled"},
		{"list_cost_centres", "Cost Center", "disabled"},
		{"list_projects", "Project", ""},
	} {
		for _, company := range companyNames(t) {
			t.Run(tc.tool+"/"+company, func(t *testing.T) {
				want := docsWhere(t, tc.doctype, func(d *frappetest.Doc) bool {
					return d.Str("company") == company && (tc.disabledField == "" || d.Int(tc.disabledField) == 0)
				})
				if len(want) == 0 {
					t.Fatalf("the seeded data has no %s for %s: the test would prove nothing", tc.doctype, company)
				}
				rows := walk(t, allCompanies, tc.tool, map[string]any{"company": company, "limit": 9})
				if !slices.Equal(rowNames(rows), docNames(want)) {
					t.Fatalf("walked %v, want %v", rowNames(rows), docNames(want))
				}
			})
		}
	}
}

func TestCompanyScopedListsNeedACompanyTheUserMaySee(t *testing.T) {
	_, err := call(t, allCompanies, "list_accounts", nil)
	te := wantCode(t, err, toolerr.InvalidArgument)
	if !contains(te.Message, "add company") {
		t.Errorf("message %q does not say to add company", te.Message)
	}
	_, err = call(t, oneCompany, "list_warehouses", map[string]any{"company": otherCompany(t)})
	wantCode(t, err, toolerr.PermissionDenied)
	_, err = call(t, allCompanies, "list_warehouses", map[string]any{"company": "No Such Company Ltd"})
	wantCode(t, err, toolerr.NotFound)

	// The site's default company stands in for a missing argument.
	inv := invocation{role: allCompanies, settings: `{"default_company":"` + visibleCompany(t) + `"}`}
	out, err := inv.call(t, "list_warehouses", map[string]any{"summary": "count"})
	if err != nil {
		t.Fatal(err)
	}
	want := docsWhere(t, "Warehouse", func(d *frappetest.Doc) bool {
		return d.Str("company") == visibleCompany(t) && d.Int("disabled") == 0
	})
	if got := mustInt(t, out["summary"].(map[string]any)["count"]); got != len(want) {
		t.Errorf("default-company count %d, want %d", got, len(want))
	}
}

func TestOneCompanyUserSeesOnlyTheirCompany(t *testing.T) {
	rows := walk(t, oneCompany, "list_companies", nil)
	if names := rowNames(rows); !slices.Equal(names, []string{visibleCompany(t)}) {
		t.Fatalf("companies %v", names)
	}
	want := docsWhere(t, "Sales Invoice", func(d *frappetest.Doc) bool { return d.Str("company") == visibleCompany(t) })
	out := mustCall(t, oneCompany, "list_sales_invoices", map[string]any{"summary": "count"})
	if got := mustInt(t, out["summary"].(map[string]any)["count"]); got != len(want) {
		t.Fatalf("one-company count %d, want %d of their company", got, len(want))
	}
	_, err := call(t, oneCompany, "list_sales_invoices", map[string]any{"company": otherCompany(t), "currency": "USD", "summary": "totals"})
	wantCode(t, err, toolerr.PermissionDenied)
}

func TestNoAccountingUserIsDeniedNotEmpty(t *testing.T) {
	for _, tool := range []string{"list_sales_invoices", "list_payments", "list_bank_transactions", "list_purchase_invoices"} {
		_, err := call(t, noAccounting, tool, nil)
		wantCode(t, err, toolerr.PermissionDenied)
		_, err = call(t, noAccounting, tool, map[string]any{"summary": "count"})
		wantCode(t, err, toolerr.PermissionDenied)
	}
	_, err := call(t, noAccounting, "list_accounts", map[string]any{"company": visibleCompany(t)})
	wantCode(t, err, toolerr.PermissionDenied)
	// Selling documents stay readable for a sales user.
	want := len(testSim(t).Data().List("Sales Order"))
	out := mustCall(t, noAccounting, "list_sales_orders", map[string]any{"summary": "count"})
	if got := mustInt(t, out["summary"].(map[string]any)["count"]); got != want {
		t.Fatalf("sales orders %d, want %d", got, want)
	}
}

func TestSalesInvoiceWalkMatchesCountAndSeed(t *testing.T) {
	company := visibleCompany(t)
	args := map[string]any{"company": company, "docstatus": 1, "limit": 37}
	rows := walk(t, allCompanies, "list_sales_invoices", args)
	want := docsWhere(t, "Sales Invoice", func(d *frappetest.Doc) bool {
		return d.Str("company") == company && d.Int("docstatus") == 1
	})
	if !slices.Equal(rowNames(rows), docNames(want)) {
		t.Fatalf("walked %d invoices, want %d", len(rows), len(want))
	}
	count := mustCall(t, allCompanies, "list_sales_invoices", map[string]any{"company": company, "docstatus": 1, "summary": "count"})
	if got := mustInt(t, count["summary"].(map[string]any)["count"]); got != len(rows) {
		t.Fatalf("count %d, walk %d", got, len(rows))
	}
	// Default order: newest posting date first, name as tie-breaker.
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if a["posting_date"].(string) < b["posting_date"].(string) ||
			a["posting_date"] == b["posting_date"] && a["name"].(string) < b["name"].(string) {
			t.Fatalf("rows %d and %d out of order", i-1, i)
		}
	}
}

func TestInvoiceTotalsEqualPerInvoiceSums(t *testing.T) {
	for _, company := range companyNames(t) {
		for _, currency := range []string{"NZD", "AUD", "USD"} {
			docs := docsWhere(t, "Sales Invoice", func(d *frappetest.Doc) bool {
				return d.Str("company") == company && d.Str("currency") == currency && d.Int("docstatus") == 1
			})
			if len(docs) == 0 {
				continue
			}
			out := mustCall(t, allCompanies, "list_sales_invoices", map[string]any{"company": company, "currency": currency, "docstatus": 1, "summary": "totals"})
			s := out["summary"].(map[string]any)
			if got := mustInt(t, s["count"]); got != len(docs) {
				t.Errorf("%s %s: count %d, want %d", company, currency, got, len(docs))
			}
			totals := s["totals"].(map[string]any)
			for _, f := range []string{"grand_total", "net_total", "base_grand_total", "base_net_total"} {
				if got, want := rat(t, totals[f]), sumDocs(docs, f); !ratEq(got, want) {
					t.Errorf("%s %s %s = %s, want %s", company, currency, f, got.FloatString(2), want.FloatString(2))
				}
			}
			if s["currencies"].(map[string]any)["grand_total"] != currency {
				t.Errorf("grand_total currency %v", s["currencies"])
			}
			// Outstanding is split by the receivable account's currency.
			byCur := map[string]*big.Rat{}
			for _, d := range docs {
				c := d.Str("party_account_currency")
				if byCur[c] == nil {
					byCur[c] = new(big.Rat)
				}
				byCur[c].Add(byCur[c], d.Dec("outstanding_amount").Rat())
			}
			breakdown, _ := s["breakdown"].([]any)
			if len(breakdown) != len(byCur) {
				t.Fatalf("%s %s: breakdown %v, want %d currencies", company, currency, breakdown, len(byCur))
			}
			for _, b := range breakdown {
				e := b.(map[string]any)
				c := e["party_account_currency"].(string)
				if got := rat(t, e["outstanding_amount"]); !ratEq(got, byCur[c]) {
					t.Errorf("%s %s outstanding in %s = %s, want %s", company, currency, c, got.FloatString(2), byCur[c].FloatString(2))
				}
			}
		}
	}
}

func TestTotalsNeedTheirCurrencyRule(t *testing.T) {
	company := visibleCompany(t)
	for _, tc := range []struct {
		tool    string
		args    map[string]any
		missing string
	}{
		{"list_sales_invoices", map[string]any{"summary": "totals"}, "company and currency"},
		{"list_sales_invoices", map[string]any{"company": company, "summary": "totals"}, "currency"},
		{"list_sales_orders", map[string]any{"currency": "NZD", "summary": "totals"}, "company"},
		{"list_purchase_invoices", map[string]any{"company": company, "summary": "totals"}, "currency"},
		{"list_payments", map[string]any{"summary": "totals"}, "company"},
		{"list_bank_transactions", map[string]any{"company": company, "summary": "totals"}, "currency"},
	} {
		_, err := call(t, allCompanies, tc.tool, tc.args)
		te := wantCode(t, err, toolerr.InvalidArgument)
		if !contains(te.Message, "add "+tc.missing) {
			t.Errorf("%s %v: %q does not say to add %s", tc.tool, tc.args, te.Message, tc.missing)
		}
	}
}

func TestRankingNeedsComparableAmounts(t *testing.T) {
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"order_by": "grand_total"}, "currency"},
		{map[string]any{"order_by": "base_grand_total"}, "company"},
		{map[string]any{"order_by": "outstanding_amount", "currency": "USD"}, "party_account_currency"},
	} {
		_, err := call(t, allCompanies, "list_sales_invoices", tc.args)
		te := wantCode(t, err, toolerr.InvalidArgument)
		if !contains(te.Message, tc.want) {
			t.Errorf("%v: %q does not name %s", tc.args, te.Message, tc.want)
		}
	}
	out := mustCall(t, allCompanies, "list_sales_invoices", map[string]any{"order_by": "outstanding_amount", "party_account_currency": "USD", "unpaid_only": true, "limit": 5})
	rk := out["ranking"].(map[string]any)
	if rk["field"] != "outstanding_amount" || rk["currency"] != "USD" || rk["currency_source"] != "party_account_currency" {
		t.Errorf("ranking %v", rk)
	}
	data := out["data"].([]any)
	for i := 1; i < len(data); i++ {
		if compareDecimal(data[i-1].(map[string]any)["outstanding_amount"], data[i].(map[string]any)["outstanding_amount"]) < 0 {
			t.Fatalf("not ranked by outstanding_amount desc")
		}
	}
}

func TestUnpaidAndOverdueFilters(t *testing.T) {
	company := visibleCompany(t)
	unpaid := walk(t, allCompanies, "list_sales_invoices", map[string]any{"company": company, "unpaid_only": true, "limit": 50})
	want := docsWhere(t, "Sales Invoice", func(d *frappetest.Doc) bool {
		return d.Str("company") == company && d.Int("docstatus") == 1 && d.Dec("outstanding_amount") > 0
	})
	if len(want) == 0 {
		t.Fatal("seed has no unpaid invoices")
	}
	if !slices.Equal(rowNames(unpaid), docNames(want)) {
		t.Fatalf("unpaid_only: %d, want %d", len(unpaid), len(want))
	}
	asOf := "2026-03-01"
	overdue := walk(t, allCompanies, "list_sales_invoices", map[string]any{"company": company, "overdue_as_of": asOf, "limit": 50})
	wantOverdue := docsWhere(t, "Sales Invoice", func(d *frappetest.Doc) bool {
		return d.Str("company") == company && d.Int("docstatus") == 1 && d.Dec("outstanding_amount") > 0 && d.Str("due_date") < asOf
	})
	if !slices.Equal(rowNames(overdue), docNames(wantOverdue)) {
		t.Fatalf("overdue_as_of: %d, want %d", len(overdue), len(wantOverdue))
	}
	for _, args := range []map[string]any{
		{"unpaid_only": true, "status": "Unpaid"},
		{"overdue_as_of": asOf, "status": "Overdue"},
		{"unpaid_only": true, "docstatus": 0},
	} {
		_, err := call(t, allCompanies, "list_sales_invoices", args)
		wantCode(t, err, toolerr.InvalidArgument)
	}
}

func TestSpokenCustomerNames(t *testing.T) {
	for _, tc := range []struct {
		query, status, id string
		candidates        []string
	}{
		{query: "Aroha Cafe", status: matchMatched, id: "Aroha Café Limited"},
		{query: "o brien and sons", status: matchMatched, id: "O'Brien & Sons Ltd"},
		{query: "ACME WIDGETS INC", status: matchMatched, id: "Acme Widgets Inc"},
		{query: "acme widgets", status: matchAmbiguous, candidates: []string{"Acme Widgets Inc", "Acme Widgets LLC"}},
		{query: "Southern Cross Plumbing", status: matchAmbiguous, candidates: []string{"Southern Cross Plumbing Ltd", "Southern Cross Plumbing Pty Ltd"}},
		{query: "kauri timber", status: matchAmbiguous, candidates: []string{"Kauri Timber Supplies Ltd"}},
		{query: "Zebra Holdings", status: matchNotFound},
	} {
		t.Run(tc.query, func(t *testing.T) {
			out := mustCall(t, allCompanies, "list_sales_invoices", map[string]any{"customer_query": tc.query, "limit": 3})
			m := out["party_match"].(map[string]any)
			if m["status"] != tc.status {
				t.Fatalf("status %v (%v), want %s", m["status"], m["message"], tc.status)
			}
			switch tc.status {
			case matchMatched:
				if m["id"] != tc.id {
					t.Fatalf("matched %v, want %s", m["id"], tc.id)
				}
				for _, r := range out["data"].([]any) {
					if r.(map[string]any)["customer"] != tc.id {
						t.Fatalf("row of another customer: %v", r)
					}
				}
			default:
				if _, read := out["data"]; read {
					t.Fatalf("an unconfirmed name must not read documents")
				}
				var got []string
				for _, c := range m["candidates"].([]any) {
					got = append(got, c.(map[string]any)["id"].(string))
				}
				sort.Strings(got)
				if tc.candidates != nil && !slices.Equal(got, tc.candidates) {
					t.Fatalf("candidates %v, want %v", got, tc.candidates)
				}
			}
		})
	}
	_, err := call(t, allCompanies, "list_sales_invoices", map[string]any{"customer": "Acme Widgets Inc", "customer_query": "acme"})
	wantCode(t, err, toolerr.InvalidArgument)
}

func TestDateForms(t *testing.T) {
	company := visibleCompany(t)
	out := mustCall(t, allCompanies, "list_sales_invoices", map[string]any{"company": company, "period": "last_month", "as_of_date": "2025-03-15", "summary": "count"})
	dr := out["date_range"].(map[string]any)
	if dr["from_date"] != "2025-02-01" || dr["to_date"] != "2025-02-28" {
		t.Fatalf("last_month = %v", dr)
	}
	want := docsWhere(t, "Sales Invoice", func(d *frappetest.Doc) bool {
		return d.Str("company") == company && d.Str("posting_date") >= "2025-02-01" && d.Str("posting_date") <= "2025-02-28"
	})
	if got := mustInt(t, out["summary"].(map[string]any)["count"]); got != len(want) {
		t.Fatalf("count %d, want %d", got, len(want))
	}
	out = mustCall(t, allCompanies, "list_sales_invoices", map[string]any{"company": company, "period": "current_fiscal_year", "as_of_date": "2025-07-04", "summary": "count"})
	dr = out["date_range"].(map[string]any)
	if dr["from_date"] != "2025-01-01" || dr["to_date"] != "2025-12-31" || dr["fiscal_year"] != "2025" {
		t.Fatalf("current_fiscal_year = %v", dr)
	}
	out = mustCall(t, allCompanies, "list_sales_invoices", map[string]any{"period": "last_90_days", "as_of_date": "2025-03-31", "summary": "count"})
	if dr := out["date_range"].(map[string]any); dr["from_date"] != "2025-01-01" {
		t.Fatalf("last_90_days = %v", dr)
	}
	for _, args := range []map[string]any{
		{"period": "last_month"},
		{"period": "last_month", "as_of_date": "2025-03-15", "from_date": "2025-01-01"},
		{"as_of_date": "2025-03-15"},
		{"from_date": "2025-03-01"},
		{"from_date": "2025-03-01", "to_date": "2025-02-01"},
		{"period": "current_fiscal_year", "as_of_date": "2025-03-15"},
		{"from_date": "2025-02-30", "to_date": "2025-03-01"},
		// Periods that would start in the year 0, which is no date the
		// ERP (Python's dates start at year 1) can hold.
		{"period": "last_month", "as_of_date": "0001-01-15"},
		{"period": "last_90_days", "as_of_date": "0001-02-15"},
	} {
		_, err := call(t, allCompanies, "list_sales_invoices", args)
		wantCode(t, err, toolerr.InvalidArgument)
	}
}

func TestLiteralSearchWithWildcards(t *testing.T) {
	// "100%" must not match "100" followed by anything, and "_" is a
	// character, not "any character".
	rows := walk(t, allCompanies, "list_customers", map[string]any{"search": "100%"})
	if names := rowNames(rows); !slices.Equal(names, []string{"100% Pure Juice Co Pty Ltd"}) {
		t.Fatalf("search 100%%: %v", names)
	}
	out := mustCall(t, allCompanies, "list_customers", map[string]any{"search": "r_s", "summary": "count"})
	want := docsWhere(t, "Customer", func(d *frappetest.Doc) bool {
		return d.Int("disabled") == 0 && (contains(d.Name, "r_s") || contains(d.Str("customer_name"), "r_s"))
	})
	if got := mustInt(t, out["summary"].(map[string]any)["count"]); got != len(want) {
		t.Fatalf("count r_s %d, want %d", got, len(want))
	}
}

func TestPurchaseAndMoneyListsMatchSeed(t *testing.T) {
	company := visibleCompany(t)
	for _, tc := range []struct {
		tool, doctype string
		args          map[string]any
		keep          func(*frappetest.Doc) bool
	}{
		{"list_purchase_invoices", "Purchase Invoice", map[string]any{"company": company, "docstatus": 1},
			func(d *frappetest.Doc) bool { return d.Str("company") == company && d.Int("docstatus") == 1 }},
		{"list_purchase_orders", "Purchase Order", map[string]any{"company": company},
			func(d *frappetest.Doc) bool { return d.Str("company") == company }},
		{"list_purchase_orders", "Purchase Order", map[string]any{"company": company, "pending_receipt": true},
			func(d *frappetest.Doc) bool {
				return d.Str("company") == company && d.Int("docstatus") == 1 && d.Dec("per_received") < frappetest.Units(100) &&
					!slices.Contains([]string{"Closed", "On Hold", "Completed", "Delivered", "Cancelled"}, d.Str("status"))
			}},
		{"list_payments", "Payment Entry", map[string]any{"company": company, "payment_type": "Receive"},
			func(d *frappetest.Doc) bool { return d.Str("company") == company && d.Str("payment_type") == "Receive" }},
		{"list_bank_transactions", "Bank Transaction", map[string]any{"company": company},
			func(d *frappetest.Doc) bool { return d.Str("company") == company }},
		{"list_sales_orders", "Sales Order", map[string]any{"company": company, "status": "To Deliver and Bill"},
			func(d *frappetest.Doc) bool {
				return d.Str("company") == company && d.Str("status") == "To Deliver and Bill"
			}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			want := docsWhere(t, tc.doctype, tc.keep)
			if len(want) == 0 {
				t.Fatalf("the seeded data has no matching %s: the test would prove nothing", tc.doctype)
			}
			args := map[string]any{"limit": 40}
			for k, v := range tc.args {
				args[k] = v
			}
			rows := walk(t, allCompanies, tc.tool, args)
			if !slices.Equal(rowNames(rows), docNames(want)) {
				t.Fatalf("walked %d, want %d", len(rows), len(want))
			}
			delete(args, "limit")
			args["summary"] = "count"
			out := mustCall(t, allCompanies, tc.tool, args)
			if got := mustInt(t, out["summary"].(map[string]any)["count"]); got != len(want) {
				t.Fatalf("count %d, want %d", got, len(want))
			}
		})
	}
}

func TestPaymentAndBankTotalsEqualSeed(t *testing.T) {
	for _, company := range companyNames(t) {
		payments := docsWhere(t, "Payment Entry", func(d *frappetest.Doc) bool {
			return d.Str("company") == company && d.Int("docstatus") == 1 && d.Str("payment_type") == "Receive"
		})
		out := mustCall(t, allCompanies, "list_payments", map[string]any{"company": company, "docstatus": 1, "payment_type": "Receive", "summary": "totals"})
		s := out["summary"].(map[string]any)
		if got := mustInt(t, s["count"]); got != len(payments) {
			t.Errorf("%s payments count %d, want %d", company, got, len(payments))
		}
		if got, want := rat(t, s["totals"].(map[string]any)["base_received_amount"]), sumDocs(payments, "base_received_amount"); !ratEq(got, want) {
			t.Errorf("%s base_received_amount %s, want %s", company, got.FloatString(2), want.FloatString(2))
		}
		currencies := map[string]bool{}
		for _, d := range docsWhere(t, "Bank Transaction", func(d *frappetest.Doc) bool { return d.Str("company") == company }) {
			if d.Get("currency") != nil { // lines imported without one are not totalled by currency
				currencies[d.Str("currency")] = true
			}
		}
		for cur := range currencies {
			txns := docsWhere(t, "Bank Transaction", func(d *frappetest.Doc) bool {
				return d.Str("company") == company && d.Str("currency") == cur && d.Int("docstatus") == 1
			})
			out := mustCall(t, allCompanies, "list_bank_transactions", map[string]any{"company": company, "currency": cur, "docstatus": 1, "summary": "totals"})
			totals := out["summary"].(map[string]any)["totals"].(map[string]any)
			for _, f := range []string{"deposit", "withdrawal", "unallocated_amount"} {
				if got, want := rat(t, totals[f]), sumDocs(txns, f); !ratEq(got, want) {
					t.Errorf("%s %s %s = %s, want %s", company, cur, f, got.FloatString(2), want.FloatString(2))
				}
			}
		}
	}
}

func TestSpokenSupplierAndPartyNames(t *testing.T) {
	sup := docsWhere(t, "Supplier", func(d *frappetest.Doc) bool { return d.Int("disabled") == 0 })
	if len(sup) == 0 {
		t.Fatal("the seed has no enabled supplier")
	}
	name := sup[0].Str("supplier_name")
	out := mustCall(t, allCompanies, "list_purchase_invoices", map[string]any{"supplier_query": strings.ToLower(name), "summary": "count"})
	m := out["party_match"].(map[string]any)
	if m["status"] != matchMatched || m["id"] != sup[0].Name {
		t.Fatalf("supplier_query %q: %v", name, m)
	}
	want := docsWhere(t, "Purchase Invoice", func(d *frappetest.Doc) bool { return d.Str("supplier") == sup[0].Name })
	if got := mustInt(t, out["summary"].(map[string]any)["count"]); got != len(want) {
		t.Fatalf("count %d, want %d", got, len(want))
	}
	_, err := call(t, allCompanies, "list_payments", map[string]any{"party_query": "acme"})
	wantCode(t, err, toolerr.InvalidArgument)
	out = mustCall(t, allCompanies, "list_payments", map[string]any{"party_type": "Customer", "party_query": "Aroha Cafe", "summary": "count"})
	if out["party_match"].(map[string]any)["status"] != matchMatched {
		t.Fatalf("party_query: %v", out["party_match"])
	}
	wantPE := docsWhere(t, "Payment Entry", func(d *frappetest.Doc) bool { return d.Str("party") == "Aroha Café Limited" })
	if got := mustInt(t, out["summary"].(map[string]any)["count"]); got != len(wantPE) {
		t.Fatalf("payments count %d, want %d", got, len(wantPE))
	}
}

func TestFiscalYearsList(t *testing.T) {
	rows := walk(t, allCompanies, "list_fiscal_years", nil)
	want := docsWhere(t, "Fiscal Year", func(d *frappetest.Doc) bool { return d.Int("disabled") == 0 })
	if !slices.Equal(rowNames(rows), docNames(want)) {
		t.Fatalf("fiscal years %v, want %v", rowNames(rows), docNames(want))
	}
	for _, r := range rows {
		if len(r["companies"].([]any)) == 0 {
			t.Fatalf("%v lists no companies", r)
		}
	}
	rows = walk(t, oneCompany, "list_fiscal_years", map[string]any{"company": visibleCompany(t)})
	if len(rows) != len(want) {
		t.Fatalf("one-company fiscal years %d, want %d", len(rows), len(want))
	}
}

func TestEmptyPageStillCarriesData(t *testing.T) {
	out := mustCall(t, allCompanies, "list_sales_invoices", map[string]any{"search": "no invoice has this text"})
	data, ok := out["data"].([]any)
	if !ok || len(data) != 0 || out["meta"].(map[string]any)["complete"] != true {
		t.Fatalf("empty page: %v", out)
	}
}

func TestUnknownExactPartyIsNotFoundNotEmpty(t *testing.T) {
	_, err := call(t, allCompanies, "list_sales_invoices", map[string]any{"customer": "Acme Widgets"})
	te := wantCode(t, err, toolerr.NotFound)
	if !contains(te.Message, "customer_query") {
		t.Errorf("message %q does not point to customer_query", te.Message)
	}
	_, err = call(t, allCompanies, "list_payments", map[string]any{"party_type": "Supplier", "party": "Nobody Pty Ltd"})
	wantCode(t, err, toolerr.NotFound)
	_, err = call(t, allCompanies, "list_payments", map[string]any{"party_type": "Customer", "party": "Acme Widgets Inc", "party_query": "acme"})
	wantCode(t, err, toolerr.InvalidArgument)
	// An exact id is accepted in any case, as the ERP compares names.
	out := mustCall(t, allCompanies, "list_sales_invoices", map[string]any{"customer": "acme widgets inc", "summary": "count"})
	want := docsWhere(t, "Sales Invoice", func(d *frappetest.Doc) bool { return d.Str("customer") == "Acme Widgets Inc" })
	if got := mustInt(t, out["summary"].(map[string]any)["count"]); got != len(want) {
		t.Fatalf("count %d, want %d", got, len(want))
	}
}

// TestDirectoryFilterArguments: a directory tool's own filter arguments
// (taken out of the arguments before the rest is decoded) narrow the list
// as the seeded records say.
func TestDirectoryFilterArguments(t *testing.T) {
	for _, company := range companyNames(t) {
		for _, tc := range []struct {
			args map[string]any
			keep func(*frappetest.Doc) bool
		}{
			{map[string]any{"root_type": "Asset", "is_group": false}, func(d *frappetest.Doc) bool {
				return d.Str("root_type") == "Asset" && d.Int("is_group") == 0
			}},
			{map[string]any{"is_group": true}, func(d *frappetest.Doc) bool { return d.Int("is_group") == 1 }},
			{map[string]any{"account_type": "Bank"}, func(d *frappetest.Doc) bool { return d.Str("account_type") == "Bank" }},
		} {
			want := docsWhere(t, "Account", func(d *frappetest.Doc) bool {
				return d.Str("company") == company && d.Int("disabled") == 0 && tc.keep(d)
			})
			if len(want) == 0 {
				t.Fatalf("%s: the seeded data has no account for %v: the test would prove nothing", company, tc.args)
			}
			args := map[string]any{"company": company, "limit": 7}
			for k, v := range tc.args {
				args[k] = v
			}
			rows := walk(t, allCompanies, "list_accounts", args)
			if !slices.Equal(rowNames(rows), docNames(want)) {
				t.Errorf("%s %v: walked %v, want %v", company, tc.args, rowNames(rows), docNames(want))
			}
		}
	}
}

// TestEmptySearchIsNoSearch: an empty search string, which voice agents
// send for "no search", lists what no search lists, as NexWave MCP's
// directory and transaction lists did, rather than being refused.
func TestEmptySearchIsNoSearch(t *testing.T) {
	for _, tool := range []string{"list_customers", "list_items", "list_sales_invoices", "list_payments"} {
		t.Run(tool, func(t *testing.T) {
			want := mustCall(t, allCompanies, tool, map[string]any{"summary": "count"})
			got := mustCall(t, allCompanies, tool, map[string]any{"search": "", "summary": "count"})
			w := mustInt(t, want["summary"].(map[string]any)["count"])
			if w == 0 {
				t.Fatal("nothing seeded: the test would prove nothing")
			}
			if g := mustInt(t, got["summary"].(map[string]any)["count"]); g != w {
				t.Fatalf("count with empty search %d, without %d", g, w)
			}
		})
	}
}

// TestDirectorySearchFallsBackToSpokenName: list_customers and
// list_suppliers searched with a name as a person says it ("o brien and
// sons", "acme widgets ltd") that no id or name contains literally do not
// answer with an empty page alone: as in NexWave MCP's directory tools, the
// name is compared once more after normalising (case, accents,
// punctuation, legal suffixes) and party_match gives the one match (its
// record is the page) or the candidates to confirm, among the records the
// explicit filters admit. Later pages keep the plain literal search.
func TestDirectorySearchFallsBackToSpokenName(t *testing.T) {
	for _, tc := range []struct {
		query, status string
		candidates    []string
	}{
		{query: "o brien and sons", status: matchMatched, candidates: []string{"O'Brien & Sons Ltd"}},
		{query: "acme widgets ltd", status: matchAmbiguous, candidates: []string{"Acme Widgets Inc", "Acme Widgets LLC"}},
		{query: "Zebra Holdings", status: matchNotFound},
	} {
		t.Run(tc.query, func(t *testing.T) {
			out := mustCall(t, allCompanies, "list_customers", map[string]any{"search": tc.query})
			m, ok := out["party_match"].(map[string]any)
			if !ok {
				t.Fatalf("no party_match in %v", out)
			}
			if m["status"] != tc.status {
				t.Fatalf("status %v (%v), want %s", m["status"], m["message"], tc.status)
			}
			var got []string
			for _, c := range m["candidates"].([]any) {
				got = append(got, c.(map[string]any)["id"].(string))
			}
			sort.Strings(got)
			if tc.candidates != nil && !slices.Equal(got, tc.candidates) {
				t.Fatalf("candidates %v, want %v", got, tc.candidates)
			}
			var page []map[string]any
			for _, r := range out["data"].([]any) {
				page = append(page, r.(map[string]any))
			}
			rows := rowNames(page)
			if tc.status == matchMatched {
				if !slices.Equal(rows, tc.candidates) {
					t.Fatalf("page %v, want the matched record %v", rows, tc.candidates)
				}
			} else if len(rows) != 0 {
				t.Fatalf("an unconfirmed name listed %v", rows)
			}
			if strings.Contains(m["message"].(string), "customer set to") {
				t.Errorf("message points at an argument list_customers lacks: %v", m["message"])
			}
		})
	}
	// A literal hit is answered as before, without party_match.
	out := mustCall(t, allCompanies, "list_customers", map[string]any{"search": "O'Brien"})
	if _, ok := out["party_match"]; ok || len(out["data"].([]any)) == 0 {
		t.Fatalf("literal search: %v", out)
	}
	// A later page keeps the literal search alone.
	out = mustCall(t, allCompanies, "list_customers", map[string]any{"search": "o brien and sons", "offset": 20})
	if _, ok := out["party_match"]; ok {
		t.Errorf("offset 20: party_match %v", out["party_match"])
	}
	// An explicit filter is kept: the name is compared among the records
	// it admits (O'Brien & Sons Ltd is in territory New Zealand).
	for territory, want := range map[string]string{"New Zealand": matchMatched, "All Territories": matchNotFound} {
		out := mustCall(t, allCompanies, "list_customers", map[string]any{"search": "o brien and sons", "territory": territory})
		if m, ok := out["party_match"].(map[string]any); !ok || m["status"] != want {
			t.Errorf("territory %s: %v", territory, out)
		}
	}
	sup := docsWhere(t, "Supplier", func(d *frappetest.Doc) bool { return d.Int("disabled") == 0 })
	spoken := strings.ToUpper(sup[0].Str("supplier_name")) + " LIMITED"
	out = mustCall(t, allCompanies, "list_suppliers", map[string]any{"search": spoken})
	if m, ok := out["party_match"].(map[string]any); !ok || m["status"] != matchMatched || m["id"] != sup[0].Name {
		t.Fatalf("list_suppliers %q: %v", spoken, out)
	}
}

// TestBankLinesWithoutCurrencyAreListed: ERPNext lets a Bank Transaction
// have no currency (statement lines imported from a file without one); a
// list row then holds currency null, which the row schema must allow, or
// an MCP client that checks structuredContent against the output schema
// rejects the whole page.
func TestBankLinesWithoutCurrencyAreListed(t *testing.T) {
	for _, company := range companyNames(t) {
		want := docsWhere(t, "Bank Transaction", func(d *frappetest.Doc) bool {
			return d.Str("company") == company && d.Int("docstatus") == 0
		})
		var bare int
		for _, d := range want {
			if d.Get("currency") == nil {
				bare++
			}
		}
		if bare == 0 {
			t.Fatalf("%s: the seeded data has no bank line without a currency: the test would prove nothing", company)
		}
		rows := walk(t, allCompanies, "list_bank_transactions", map[string]any{"company": company, "docstatus": 0, "limit": 2})
		if !slices.Equal(rowNames(rows), docNames(want)) {
			t.Fatalf("%s: listed %v, want %v", company, rowNames(rows), docNames(want))
		}
		for _, r := range rows {
			if v, ok := r["currency"]; !ok || (v != nil) != (testSim(t).Data().Get("Bank Transaction", r["name"].(string)).Get("currency") != nil) {
				t.Errorf("%s: currency %v, want the seeded one", r["name"], v)
			}
		}
	}
}

// TestBankTotalsCountLinesWithoutCurrency: totals need a currency, and a
// bank line imported without one never matches it. Its amounts are still
// real money of the company's bank, so the summary says how many such
// lines the other filters match instead of leaving them out in silence.
func TestBankTotalsCountLinesWithoutCurrency(t *testing.T) {
	for _, company := range companyNames(t) {
		bare := docsWhere(t, "Bank Transaction", func(d *frappetest.Doc) bool {
			return d.Str("company") == company && d.Get("currency") == nil
		})
		with := docsWhere(t, "Bank Transaction", func(d *frappetest.Doc) bool {
			return d.Str("company") == company && d.Get("currency") != nil
		})
		if len(bare) == 0 || len(with) == 0 {
			t.Fatalf("%s: the seed needs bank lines with and without a currency", company)
		}
		cur := with[0].Str("currency")
		out := mustCall(t, allCompanies, "list_bank_transactions", map[string]any{"company": company, "currency": cur, "summary": "totals"})
		s := out["summary"].(map[string]any)
		if got := mustInt(t, s["count"]); got != len(with) {
			t.Errorf("%s: count %d, want the %d lines in %s", company, got, len(with), cur)
		}
		if got, ok := s["without_currency"]; !ok || mustInt(t, got) != len(bare) {
			t.Errorf("%s: without_currency %v, want %d", company, got, len(bare))
		}
		// With docstatus 1 no line lacks a currency: nothing to say.
		out = mustCall(t, allCompanies, "list_bank_transactions", map[string]any{"company": company, "currency": cur, "docstatus": 1, "summary": "totals"})
		if got, ok := out["summary"].(map[string]any)["without_currency"]; ok {
			t.Errorf("%s submitted: without_currency %v, want absent", company, got)
		}
	}
}
