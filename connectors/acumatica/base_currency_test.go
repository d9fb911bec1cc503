package acumatica

import (
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

// activeCustomerIn returns a seeded active customer whose currency is
// currency.
func activeCustomerIn(t *testing.T, sim *acumaticatest.Simulator, currency string) *acumaticatest.Record {
	t.Helper()
	for _, c := range sim.Data().Records("Customer") {
		if c.String("CurrencyID") == currency && c.String("Status") == "Active" {
			return c
		}
	}
	t.Fatalf("no active customer in %s in the seed", currency)
	return nil
}

// TestSalesOrderPreviewOfADefaultPriceInTheBaseCurrency: an item's
// Default Price (Stock Items, Price/Cost tab) is in the company's base
// currency (USD, its actual ledger's currency), and Acumatica converts it
// at the order's rate when it prices a line of an order in another
// currency. The approval page of an order in EUR must not show a line
// without a unit price as "about" so many EUR worked out from a price in
// dollars, nor add that amount to the order's EUR total: it shows the
// amount in USD, leaves it out of the total and says so. In an order in
// the base currency the estimate stays in the total.
func TestSalesOrderPreviewOfADefaultPriceInTheBaseCurrency(t *testing.T) {
	for _, tc := range []struct {
		name, currency string
		noLedgers      bool   // the user may not open Ledgers (GL201500)
		amount         string // the unpriced line's amount as shown
		total          string // in the summary
		warning        string
	}{
		{"foreign currency", "EUR", false, "about %s USD", "20.00 EUR before taxes", "the base currency, USD"},
		{"base currency", "USD", false, "about %s", "about %s USD before taxes", ""},
		{"base currency unknown", "EUR", true, "about %s in the base currency", "20.00 EUR before taxes", "could not read the company's base currency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			if tc.noLedgers {
				h.sim.SetNoAccess(h.sim.User(kindFull.role).Username, "GL201500")
			}
			cust := activeCustomerIn(t, h.sim, tc.currency)
			priced, unpriced := h.sim.Data().Records("StockItem")[2], h.sim.Data().Records("StockItem")[3]
			// 3 × the default price, in dollars, rounded to cents; with the
			// priced line's 2 × 10.00 when both are dollars.
			base := unpriced.Decimal("DefaultPrice").Mul(acumaticatest.DecimalFromInt(3), 2)
			all := base.Add(acumaticatest.DecimalFromInt(20))
			args := map[string]any{"CustomerID": cust.String("CustomerID"), "Details": []any{
				map[string]any{"InventoryID": priced.String("InventoryID"), "OrderQty": 2, "UnitPrice": 10},
				map[string]any{"InventoryID": unpriced.String("InventoryID"), "OrderQty": 3},
			}}
			p, err := h.preview(kindFull, "acumatica_create_sales_order", args)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := p.Tables[0].Rows[1][5], strings.Replace(tc.amount, "%s", base.Format(2), 1); got != want {
				t.Errorf("the unpriced line's amount %q, want %q", got, want)
			}
			want := strings.Replace(tc.total, "%s", all.Format(2), 1)
			if !strings.Contains(p.Summary, want) || tc.currency != "USD" && strings.Contains(p.Summary, all.Format(2)) {
				t.Errorf("summary %q, want a total of %q", p.Summary, want)
			}
			warnings := strings.Join(p.Warnings, " ")
			if tc.warning != "" && !strings.Contains(warnings, tc.warning) {
				t.Errorf("the page does not say %q: %q", tc.warning, p.Warnings)
			}
			if tc.warning == "" && strings.Contains(warnings, "base currency") {
				t.Errorf("an order in the base currency warns of it: %q", p.Warnings)
			}
			if _, err := h.execute(kindFull, "acumatica_create_sales_order", args, p); err != nil {
				t.Fatal(err)
			}
		})
	}
}
