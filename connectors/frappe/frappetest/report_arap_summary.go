package frappetest

// Accounts Receivable Summary / Accounts Payable Summary
// (accounts_receivable_summary.py): the detail report's rows totalled per
// party, advances (unallocated payments) in their own column and taken out
// of "paid", optionally the party's GL balance.

func runAccountsReceivableSummary(rc *reportCtx) (*reportOutput, *apiError) {
	return rc.runARAPSummary(receivableSide)
}

func runAccountsPayableSummary(rc *reportCtx) (*reportOutput, *apiError) {
	return rc.runARAPSummary(payableSide)
}

type partyTotals struct {
	party    string
	sums     map[string]int64
	currency any
	details  *object
	pt       string
}

func (rc *reportCtx) runARAPSummary(side arapSide) (*reportOutput, *apiError) {
	r, err := rc.newARAP(side)
	if err != nil {
		return nil, err
	}
	cols := r.summaryColumns()
	rows, err := r.rows()
	if err != nil {
		return nil, err
	}
	fields := []string{"invoiced", "paid", "credit_note", "outstanding", "total_due", "future_amount"}
	var order []string
	totals := map[string]*partyTotals{}
	for _, row := range rows {
		o := r.render(row)
		t := totals[row.party]
		if t == nil {
			t = &partyTotals{party: row.party, sums: map[string]int64{}, details: newObject(3), pt: row.partyType}
			totals[row.party] = t
			order = append(order, row.party)
		}
		for _, k := range fields {
			t.sums[k] += cellDecimal(getKey(o, k)).Cents()
		}
		for i := range row.ranges {
			t.sums[rangeKey(i)] += row.ranges[i]
		}
		t.currency = getKey(o, "currency")
		for _, k := range []string{"territory", "customer_group", "supplier_group"} {
			if v := getKey(o, k); valueTruthy(v) {
				t.details.set(k, v)
			}
		}
	}
	advances := rc.partyAdvances(side, r.reportDate)
	var glBalance map[string]int64
	if rc.f.truthy("show_gl_balance") {
		glBalance = rc.partyGLBalances(side, r.reportDate)
	}
	var data []any
	for _, p := range order {
		t := totals[p]
		if t.sums["outstanding"] == 0 {
			continue
		}
		o := newObject(24)
		o.set("party", p)
		for _, k := range fields[:6] {
			o.set(k, Cents(t.sums[k]))
			if k == "future_amount" {
				o.set("sales_person", []any{})
				o.set("party_type", t.pt)
				for i := range r.ranges {
					o.set(rangeKey(i), Cents(t.sums[rangeKey(i)]))
				}
				o.set(rangeKey(len(r.ranges)), Cents(t.sums[rangeKey(len(r.ranges))]))
			}
		}
		o.set("currency", t.currency)
		for i, k := range t.details.keys {
			o.set(k, t.details.vals[i])
		}
		adv := advances[collationKey(p)]
		o.set("advance", Cents(adv))
		o.set("paid", Cents(t.sums["paid"]-adv))
		if glBalance != nil {
			gl, ok := glBalance[collationKey(p)]
			if ok {
				o.set("gl_balance", Cents(gl))
			} else {
				o.set("gl_balance", nil)
			}
			o.set("diff", Cents(t.sums["outstanding"]-gl))
		}
		data = append(data, o)
	}
	if data == nil {
		data = []any{}
	}
	return &reportOutput{columns: cols, result: data}, nil
}

// partyAdvances is get_partywise_advanced_payment_amount: per party, the
// unallocated payments (negative Payment Ledger amounts against the
// payment itself, invoices excluded) up to the report date. The company
// condition applies only when the summary's own filters name one.
func (rc *reportCtx) partyAdvances(side arapSide, reportDate string) map[string]int64 {
	out := map[string]int64{}
	f := rc.f
	company := f.str("company")
	party := f.str(map[string]string{"Customer": "customer", "Supplier": "supplier"}[side.partyType])
	ix := rc.ds.ledger()
	for c, ples := range ix.ple {
		if company != "" && c != company {
			continue
		}
		for _, p := range ples {
			acct := ix.accounts[p.Str("account")]
			if p.Int("delinked") != 0 || p.Str("party_type") != side.partyType || acct.Str("account_type") != side.accountType ||
				p.Str("posting_date") > reportDate || (party != "" && collateCompare(p.Str("party"), party) != 0) ||
				p.Str("voucher_type") == "Sales Invoice" || p.Str("voucher_type") == "Purchase Invoice" ||
				p.Dec("amount") >= 0 || p.Str("against_voucher_no") != p.Str("voucher_no") {
				continue
			}
			out[collationKey(p.Str("party"))] -= p.Dec("amount").Cents()
		}
	}
	return out
}

// partyGLBalances is the summary's get_gl_balance: per party, debit -
// credit (credit - debit for payables) of live GL entries up to the date.
func (rc *reportCtx) partyGLBalances(side arapSide, reportDate string) map[string]int64 {
	out := map[string]int64{}
	company := rc.f.str("company")
	for _, e := range rc.ds.ledger().gl[company] {
		if e.Int("is_cancelled") != 0 || e.Str("posting_date") > reportDate {
			continue
		}
		amt := e.Dec("debit").Cents() - e.Dec("credit").Cents()
		if side.accountType == "Payable" {
			amt = -amt
		}
		out[collationKey(e.Str("party"))] += amt
	}
	return out
}

func (r *arapReport) summaryColumns() []*object {
	recv := r.side.partyType == "Customer"
	cols := []*object{
		arColumn("Party Type", "party_type", "Data", nil, 100),
		arColumn("Party", "party", "Dynamic Link", "party_type", 180),
		arColumn("Advance Amount", "advance", "Currency", nil, 120),
		arColumn("Invoiced Amount", "invoiced", "Currency", nil, 120),
		arColumn("Paid Amount", "paid", "Currency", nil, 120),
	}
	if recv {
		cols = append(cols, arColumn("Credit Note", "credit_note", "Currency", nil, 120))
	} else {
		cols = append(cols, arColumn("Debit Note", "credit_note", "Currency", nil, 120))
	}
	cols = append(cols, arColumn("Outstanding Amount", "outstanding", "Currency", nil, 120))
	if r.rc.f.truthy("show_gl_balance") {
		cols = append(cols, arColumn("GL Balance", "gl_balance", "Currency", nil, 120), arColumn("Difference", "diff", "Currency", nil, 120))
	}
	for i, l := range r.rangeLabels() {
		cols = append(cols, arColumn(l, rangeKey(i), "Currency", nil, 120))
	}
	cols = append(cols, arColumn("Total Amount Due", "total_due", "Currency", nil, 120))
	if recv {
		cols = append(cols, arColumn("Territory", "territory", "Link", "Territory", 120),
			arColumn("Customer Group", "customer_group", "Link", "Customer Group", 120))
	} else {
		cols = append(cols, arColumn("Supplier Group", "supplier_group", "Link", "Supplier Group", 120))
	}
	return append(cols, arColumn("Currency", "currency", "Link", "Currency", 80))
}
