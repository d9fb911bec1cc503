package acumatica

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
)

// customerInCurrency gives a seeded tax-exempt customer another currency,
// as a user changing it on Customers would, and returns its id.
func customerInCurrency(t *testing.T, h *harness, currency string) string {
	t.Helper()
	id := exemptCustomer(t, h.sim).String("CustomerID")
	status := h.putInERP(kindNoCanary, "Customer", map[string]any{"CustomerID": id, "CurrencyID": currency}, "If-Match")
	if got := h.sim.Data().Find("Customer", id).String("CurrencyID"); status != http.StatusOK || got != currency {
		t.Fatalf("the customer's currency is %q after the PUT (HTTP %d)", got, status)
	}
	return id
}

// TestSalesOrderPreviewAmountsInTheCurrencysPlaces: Acumatica keeps an
// amount to its currency's Decimal Precision (Currencies, CM202000; the
// seeded yen has 0, the dinar 3), rounds each line's amount to it and
// adds the rounded amounts up. The approval page must show the line
// amounts and the total Acumatica then saves, not two-place ones.
func TestSalesOrderPreviewAmountsInTheCurrencysPlaces(t *testing.T) {
	for _, tc := range []struct {
		currency        string
		lines           [][2]any // OrderQty, UnitPrice
		amounts         []string // as the page shows them
		total, saved    string   // the preview's total, Acumatica's OrderTotal
		notInTheSummary string
	}{
		// 3 × 333.5 = 1000.5 is 1,001 yen (half away from zero), 0.333 ×
		// 100 = 33.3 is 33: 1,034, where two places made 1,000.50,
		// 33.30 and 1,033.80.
		{"JPY", [][2]any{{3, 333.5}, {0.333, 100}}, []string{"1,001", "33"}, "1,034", "1034", "1,033.80"},
		// 3 × 1.2345 = 3.7035 is 3.704 dinars, 0.333 × 1 is 0.333:
		// 4.037, where two places made 3.70, 0.33 and 4.03.
		{"KWD", [][2]any{{3, 1.2345}, {0.333, 1}}, []string{"3.704", "0.333"}, "4.037", "4.037", "4.03 "},
	} {
		t.Run(tc.currency, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			id := customerInCurrency(t, h, tc.currency)
			var lines []any
			for i, l := range tc.lines {
				item := h.sim.Data().Records("StockItem")[i+2]
				lines = append(lines, map[string]any{"InventoryID": item.String("InventoryID"), "OrderQty": l[0], "UnitPrice": l[1]})
			}
			args := map[string]any{"CustomerID": id, "Details": lines}
			p, err := h.preview(kindFull, "acumatica_create_sales_order", args)
			if err != nil {
				t.Fatal(err)
			}
			for i, row := range p.Tables[0].Rows {
				if row[5] != tc.amounts[i] {
					t.Errorf("line %d amount %q, want %q", i+1, row[5], tc.amounts[i])
				}
			}
			if !strings.Contains(p.Summary, " "+tc.total+" "+tc.currency) || strings.Contains(p.Summary, tc.notInTheSummary) {
				t.Errorf("summary %q, want a total of %s %s", p.Summary, tc.total, tc.currency)
			}
			for _, w := range p.Warnings {
				if strings.Contains(w, "decimal places of") {
					t.Errorf("the preview warns it could not read the currency's places: %q", w)
				}
			}
			out, err := h.execute(kindFull, "acumatica_create_sales_order", args, p)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := connector.ExactNumber(fmt.Sprint(out["OrderTotal"]))
			if want, _ := connector.ExactNumber(tc.saved); got == nil || got.Cmp(want) != 0 {
				t.Errorf("Acumatica saved OrderTotal %v, want %s", out["OrderTotal"], tc.saved)
			}
		})
	}
}

// TestSalesOrderPreviewWithoutTheCurrencysPlaces: a user who may not
// open Currencies (CM202000) cannot read the currency's Decimal
// Precision. The preview still shows the order, its amounts to two
// places, and says on the page that Acumatica may round them otherwise.
func TestSalesOrderPreviewWithoutTheCurrencysPlaces(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	id := customerInCurrency(t, h, "KWD")
	h.sim.SetNoAccess(h.sim.User(kindFull.role).Username, "CM202000")
	item := h.sim.Data().Records("StockItem")[2]
	args := map[string]any{"CustomerID": id, "Details": []any{map[string]any{"InventoryID": item.String("InventoryID"), "OrderQty": 3, "UnitPrice": 1.2345}}}
	p, err := h.preview(kindFull, "acumatica_create_sales_order", args)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Tables[0].Rows[0][5]; got != "3.70" {
		t.Errorf("line amount %q, want 3.70 (two places)", got)
	}
	want := "Acumatica did not let you read the decimal places of KWD"
	if !strings.Contains(strings.Join(p.Warnings, " "), want) {
		t.Errorf("the preview does not warn %q: %q", want, p.Warnings)
	}
}
