package frappe

import (
	"math/big"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// precisionSim is a write simulator whose System Settings give Currency
// fields another precision than two places.
func precisionSim(t *testing.T, opts frappetest.Options) *frappetest.Server {
	t.Helper()
	s := frappetest.NewServer(opts)
	t.Cleanup(s.Close)
	return s
}

// splittableLines are sales order lines of items sold in a unit that may
// be split, one per (qty, rate).
func splittableLines(t *testing.T, s *frappetest.Server, qtyRates ...[2]any) []any {
	t.Helper()
	var lines []any
	for _, it := range s.Data().List("Item") {
		u := s.Data().Get("UOM", it.Str("stock_uom"))
		if it.Int("disabled") == 0 && u != nil && u.Int("must_be_whole_number") == 0 && len(lines) < len(qtyRates) {
			q := qtyRates[len(lines)]
			lines = append(lines, map[string]any{"item_code": it.Name, "qty": q[0], "rate": q[1]})
		}
	}
	if len(lines) < len(qtyRates) {
		t.Fatalf("the seed has fewer than %d items sold in a unit that may be split", len(qtyRates))
	}
	return lines
}

// TestSalesOrderPreviewAmountsInTheSitesCurrencyPrecision: ERPNext v15
// rounds a line's rate and amount to the precision of Currency fields,
// System Settings' currency_precision or else its number format's places
// (get_field_precision): three on a site set up for Kuwait ("#,###.###"),
// none on one with "#,###", where a tie goes to even ("Banker's Rounding
// (legacy)" at precision 0). The approval page must show the amounts and
// net total the ERP then saves, not two-place ones.
func TestSalesOrderPreviewAmountsInTheSitesCurrencyPrecision(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        frappetest.Options
		lines       [][2]any
		amounts     []string
		total       string
		saved       *big.Rat
		notAsBefore string
	}{
		// 3.5 × 1.235 = 4.3225 is 4.323 (a tie, up); 0.333 × 1.001 =
		// 0.333333 is 0.333: 4.656, where two places made 4.32, 0.33
		// and 4.65.
		{"three places", frappetest.Options{NumberFormat: "#,###.###"}, [][2]any{{3.5, 1.235}, {0.333, 1.001}},
			[]string{"4.323", "0.333"}, "net total 4.656 USD", big.NewRat(4656, 1000), "4.65 USD"},
		{"currency_precision 3", frappetest.Options{CurrencyPrecision: "3"}, [][2]any{{3.5, 1.235}, {0.333, 1.001}},
			[]string{"4.323", "0.333"}, "net total 4.656 USD", big.NewRat(4656, 1000), "4.65 USD"},
		// 2.5 × 101 = 252.5 is 252 (a tie, to even); 0.5 × 3 = 1.5 is
		// 2: 254, where two places made 252.50, 1.50 and 254.00.
		{"no places", frappetest.Options{NumberFormat: "#,###"}, [][2]any{{2.5, 101}, {0.5, 3}},
			[]string{"252", "2"}, "net total 254 USD", big.NewRat(254, 1), "254.00"},
		// System Settings' rounding_method: "Banker's Rounding" takes a
		// tie to even at two places too (0.5 × 0.05 = 0.025 is 0.02, 1.5 ×
		// 0.03 = 0.045 is 0.04); "Commercial Rounding" away from zero at
		// none (252.5 is 253).
		{"banker's rounding", frappetest.Options{RoundingMethod: "Banker's Rounding"}, [][2]any{{0.5, 0.05}, {1.5, 0.03}},
			[]string{"0.02", "0.04"}, "net total 0.06 USD", big.NewRat(6, 100), "0.08"},
		{"commercial rounding", frappetest.Options{RoundingMethod: "Commercial Rounding", NumberFormat: "#,###"}, [][2]any{{2.5, 101}, {0.5, 3}},
			[]string{"253", "2"}, "net total 255 USD", big.NewRat(255, 1), "254"},
		// ERPNext rounds a line's qty (to 3 places) and rate (to the
		// currency precision) before it multiplies them
		// (round_floats_in): 1.2345 × 10.005 is 1.235 × 10.01 = 12.36235,
		// 12.36, not 12.35 (frappetest's TestInsertRoundsToThePrecisions).
		// The ERP then saves another qty and rate than approved, so the
		// write is told as not as approved; it is not run here.
		{"two places, a qty and rate beyond them", frappetest.Options{}, [][2]any{{1.2345, 10.005}},
			[]string{"12.36"}, "net total 12.36 USD", nil, "12.35"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := precisionSim(t, tc.opts)
			// The company with no default sales tax: its grand total is
			// its net total.
			comp := seededWhere(t, s, "Company", func(d *frappetest.Doc) bool { return d.Str("default_currency") == "USD" })
			cust := seededCustomer(t, s, "USD")
			// A System Manager may read System Settings.
			p := mustPropose(t, s, frappetest.RoleAdministrator, "create_sales_order", map[string]any{
				"customer": cust.Name, "company": comp.Name, "transaction_date": "2026-06-15", "delivery_date": "2026-06-30",
				"items": splittableLines(t, s, tc.lines...),
			})
			for i, row := range p.preview.Tables[0].Rows {
				if got := row[len(row)-1]; got != tc.amounts[i] {
					t.Errorf("line %d amount %q, want %q", i+1, got, tc.amounts[i])
				}
			}
			if !strings.Contains(p.preview.Summary, tc.total) || strings.Contains(p.preview.Summary, tc.notAsBefore) {
				t.Errorf("summary %q, want %s", p.preview.Summary, tc.total)
			}
			for _, w := range p.preview.Warnings {
				if strings.Contains(w, "System Settings") {
					t.Errorf("the page says the precision could not be read: %q", w)
				}
				if strings.Contains(w, "has more than") && tc.saved != nil {
					t.Errorf("the page warns of a rate or qty the ERP keeps as it is: %q", w)
				}
			}
			if tc.saved == nil {
				return
			}
			out := p.mustExecute(t)
			if rat(t, out["grand_total"]).Cmp(tc.saved) != 0 {
				t.Errorf("the ERP saved grand_total %v, want %s", out["grand_total"], tc.saved.RatString())
			}
		})
	}
}

