package frappetest

import (
	"fmt"
	"sort"
	"time"
)

// Sales invoice generation: 400 documents across the three companies from
// 2025-01-01 to 2026-06-15, named per year in posting order. Amounts are
// exact to the cent. Payment state depends only on the seed (never on
// Options.Now); Options.Now only drives the derived status.

const (
	salesInvoiceTotal = 400
	salesReturnCount  = 10
)

// invoicePlan is the random skeleton of one invoice before naming.
type invoicePlan struct {
	posted   time.Time
	company  *companyInfo
	customer *customerInfo
	currency string
	party    string // party_account_currency
}

func (g *generator) companyCustomers(c *companyInfo) (home, foreign []*customerInfo) {
	for _, cu := range g.customers {
		switch {
		case c.Abbr == "DHNZ" && cu.Region == "NZ", c.Abbr == "DTAU" && cu.Region == "AU",
			c.Abbr == "DSUS" && (cu.Region == "US" || cu.Region == "ROW"):
			home = append(home, cu)
		case c.Abbr == "DHNZ" && cu.Region == "US" && len(foreign) < 4:
			foreign = append(foreign, cu)
		case c.Abbr == "DTAU" && (cu.Region == "ROW" || cu.Name == "Pacific Rim Trading Inc"):
			foreign = append(foreign, cu)
		}
	}
	return home, foreign
}

func (g *generator) planInvoice() invoicePlan {
	var c *companyInfo
	switch r := g.rng.intn(100); {
	case r < 45:
		c = g.companies[0]
	case r < 75:
		c = g.companies[1]
	default:
		c = g.companies[2]
	}
	days := int(dataEnd.Sub(dataStart).Hours()/24) + 1
	posted := g.at(dataStart.AddDate(0, 0, g.rng.intn(days)))
	home, foreign := g.companyCustomers(c)
	var cu *customerInfo
	for cu == nil || (cu.Disabled && !posted.Before(time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC))) {
		if len(foreign) > 0 && g.rng.chance(15) {
			cu = foreign[g.rng.intn(len(foreign))]
		} else {
			cu = home[g.rng.intn(len(home))]
		}
	}
	p := invoicePlan{posted: posted, company: c, customer: cu, currency: cu.Currency, party: cu.Currency}
	if cu.Currency == c.Currency && c.Currency != "USD" && g.rng.chance(12) {
		// Billed in USD against the company-currency receivable account.
		p.currency = "USD"
	}
	return p
}

func (g *generator) genSalesInvoices() {
	var plans []invoicePlan
	for i := 0; i < salesInvoiceTotal-salesReturnCount; i++ {
		plans = append(plans, g.planInvoice())
	}
	sort.SliceStable(plans, func(i, j int) bool { return plans[i].posted.Before(plans[j].posted) })
	seq := map[int]int{}
	var invoices []*Doc
	total := 0
	for _, p := range plans {
		if total >= salesInvoiceTotal-salesReturnCount {
			break
		}
		y := p.posted.Year()
		seq[y]++
		name := fmt.Sprintf("ACC-SINV-%d-%05d", y, seq[y])
		d := g.buildInvoice(name, p)
		invoices = append(invoices, d)
		total++
		if d.Int("docstatus") == 2 && g.rng.chance(50) && total < salesInvoiceTotal-salesReturnCount {
			am := g.buildInvoice(name+"-1", p)
			am.Fields["amended_from"] = name
			setDocstatus(am, 1)
			g.settleInvoice(am, p)
			invoices = append(invoices, am)
			total++
		}
	}
	invoices = append(invoices, g.genReturns(invoices)...)
	for _, d := range invoices {
		g.ds.add(d)
	}
	deriveInvoiceStatuses(invoices, g.today)
}

