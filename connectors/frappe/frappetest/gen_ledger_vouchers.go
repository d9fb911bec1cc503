package frappetest

import (
	"sort"
	"time"
)

// GL lines per voucher type (ERPNext's make_gl_entries of each doctype,
// after merge_similar_entries and the round-off entry).

func (g *generator) voucherGL(d *Doc) *glVoucher {
	c := g.companyByName(d.Str("company"))
	v := &glVoucher{doc: d, company: c, remarks: d.Str("remarks"), txnCcy: c.Currency, txnRate: Units(1)}
	if v.remarks == "" {
		v.remarks = "No Remarks"
	}
	switch d.DocType {
	case "Sales Invoice":
		g.salesInvoiceGL(v)
	case "Purchase Invoice":
		g.purchaseInvoiceGL(v)
	case "Payment Entry":
		g.paymentEntryGL(v)
	case "Stock Entry":
		g.stockEntryGL(v)
	case "Journal Entry":
		g.journalEntryGL(v)
	}
	return v
}

// add appends a line; it returns the line for further fields.
func (v *glVoucher) add(account string, amountC, accC, txnC int64, against string) *glLine {
	l := &glLine{account: account, amountC: amountC, accC: accC, txnC: txnC, against: against, costCenter: v.company.acct("Main")}
	v.lines = append(v.lines, l)
	return l
}

// roundOff posts the residual of rounding to the company's Round Off
// account, like make_round_off_gle.
func (v *glVoucher) roundOff(txnC int64) {
	var sum int64
	for _, l := range v.lines {
		sum += l.amountC
	}
	if sum != 0 {
		v.add(v.company.acct("Round Off"), -sum, -sum, txnC, "")
	}
}

// stockLines posts the stock value change of a voucher between its stock
// account and a counter account.
func (g *generator) stockLines(v *glVoucher, counter string) {
	var value int64
	for _, m := range g.stock.byVoucher[v.doc.Name] {
		value += m.valueC
	}
	if value == 0 {
		return
	}
	stockAcct := v.company.acct("Stock In Hand")
	v.add(counter, -value, -value, -value, stockAcct)
	v.add(stockAcct, value, value, value, counter)
}

func payableFields(d *Doc) (doc, base string) {
	if d.Int("disable_rounded_total") == 1 {
		return "grand_total", "base_grand_total"
	}
	return "rounded_total", "base_rounded_total"
}

