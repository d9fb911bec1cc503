package frappetest

import "sort"

// Bank Reconciliation Statement (bank_reconciliation_statement.py): the
// bank account's GL balance, the payments posted by the report date but
// not cleared by it, payments cleared early, and the resulting bank
// statement balance. get_balance_on checks read permission on the Account
// document, so a User Permission on Company refuses other companies'
// bank accounts.

func runBankReconciliation(rc *reportCtx) (*reportOutput, *apiError) {
	f, ds := rc.f, rc.ds
	cols := []*object{
		col("fieldname", "posting_date", "label", "Posting Date", "fieldtype", "Date", "width", int64(90)),
		col("fieldname", "payment_document", "label", "Payment Document Type", "fieldtype", "Data", "width", int64(220)),
		col("fieldname", "payment_entry", "label", "Payment Document", "fieldtype", "Dynamic Link", "options", "payment_document", "width", int64(220)),
		col("fieldname", "debit", "label", "Debit", "fieldtype", "Currency", "options", "account_currency", "width", int64(120)),
		col("fieldname", "credit", "label", "Credit", "fieldtype", "Currency", "options", "account_currency", "width", int64(120)),
		col("fieldname", "against_account", "label", "Against Account", "fieldtype", "Link", "options", "Account", "width", int64(200)),
		col("fieldname", "reference_no", "label", "Reference", "fieldtype", "Data", "width", int64(100)),
		col("fieldname", "ref_date", "label", "Ref Date", "fieldtype", "Date", "width", int64(110)),
		col("fieldname", "clearance_date", "label", "Clearance Date", "fieldtype", "Date", "width", int64(110)),
		col("fieldname", "account_currency", "label", "Currency", "fieldtype", "Link", "options", "Currency", "width", int64(100)),
	}
	if !f.truthy("account") {
		return &reportOutput{columns: cols, result: []any{}}, nil
	}
	account := f.str("account")
	acct := ds.ledger().accounts[account]
	var ccy any
	if acct != nil {
		ccy = acct.Str("account_currency")
	}
	company := f.str("company")
	reportDate := ""
	if f.truthy("report_date") {
		var err *apiError
		if reportDate, err = f.date("report_date"); err != nil {
			return nil, err
		}
	}
	type entry struct {
		o    *object
		date string
	}
	var entries []entry
	var totalDebit, totalCredit, notReflected int64
	for _, pe := range ds.List("Payment Entry") {
		if pe.Int("docstatus") != 1 || pe.Str("company") != company || (pe.Str("paid_from") != account && pe.Str("paid_to") != account) {
			continue
		}
		date, cleared := pe.Str("posting_date"), pe.Str("clearance_date")
		if reportDate == "" {
			continue // comparisons with NULL match nothing
		}
		if date > reportDate && cleared != "" && cleared <= reportDate {
			if pe.Str("paid_from") == account {
				notReflected += pe.Dec("paid_amount").Cents()
			} else {
				notReflected += pe.Dec("received_amount").Cents()
			}
		}
		if date > reportDate || (cleared != "" && cleared <= reportDate) {
			continue
		}
		var debit, credit int64
		if pe.Str("paid_to") == account {
			debit = pe.Dec("received_amount_after_tax").Cents()
		}
		if pe.Str("paid_from") == account {
			credit = pe.Dec("paid_amount_after_tax").Cents()
		}
		against := pe.Get("party")
		if against == nil {
			against = pe.Get("paid_to")
			if pe.Str("paid_from") != account {
				against = pe.Get("paid_from")
			}
		}
		o := newObject(10)
		o.set("payment_document", "Payment Entry")
		o.set("payment_entry", pe.Name)
		o.set("reference_no", pe.Get("reference_no"))
		o.set("ref_date", pe.Get("reference_date"))
		o.set("debit", Cents(debit))
		o.set("credit", Cents(credit))
		o.set("posting_date", date)
		o.set("against_account", against)
		o.set("clearance_date", pe.Get("clearance_date"))
		o.set("account_currency", pe.Get(map[bool]string{true: "paid_to_account_currency", false: "paid_from_account_currency"}[pe.Str("paid_to") == account]))
		entries = append(entries, entry{o, date})
		totalDebit += debit
		totalCredit += credit
	}
	// Journal entries (the Payment Entries above come after them; within a
	// source, by posting date and name descending).
	var journals []entry
	for _, je := range ds.List("Journal Entry") {
		if je.Int("docstatus") != 1 || je.Str("company") != company || je.Str("is_opening") == "Yes" || reportDate == "" {
			continue
		}
		cleared := je.Str("clearance_date")
		for _, a := range je.Table("accounts") {
			if a.Str("account") != account {
				continue
			}
			amt := a.Dec("debit_in_account_currency").Cents() - a.Dec("credit_in_account_currency").Cents()
			if je.Str("posting_date") > reportDate && cleared != "" && cleared <= reportDate {
				notReflected += amt
			}
			if je.Str("posting_date") > reportDate || (cleared != "" && cleared <= reportDate) {
				continue
			}
			o := newObject(10)
			o.set("payment_document", "Journal Entry")
			o.set("payment_entry", je.Name)
			o.set("posting_date", je.Get("posting_date"))
			o.set("debit", a.Get("debit_in_account_currency"))
			o.set("credit", a.Get("credit_in_account_currency"))
			o.set("against_account", a.Get("against_account"))
			o.set("reference_no", je.Get("cheque_no"))
			o.set("ref_date", je.Get("cheque_date"))
			o.set("clearance_date", je.Get("clearance_date"))
			o.set("account_currency", a.Get("account_currency"))
			journals = append(journals, entry{o, je.Str("posting_date")})
			totalDebit += a.Dec("debit_in_account_currency").Cents()
			totalCredit += a.Dec("credit_in_account_currency").Cents()
		}
	}
	byDateNameDesc := func(list []entry) {
		sort.SliceStable(list, func(i, j int) bool {
			if list[i].date != list[j].date {
				return list[i].date < list[j].date
			}
			return cstr(getKey(list[i].o, "payment_entry")) > cstr(getKey(list[j].o, "payment_entry"))
		})
	}
	byDateNameDesc(journals)
	byDateNameDesc(entries)
	all := append(journals, entries...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].date < all[j].date })
	// get_balance_on checks the Account's read permission first.
	if acct != nil && !docAllowed(rc.user, ds.meta, acct) {
		e := docPermissionError(userName(rc.user), "Account", acct.Name, true)
		e.errorMsg = "You need the 'read' permission on <strong>Account</strong> " + acct.Name + " to perform this action."
		return nil, e
	}
	var balance int64
	for _, e := range ds.ledger().gl[company] {
		if e.Str("account") == account && e.Int("is_cancelled") == 0 && (reportDate == "" || e.Str("posting_date") <= reportDate) {
			balance += e.Dec("debit_in_account_currency").Cents() - e.Dec("credit_in_account_currency").Cents()
		}
	}
	data := make([]any, 0, len(all)+6)
	for _, e := range all {
		data = append(data, e.o)
	}
	bankBal := balance - totalDebit + totalCredit + notReflected
	data = append(data,
		brsBalanceRow(rc.tr("Bank Statement balance as per General Ledger"), balance, ccy),
		newObject(0),
		col("payment_entry", rc.tr("Outstanding Cheques and Deposits to clear"), "debit", Cents(totalDebit), "credit", Cents(totalCredit), "account_currency", ccy),
		brsBalanceRow(rc.tr("Cheques and Deposits incorrectly cleared"), notReflected, ccy),
		newObject(0),
		brsBalanceRow(rc.tr("Calculated Bank Statement balance"), bankBal, ccy))
	return &reportOutput{columns: cols, result: data}, nil
}

// brsBalanceRow is get_balance_row: a positive amount as debit, else the
// absolute value as credit (the other side the int 0).
func brsBalanceRow(label string, amount int64, ccy any) *object {
	if amount > 0 {
		return col("payment_entry", label, "debit", Cents(amount), "credit", int64(0), "account_currency", ccy)
	}
	return col("payment_entry", label, "debit", int64(0), "credit", Cents(-amount), "account_currency", ccy)
}
