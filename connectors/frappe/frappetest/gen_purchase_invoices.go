package frappetest

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Purchase invoices: goods receipts against purchase orders (update_stock),
// service bills without an order, and debit notes. Payment state depends
// only on the seed; the payments stage books the matching Payment Entries.

const (
	directPurchaseInvoices = 72
	recentPurchaseInvoices = 10
	purchaseReturnCount    = 6
)

// piSpec is one purchase invoice before naming.
type piSpec struct {
	plan    buyPlan
	rc      *receipt // nil for a service bill
	lines   []sellingLine
	project string
}

func (g *generator) genPurchasing() {
	receipts := g.genPurchaseOrders()
	var specs []piSpec
	for i := range receipts {
		specs = append(specs, g.receiptSpec(&receipts[i]))
	}
	for i := 0; i < directPurchaseInvoices; i++ {
		specs = append(specs, g.serviceBillSpec(time.Date(2025, 1, 3, 0, 0, 0, 0, time.UTC)))
	}
	// Bills of the last weeks: mostly not yet due.
	for i := 0; i < recentPurchaseInvoices; i++ {
		specs = append(specs, g.serviceBillSpec(dataEnd.AddDate(0, 0, -12)))
	}
	sort.SliceStable(specs, func(i, j int) bool { return specs[i].plan.posted.Before(specs[j].plan.posted) })
	names := series{}
	bills := map[string]int{}
	var invoices []*Doc
	for _, sp := range specs {
		invoices = append(invoices, g.buildPurchaseInvoice(names.next("ACC-PINV-", sp.plan.posted.Year()), sp, bills))
	}
	invoices = append(invoices, g.genPurchaseReturns(invoices)...)
	for _, d := range invoices {
		g.ds.add(d)
	}
	deriveInvoiceStatuses(invoices, g.today)
	g.projectTotals()
}

func (g *generator) supplierByName(name string) *supplierInfo {
	for _, s := range g.suppliers {
		if s.Name == name {
			return s
		}
	}
	panic("frappetest: unknown supplier " + name)
}

func (g *generator) receiptSpec(rc *receipt) piSpec {
	po := rc.po
	p := buyPlan{posted: rc.posted, company: g.companyByName(po.Str("company")),
		supplier: g.supplierByName(po.Str("supplier")), currency: po.Str("currency")}
	sp := piSpec{plan: p, rc: rc}
	for i, row := range po.Children["items"] {
		if rc.qtyH[i] > 0 {
			sp.lines = append(sp.lines, sellingLine{item: g.itemByCode(row.Str("item_code")), qtyH: rc.qtyH[i], rateC: row.Dec("rate").Cents()})
		}
	}
	return sp
}

var serviceItems = []string{"SVC-CONSULT", "SVC-SUPPORT", "SVC-DELIVERY", "SVC-TRAINING", "SVC-DESIGN", "SVC-INSTALL"}

func (g *generator) serviceBillSpec(from time.Time) piSpec {
	p := g.planPurchase(from, dataEnd, true)
	sp := piSpec{plan: p}
	used := map[string]bool{}
	for n := g.rng.between(1, 2); len(sp.lines) < n; {
		code := serviceItems[g.rng.intn(len(serviceItems))]
		if used[code] {
			continue
		}
		used[code] = true
		it := g.itemByCode(code)
		qtyH := int64(g.rng.between(1, 3)) * 100
		if it.Fractional {
			qtyH = int64(g.rng.between(8, 160)) * 25
		}
		sp.lines = append(sp.lines, sellingLine{item: it, qtyH: qtyH, rateC: costIn(it, p.currency)})
	}
	date := fmtDate(p.posted)
	for _, pr := range g.projects {
		if pr.Str("company") == p.company.Name && pr.Str("status") != "Cancelled" &&
			date >= pr.Str("expected_start_date") && date <= pr.Str("expected_end_date") && g.rng.chance(30) {
			sp.project = pr.Name
			break
		}
	}
	return sp
}

// billNo returns the supplier's next invoice number.
func (g *generator) billNo(bills map[string]int, supplier string) string {
	if bills[supplier] == 0 {
		bills[supplier] = g.rng.between(1000, 80000)
	}
	bills[supplier] += g.rng.between(1, 40)
	prefix := strings.ToUpper(strings.ReplaceAll(slug(supplier), "-", ""))
	if len(prefix) > 3 {
		prefix = prefix[:3]
	}
	return fmt.Sprintf("%s-%05d", prefix, bills[supplier])
}

