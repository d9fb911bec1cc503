package frappetest

import (
	"math"
	"strings"
)

// General Ledger rows: opening / total / closing accumulation, the
// categorize_by groupings, presentation currency and the running balance
// (general_ledger.get_data_with_opening_closing and get_result_as_list).

func (rc *reportCtx) glResult(gf *glFilters) []any {
	ix := rc.ds.ledger()
	entries := rc.glSelect(gf)
	rows := make([]*glRow, len(entries))
	singleCcy := ""
	for i, e := range entries {
		rows[i] = &glRow{src: e, debit: e.Dec("debit").Float64(), credit: e.Dec("credit").Float64(),
			debitAcc: e.Dec("debit_in_account_currency").Float64(), creditAcc: e.Dec("credit_in_account_currency").Float64(),
			debitTxn: e.Dec("debit_in_transaction_currency").Float64(), creditTxn: e.Dec("credit_in_transaction_currency").Float64(),
			againstVoucher: e.Str("against_voucher"),
			accountType:    ix.accounts[e.Str("account")].Str("account_type")}
		if i == 0 {
			singleCcy = e.Str("account_currency")
		} else if singleCcy != e.Str("account_currency") {
			singleCcy = "\x00"
		}
	}
	if gf.presentation != gf.companyCcy || singleCcy == gf.presentation {
		convertToPresentation(rows, gf, singleCcy)
	}
	totals := rc.newGLTotals()
	groupField := "voucher_no"
	switch gf.categorize {
	case "Categorize by Party":
		groupField = "party"
	case "Categorize by Voucher (Consolidated)", "Categorize by Account":
		groupField = "account"
	}
	type group struct {
		totals  *glTotals
		entries []*glRow
	}
	var order []string
	groups := map[string]*group{}
	for _, r := range rows {
		k := r.src.Str(groupField)
		if groups[k] == nil {
			groups[k] = &group{totals: rc.newGLTotals()}
			order = append(order, k)
		}
	}
	consolidated := gf.categorize == "Categorize by Voucher (Consolidated)"
	var consOrder []string
	cons := map[string]*glRow{}
	for _, r := range rows {
		e := r.src
		gr := groups[e.Str(groupField)]
		date := e.Str("posting_date")
		switch {
		case date < gf.from || (e.Str("is_opening") == "Yes" && !gf.showOpening && !gf.disableOpen):
			if !consolidated {
				gf.update(gr.totals.opening, r, true)
				gf.update(gr.totals.closing, r, true)
			}
			gf.update(totals.opening, r, true)
			gf.update(totals.closing, r, true)
		case date <= gf.to || (e.Str("is_opening") == "Yes" && gf.showOpening):
			if !consolidated {
				gf.update(gr.totals.total, r, false)
				gf.update(gr.totals.closing, r, false)
				gf.update(totals.total, r, false)
				gf.update(totals.closing, r, false)
				gr.entries = append(gr.entries, r)
			} else {
				key := strings.Join([]string{date, e.Str("voucher_type"), e.Str("voucher_no"), e.Str("account"), e.Str("party_type"), e.Str("party")}, "\x00")
				if gf.includeDims {
					key += "\x00" + e.Str("cost_center") + "\x00" + e.Str("project")
				}
				if c := cons[key]; c == nil {
					cons[key] = r
					consOrder = append(consOrder, key)
				} else {
					gf.update(c, r, false)
				}
			}
		}
	}
	for _, k := range consOrder {
		gf.update(totals.total, cons[k], false)
		gf.update(totals.closing, cons[k], false)
	}
	data := []*glRow{totals.opening}
	switch {
	case gf.categorize == "":
		for _, k := range order {
			data = append(data, groups[k].entries...)
		}
	case !consolidated:
		for _, k := range order {
			gr := groups[k]
			if len(gr.entries) == 0 {
				continue
			}
			data = append(data, &glRow{spacer: true})
			if gf.categorize != "Categorize by Voucher" {
				data = append(data, gr.totals.opening)
			}
			data = append(data, gr.entries...)
			data = append(data, gr.totals.total)
			if gf.categorize != "Categorize by Voucher" {
				data = append(data, gr.totals.closing)
			}
		}
		data = append(data, &glRow{spacer: true})
	default:
		for _, k := range consOrder {
			data = append(data, cons[k])
		}
	}
	data = append(data, totals.total, totals.closing)
	return glRowsAsObjects(data, gf, ix)
}

// update is update_value_in_dict: add the entry's amounts to a row as
// Python floats and optionally net debit against credit, setting the other
// side to the int 0.
func (gf *glFilters) update(dst, src *glRow, netValues bool) {
	dst.debit += src.debit
	dst.credit += src.credit
	dst.debitAcc += src.debitAcc
	dst.creditAcc += src.creditAcc
	dst.intZero = [4]bool{}
	if gf.addTxn && dst.src != nil {
		dst.debitTxn += src.debitTxn
		dst.creditTxn += src.creditTxn
	}
	if gf.netParty && (dst.accountType == "Receivable" || dst.accountType == "Payable") || netValues {
		net, netAcc := dst.debit-dst.credit, dst.debitAcc-dst.creditAcc
		if net < 0 {
			dst.debit, dst.credit = 0, math.Abs(net)
			dst.debitAcc, dst.creditAcc = 0, math.Abs(netAcc)
			dst.intZero = [4]bool{true, false, true, false}
		} else {
			dst.debit, dst.credit = math.Abs(net), 0
			dst.debitAcc, dst.creditAcc = math.Abs(netAcc), 0
			dst.intZero = [4]bool{false, true, false, true}
		}
	}
	if dst.againstVoucher != "" && src.againstVoucher != "" && dst != src {
		dst.againstVoucher += ", " + src.againstVoucher
	}
}