// TestSalesOrderPreviewWithoutTheSitesCurrencyPrecision: only a System
// Manager may read System Settings. For anyone else the preview shows the
// amounts to two places, ERPNext's default, and says on the page that the
// ERP may keep them to other places.
func TestSalesOrderPreviewWithoutTheSitesCurrencyPrecision(t *testing.T) {
	s := precisionSim(t, frappetest.Options{NumberFormat: "#,###.###"})
	comp := seededWhere(t, s, "Company", func(d *frappetest.Doc) bool { return d.Str("default_currency") == "USD" })
	cust := seededCustomer(t, s, "USD")
	p := mustPropose(t, s, allCompanies, "create_sales_order", map[string]any{
		"customer": cust.Name, "company": comp.Name, "transaction_date": "2026-06-15", "delivery_date": "2026-06-30",
		"items": splittableLines(t, s, [2]any{3.5, 1.235}),
	})
	// At two places the ERP would round the rate 1.235 to 1.24 first:
	// 3.5 × 1.24 = 4.34.
	if got := p.preview.Tables[0].Rows[0][5]; got != "4.34" {
		t.Errorf("line amount %q, want 4.34 (two places)", got)
	}
	want := "Only a System Manager may read the ERP's currency precision (System Settings), so the amounts are shown to two decimal places"
	if !strings.Contains(strings.Join(p.preview.Warnings, " "), want) {
		t.Errorf("the page does not say it could not read %s: %q", want, p.preview.Warnings)
	}
}