func (g *generator) buildPurchaseInvoice(name string, sp piSpec, bills map[string]int) *Doc {
	p := sp.plan
	c, su := p.company, p.supplier
	s := &sellingCalc{currency: p.currency, companyCurrency: c.Currency, convE4: exchangeRate(p.currency, c.Currency, p.posted)}
	s.lines = sp.lines
	if p.currency == c.Currency && c.Abbr != "DSUS" {
		s.taxRateBP = c.TaxRateBP
	}
	s.disableRounded = true
	s.compute()
	d := g.newDoc("Purchase Invoice", name, "accounts@demo.example", p.posted)
	f := d.Fields
	f["title"] = su.Name
	f["naming_series"] = "ACC-PINV-.YYYY.-"
	f["supplier"] = su.Name
	f["supplier_name"] = su.Name
	f["supplier_group"] = su.Group
	f["company"] = c.Name
	f["cost_center"] = c.acct("Main")
	setPosting(d, p.posted)
	f["set_posting_time"] = int64(1)
	f["bill_no"] = g.billNo(bills, su.Name)
	billDate := p.posted.AddDate(0, 0, -g.rng.between(0, 5))
	f["bill_date"] = fmtDate(billDate)
	f["remarks"] = "Against Supplier Invoice " + f["bill_no"].(string) + " dated " + formatDateDMY(fmtDate(billDate))
	days := 30
	if su.doc.Str("payment_terms") == "Net 14" {
		days = 14
	}
	due := p.posted.AddDate(0, 0, days)
	f["due_date"] = fmtDate(due)
	f["credit_to"] = c.acct("Creditors")
	f["party_account_currency"] = c.Currency
	if sp.project != "" {
		f["project"] = sp.project
	}
	fillBuyingHeader(d, s)
	expense := c.acct("Administrative Expenses")
	if sp.rc != nil {
		f["update_stock"] = int64(1)
		f["set_warehouse"] = c.acct("Stores")
		f["per_received"] = Units(100)
		expense = c.acct("Stock In Hand")
	}
	poRows := map[string]*Doc{}
	if sp.rc != nil {
		for _, r := range sp.rc.po.Children["items"] {
			poRows[r.Str("item_code")] = r
		}
	}
	g.addBuyingItems(d, c, s, func(_ int, row map[string]any, l sellingLine) {
		row["expense_account"] = expense
		if sp.project != "" {
			row["project"] = sp.project
		}
		if sp.rc != nil {
			row["warehouse"] = c.acct("Stores")
			row["received_qty"] = qtyDec(l.qtyH)
			row["purchase_order"] = sp.rc.po.Name
			row["po_detail"] = poRows[l.item.Code].Name
		}
	})
	f["against_expense_account"] = expense
	g.addChild(d, "payment_schedule", map[string]any{
		"due_date":            fmtDate(due),
		"invoice_portion":     Units(100),
		"payment_amount":      Cents(s.payable()),
		"outstanding":         Cents(s.payable()),
		"base_payment_amount": Cents(s.basePayable()),
		"discount_type":       "Percentage",
	})
	age := dataEnd.Sub(p.posted).Hours() / 24
	switch {
	case sp.rc != nil:
		setDocstatus(d, 1)
	case age < 30 && g.rng.chance(20), age >= 30 && g.rng.chance(2):
		setDocstatus(d, 0)
	case g.rng.chance(6):
		setDocstatus(d, 2)
		setModified(d, p.posted.Add(time.Duration(g.rng.between(2, 96))*time.Hour))
	default:
		setDocstatus(d, 1)
	}
	g.setOutstanding(d, invoicePlan{}, 0)
	if d.Int("docstatus") == 1 {
		g.settlePurchase(d, p.posted, su.doc.Int("on_hold") == 1)
	}
	return d
}