// convertToPresentation is utils.convert_to_presentation_currency: with a
// single account currency equal to the presentation currency the account
// amounts are shown; otherwise company amounts are converted at the
// closing date's rate.
func convertToPresentation(rows []*glRow, gf *glFilters, singleCcy string) {
	for _, r := range rows {
		if singleCcy == gf.presentation {
			r.debit, r.credit = r.debitAcc, r.creditAcc
			continue
		}
		rate := conversionE4(gf.companyCcy, gf.presentation, gf.to)
		if r.debit != 0 {
			r.debit = Cents(roundHalfEven(r.src.Dec("debit").Cents()*rate, 10000)).Float64()
		}
		if r.credit != 0 {
			r.credit = Cents(roundHalfEven(r.src.Dec("credit").Cents()*rate, 10000)).Float64()
		}
	}
}

// conversionE4 is the exchange rate from -> to on date (e4), using the
// simulator's monthly USD rates and their inverses.
func conversionE4(from, to, date string) int64 {
	if from == to {
		return 10000
	}
	d := mustDate(date)
	switch {
	case from == "USD":
		return exchangeRate(from, to, d)
	case to == "USD":
		return roundHalfEven(10000*10000, exchangeRate(to, from, d))
	}
	return roundHalfEven(conversionE4(from, "USD", date)*conversionE4("USD", to, date), 10000)
}

// glRowsAsObjects renders rows like get_result_as_list: a running balance
// that restarts on rows without a posting date.
func glRowsAsObjects(data []*glRow, gf *glFilters, ix *ledgerIndex) []any {
	out := make([]any, 0, len(data))
	var balance float64
	var accountCcy any
	if gf.accountCcy != "" {
		accountCcy = gf.accountCcy
	}
	for _, r := range data {
		if r.spacer {
			// Spacer rows restart the balance and get the same trailing
			// keys; their balance is the int 0.
			o := newObject(5)
			o.set("debit_in_transaction_currency", nil)
			o.set("credit_in_transaction_currency", nil)
			o.set("balance", int64(0))
			o.set("account_currency", accountCcy)
			o.set("presentation_currency", gf.presentation)
			balance = 0
			out = append(out, o)
			continue
		}
		if r.src == nil {
			balance = 0
		}
		balance += r.debit - r.credit
		var o *object
		if r.src == nil {
			o = newObject(12)
			o.set("account", r.label)
			o.set("debit", r.amount(0, r.debit))
			o.set("credit", r.amount(1, r.credit))
			o.set("debit_in_account_currency", r.amount(2, r.debitAcc))
			o.set("credit_in_account_currency", r.amount(3, r.creditAcc))
			o.set("debit_in_transaction_currency", nil)
			o.set("credit_in_transaction_currency", nil)
		} else {
			o = glEntryRow(r, gf, ix)
		}
		o.set("balance", balance)
		o.set("account_currency", accountCcy)
		o.set("presentation_currency", gf.presentation)
		out = append(out, o)
	}
	return out
}

func glEntryRow(r *glRow, gf *glFilters, ix *ledgerIndex) *object {
	e := r.src
	o := newObject(30)
	o.set("gl_entry", e.Name)
	for _, k := range []string{"posting_date", "account", "party_type", "party", "voucher_type", "voucher_subtype", "voucher_no", "cost_center", "project"} {
		o.set(k, e.Get(k))
	}
	if gf.addTxn {
		o.set("debit_in_transaction_currency", r.debitTxn)
		o.set("credit_in_transaction_currency", r.creditTxn)
		o.set("transaction_currency", e.Get("transaction_currency"))
	}
	o.set("against_voucher_type", e.Get("against_voucher_type"))
	if r.againstVoucher == "" {
		o.set("against_voucher", e.Get("against_voucher"))
	} else {
		o.set("against_voucher", r.againstVoucher)
	}
	o.set("account_currency", e.Get("account_currency"))
	o.set("against", e.Get("against"))
	o.set("is_opening", e.Get("is_opening"))
	o.set("creation", e.Get("creation"))
	o.set("debit", r.amount(0, r.debit))
	o.set("credit", r.amount(1, r.credit))
	o.set("debit_in_account_currency", r.amount(2, r.debitAcc))
	o.set("credit_in_account_currency", r.amount(3, r.creditAcc))
	if gf.showRemarks {
		o.set("remarks", e.Get("remarks"))
	}
	if e.Str("party_type") != "" && e.Str("party") != "" {
		o.set("party_name", e.Get("party"))
	}
	o.set("bill_no", ix.billNo[e.Str("against_voucher")])
	return o
}

// amount is the i-th of debit, credit, debitAcc, creditAcc as Python holds
// it: a float, or the int 0 that netting left.
func (r *glRow) amount(i int, v float64) any {
	if r.intZero[i] {
		return int64(0)
	}
	return v
}
