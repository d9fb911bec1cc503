package frappe

import (
	"math/big"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// salesInRange are the submitted invoices of company in [from, to].
func salesInRange(t *testing.T, company, from, to string) []*frappetest.Doc {
	t.Helper()
	return docsWhere(t, "Sales Invoice", func(d *frappetest.Doc) bool {
		return d.Str("company") == company && d.Int("docstatus") == 1 && d.Str("posting_date") >= from && d.Str("posting_date") <= to
	})
}

func TestSalesSummaryEqualsPerInvoiceSum(t *testing.T) {
	company, from, to := visibleCompany(t), "2025-01-01", "2025-12-31"
	docs := salesInRange(t, company, from, to)
	want := sumDocs(docs, "base_net_total")
	byCustomer := map[string]*big.Rat{}
	byMonth := map[string]*big.Rat{}
	byItem := map[string]*big.Rat{}
	add := func(m map[string]*big.Rat, k string, v *big.Rat) {
		if m[k] == nil {
			m[k] = new(big.Rat)
		}
		m[k].Add(m[k], v)
	}
	for _, d := range docs {
		add(byCustomer, d.Str("customer"), d.Dec("base_net_total").Rat())
		add(byMonth, d.Str("posting_date")[:7], d.Dec("base_net_total").Rat())
		for _, it := range d.Table("items") {
			add(byItem, it.Str("item_code"), it.Dec("base_net_amount").Rat())
		}
	}
	for _, tc := range []struct {
		groupBy string
		want    map[string]*big.Rat
	}{
		{"customer", byCustomer}, {"month", byMonth}, {"item", byItem}, {"item_group", nil},
	} {
		t.Run(tc.groupBy, func(t *testing.T) {
			out := mustCall(t, allCompanies, "get_sales_summary", map[string]any{"company": company, "from_date": from, "to_date": to, "group_by": tc.groupBy, "top": 3})
			if got := rat(t, out["net_sales"]); !ratEq(got, want) {
				t.Fatalf("net_sales %s, want %s", got.FloatString(2), want.FloatString(2))
			}
			if got := mustInt(t, out["invoice_count"]); got != len(docs) {
				t.Fatalf("invoice_count %d, want %d", got, len(docs))
			}
			shown := new(big.Rat)
			for _, g := range out["groups"].([]any) {
				grp := g.(map[string]any)
				net := rat(t, grp["net_sales"])
				shown.Add(shown, net)
				if tc.want != nil && !ratEq(net, tc.want[grp["key"].(string)]) {
					t.Errorf("%s %v = %s, want %s", tc.groupBy, grp["key"], net.FloatString(2), tc.want[grp["key"].(string)].FloatString(2))
				}
			}
			if others, ok := out["others"].(map[string]any); ok {
				shown.Add(shown, rat(t, others["net_sales"]))
			}
			if !ratEq(shown, want) {
				t.Fatalf("groups plus others = %s, want %s", shown.FloatString(2), want.FloatString(2))
			}
			if tc.want != nil && mustInt(t, out["group_count"]) != len(tc.want) {
				t.Fatalf("group_count %v, want %d", out["group_count"], len(tc.want))
			}
			if w := out["warnings"].([]any); len(w) != 0 {
				t.Fatalf("warnings %v", w)
			}
		})
	}
}

func TestSalesSummaryBoundsAndPermissions(t *testing.T) {
	_, err := call(t, allCompanies, "get_sales_summary", map[string]any{"company": visibleCompany(t), "from_date": "2025-01-01", "to_date": "2026-01-02"})
	te := wantCode(t, err, toolerr.InvalidArgument)
	if !contains(te.Message, "366") {
		t.Errorf("message %q does not state the bound", te.Message)
	}
	_, err = call(t, noAccounting, "get_sales_summary", map[string]any{"company": visibleCompany(t), "from_date": "2025-01-01", "to_date": "2025-03-31"})
	wantCode(t, err, toolerr.PermissionDenied)

	// The one-company user gets the same answer for their company and is
	// refused another.
	args := map[string]any{"company": visibleCompany(t), "period": "last_90_days", "as_of_date": "2025-06-30"}
	a := mustCall(t, allCompanies, "get_sales_summary", args)
	b := mustCall(t, oneCompany, "get_sales_summary", args)
	if !ratEq(rat(t, a["net_sales"]), rat(t, b["net_sales"])) {
		t.Fatalf("net_sales differs between users: %v vs %v", a["net_sales"], b["net_sales"])
	}
	args["company"] = otherCompany(t)
	_, err = call(t, oneCompany, "get_sales_summary", args)
	wantCode(t, err, toolerr.PermissionDenied)
}
