package frappetest

// Shared header, item and tax rows of buying documents (Purchase Order,
// Purchase Invoice). Totals come from sellingCalc, which implements
// ERPNext's taxes_and_totals for any transaction.

// fillBuyingHeader writes the totals common to buying documents.
func fillBuyingHeader(d *Doc, s *sellingCalc) {
	f := d.Fields
	f["currency"] = s.currency
	f["conversion_rate"] = Decimal(s.convE4 * (decimalScale / 10000))
	f["buying_price_list"] = "Standard Buying"
	f["price_list_currency"] = s.currency
	f["plc_conversion_rate"] = f["conversion_rate"]
	f["total_qty"] = qtyMDec(s.totalQtyM)
	f["base_total"] = Cents(s.baseNetC)
	f["base_net_total"] = Cents(s.baseNetC)
	f["total"] = Cents(s.netC)
	f["net_total"] = Cents(s.netC)
	f["base_taxes_and_charges_added"] = Cents(s.baseTaxC)
	f["taxes_and_charges_added"] = Cents(s.taxC)
	f["base_total_taxes_and_charges"] = Cents(s.baseTaxC)
	f["total_taxes_and_charges"] = Cents(s.taxC)
	f["base_grand_total"] = Cents(s.baseGrandC)
	f["base_rounding_adjustment"] = Cents(s.baseAdjC)
	f["base_rounded_total"] = Cents(s.baseRoundedC)
	f["grand_total"] = Cents(s.grandC)
	f["rounding_adjustment"] = Cents(s.adjC)
	f["rounded_total"] = Cents(s.roundedC)
	f["in_words"] = moneyInWords(s.payable(), s.currency)
	f["base_in_words"] = moneyInWords(s.basePayable(), s.companyCurrency)
	if s.disableRounded {
		f["disable_rounded_total"] = int64(1)
	}
	f["language"] = "en"
}

// addBuyingItems adds item rows and the tax row; extra sets doctype
// specific columns.
func (g *generator) addBuyingItems(d *Doc, c *companyInfo, s *sellingCalc, extra func(i int, row map[string]any, l sellingLine)) {
	for i, l := range s.lines {
		row := pricedItemRow(s, l)
		row["cost_center"] = c.acct("Main")
		if b := l.item.doc.Str("brand"); b != "" {
			row["brand"] = b
		}
		if extra != nil {
			extra(i, row, l)
		}
		g.addChild(d, "items", row)
	}
	if s.taxRateBP != 0 {
		tax := taxRow(c, s)
		tax["category"] = "Total"
		tax["add_deduct_tax"] = "Add"
		g.addChild(d, "taxes", tax)
		d.Fields["taxes_and_charges"] = c.TaxLabel + " Input - " + c.Abbr
	}
}

// pickBuyLines chooses n distinct enabled stock items with purchase
// quantities, priced at cost in currency.
func (g *generator) pickBuyLines(currency string, n int) []sellingLine {
	var stock []*itemInfo
	for _, it := range g.items {
		if it.Stock && !it.Disabled {
			stock = append(stock, it)
		}
	}
	used := map[int]bool{}
	var lines []sellingLine
	for len(lines) < n {
		k := g.rng.intn(len(stock))
		if used[k] {
			continue
		}
		used[k] = true
		it := stock[k]
		var qtyH int64
		switch {
		case it.Fractional:
			qtyH = int64(g.rng.between(8, 80)) * 250
		case it.PriceCents >= 100000:
			qtyH = int64(g.rng.between(2, 8)) * 100
		case it.PriceCents >= 10000:
			qtyH = int64(g.rng.between(4, 20)) * 100
		default:
			qtyH = int64(g.rng.between(2, 12)) * 1000
		}
		lines = append(lines, sellingLine{item: it, qtyH: qtyH, rateC: costIn(it, currency)})
	}
	return lines
}
