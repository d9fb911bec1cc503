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
	f["total_qty"] = qtyDec(s.totalQtyH)
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
		row := make(map[string]any, 48) // room for the extra and standard columns
		row["item_code"] = l.item.Code
		row["item_name"] = l.item.Name
		row["description"] = l.item.Name
		row["qty"] = qtyDec(l.qtyH)
		row["stock_uom"] = l.item.UOM
		row["uom"] = l.item.UOM
		row["conversion_factor"] = Units(1)
		row["stock_qty"] = qtyDec(l.qtyH)
		row["price_list_rate"] = Cents(l.rateC)
		row["base_price_list_rate"] = Cents(l.baseRateC)
		row["rate"] = Cents(l.rateC)
		row["amount"] = Cents(l.amountC)
		row["base_rate"] = Cents(l.baseRateC)
		row["base_amount"] = Cents(l.baseAmtC)
		row["net_rate"] = Cents(l.rateC)
		row["net_amount"] = Cents(l.amountC)
		row["base_net_rate"] = Cents(l.baseRateC)
		row["base_net_amount"] = Cents(l.baseAmtC)
		row["stock_uom_rate"] = Cents(l.rateC)
		row["item_group"] = l.item.Group
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
		rate := Decimal(s.taxRateBP * (decimalScale / 100))
		g.addChild(d, "taxes", map[string]any{
			"category":                              "Total",
			"add_deduct_tax":                        "Add",
			"charge_type":                           "On Net Total",
			"account_head":                          c.TaxAccount,
			"description":                           c.TaxLabel + " @ " + pyFloat(rate.Float64()),
			"cost_center":                           c.acct("Main"),
			"rate":                                  rate,
			"account_currency":                      c.Currency,
			"tax_amount":                            Cents(s.taxC),
			"total":                                 Cents(s.grandC),
			"tax_amount_after_discount_amount":      Cents(s.taxC),
			"base_tax_amount":                       Cents(s.baseTaxC),
			"base_total":                            Cents(s.baseGrandC),
			"base_tax_amount_after_discount_amount": Cents(s.baseTaxC),
		})
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
