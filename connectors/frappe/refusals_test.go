package frappe

import (
	"testing"

	"github.com/erpgate/erpgate/platform/toolerr"
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