// settlePurchase decides how much of a submitted bill was paid by dataEnd;
// the payment time is recorded as the invoice's modified timestamp.
func (g *generator) settlePurchase(d *Doc, posted time.Time, onHold bool) {
	total := partyTotal(d)
	age := dataEnd.Sub(posted).Hours() / 24
	r := g.rng.intn(100)
	var paid int64
	switch {
	case onHold:
	case age > 45 && r < 90, age > 15 && age <= 45 && r < 50, age <= 15 && r < 15:
		paid = total
	case age > 45 && r < 95, age > 15 && r < 65, r < 40:
		paid = roundHalfEven(total*int64(g.rng.between(30, 70)), 100)
	}
	g.setOutstanding(d, invoicePlan{}, paid)
	if paid > 0 {
		due := mustDate(d.Str("due_date"))
		pay := g.at(due.AddDate(0, 0, -g.rng.between(0, 10)))
		pay = minTime(maxTime(pay, posted.Add(time.Hour)), dataEnd.Add(17*time.Hour))
		setModified(d, pay)
	}
}

// genPurchaseReturns creates debit notes against goods receipts.
func (g *generator) genPurchaseReturns(invoices []*Doc) []*Doc {
	var candidates []*Doc
	for _, d := range invoices {
		if d.Int("docstatus") == 1 && d.Int("update_stock") == 1 && d.Str("posting_date") < "2026-05-01" {
			candidates = append(candidates, d)
		}
	}
	picked := map[string]bool{}
	type ret struct {
		orig   *Doc
		posted time.Time
	}
	var rets []ret
	for len(rets) < purchaseReturnCount {
		o := candidates[g.rng.intn(len(candidates))]
		if picked[o.Name] {
			continue
		}
		picked[o.Name] = true
		rets = append(rets, ret{o, g.at(mustDate(o.Str("posting_date")).AddDate(0, 0, g.rng.between(5, 30)))})
	}
	sort.SliceStable(rets, func(i, j int) bool { return rets[i].posted.Before(rets[j].posted) })
	names := series{}
	var out []*Doc
	for _, r := range rets {
		out = append(out, g.buildPurchaseReturn(names.next("ACC-PINV-RET-", r.posted.Year()), r.orig, r.posted))
	}
	return out
}

func (g *generator) buildPurchaseReturn(name string, o *Doc, posted time.Time) *Doc {
	c := g.companyByName(o.Str("company"))
	first := o.Children["items"][0]
	it := g.itemByCode(first.Str("item_code"))
	s := &sellingCalc{currency: o.Str("currency"), companyCurrency: c.Currency,
		convE4: int64(o.Dec("conversion_rate")) / (decimalScale / 10000), disableRounded: true}
	s.lines = []sellingLine{{item: it, qtyH: -splitQty(first.Dec("qty").Cents(), it.Fractional), rateC: first.Dec("rate").Cents()}}
	if len(o.Children["taxes"]) > 0 {
		s.taxRateBP = c.TaxRateBP
	}
	s.compute()
	d := g.newDoc("Purchase Invoice", name, "accounts@demo.example", posted)
	f := d.Fields
	for _, k := range []string{"title", "supplier", "supplier_name", "supplier_group", "company", "cost_center",
		"credit_to", "party_account_currency", "set_warehouse", "against_expense_account", "bill_no", "bill_date"} {
		if v, ok := o.Fields[k]; ok {
			f[k] = v
		}
	}
	f["naming_series"] = "ACC-PINV-RET-.YYYY.-"
	f["is_return"] = int64(1)
	f["return_against"] = o.Name
	f["update_stock"] = int64(1)
	setPosting(d, posted)
	f["set_posting_time"] = int64(1)
	f["due_date"] = fmtDate(posted)
	f["remarks"] = "Return against " + o.Name + " (" + o.Str("supplier") + ")"
	fillBuyingHeader(d, s)
	g.addBuyingItems(d, c, s, func(_ int, row map[string]any, _ sellingLine) {
		row["expense_account"] = first.Fields["expense_account"]
		row["warehouse"] = first.Fields["warehouse"]
		row["received_qty"] = row["qty"]
		row["purchase_invoice_item"] = first.Name
	})
	setDocstatus(d, 1)
	if g.rng.chance(50) {
		f["outstanding_amount"] = Cents(partyTotal(d)) // debit note still open
	} else {
		f["outstanding_amount"] = Decimal(0) // refunded by the supplier
	}
	return d
}

// formatDateDMY renders "YYYY-MM-DD" in Frappe's default dd-mm-yyyy.
func formatDateDMY(date string) string { return date[8:10] + "-" + date[5:7] + "-" + date[:4] }
