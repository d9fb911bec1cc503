package frappetest

import (
	"fmt"
	"sort"
	"time"
)

// salesOrderTotal is the number of generated Sales Orders.
const salesOrderTotal = 120

func (g *generator) genSalesOrders() {
	plans := make([]invoicePlan, 0, salesOrderTotal)
	for i := 0; i < salesOrderTotal; i++ {
		plans = append(plans, g.planInvoice())
	}
	sort.SliceStable(plans, func(i, j int) bool { return plans[i].posted.Before(plans[j].posted) })
	seq := map[int]int{}
	for _, p := range plans {
		y := p.posted.Year()
		seq[y]++
		g.ds.add(g.buildSalesOrder(fmt.Sprintf("SAL-ORD-%d-%05d", y, seq[y]), p))
	}
}

func (g *generator) buildSalesOrder(name string, p invoicePlan) *Doc {
	c, cu := p.company, p.customer
	s := &sellingCalc{currency: p.currency, companyCurrency: c.Currency, convE4: exchangeRate(p.currency, c.Currency, p.posted)}
	s.lines = g.pickLines(p.currency, g.rng.between(1, 6))
	if p.currency == c.Currency && (c.Abbr != "DSUS" || g.rng.chance(60)) {
		s.taxRateBP = c.TaxRateBP
	}
	s.compute()
	d := g.newDoc("Sales Order", name, "accounts@demo.example", p.posted)
	f := d.Fields
	f["title"] = cu.Name
	f["naming_series"] = "SAL-ORD-.YYYY.-"
	f["customer"] = cu.Name
	f["customer_name"] = cu.Name
	f["company"] = c.Name
	f["transaction_date"] = fmtDate(p.posted)
	delivery := p.posted.AddDate(0, 0, g.rng.between(7, 45))
	f["delivery_date"] = fmtDate(delivery)
	f["territory"] = cu.Territory
	f["customer_group"] = cu.Group
	f["party_account_currency"] = p.party
	if g.rng.chance(50) {
		f["po_no"] = fmt.Sprintf("PO-%05d", g.rng.between(1000, 99999))
	}
	fillSellingHeader(d, s)
	g.addSellingItems(d, c, s, func(row map[string]any, l sellingLine) {
		row["delivery_date"] = fmtDate(delivery)
		row["transaction_date"] = fmtDate(p.posted)
	})
	g.addChild(d, "payment_schedule", map[string]any{
		"due_date":            fmtDate(p.posted.AddDate(0, 0, 30)),
		"invoice_portion":     Units(100),
		"payment_amount":      Cents(s.payable()),
		"outstanding":         Cents(s.payable()),
		"base_payment_amount": Cents(s.basePayable()),
		"discount_type":       "Percentage",
	})

	// Fulfilment: older orders are further along.
	age := dataEnd.Sub(p.posted).Hours() / 24
	recent := age < 30
	switch {
	case recent && g.rng.chance(30), !recent && g.rng.chance(3):
		setDocstatus(d, 0)
		f["status"] = "Draft"
		return d
	case g.rng.chance(5):
		setDocstatus(d, 2)
		f["status"] = "Cancelled"
		return d
	}
	setDocstatus(d, 1)
	var delivered, billed int64 // percent
	r := g.rng.intn(100)
	switch {
	case age > 60 && r < 80, age > 20 && age <= 60 && r < 40:
		delivered, billed = 100, 100
	case age > 20 && r < 90:
		delivered, billed = 100, 0
		if g.rng.chance(30) {
			billed = 50
		}
	case r < 60:
		delivered, billed = 0, 0
	default:
		delivered, billed = 50, 0
	}
	hasStock := false
	for _, l := range s.lines {
		if l.item.Stock {
			hasStock = true
		}
	}
	for _, row := range d.Children["items"] {
		row.Fields["delivered_qty"] = Decimal(int64(row.Dec("qty")) * delivered / 100)
		row.Fields["billed_amt"] = Decimal(int64(row.Dec("amount")) * billed / 100)
	}
	f["per_delivered"] = Units(delivered)
	f["per_billed"] = Units(billed)
	f["delivery_status"] = pctStatus(delivered, "Not Delivered", "Partly Delivered", "Fully Delivered")
	if !hasStock {
		f["delivery_status"] = "Not Applicable"
	}
	f["billing_status"] = pctStatus(billed, "Not Billed", "Partly Billed", "Fully Billed")
	switch {
	case delivered < 100 && billed < 100:
		f["status"] = "To Deliver and Bill"
	case delivered >= 100 && billed < 100:
		f["status"] = "To Bill"
	case delivered < 100 && billed >= 100:
		f["status"] = "To Deliver"
	default:
		f["status"] = "Completed"
	}
	if f["status"] != "Completed" && age > 200 && g.rng.chance(25) {
		f["status"] = "Closed"
	}
	if delivered > 0 || billed > 0 {
		setModified(d, p.posted.AddDate(0, 0, g.rng.between(2, 20)).Add(time.Hour))
	}
	return d
}

func pctStatus(pct int64, none, part, full string) string {
	switch {
	case pct <= 0:
		return none
	case pct < 100:
		return part
	}
	return full
}