// TestSalesOrderPreviewQtyInTheSitesFloatPrecision: ERPNext rounds a
// line's qty to System Settings' float_precision (3 only when unset)
// before it computes the amount, and checks a whole-number unit on the
// rounded qty. On a site set to 2, 2.346 × 10 is 2.35 × 10 = 23.50, not
// 23.46, and 2.004 of an item counted in whole units is taken as 2, not
// refused: the approval page must show what the ERP saves, and not turn
// away an order the ERP takes.
func TestSalesOrderPreviewQtyInTheSitesFloatPrecision(t *testing.T) {
	s := precisionSim(t, frappetest.Options{FloatPrecision: "2"})
	comp := seededWhere(t, s, "Company", func(d *frappetest.Doc) bool { return d.Str("default_currency") == "USD" })
	cust := seededCustomer(t, s, "USD")
	whole := seededWhere(t, s, "Item", func(d *frappetest.Doc) bool {
		u := s.Data().Get("UOM", d.Str("stock_uom"))
		return d.Int("disabled") == 0 && u != nil && u.Int("must_be_whole_number") == 1
	})
	lines := append(splittableLines(t, s, [2]any{2.346, 10}), map[string]any{"item_code": whole.Name, "qty": 2.004, "rate": 1})
	p := mustPropose(t, s, frappetest.RoleAdministrator, "create_sales_order", map[string]any{
		"customer": cust.Name, "company": comp.Name, "transaction_date": "2026-06-15", "delivery_date": "2026-06-30",
		"items": lines,
	})
	for i, want := range []string{"23.50", "2.00"} {
		if got := p.preview.Tables[0].Rows[i][5]; got != want {
			t.Errorf("line %d amount %q, want %q", i+1, got, want)
		}
	}
	if !strings.Contains(p.preview.Summary, "net total 25.50 USD") {
		t.Errorf("summary %q, want a net total of 25.50 USD", p.preview.Summary)
	}
	warnings := strings.Join(p.preview.Warnings, " ")
	for _, want := range []string{"Line 1's qty 2.346 has more than two decimal places", "Line 2's qty 2.004 has more than two decimal places"} {
		if !strings.Contains(warnings, want) {
			t.Errorf("the page does not say %q: %q", want, p.preview.Warnings)
		}
	}
}

// TestSalesOrderPreviewRoundsTheQtyByTheSitesRoundingMethod: ERPNext
// rounds a line's qty to float_precision with flt, whose tie follows
// System Settings' rounding_method (frappe.utils.data.rounded). Under
// "Banker's Rounding" a tie goes to even: at three places 2.0025 is
// 2.002, so 2.0025 × 100 is 200.20, not 200.30; and 2.0005 of an item
// counted in whole units is 2.000, which the ERP takes: the approval page
// must show the amount the ERP saves and not turn the order away.
func TestSalesOrderPreviewRoundsTheQtyByTheSitesRoundingMethod(t *testing.T) {
	s := precisionSim(t, frappetest.Options{RoundingMethod: "Banker's Rounding"})
	comp := seededWhere(t, s, "Company", func(d *frappetest.Doc) bool { return d.Str("default_currency") == "USD" })
	cust := seededCustomer(t, s, "USD")
	whole := seededWhere(t, s, "Item", func(d *frappetest.Doc) bool {
		u := s.Data().Get("UOM", d.Str("stock_uom"))
		return d.Int("disabled") == 0 && u != nil && u.Int("must_be_whole_number") == 1
	})
	lines := append(splittableLines(t, s, [2]any{2.0025, 100}), map[string]any{"item_code": whole.Name, "qty": 2.0005, "rate": 1})
	p, err := propose(t, s, frappetest.RoleAdministrator, "create_sales_order", map[string]any{
		"customer": cust.Name, "company": comp.Name, "transaction_date": "2026-06-15", "delivery_date": "2026-06-30",
		"items": lines,
	})
	if err != nil {
		t.Fatalf("the preview turned the order away: %v", err)
	}
	for i, want := range []string{"200.20", "2.00"} {
		if got := p.preview.Tables[0].Rows[i][5]; got != want {
			t.Errorf("line %d amount %q, want %q", i+1, got, want)
		}
	}
	if !strings.Contains(p.preview.Summary, "net total 202.20 USD") {
		t.Errorf("summary %q, want a net total of 202.20 USD", p.preview.Summary)
	}
	// The ERP saves these amounts (frappetest's
	// TestInsertRoundsTheQtyByTheSitesRoundingMethod), with other qtys
	// than approved, so the write is told as not as approved; it is not
	// run here.
}