// buildInvoice creates one Sales Invoice from a plan (totals, items,
// taxes, payment schedule, docstatus and payment state).
func (g *generator) buildInvoice(name string, p invoicePlan) *Doc {
	c, cu := p.company, p.customer
	s := &sellingCalc{currency: p.currency, companyCurrency: c.Currency, convE4: exchangeRate(p.currency, c.Currency, p.posted)}
	s.lines = g.pickLines(p.currency, g.rng.between(1, 6))
	if p.currency == c.Currency && (c.Abbr != "DSUS" || g.rng.chance(60)) {
		s.taxRateBP = c.TaxRateBP
	}
	s.disableRounded = g.rng.chance(20)
	s.compute()

	d := g.newDoc("Sales Invoice", name, "accounts@demo.example", p.posted)
	f := d.Fields
	f["title"] = cu.Name
	f["naming_series"] = "ACC-SINV-.YYYY.-"
	f["customer"] = cu.Name
	f["customer_name"] = cu.Name
	f["company"] = c.Name
	f["posting_date"] = fmtDate(p.posted)
	f["posting_time"] = fmtTime(p.posted.Hour(), p.posted.Minute(), p.posted.Second(), p.posted.Nanosecond()/1000)
	f["territory"] = cu.Territory
	f["customer_group"] = cu.Group
	f["party_account_currency"] = p.party
	if p.party == c.Currency {
		f["debit_to"] = c.acct("Debtors")
	} else {
		f["debit_to"] = c.acct("Debtors USD")
	}
	if g.rng.chance(40) {
		f["po_no"] = fmt.Sprintf("PO-%05d", g.rng.between(1000, 99999))
		f["po_date"] = fmtDate(p.posted.AddDate(0, 0, -g.rng.between(1, 10)))
	}
	fillSellingHeader(d, s)
	income := map[string]bool{}
	g.addSellingItems(d, c, s, func(row map[string]any, l sellingLine) {
		acct := c.acct("Sales")
		if l.item.Group == "Services" {
			acct = c.acct("Service")
		}
		income[acct] = true
		row["income_account"] = acct
		row["expense_account"] = c.acct("Cost of Goods Sold")
		row["cost_center"] = c.acct("Main")
	})
	var accts []string
	for a := range income {
		accts = append(accts, a)
	}
	sort.Strings(accts)
	f["against_income_account"] = joinComma(accts)

	// Payment schedule: one row, or two 50% instalments for customers on
	// "50-50 Net 30/60" terms.
	days := 30
	switch {
	case cu.Individual:
		days = 14
	case cu.Group == "Government":
		days = 60
	}
	payable := s.payable()
	if cu.doc.Str("payment_terms") != "" {
		f["payment_terms_template"] = "50-50 Net 30/60"
		first := roundHalfEven(payable, 2)
		g.addSchedule(d, s, p.posted.AddDate(0, 0, 30), first, 50)
		g.addSchedule(d, s, p.posted.AddDate(0, 0, 60), payable-first, 50)
		f["due_date"] = fmtDate(p.posted.AddDate(0, 0, 60))
	} else {
		g.addSchedule(d, s, p.posted.AddDate(0, 0, days), payable, 100)
		f["due_date"] = fmtDate(p.posted.AddDate(0, 0, days))
	}
	d.Fields["outstanding_amount"] = Decimal(0)

	// docstatus: recent invoices are more often drafts.
	recent := dataEnd.Sub(p.posted) < 45*24*time.Hour
	switch {
	case recent && g.rng.chance(25), !recent && g.rng.chance(2):
		setDocstatus(d, 0)
	case g.rng.chance(4):
		setDocstatus(d, 2)
		setModified(d, p.posted.Add(time.Duration(g.rng.between(1, 72))*time.Hour))
	default:
		setDocstatus(d, 1)
		g.settleInvoice(d, p)
	}
	if d.Int("docstatus") == 0 {
		// A draft has its outstanding set at save time.
		g.setOutstanding(d, p, 0)
	}
	return d
}

func (g *generator) addSchedule(d *Doc, s *sellingCalc, due time.Time, amountC int64, portion int64) {
	g.addChild(d, "payment_schedule", map[string]any{
		"due_date":            fmtDate(due),
		"invoice_portion":     Units(portion),
		"payment_amount":      Cents(amountC),
		"outstanding":         Cents(amountC),
		"base_payment_amount": Cents(s.base(amountC)),
		"discount_type":       "Percentage",
	})
}

// partyTotal is the invoice total in party account currency, in cents.
func partyTotal(d *Doc) int64 {
	field := "rounded_total"
	if d.Int("disable_rounded_total") == 1 {
		field = "grand_total"
	}
	if d.Str("party_account_currency") != d.Str("currency") {
		field = "base_" + field
	}
	return d.Dec(field).Cents()
}

// setOutstanding records a paid amount (party currency cents).
func (g *generator) setOutstanding(d *Doc, p invoicePlan, paidC int64) {
	total := partyTotal(d)
	d.Fields["outstanding_amount"] = Cents(total - paidC)
	// Allocate the payment over the schedule rows in document currency.
	remaining := paidC
	if d.Str("party_account_currency") != d.Str("currency") && total != 0 {
		remaining = roundHalfEven(paidC*d.Dec("rounded_total").Cents(), total)
		if d.Int("disable_rounded_total") == 1 {
			remaining = roundHalfEven(paidC*d.Dec("grand_total").Cents(), total)
		}
	}
	for _, row := range d.Children["payment_schedule"] {
		amt := row.Dec("payment_amount").Cents()
		pay := min(amt, remaining)
		remaining -= pay
		row.Fields["paid_amount"] = Cents(pay)
		row.Fields["outstanding"] = Cents(amt - pay)
	}
}

