package frappetest

import "time"

// Shared pricing and totals logic for selling documents (Sales Order,
// Sales Invoice), computed in integer cents like ERPNext's
// taxes_and_totals.py and emitted as Decimals.

// sellingLine is one computed item row.
type sellingLine struct {
	item                *itemInfo
	qtyH                int64 // quantity in hundredths
	qtyM                int64 // when not 0: the quantity in thousandths, in place of qtyH (a written line's)
	rateC, amountC      int64
	baseRateC, baseAmtC int64
	// uom and factor: a written line's unit and how many stock units one
	// is, when it is not the stock unit (factor 0: the stock unit).
	uom    string
	factor int64
}

// sellingCalc holds the header totals of a selling document.
type sellingCalc struct {
	currency, companyCurrency string
	convE4                    int64 // conversion_rate * 10^4
	lines                     []sellingLine
	taxRateBP                 int64 // 0 = no taxes
	disableRounded            bool
	// halfUp: amounts round a tie up, as rounded() does at a precision
	// above 0 under "Banker's Rounding (legacy)", the default
	// rounding_method (a written document's); the generated documents
	// keep rounding half to even.
	halfUp bool
	// unit is how many Decimal units one unit of the amounts' precision
	// is (0: a cent): the amounts held below ("…C") count such units. A
	// written document's follows the site's currency precision (writes.go
	// currencyPlaces); the generated documents are in cents.
	unit int64

	totalQtyM, netC, baseNetC int64 // total_qty in thousandths
	taxC, baseTaxC            int64
	grandC, baseGrandC        int64
	roundedC, baseRoundedC    int64
	adjC, baseAdjC            int64
}

// dec is an amount of the precision's units as a Decimal.
func (s *sellingCalc) dec(n int64) Decimal { return Decimal(n * s.unitSize()) }

func (s *sellingCalc) unitSize() int64 {
	if s.unit == 0 {
		return decimalScale / 100
	}
	return s.unit
}

// perWhole is how many of the precision's units one whole is (100 for
// cents, 1 with no decimal places, 1000 with three).
func (s *sellingCalc) perWhole() int64 { return decimalScale / s.unitSize() }

// fromCents converts an amount in cents to the precision's units,
// rounded as the document's amounts are.
func (s *sellingCalc) fromCents(c int64) int64 { return s.round(c*s.perWhole(), 100) }

// cents converts an amount of the precision's units to cents (for the
// amount in words).
func (s *sellingCalc) cents(n int64) int64 { return roundHalfEven(n*100, s.perWhole()) }

// base converts document-currency cents to company currency.
func (s *sellingCalc) base(c int64) int64 { return s.round(c*s.convE4, 10000) }

// round is n/d rounded to a whole number of the amount's precision.
func (s *sellingCalc) round(n, d int64) int64 {
	if s.halfUp {
		// floor(n/d + 1/2): a tie goes up, -0.025 to -0.02 as in Frappe.
		m := n + d/2
		q := m / d
		if m%d != 0 && m < 0 {
			q--
		}
		return q
	}
	return roundHalfEven(n, d)
}

func (s *sellingCalc) compute() {
	s.totalQtyM, s.netC, s.baseNetC = 0, 0, 0
	for i := range s.lines {
		l := &s.lines[i]
		l.amountC = s.round(l.thousandths()*l.rateC, 1000)
		l.baseRateC = s.base(l.rateC)
		l.baseAmtC = s.base(l.amountC)
		s.totalQtyM += l.thousandths()
		s.netC += l.amountC
		s.baseNetC += l.baseAmtC
	}
	s.taxC = s.round(s.netC*s.taxRateBP, 10000)
	s.baseTaxC = s.base(s.taxC)
	s.grandC = s.netC + s.taxC
	s.baseGrandC = s.base(s.grandC)
	if s.disableRounded {
		s.roundedC, s.baseRoundedC, s.adjC, s.baseAdjC = 0, 0, 0, 0
		return
	}
	s.roundedC = roundHalfEven(s.grandC, s.perWhole()) * s.perWhole()
	s.adjC = s.roundedC - s.grandC
	s.baseRoundedC = s.base(s.roundedC)
	s.baseAdjC = s.base(s.adjC)
}