// sortedAccounts returns map keys in order.
func sortedAccounts(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (g *generator) salesInvoiceGL(v *glVoucher) {
	d, c := v.doc, v.company
	v.subtype = "Sales Invoice"
	if d.Int("is_return") == 1 {
		v.subtype = "Credit Note"
	}
	v.txnCcy, v.txnRate = d.Str("currency"), d.Dec("conversion_rate")
	docF, baseF := payableFields(d)
	party := d.Str("customer")
	pl := v.add(d.Str("debit_to"), d.Dec(baseF).Cents(), partyTotal(d), d.Dec(docF).Cents(), d.Str("against_income_account"))
	pl.partyType, pl.party = "Customer", party
	pl.againstType, pl.againstNo = "Sales Invoice", d.Name
	pl.costCenter, pl.project, pl.dueDate = d.Str("cost_center"), d.Str("project"), d.Str("due_date")
	income, incomeTxn := map[string]int64{}, map[string]int64{}
	for _, it := range d.Children["items"] {
		income[it.Str("income_account")] += it.Dec("base_net_amount").Cents()
		incomeTxn[it.Str("income_account")] += it.Dec("net_amount").Cents()
	}
	for _, a := range sortedAccounts(income) {
		l := v.add(a, -income[a], -income[a], -incomeTxn[a], party)
		l.project = d.Str("project")
	}
	for _, t := range d.Children["taxes"] {
		base := t.Dec("base_tax_amount_after_discount_amount").Cents()
		l := v.add(t.Str("account_head"), -base, -base, -t.Dec("tax_amount_after_discount_amount").Cents(), party)
		l.costCenter = t.Str("cost_center")
	}
	v.roundOff(-d.Dec("rounding_adjustment").Cents())
	g.stockLines(v, c.acct("Cost of Goods Sold"))
}

func (g *generator) purchaseInvoiceGL(v *glVoucher) {
	d, c := v.doc, v.company
	v.subtype = "Purchase Invoice"
	if d.Int("is_return") == 1 {
		v.subtype = "Debit Note"
	}
	v.txnCcy, v.txnRate = d.Str("currency"), d.Dec("conversion_rate")
	docF, baseF := payableFields(d)
	supplier := d.Str("supplier")
	pl := v.add(d.Str("credit_to"), -d.Dec(baseF).Cents(), -partyTotal(d), -d.Dec(docF).Cents(), d.Str("against_expense_account"))
	pl.partyType, pl.party = "Supplier", supplier
	pl.againstType, pl.againstNo = "Purchase Invoice", d.Name
	pl.costCenter, pl.project, pl.dueDate = d.Str("cost_center"), d.Str("project"), d.Str("due_date")
	stockAcct := c.acct("Stock In Hand")
	expense, expenseTxn := map[string]int64{}, map[string]int64{}
	for _, it := range d.Children["items"] {
		a := it.Str("expense_account")
		expenseTxn[a] += it.Dec("net_amount").Cents()
		if a != stockAcct || d.Int("update_stock") != 1 {
			expense[a] += it.Dec("base_net_amount").Cents()
		}
	}
	if d.Int("update_stock") == 1 {
		for _, m := range g.stock.byVoucher[d.Name] {
			expense[stockAcct] += m.valueC
		}
	}
	for _, a := range sortedAccounts(expense) {
		l := v.add(a, expense[a], expense[a], expenseTxn[a], supplier)
		l.project = d.Str("project")
	}
	for _, t := range d.Children["taxes"] {
		base := t.Dec("base_tax_amount_after_discount_amount").Cents()
		l := v.add(t.Str("account_head"), base, base, t.Dec("tax_amount_after_discount_amount").Cents(), supplier)
		l.costCenter = t.Str("cost_center")
	}
	v.roundOff(d.Dec("rounding_adjustment").Cents())
}

func (g *generator) paymentEntryGL(v *glVoucher) {
	d := v.doc
	v.subtype = d.Str("payment_type")
	receive := d.Str("payment_type") == "Receive"
	partyAcct, bankAcct := d.Str("paid_from"), d.Str("paid_to")
	partyCcy := d.Str("paid_from_account_currency")
	rate := d.Dec("source_exchange_rate")
	if !receive {
		partyAcct, bankAcct = bankAcct, partyAcct
		partyCcy = d.Str("paid_to_account_currency")
		rate = d.Dec("target_exchange_rate")
	}
	v.txnCcy, v.txnRate = partyCcy, rate
	rateE4 := int64(rate) / (decimalScale / 10000)
	// Receivable party lines are credited, payable ones debited; a negative
	// allocation (a refund against a return) flips to the other side.
	sign := int64(-1)
	if d.Str("party_type") == "Supplier" {
		sign = 1
	}
	party := d.Str("party")
	base := d.Dec("base_received_amount").Cents()
	if receive {
		v.add(bankAcct, base, base, base, party)
	} else {
		v.add(bankAcct, -base, -base, -base, party)
	}
	for _, r := range d.Children["references"] {
		alloc := r.Dec("allocated_amount").Cents()
		b := roundHalfEven(abs64(alloc)*rateE4, 10000)
		if alloc < 0 {
			b = -b
		}
		l := v.add(partyAcct, sign*b, sign*alloc, sign*alloc, bankAcct)
		l.partyType, l.party = d.Str("party_type"), party
		l.againstType, l.againstNo = r.Str("reference_doctype"), r.Str("reference_name")
	}
	if un := d.Dec("unallocated_amount").Cents(); un != 0 {
		b := roundHalfEven(un*rateE4, 10000)
		l := v.add(partyAcct, sign*b, sign*un, sign*un, bankAcct)
		l.partyType, l.party, l.isAdvance = d.Str("party_type"), party, true
	}
}

func (g *generator) stockEntryGL(v *glVoucher) {
	d := v.doc
	v.subtype = d.Str("purpose")
	v.opening = d.Str("is_opening") == "Yes"
	counter := map[string]int64{}
	for _, m := range g.stock.byVoucher[d.Name] {
		counter[m.line.Str("expense_account")] += m.valueC
	}
	stockAcct := v.company.acct("Stock In Hand")
	var total int64
	for _, a := range sortedAccounts(counter) {
		v.add(a, -counter[a], -counter[a], -counter[a], stockAcct)
		total += counter[a]
	}
	v.add(stockAcct, total, total, total, joinComma(sortedAccounts(counter)))
}

func (g *generator) journalEntryGL(v *glVoucher) {
	d := v.doc
	v.subtype = d.Str("voucher_type")
	v.opening = d.Str("is_opening") == "Yes"
	v.remarks = d.Str("remark")
	for _, a := range d.Children["accounts"] {
		amt := a.Dec("debit").Cents() - a.Dec("credit").Cents()
		l := v.add(a.Str("account"), amt, amt, amt, a.Str("against_account"))
		l.costCenter = a.Str("cost_center")
	}
}

// openingCapital is each company's opening bank balance (cents), paid in
// as share capital.
var openingCapital = map[string]int64{"DHNZ": 450_000_00, "DTAU": 320_000_00, "DSUS": 260_000_00}

// genOpeningJournals books the opening bank balance of every company as an
// opening Journal Entry (cleared at once).
func (g *generator) genOpeningJournals() {
	for i, c := range g.companies {
		at := time.Date(2025, 1, 1, 0, 10+i, 0, 0, time.UTC)
		d := g.newDoc("Journal Entry", "ACC-JV-2025-"+itoaPad(i+1, 5), "Administrator", at)
		f := d.Fields
		amt := openingCapital[c.Abbr]
		f["title"] = "Opening balances"
		f["voucher_type"] = "Opening Entry"
		f["naming_series"] = "ACC-JV-.YYYY.-"
		f["company"] = c.Name
		f["posting_date"] = "2025-01-01"
		f["cheque_no"] = "OPENING-" + c.Abbr
		f["cheque_date"] = "2025-01-01"
		f["clearance_date"] = "2025-01-01"
		f["is_opening"] = "Yes"
		f["user_remark"] = "Opening bank balance"
		f["remark"] = "Reference #OPENING-" + c.Abbr + " dated 01-01-2025\nOpening bank balance"
		f["total_debit"], f["total_credit"] = Cents(amt), Cents(amt)
		f["total_amount_currency"] = c.Currency
		f["total_amount"] = Cents(amt)
		f["total_amount_in_words"] = moneyInWords(amt, c.Currency)
		for _, row := range []struct {
			acct, against string
			dr, cr        int64
		}{{c.acct(c.Bank), c.acct("Capital Stock"), amt, 0}, {c.acct("Capital Stock"), c.acct(c.Bank), 0, amt}} {
			r := map[string]any{
				"account": row.acct, "account_currency": c.Currency, "exchange_rate": Units(1),
				"debit_in_account_currency": Cents(row.dr), "debit": Cents(row.dr),
				"credit_in_account_currency": Cents(row.cr), "credit": Cents(row.cr),
				"cost_center": c.acct("Main"), "is_advance": "No", "against_account": row.against,
			}
			if row.acct == c.acct(c.Bank) {
				r["account_type"] = "Bank"
				r["bank_account"] = g.bankAccounts[c.Name].Name
			}
			g.addChild(d, "accounts", r)
		}
		setDocstatus(d, 1)
		g.ds.add(d)
	}
}