// settleInvoice decides how much of a submitted invoice has been paid by
// dataEnd, based on its age.
func (g *generator) settleInvoice(d *Doc, p invoicePlan) {
	total := partyTotal(d)
	age := dataEnd.Sub(p.posted).Hours() / 24
	r := g.rng.intn(100)
	var paid int64
	switch {
	case age > 75 && r < 84, age > 30 && age <= 75 && r < 55, age <= 30 && r < 20:
		paid = total
	case age > 75 && r < 91, age > 30 && age <= 75 && r < 75, age <= 30 && r < 35:
		if rows := d.Children["payment_schedule"]; len(rows) == 2 {
			paid = total - partyShare(d, rows[1])
		} else {
			paid = roundHalfEven(total*int64(g.rng.between(20, 80)), 100)
		}
	}
	g.setOutstanding(d, p, paid)
	if paid > 0 {
		setModified(d, p.posted.AddDate(0, 0, g.rng.between(3, 40)))
	}
}

// partyShare converts a schedule row amount into party currency cents.
func partyShare(d *Doc, row *Doc) int64 {
	if d.Str("party_account_currency") != d.Str("currency") {
		return row.Dec("base_payment_amount").Cents()
	}
	return row.Dec("payment_amount").Cents()
}

// genReturns creates credit notes (is_return) against submitted invoices.
func (g *generator) genReturns(invoices []*Doc) []*Doc {
	var candidates []*Doc
	for _, d := range invoices {
		if d.Int("docstatus") == 1 && d.Str("posting_date") < "2026-05-01" {
			candidates = append(candidates, d)
		}
	}
	picked := map[string]bool{}
	type ret struct {
		orig   *Doc
		posted time.Time
	}
	var rets []ret
	for len(rets) < salesReturnCount {
		o := candidates[g.rng.intn(len(candidates))]
		if picked[o.Name] {
			continue
		}
		picked[o.Name] = true
		op, _ := time.Parse("2006-01-02", o.Str("posting_date"))
		posted := g.at(op.AddDate(0, 0, g.rng.between(5, 40)))
		rets = append(rets, ret{o, posted})
	}
	sort.SliceStable(rets, func(i, j int) bool { return rets[i].posted.Before(rets[j].posted) })
	seq := map[int]int{}
	var out []*Doc
	for _, r := range rets {
		y := r.posted.Year()
		seq[y]++
		out = append(out, g.buildReturn(fmt.Sprintf("ACC-SINV-RET-%d-%05d", y, seq[y]), r.orig, r.posted))
	}
	return out
}

func (g *generator) buildReturn(name string, o *Doc, posted time.Time) *Doc {
	var c *companyInfo
	for _, cc := range g.companies {
		if cc.Name == o.Str("company") {
			c = cc
		}
	}
	cu := o.Str("customer")
	s := &sellingCalc{currency: o.Str("currency"), companyCurrency: c.Currency,
		convE4: int64(o.Dec("conversion_rate")) / (decimalScale / 10000), disableRounded: o.Int("disable_rounded_total") == 1}
	first := o.Children["items"][0]
	var it *itemInfo
	for _, ii := range g.items {
		if ii.Code == first.Str("item_code") {
			it = ii
		}
	}
	qty := first.Dec("qty").Cents()
	retQty := max(qty/2/100*100, 100)
	if it.Fractional {
		retQty = max(qty/2/25*25, 25)
	}
	s.lines = []sellingLine{{item: it, qtyH: -retQty, rateC: first.Dec("rate").Cents()}}
	if len(o.Children["taxes"]) > 0 {
		s.taxRateBP = c.TaxRateBP
	}
	s.compute()
	d := g.newDoc("Sales Invoice", name, "accounts@demo.example", posted)
	f := d.Fields
	for _, k := range []string{"title", "customer", "customer_name", "company", "territory", "customer_group",
		"party_account_currency", "debit_to", "po_no", "po_date", "against_income_account"} {
		if v, ok := o.Fields[k]; ok {
			f[k] = v
		}
	}
	f["naming_series"] = "ACC-SINV-RET-.YYYY.-"
	f["is_return"] = int64(1)
	f["return_against"] = o.Name
	f["posting_date"] = fmtDate(posted)
	f["posting_time"] = fmtTime(posted.Hour(), posted.Minute(), posted.Second(), posted.Nanosecond()/1000)
	f["due_date"] = fmtDate(posted)
	f["remarks"] = "Return against " + o.Name + " (" + cu + ")"
	fillSellingHeader(d, s)
	g.addSellingItems(d, c, s, func(row map[string]any, l sellingLine) {
		row["income_account"] = first.Fields["income_account"]
		row["expense_account"] = c.acct("Cost of Goods Sold")
		row["cost_center"] = c.acct("Main")
		row["sales_invoice_item"] = first.Name
	})
	setDocstatus(d, 1)
	total := partyTotal(d)
	if g.rng.chance(50) {
		d.Fields["outstanding_amount"] = Cents(total) // credit still open
	} else {
		d.Fields["outstanding_amount"] = Decimal(0) // refunded
	}
	return d
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}