// payable returns the document total used for outstanding amounts, in
// document currency (rounded_total unless rounding is disabled).
func (s *sellingCalc) payable() int64 {
	if s.disableRounded {
		return s.grandC
	}
	return s.roundedC
}

// basePayable is payable() in company currency.
func (s *sellingCalc) basePayable() int64 {
	if s.disableRounded {
		return s.baseGrandC
	}
	return s.baseRoundedC
}

// exchangeRate returns the deterministic monthly rate from -> to as e4.
func exchangeRate(from, to string, d time.Time) int64 {
	if from == to {
		return 10000
	}
	m := int64((d.Year()-2025)*12 + int(d.Month()))
	switch {
	case from == "USD" && to == "NZD":
		return 16500 + (m*173)%900 - 450
	case from == "USD" && to == "AUD":
		return 15200 + (m*131)%600 - 300
	case from == "USD" && to == "JPY":
		return 1_500_000 + (m*1300)%20000 - 10000
	}
	panic("frappetest: no exchange rate " + from + "->" + to)
}

// priceIn returns an item's list price in a currency, rounded to 5 cents.
func priceIn(it *itemInfo, currency string) int64 {
	factor := map[string]int64{"USD": 100, "NZD": 165, "AUD": 150, "JPY": 15000}[currency]
	c := it.PriceCents * factor / 100
	return (c + 2) / 5 * 5
}

// pickLines chooses 1-6 distinct enabled items with quantities.
func (g *generator) pickLines(currency string, n int) []sellingLine {
	used := map[int]bool{}
	var lines []sellingLine
	for len(lines) < n {
		k := g.rng.intn(len(g.items))
		it := g.items[k]
		if used[k] || it.Disabled {
			continue
		}
		used[k] = true
		var qtyH int64
		switch {
		case it.Fractional:
			qtyH = int64(g.rng.between(2, 80)) * 25
		case it.PriceCents >= 100000:
			qtyH = int64(g.rng.between(1, 3)) * 100
		default:
			qtyH = int64(g.rng.between(1, 24)) * 100
		}
		lines = append(lines, sellingLine{item: it, qtyH: qtyH, rateC: priceIn(it, currency)})
	}
	return lines
}

func qtyDec(h int64) Decimal { return Decimal(h * (decimalScale / 100)) }

// thousandths is the line's quantity in thousandths: System Settings'
// float_precision (3 by default), to which ERPNext rounds a qty.
func (l sellingLine) thousandths() int64 {
	if l.qtyM != 0 {
		return l.qtyM
	}
	return l.qtyH * 10
}

// qtyMDec is a quantity in thousandths as a Decimal.
func qtyMDec(m int64) Decimal { return Decimal(m * (decimalScale / 1000)) }

// fillSellingHeader writes totals common to Sales Order and Sales Invoice.
func fillSellingHeader(d *Doc, s *sellingCalc) {
	f := d.Fields
	f["currency"] = s.currency
	f["conversion_rate"] = Decimal(s.convE4 * (decimalScale / 10000))
	f["selling_price_list"] = "Standard Selling"
	f["price_list_currency"] = s.currency
	f["plc_conversion_rate"] = f["conversion_rate"]
	f["total_qty"] = qtyMDec(s.totalQtyM)
	f["base_total"] = s.dec(s.baseNetC)
	f["base_net_total"] = s.dec(s.baseNetC)
	f["total"] = s.dec(s.netC)
	f["net_total"] = s.dec(s.netC)
	f["base_total_taxes_and_charges"] = s.dec(s.baseTaxC)
	f["total_taxes_and_charges"] = s.dec(s.taxC)
	f["base_grand_total"] = s.dec(s.baseGrandC)
	f["base_rounding_adjustment"] = s.dec(s.baseAdjC)
	f["base_rounded_total"] = s.dec(s.baseRoundedC)
	f["grand_total"] = s.dec(s.grandC)
	f["rounding_adjustment"] = s.dec(s.adjC)
	f["rounded_total"] = s.dec(s.roundedC)
	f["in_words"] = moneyInWords(s.cents(s.payable()), s.currency)
	f["base_in_words"] = moneyInWords(s.cents(s.basePayable()), s.companyCurrency)
	if s.disableRounded {
		f["disable_rounded_total"] = int64(1)
	}
	f["language"] = "en"
}

