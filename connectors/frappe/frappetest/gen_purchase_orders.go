package frappetest

import (
	"sort"
	"time"
)

// Purchase orders and the receipts planned against them. Goods arrive on
// Purchase Invoices with update_stock (there are no Purchase Receipts), so
// an order's received and billed quantities move together.

const purchaseOrderTotal = 96

// buyPlan is the random skeleton of a buying document.
type buyPlan struct {
	posted   time.Time
	company  *companyInfo
	supplier *supplierInfo
	currency string
}

// receipt is one planned delivery against a purchase order: the quantity
// received per order line (hundredths), 0 for lines not delivered.
type receipt struct {
	po     *Doc
	posted time.Time
	qtyH   []int64
}

func (g *generator) planPurchase(from, to time.Time, services bool) buyPlan {
	var c *companyInfo
	switch r := g.rng.intn(100); {
	case r < 45:
		c = g.companies[0]
	case r < 75:
		c = g.companies[1]
	default:
		c = g.companies[2]
	}
	days := int(to.Sub(from).Hours()/24) + 1
	posted := g.at(from.AddDate(0, 0, g.rng.intn(days)))
	home, foreign := g.companySuppliers(c)
	var pool []*supplierInfo
	switch {
	case services:
		for _, s := range home {
			if s.Group == "Services" || s.Group == "Local" {
				pool = append(pool, s)
			}
		}
	case len(foreign) > 0 && g.rng.chance(20):
		pool = foreign
	default:
		for _, s := range home {
			if s.Group != "Services" {
				pool = append(pool, s)
			}
		}
	}
	var s *supplierInfo
	for s == nil || (s.Disabled && posted.After(time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC))) {
		s = pool[g.rng.intn(len(pool))]
	}
	return buyPlan{posted: posted, company: c, supplier: s, currency: s.Currency}
}

// genPurchaseOrders creates the orders and returns the receipts to invoice.
func (g *generator) genPurchaseOrders() []receipt {
	plans := make([]buyPlan, purchaseOrderTotal)
	for i := range plans {
		plans[i] = g.planPurchase(time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC), dataEnd.AddDate(0, 0, -3), false)
	}
	sort.SliceStable(plans, func(i, j int) bool { return plans[i].posted.Before(plans[j].posted) })
	names := series{}
	var receipts []receipt
	onHold := 0
	for _, p := range plans {
		d, rs, held := g.buildPurchaseOrder(names.next("PUR-ORD-", p.posted.Year()), p, onHold < 2)
		if held {
			onHold++
		}
		g.ds.add(d)
		receipts = append(receipts, rs...)
	}
	return receipts
}

func (g *generator) buildPurchaseOrder(name string, p buyPlan, mayHold bool) (*Doc, []receipt, bool) {
	c, su := p.company, p.supplier
	s := &sellingCalc{currency: p.currency, companyCurrency: c.Currency, convE4: exchangeRate(p.currency, c.Currency, p.posted)}
	s.lines = g.pickBuyLines(p.currency, g.rng.between(1, 5))
	if p.currency == c.Currency && c.Abbr != "DSUS" {
		s.taxRateBP = c.TaxRateBP
	}
	s.compute()
	d := g.newDoc("Purchase Order", name, "accounts@demo.example", p.posted)
	f := d.Fields
	f["title"] = su.Name
	f["naming_series"] = "PUR-ORD-.YYYY.-"
	f["supplier"] = su.Name
	f["supplier_name"] = su.Name
	f["company"] = c.Name
	f["transaction_date"] = fmtDate(p.posted)
	schedule := p.posted.AddDate(0, 0, g.rng.between(7, 28))
	f["schedule_date"] = fmtDate(schedule)
	f["set_warehouse"] = c.acct("Stores")
	f["party_account_currency"] = c.Currency
	fillBuyingHeader(d, s)
	g.addBuyingItems(d, c, s, func(_ int, row map[string]any, _ sellingLine) {
		row["schedule_date"] = fmtDate(schedule)
		row["warehouse"] = c.acct("Stores")
		row["expense_account"] = c.acct("Stock In Hand")
	})
	g.addChild(d, "payment_schedule", map[string]any{
		"due_date":            fmtDate(p.posted.AddDate(0, 0, 30)),
		"invoice_portion":     Units(100),
		"payment_amount":      Cents(s.payable()),
		"outstanding":         Cents(s.payable()),
		"base_payment_amount": Cents(s.basePayable()),
		"discount_type":       "Percentage",
	})

	age := dataEnd.Sub(p.posted).Hours() / 24
	switch {
	case age < 30 && g.rng.chance(25), age >= 30 && g.rng.chance(3):
		setDocstatus(d, 0)
		f["status"] = "Draft"
		return d, nil, false
	case g.rng.chance(4):
		setDocstatus(d, 2)
		f["status"] = "Cancelled"
		setModified(d, p.posted.Add(time.Duration(g.rng.between(2, 48))*time.Hour))
		return d, nil, false
	}
	setDocstatus(d, 1)
	rows := d.Children["items"]
	full := make([]int64, len(rows))
	half := make([]int64, len(rows))
	for i, r := range rows {
		full[i] = r.Dec("qty").Cents()
		half[i] = splitQty(full[i], s.lines[i].item.Fractional)
	}
	r := g.rng.intn(100)
	var plan [][]int64 // receipts as quantities per line
	closed, held := false, false
	switch {
	case mayHold && age > 40 && r < 4:
		held = true
	case age > 60 && r < 85, age > 20 && age <= 60 && r < 50, age <= 20 && r < 15:
		if g.rng.chance(30) {
			plan = [][]int64{half, subQty(full, half)}
		} else {
			plan = [][]int64{full}
		}
	case age > 60 && r < 95, age > 20 && r < 75, age <= 20 && r < 30:
		plan = [][]int64{half}
		closed = age > 150 && g.rng.chance(50)
	}
	var receipts []receipt
	at := p.posted
	for _, q := range plan {
		at = g.at(dayOf(at).AddDate(0, 0, g.rng.between(4, 20)))
		if at.After(dataEnd) {
			break
		}
		receipts = append(receipts, receipt{po: d, posted: at, qtyH: q})
	}
	received := make([]int64, len(rows))
	for _, rc := range receipts {
		for i, q := range rc.qtyH {
			received[i] += q
		}
	}
	var recvSum, qtySum, billedSum, amtSum int64
	for i, row := range rows {
		billed := roundHalfEven(received[i]*row.Dec("rate").Cents(), 100)
		row.Fields["received_qty"] = qtyDec(received[i])
		row.Fields["billed_amt"] = Cents(billed)
		recvSum += received[i]
		qtySum += full[i]
		billedSum += billed
		amtSum += row.Dec("amount").Cents()
	}
	f["per_received"] = ratioDecimal(recvSum*100, qtySum)
	f["per_billed"] = ratioDecimal(billedSum*100, max(amtSum, 1))
	switch {
	case held:
		f["status"] = "On Hold"
	case closed:
		f["status"] = "Closed"
	case recvSum >= qtySum:
		f["status"] = "Completed"
	default:
		f["status"] = "To Receive and Bill"
	}
	if len(receipts) > 0 {
		setModified(d, receipts[len(receipts)-1].posted.Add(time.Minute))
	}
	return d, receipts, held
}

// splitQty is about half of q: whole units (quarter units for fractional
// items), at least one unit.
func splitQty(q int64, fractional bool) int64 {
	step := int64(100)
	if fractional {
		step = 25
	}
	h := q / 2 / step * step
	return max(h, min(step, q))
}

func subQty(a, b []int64) []int64 {
	out := make([]int64, len(a))
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return out
}
