package frappetest

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Payment Entries. Every amount paid on a submitted invoice (invoice total
// minus outstanding_amount, in party account currency) is allocated by
// exactly one submitted Payment Entry reference, so invoice outstanding =
// total - allocations holds exactly. On top of that: refunds of settled
// credit and debit notes (negative allocations), unallocated advances,
// over-payments, cancelled entries and drafts.

// paymentRef is one Payment Entry Reference: allocC is signed, in party
// account currency (negative against a return).
type paymentRef struct {
	doc    *Doc
	allocC int64
}

// paymentSpec is one Payment Entry before naming.
type paymentSpec struct {
	company      *companyInfo
	payType      string // Receive | Pay
	partyType    string // Customer | Supplier
	party        string
	partyAccount string
	partyCcy     string
	rateE4       int64 // party account currency -> company currency
	posted       time.Time
	refs         []paymentRef
	unallocC     int64
	docstatus    int64
	cancelAt     time.Time
}

func (g *generator) genPayments() {
	var specs []*paymentSpec
	specs = append(specs, g.invoicePayments("Sales Invoice")...)
	specs = append(specs, g.invoicePayments("Purchase Invoice")...)
	specs = append(specs, g.returnRefunds("Sales Invoice")...)
	specs = append(specs, g.returnRefunds("Purchase Invoice")...)
	specs = append(specs, g.advancePayments()...)
	specs = append(specs, g.abandonedPayments()...)
	sort.SliceStable(specs, func(i, j int) bool { return specs[i].posted.Before(specs[j].posted) })
	names := series{}
	for _, sp := range specs {
		d := g.buildPayment(names.next("ACC-PAY-", sp.posted.Year()), sp)
		g.ds.add(d)
		if sp.docstatus == 1 {
			for _, r := range sp.refs {
				if mustDatetime(r.doc.Str("modified")).Before(sp.posted) {
					setModified(r.doc, sp.posted.Add(time.Minute))
				}
			}
		}
	}
}

// partyOf describes an invoice's party side.
func (g *generator) partyOf(d *Doc) (c *companyInfo, partyType, party, account, ccy string, rateE4 int64) {
	c = g.companyByName(d.Str("company"))
	ccy = d.Str("party_account_currency")
	rateE4 = 10000
	if ccy != c.Currency {
		rateE4 = int64(d.Dec("conversion_rate")) / (decimalScale / 10000)
	}
	if d.DocType == "Sales Invoice" {
		return c, "Customer", d.Str("customer"), d.Str("debit_to"), ccy, rateE4
	}
	return c, "Supplier", d.Str("supplier"), d.Str("credit_to"), ccy, rateE4
}

// invoicePayments books the paid part of every submitted invoice, batching
// a party's company-currency invoices paid within ten days of each other.
func (g *generator) invoicePayments(doctype string) []*paymentSpec {
	type paid struct {
		d    *Doc
		amt  int64
		date time.Time
		key  string // company, party and party account
	}
	var list []paid
	for _, d := range g.docs(doctype) {
		if d.Int("docstatus") != 1 || d.Int("is_return") == 1 {
			continue
		}
		amt := partyTotal(d) - d.Dec("outstanding_amount").Cents()
		if amt <= 0 {
			continue
		}
		date := dayOf(minTime(mustDatetime(d.Str("modified")), dataEnd))
		date = maxTime(date, mustDate(d.Str("posting_date")))
		key := d.Str("company") + "\x00" + d.Str("customer") + d.Str("supplier") + "\x00" + d.Str("debit_to") + d.Str("credit_to")
		list = append(list, paid{d, amt, date, key})
	}
	sort.SliceStable(list, func(i, j int) bool {
		if ki, kj := list[i].key, list[j].key; ki != kj {
			return ki < kj
		}
		return list[i].date.Before(list[j].date)
	})
	payType := "Receive"
	if doctype == "Purchase Invoice" {
		payType = "Pay"
	}
	var out []*paymentSpec
	var cur *paymentSpec
	var curKey string
	var curStart time.Time
	for _, p := range list {
		c, pt, party, acct, ccy, rate := g.partyOf(p.d)
		if cur == nil || p.key != curKey || ccy != c.Currency || p.date.Sub(curStart) > 10*24*time.Hour || len(cur.refs) >= 3 {
			cur = &paymentSpec{company: c, payType: payType, partyType: pt, party: party, partyAccount: acct,
				partyCcy: ccy, rateE4: rate, docstatus: 1}
			curKey, curStart = p.key, p.date
			out = append(out, cur)
		}
		cur.refs = append(cur.refs, paymentRef{doc: p.d, allocC: p.amt})
		at := maxTime(g.at(p.date), postedAt(p.d).Add(30*time.Minute))
		cur.posted = maxTime(cur.posted, at)
	}
	// A few customers paid more than they owed: the rest stays unallocated.
	n := 0
	for _, sp := range out {
		if sp.partyType == "Customer" && sp.partyCcy == sp.company.Currency && len(sp.refs) == 1 && n < 3 && g.rng.chance(4) {
			sp.unallocC = int64(g.rng.between(1, 20)) * 500
			n++
		}
	}
	return out
}

// returnRefunds pays out settled credit notes (and collects settled debit
// notes) with a negative allocation against the return.
func (g *generator) returnRefunds(doctype string) []*paymentSpec {
	var out []*paymentSpec
	for _, d := range g.docs(doctype) {
		if d.Int("docstatus") != 1 || d.Int("is_return") != 1 || d.Dec("outstanding_amount") != 0 {
			continue
		}
		c, pt, party, acct, ccy, rate := g.partyOf(d)
		payType := "Pay"
		if pt == "Supplier" {
			payType = "Receive"
		}
		at := minTime(g.at(mustDate(d.Str("posting_date")).AddDate(0, 0, g.rng.between(2, 15))), dataEnd.Add(16*time.Hour))
		at = maxTime(at, postedAt(d).Add(time.Hour))
		out = append(out, &paymentSpec{company: c, payType: payType, partyType: pt, party: party, partyAccount: acct,
			partyCcy: ccy, rateE4: rate, posted: at, docstatus: 1, refs: []paymentRef{{doc: d, allocC: partyTotal(d)}}})
	}
	return out
}

// advancePayments are unallocated receipts from customers and payments to
// suppliers in the last months.
func (g *generator) advancePayments() []*paymentSpec {
	var out []*paymentSpec
	for _, c := range g.companies {
		var customers []*customerInfo
		for _, cu := range g.customers {
			home := c.Abbr == "DHNZ" && cu.Region == "NZ" || c.Abbr == "DTAU" && cu.Region == "AU" || c.Abbr == "DSUS" && cu.Region == "US"
			if home && !cu.Disabled && !cu.Individual {
				customers = append(customers, cu)
			}
		}
		for i := 0; i < 2; i++ {
			cu := customers[g.rng.intn(len(customers))]
			out = append(out, &paymentSpec{company: c, payType: "Receive", partyType: "Customer", party: cu.Name,
				partyAccount: c.acct("Debtors"), partyCcy: c.Currency, rateE4: 10000, docstatus: 1,
				posted:   g.at(dataEnd.AddDate(0, 0, -g.rng.between(3, 120))),
				unallocC: int64(g.rng.between(5, 60)) * 10000})
		}
		home, _ := g.companySuppliers(c)
		s := home[g.rng.intn(len(home))]
		out = append(out, &paymentSpec{company: c, payType: "Pay", partyType: "Supplier", party: s.Name,
			partyAccount: c.acct("Creditors"), partyCcy: c.Currency, rateE4: 10000, docstatus: 1,
			posted:   g.at(dataEnd.AddDate(0, 0, -g.rng.between(3, 90))),
			unallocC: int64(g.rng.between(10, 80)) * 5000})
	}
	return out
}

// abandonedPayments are entries that never took effect: cancelled ones and
// recent drafts against invoices that are still unpaid.
func (g *generator) abandonedPayments() []*paymentSpec {
	var unpaid []*Doc
	for _, d := range g.docs("Sales Invoice") {
		if d.Int("docstatus") == 1 && d.Int("is_return") == 0 && d.Str("party_account_currency") == g.companyByName(d.Str("company")).Currency &&
			d.Dec("outstanding_amount").Cents() == partyTotal(d) && d.Str("remarks") != "Benchmark invoice" {
			unpaid = append(unpaid, d)
		}
	}
	var out []*paymentSpec
	for i := 0; i < 7 && len(unpaid) > 0; i++ {
		d := unpaid[g.rng.intn(len(unpaid))]
		c, pt, party, acct, ccy, rate := g.partyOf(d)
		sp := &paymentSpec{company: c, payType: "Receive", partyType: pt, party: party, partyAccount: acct,
			partyCcy: ccy, rateE4: rate, refs: []paymentRef{{doc: d, allocC: partyTotal(d)}}}
		from := postedAt(d).Add(2 * time.Hour)
		if i < 4 {
			sp.docstatus = 2
			sp.posted = minTime(maxTime(g.at(dayOf(from).AddDate(0, 0, g.rng.between(1, 20))), from), dataEnd.Add(10*time.Hour))
			sp.cancelAt = sp.posted.Add(time.Duration(g.rng.between(1, 30)) * time.Hour)
		} else {
			sp.posted = maxTime(g.at(dataEnd.AddDate(0, 0, -g.rng.between(0, 6))), from)
		}
		out = append(out, sp)
	}
	return out
}

func (g *generator) buildPayment(name string, sp *paymentSpec) *Doc {
	c := sp.company
	var allocSum, baseParts int64
	for _, r := range sp.refs {
		allocSum += r.allocC
		baseParts += roundHalfEven(abs64(r.allocC)*sp.rateE4, 10000)
	}
	partyAmt := abs64(allocSum) + sp.unallocC
	base := baseParts + roundHalfEven(sp.unallocC*sp.rateE4, 10000)
	bankAcct := c.acct(c.Bank)
	rate := Decimal(sp.rateE4 * (decimalScale / 10000))
	d := g.newDoc("Payment Entry", name, "accounts@demo.example", sp.posted)
	f := d.Fields
	f["naming_series"] = "ACC-PAY-.YYYY.-"
	f["payment_type"] = sp.payType
	setPosting(d, sp.posted)
	delete(f, "posting_time")
	f["company"] = c.Name
	f["cost_center"] = c.acct("Main")
	f["party_type"] = sp.partyType
	f["party"] = sp.party
	f["party_name"] = sp.party
	f["title"] = sp.party
	partyType := "Receivable"
	if sp.partyType == "Supplier" {
		partyType = "Payable"
	}
	if sp.payType == "Receive" {
		f["paid_from"], f["paid_from_account_currency"], f["paid_from_account_type"] = sp.partyAccount, sp.partyCcy, partyType
		f["paid_to"], f["paid_to_account_currency"], f["paid_to_account_type"] = bankAcct, c.Currency, "Bank"
		f["paid_amount"], f["source_exchange_rate"], f["base_paid_amount"] = Cents(partyAmt), rate, Cents(base)
		f["received_amount"], f["target_exchange_rate"], f["base_received_amount"] = Cents(base), Units(1), Cents(base)
	} else {
		f["paid_from"], f["paid_from_account_currency"], f["paid_from_account_type"] = bankAcct, c.Currency, "Bank"
		f["paid_to"], f["paid_to_account_currency"], f["paid_to_account_type"] = sp.partyAccount, sp.partyCcy, partyType
		f["paid_amount"], f["source_exchange_rate"], f["base_paid_amount"] = Cents(base), Units(1), Cents(base)
		f["received_amount"], f["target_exchange_rate"], f["base_received_amount"] = Cents(partyAmt), rate, Cents(base)
	}
	for _, k := range [][2]string{{"paid_amount_after_tax", "paid_amount"}, {"base_paid_amount_after_tax", "base_paid_amount"},
		{"received_amount_after_tax", "received_amount"}, {"base_received_amount_after_tax", "base_received_amount"}} {
		f[k[0]] = f[k[1]]
	}
	f["total_allocated_amount"] = Cents(abs64(allocSum))
	f["base_total_allocated_amount"] = Cents(baseParts)
	f["unallocated_amount"] = Cents(sp.unallocC)
	ba := g.bankAccounts[c.Name]
	f["bank_account"] = ba.Name
	f["bank"] = ba.Str("bank")
	f["bank_account_no"] = ba.Str("bank_account_no")
	mode := "Wire Transfer"
	switch r := g.rng.intn(100); {
	case r < 15:
		mode = "Cheque"
		f["reference_no"] = fmt.Sprintf("CHQ-%06d", g.rng.between(100000, 999999))
	case r < 25 && sp.payType == "Receive" && sp.partyType == "Customer":
		mode = "Credit Card"
		f["reference_no"] = fmt.Sprintf("CARD-%08d", g.rng.between(10000000, 99999999))
	default:
		f["reference_no"] = fmt.Sprintf("TRF%08d", g.rng.between(10000000, 99999999))
	}
	f["mode_of_payment"] = mode
	f["reference_date"] = f["posting_date"]
	for _, r := range sp.refs {
		row := map[string]any{
			"reference_doctype":  r.doc.DocType,
			"reference_name":     r.doc.Name,
			"due_date":           r.doc.Fields["due_date"],
			"total_amount":       Cents(partyTotal(r.doc)),
			"outstanding_amount": Cents(partyTotal(r.doc)),
			"allocated_amount":   Cents(r.allocC),
			"exchange_rate":      rate,
			"account":            sp.partyAccount,
			"account_type":       partyType,
			"payment_type":       sp.payType,
		}
		if r.doc.DocType == "Purchase Invoice" {
			row["bill_no"] = r.doc.Fields["bill_no"]
		}
		g.addChild(d, "references", row)
	}
	f["remarks"] = paymentRemarks(d, sp)
	switch sp.docstatus {
	case 1:
		setDocstatus(d, 1)
		f["status"] = "Submitted"
	case 2:
		setDocstatus(d, 2)
		f["status"] = "Cancelled"
		setModified(d, sp.cancelAt)
	default:
		f["status"] = "Draft"
	}
	return d
}

// paymentRemarks is PaymentEntry.set_remarks: amounts as Python floats.
func paymentRemarks(d *Doc, sp *paymentSpec) string {
	amount := d.Dec("paid_amount")
	verb := "received from"
	if sp.payType == "Pay" {
		amount, verb = d.Dec("received_amount"), "to"
	}
	lines := []string{fmt.Sprintf("Amount %s %s %s %s", sp.partyCcy, pyFloat(amount.Float64()), verb, sp.party)}
	lines = append(lines, fmt.Sprintf("Transaction reference no %s dated %s", d.Str("reference_no"), d.Str("reference_date")))
	for _, r := range sp.refs {
		lines = append(lines, fmt.Sprintf("Amount %s %s against %s %s", sp.partyCcy, pyFloat(Cents(r.allocC).Float64()), r.doc.DocType, r.doc.Name))
	}
	return strings.Join(lines, "\n")
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
