package frappetest

import (
	"sort"
	"time"
)

// The ledger stage posts every submitted (and cancelled) voucher to the
// General Ledger and, for receivable and payable lines, to the Payment
// Ledger, the way ERPNext's make_gl_entries / create_payment_ledger_entry
// do: one GL Entry per account line (similar lines merged), negative
// amounts moved to the other side, a cancelled voucher's entries and their
// reversals all flagged is_cancelled and its Payment Ledger Entries
// delinked. Every voucher balances to the cent.

// glLine is one GL Entry of a voucher before naming. amountC is signed in
// company currency (debit positive); accC in account currency; txnC in
// transaction currency.
type glLine struct {
	account, accountCcy string
	partyType, party    string
	amountC, accC, txnC int64
	against             string
	againstType         string
	againstNo           string
	costCenter, project string
	dueDate             string
	isAdvance           bool
}

// glVoucher is a posted voucher and its lines.
type glVoucher struct {
	doc       *Doc
	company   *companyInfo
	lines     []*glLine
	created   time.Time
	cancelAt  time.Time
	cancelled bool
	opening   bool
	subtype   string
	remarks   string
	txnCcy    string
	txnRate   Decimal
}

// accountInfo caches what posting needs about an account.
type accountInfo struct{ currency, accountType string }

func (g *generator) genLedgers() {
	accounts := map[string]accountInfo{}
	for _, a := range g.docs("Account") {
		accounts[a.Name] = accountInfo{a.Str("account_currency"), a.Str("account_type")}
	}
	var vouchers []*glVoucher
	for _, dt := range []string{"Journal Entry", "Stock Entry", "Sales Invoice", "Purchase Invoice", "Payment Entry"} {
		for _, d := range g.docs(dt) {
			if d.Int("docstatus") == 0 {
				continue
			}
			v := g.voucherGL(d)
			v.created = mustDatetime(d.Str("creation"))
			if d.Int("docstatus") == 2 {
				v.cancelled = true
				v.cancelAt = mustDatetime(d.Str("modified"))
			}
			checkBalanced(v)
			vouchers = append(vouchers, v)
		}
	}
	g.emitLedgers(vouchers, accounts)
}

// checkBalanced panics if a voucher's debits and credits differ: the
// generator must never produce an unbalanced ledger.
func checkBalanced(v *glVoucher) {
	var sum int64
	for _, l := range v.lines {
		sum += l.amountC
	}
	if sum != 0 {
		panic("frappetest: unbalanced voucher " + v.doc.Name)
	}
}

// ledgerEntry is one GL Entry to write: a voucher line, possibly reversed.
type ledgerEntry struct {
	v       *glVoucher
	l       *glLine
	reverse bool
	created time.Time
}

func (g *generator) emitLedgers(vouchers []*glVoucher, accounts map[string]accountInfo) {
	var list []ledgerEntry
	for _, v := range vouchers {
		for i, l := range v.lines {
			list = append(list, ledgerEntry{v: v, l: l, created: v.created.Add(time.Duration(i) * time.Microsecond)})
		}
		if v.cancelled {
			for i, l := range v.lines {
				list = append(list, ledgerEntry{v: v, l: l, reverse: true, created: v.cancelAt.Add(time.Duration(i) * time.Microsecond)})
			}
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].created.Before(list[j].created) })
	names := series{}
	for _, e := range list {
		gle := g.glEntryDoc(names.next("ACC-GLE-", e.created.Year()), e, accounts)
		g.ds.add(gle)
		if t := accounts[e.l.account].accountType; (t == "Receivable" || t == "Payable") && e.l.party != "" {
			g.ds.add(g.paymentLedgerDoc(gle, e, t))
		}
	}
}

func (g *generator) glEntryDoc(name string, e ledgerEntry, accounts map[string]accountInfo) *Doc {
	v, l := e.v, e.l
	d := g.newDoc("GL Entry", name, v.doc.Str("owner"), e.created)
	f := d.Fields
	date := v.doc.Str("posting_date")
	f["posting_date"] = date
	f["account"] = l.account
	f["account_currency"] = accounts[l.account].currency
	if l.partyType != "" {
		f["party_type"], f["party"] = l.partyType, l.party
	}
	if l.costCenter != "" {
		f["cost_center"] = l.costCenter
	}
	if l.project != "" {
		f["project"] = l.project
	}
	amount, acc, txn := l.amountC, l.accC, l.txnC
	if e.reverse {
		amount, acc, txn = -amount, -acc, -txn
	}
	debitCredit(f, "debit", "credit", amount)
	debitCredit(f, "debit_in_account_currency", "credit_in_account_currency", acc)
	debitCredit(f, "debit_in_transaction_currency", "credit_in_transaction_currency", txn)
	f["transaction_currency"] = v.txnCcy
	f["transaction_exchange_rate"] = v.txnRate
	f["against"] = l.against
	if l.againstNo != "" {
		f["against_voucher_type"], f["against_voucher"] = l.againstType, l.againstNo
	}
	f["voucher_type"] = v.doc.DocType
	f["voucher_no"] = v.doc.Name
	f["voucher_subtype"] = v.subtype
	f["remarks"] = v.remarks
	f["is_opening"] = "No"
	if v.opening {
		f["is_opening"] = "Yes"
	}
	f["is_advance"] = "No"
	if l.isAdvance {
		f["is_advance"] = "Yes"
	}
	f["fiscal_year"] = fiscalYearOf(date)
	f["company"] = v.company.Name
	if l.dueDate != "" {
		f["due_date"] = l.dueDate
	}
	if v.cancelled {
		f["is_cancelled"] = int64(1)
	}
	f["docstatus"] = int64(1)
	return d
}

// debitCredit puts a signed amount on the debit or credit column.
func debitCredit(f map[string]any, debit, credit string, amount int64) {
	if amount >= 0 {
		f[debit], f[credit] = Cents(amount), Decimal(0)
	} else {
		f[debit], f[credit] = Decimal(0), Cents(-amount)
	}
}

// paymentLedgerDoc is the Payment Ledger Entry of a receivable or payable
// GL line: amounts are debit - credit for receivables and credit - debit
// for payables, against the referenced voucher or the voucher itself.
func (g *generator) paymentLedgerDoc(gle *Doc, e ledgerEntry, accountType string) *Doc {
	d := g.newDocAt("Payment Ledger Entry", g.rng.hash(10), gle.Str("owner"), gle.Str("creation"))
	f := d.Fields
	for _, k := range []string{"posting_date", "account", "party_type", "party", "voucher_type", "voucher_no",
		"account_currency", "company", "cost_center", "due_date", "remarks", "project"} {
		if v, ok := gle.Fields[k]; ok && v != nil {
			f[k] = v
		}
	}
	f["account_type"] = accountType
	f["against_voucher_type"], f["against_voucher_no"] = gle.Fields["voucher_type"], gle.Fields["voucher_no"]
	if gle.Fields["against_voucher"] != nil {
		f["against_voucher_type"], f["against_voucher_no"] = gle.Fields["against_voucher_type"], gle.Fields["against_voucher"]
	}
	amount := gle.Dec("debit") - gle.Dec("credit")
	acc := gle.Dec("debit_in_account_currency") - gle.Dec("credit_in_account_currency")
	if accountType == "Payable" {
		amount, acc = -amount, -acc
	}
	f["amount"] = amount
	f["amount_in_account_currency"] = acc
	if e.v.cancelled {
		f["delinked"] = int64(1)
	}
	f["docstatus"] = int64(1)
	return d
}