// addSellingItems adds item rows; extra sets doctype-specific columns.
func (g *generator) addSellingItems(d *Doc, c *companyInfo, s *sellingCalc, extra func(row map[string]any, l sellingLine)) {
	for _, l := range s.lines {
		row := pricedItemRow(s, l)
		if l.item.Stock {
			row["warehouse"] = c.acct("Stores")
		}
		if extra != nil {
			extra(row, l)
		}
		g.addChild(d, "items", row)
	}
	if s.taxRateBP != 0 {
		g.addChild(d, "taxes", taxRow(c, s))
		d.Fields["taxes_and_charges"] = c.TaxLabel + " - " + c.Abbr
	}
}

// pricedItemRow returns the columns every item row of a priced line has,
// on the selling and the buying side alike.
func pricedItemRow(s *sellingCalc, l sellingLine) map[string]any {
	row := make(map[string]any, 48) // room for the doctype's own columns
	row["item_code"] = l.item.Code
	row["item_name"] = l.item.Name
	row["description"] = l.item.Name
	factor := max(l.factor, 1)
	row["qty"] = qtyMDec(l.thousandths())
	row["stock_uom"] = l.item.UOM
	row["uom"] = l.item.UOM
	if l.uom != "" {
		row["uom"] = l.uom
	}
	row["conversion_factor"] = Units(factor)
	row["stock_qty"] = qtyMDec(l.thousandths() * factor)
	row["price_list_rate"] = s.dec(l.rateC)
	row["base_price_list_rate"] = s.dec(l.baseRateC)
	row["rate"] = s.dec(l.rateC)
	row["amount"] = s.dec(l.amountC)
	row["base_rate"] = s.dec(l.baseRateC)
	row["base_amount"] = s.dec(l.baseAmtC)
	row["net_rate"] = s.dec(l.rateC)
	row["net_amount"] = s.dec(l.amountC)
	row["base_net_rate"] = s.dec(l.baseRateC)
	row["base_net_amount"] = s.dec(l.baseAmtC)
	row["stock_uom_rate"] = s.dec((l.rateC + factor/2) / factor)
	row["item_group"] = l.item.Group
	return row
}

// taxRow returns the single "On Net Total" tax row of a document priced
// by s.
func taxRow(c *companyInfo, s *sellingCalc) map[string]any {
	rate := Decimal(s.taxRateBP * (decimalScale / 100))
	return map[string]any{
		"charge_type":                           "On Net Total",
		"account_head":                          c.TaxAccount,
		"description":                           c.TaxLabel + " @ " + pyFloat(rate.Float64()),
		"cost_center":                           c.acct("Main"),
		"rate":                                  rate,
		"account_currency":                      c.Currency,
		"tax_amount":                            s.dec(s.taxC),
		"total":                                 s.dec(s.grandC),
		"tax_amount_after_discount_amount":      s.dec(s.taxC),
		"base_tax_amount":                       s.dec(s.baseTaxC),
		"base_total":                            s.dec(s.baseGrandC),
		"base_tax_amount_after_discount_amount": s.dec(s.baseTaxC),
	}
}
