package frappetest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// genExtraSalesInvoices adds Options.ExtraSalesInvoices submitted, unpaid
// invoices for benchmarks. They continue each year's naming series after
// the seeded invoices, do not update stock, and carry no payments, so each
// adds one Accounts Receivable row and three to five GL Entries.
func (g *generator) genExtraSalesInvoices() {
	n := g.opts.extraSalesInvoices
	if n <= 0 {
		return
	}
	seq := map[int]int{}
	for _, d := range g.docs("Sales Invoice") {
		if strings.HasPrefix(d.Name, "ACC-SINV-RET-") {
			continue
		}
		y, _ := strconv.Atoi(d.Name[9:13])
		num, _ := strconv.Atoi(strings.SplitN(d.Name[14:], "-", 2)[0])
		seq[y] = max(seq[y], num)
	}
	plans := make([]invoicePlan, n)
	for i := range plans {
		plans[i] = g.planInvoice()
	}
	sort.SliceStable(plans, func(i, j int) bool { return plans[i].posted.Before(plans[j].posted) })
	today := fmtDate(g.today)
	for _, p := range plans {
		y := p.posted.Year()
		seq[y]++
		d := g.buildExtraInvoice(fmt.Sprintf("ACC-SINV-%d-%05d", y, seq[y]), p)
		d.Fields["status"] = invoiceStatus(d, today, false)
		g.ds.add(d)
	}
}

// buildExtraInvoice is a lean submitted, unpaid invoice with one to three
// lines and a single payment-schedule row.
func (g *generator) buildExtraInvoice(name string, p invoicePlan) *Doc {
	c, cu := p.company, p.customer
	s := &sellingCalc{currency: p.currency, companyCurrency: c.Currency, convE4: exchangeRate(p.currency, c.Currency, p.posted)}
	s.lines = g.pickLines(p.currency, g.rng.between(1, 3))
	if p.currency == c.Currency && c.Abbr != "DSUS" {
		s.taxRateBP = c.TaxRateBP
	}
	s.compute()
	d := g.newDoc("Sales Invoice", name, "accounts@demo.example", p.posted)
	f := d.Fields
	f["title"] = cu.Name
	f["naming_series"] = "ACC-SINV-.YYYY.-"
	f["customer"] = cu.Name
	f["customer_name"] = cu.Name
	f["company"] = c.Name
	setPosting(d, p.posted)
	f["territory"] = cu.Territory
	f["customer_group"] = cu.Group
	f["party_account_currency"] = p.party
	f["debit_to"] = c.acct("Debtors")
	if p.party != c.Currency {
		f["debit_to"] = c.acct("Debtors USD")
	}
	f["remarks"] = "Benchmark invoice"
	fillSellingHeader(d, s)
	g.addSellingItems(d, c, s, func(row map[string]any, l sellingLine) {
		acct := c.acct("Sales")
		if l.item.Group == "Services" {
			acct = c.acct("Service")
		}
		row["income_account"] = acct
		row["expense_account"] = c.acct("Cost of Goods Sold")
		row["cost_center"] = c.acct("Main")
	})
	accts := map[string]bool{}
	for _, it := range d.Children["items"] {
		accts[it.Str("income_account")] = true
	}
	var list []string
	for a := range accts {
		list = append(list, a)
	}
	sort.Strings(list)
	f["against_income_account"] = joinComma(list)
	due := p.posted.AddDate(0, 0, 30)
	g.addSchedule(d, s, due, s.payable(), 100)
	f["due_date"] = fmtDate(due)
	setDocstatus(d, 1)
	f["outstanding_amount"] = Cents(partyTotal(d))
	return d
}
