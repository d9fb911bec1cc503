package frappe

import (
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// requests counts the list requests of asks, of every DocType.
func requests(asks map[string][]int) int {
	n := 0
	for _, sizes := range asks {
		n += len(sizes)
	}
	return n
}

// A long walk on a site capped at one row a query asks for pages of one
// row, but never for more pages than it would send at full size (500
// rows): a 5,000-row walk sends at most 10 requests, a 20,000-row walk
// 40. Before, each row was one request, so one call sent as many requests
// as the seeded data has rows. Each walk that stops early says so.

func TestLiteralSearchCountKeepsItsRequestsUnderARowCapOfOne(t *testing.T) {
	_, asks, err := callCappedErr(t, 1, "list_sales_invoices", map[string]any{"search": "_", "summary": "count"})
	if n := requests(asks); n > 10 {
		t.Errorf("a count with a literal search on a site capped at 1 row sent %d list requests, want at most 10", n)
	}
	te := wantCode(t, err, toolerr.InvalidArgument)
	if !strings.Contains(te.Message, "more than 10 candidates") {
		t.Errorf("message %q does not say how many candidates were checked", te.Message)
	}
}

func TestLiteralSearchTotalsKeepTheirRequestsUnderARowCapOfOne(t *testing.T) {
	_, asks, err := callCappedErr(t, 1, "list_sales_invoices", map[string]any{"company": visibleCompany(t), "currency": "USD", "search": "_", "summary": "totals"})
	if n := requests(asks); n > 10 {
		t.Errorf("totals with a literal search on a site capped at 1 row sent %d list requests, want at most 10", n)
	}
	te := wantCode(t, err, toolerr.InvalidArgument)
	if !strings.Contains(te.Message, "more than 10 candidates") {
		t.Errorf("message %q does not say how many candidates were checked", te.Message)
	}
}

func TestStockRiskKeepsItsRequestsUnderARowCapOfOne(t *testing.T) {
	out, asks := callCapped(t, 1, "get_stock_risk", map[string]any{"company": visibleCompany(t), "top": 200})
	walks := map[string]int{}
	for _, doctype := range []string{"Warehouse", "Item", "Item Reorder", "Bin"} {
		walks[doctype] = len(asks[doctype])
	}
	for doctype, n := range walks {
		if n > 40 {
			t.Errorf("get_stock_risk on a site capped at 1 row sent %d requests for %s, want at most 40", n, doctype)
		}
	}
	cov := out["coverage"].(map[string]any)
	if cov["read_complete"] != false {
		t.Errorf("coverage %v says the read was complete", cov)
	}
	said := false
	for _, w := range out["warnings"].([]any) {
		said = said || strings.Contains(w.(string), "only the first 40 were read")
	}
	if !said {
		t.Errorf("warnings %v do not say that only the first 40 were read", out["warnings"])
	}
}

func TestSalesSummaryGroupsKeepTheirRequestsUnderARowCapOfOne(t *testing.T) {
	for _, groupBy := range []string{"customer", "month"} {
		t.Run(groupBy, func(t *testing.T) {
			out, asks := callCapped(t, 1, "get_sales_summary", map[string]any{"company": visibleCompany(t), "from_date": "2025-01-01", "to_date": "2025-12-31", "group_by": groupBy})
			// Two requests are not the groups' walk: the invoice total.
			if n := len(asks["Sales Invoice"]); n > 10+2 {
				t.Errorf("get_sales_summary by %s on a site capped at 1 row sent %d Sales Invoice requests, want at most 12", groupBy, n)
			}
			if out["groups_complete"] != false {
				t.Errorf("groups_complete %v, want false", out["groups_complete"])
			}
			said := false
			for _, w := range out["warnings"].([]any) {
				said = said || strings.Contains(w.(string), "first 10")
			}
			if !said {
				t.Errorf("warnings %v do not say that only the first 10 groups were read", out["warnings"])
			}
		})
	}
}

// TestFiscalYearLinksKeepToTheSitesRowCap: a fiscal year linked to no
// company is every company's; finding that reads the years' company links,
// which asked the ERP for pages of 500 rows whatever the site's cap.
func TestFiscalYearLinksKeepToTheSitesRowCap(t *testing.T) {
	const maxRecords = 2
	companies := companyNames(t)
	s := frappetest.NewServer(frappetest.Options{FiscalYearCompanies: map[string][]string{"2026": {}}})
	defer s.Close()
	inv := invocation{role: allCompanies, sim: s, maxRecords: maxRecords}
	out, asks, err := inv.callRecorded(t, "get_trial_balance", map[string]any{"company": companies[1], "from_date": "2026-01-01", "to_date": "2026-03-31"})
	if err != nil || out["fiscal_year"] != "2026" {
		t.Fatalf("year linked to no company: fiscal_year %v, err %v", out["fiscal_year"], err)
	}
	if len(asks["Fiscal Year Company"]) == 0 {
		t.Fatalf("no fiscal year links were read: %v", asks)
	}
	if over := overCap(asks, maxRecords); len(over) > 0 {
		t.Errorf("a site capped at %d rows a query was asked for: %v", maxRecords, over)
	}
}
