package frappetest

import (
	"sort"
	"strings"
)

// Accounts Receivable / Accounts Payable: ERPNext's ReceivablePayableReport
// over the Payment Ledger (accounts_receivable.py, 15.110). One row per
// voucher balance: invoices with what was invoiced, paid and credited
// against them, unallocated payments, open credit / debit notes; ageing
// into range1..rangeN by due date as of the report date (or today).

// arapSide describes the receivable or payable variant.
type arapSide struct {
	accountType string // Receivable | Payable
	partyType   string // Customer | Supplier
	invoiceType string // Sales Invoice | Purchase Invoice
}

var (
	receivableSide = arapSide{"Receivable", "Customer", "Sales Invoice"}
	payableSide    = arapSide{"Payable", "Supplier", "Purchase Invoice"}
)

// defaultCompany is Global Defaults' default_company.
const defaultCompany = "Demo Holdings NZ Ltd"

// arRow is one voucher balance (amounts in cents).
type arRow struct {
	voucherType, voucherNo, party, account, postingDate, accountCcy string
	invoiced, paid, creditNote, outstanding                         int64
	invoicedAcc, paidAcc, creditNoteAcc, outstandingAcc             int64
	costCenter, project                                             any
	hasCC                                                           bool
	partyType                                                       string
	ranges                                                          []int64
	age                                                             int64
	hasAge                                                          bool
	dueDate, billDate                                               string
	o                                                               *object
}

// arapReport holds one run's settings.
type arapReport struct {
	rc          *reportCtx
	side        arapSide
	company     string
	reportDate  string
	ageAsOn     string
	ranges      []string
	inAccount   bool // in_party_currency or party_account: account-currency amounts
	currency    string
	companyCcy  string
	groupByPart bool
	skipTotal   int64
}

func (rc *reportCtx) newARAP(side arapSide) (*arapReport, *apiError) {
	f := rc.f
	r := &arapReport{rc: rc, side: side}
	var err *apiError
	if r.reportDate, err = f.date("report_date"); err != nil {
		return nil, err
	}
	r.ageAsOn = fmtDate(f.today)
	if f.has("calculate_ageing_with") && f.str("calculate_ageing_with") != "Today Date" {
		r.ageAsOn = r.reportDate
	}
	rng := f.str("range")
	if rng == "" {
		rng = "30, 60, 90, 120"
		// Older v15 builds sent range1..range4 as separate Int filters.
		if f.has("range1") || f.has("range2") || f.has("range3") || f.has("range4") {
			parts := []string{}
			for i, def := range []string{"30", "60", "90", "120"} {
				v := def
				if x := f.get("range" + string(rune('1'+i))); valueTruthy(x) {
					v = cstr(x)
				}
				parts = append(parts, v)
			}
			rng = strings.Join(parts, ", ")
		}
	}
	for _, p := range strings.Split(rng, ",") {
		if p = strings.TrimSpace(p); p != "" && isDigits(p) {
			r.ranges = append(r.ranges, p)
		}
	}
	r.company = f.str("company")
	if r.company == "" {
		r.company = defaultCompany
	}
	r.companyCcy = companyCurrency(rc.ds, r.company)
	r.inAccount = f.truthy("in_party_currency") || f.truthy("party_account")
	if f.truthy("group_by_party") {
		r.groupByPart = true
		r.skipTotal = 1
	}
	if f.truthy("in_party_currency") {
		r.skipTotal = 1
		if l, ok := f.get("party").([]any); ok && len(l) == 1 {
			r.skipTotal = 0
		}
	}
	return r, nil
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// selectPLE returns the Payment Ledger Entries the report reads, in its
// order (posting_date, party; party first when grouping by party).
func (r *arapReport) selectPLE() ([]*Doc, *apiError) {
	rc, f, ds := r.rc, r.rc.f, r.rc.ds
	ix := ds.ledger()
	if !companyAllowed(rc.user, r.company) {
		return nil, nil // the User Permission on Company as a match condition
	}
	accounts := map[string]bool{}
	if f.truthy("party_account") {
		accounts[f.str("party_account")] = true
	} else {
		for _, a := range ix.companyAccts[r.company] {
			if a.Str("account_type") == r.side.accountType {
				accounts[a.Name] = true
			}
		}
	}
	var parties map[string]bool
	if f.truthy("party") {
		parties = map[string]bool{}
		if l, ok := f.get("party").([]any); ok {
			for _, p := range l {
				parties[collationKey(cstr(p))] = true
			}
		}
	}
	partyIn := func(set map[string]bool, value string) bool { return set == nil || set[collationKey(value)] }
	var groupParties map[string]bool
	if r.side.partyType == "Customer" {
		if f.truthy("customer_group") {
			groups := map[string]bool{}
			for _, g := range commaList(f.get("customer_group")) {
				kids := ds.descendants("Customer Group", g)
				if kids == nil {
					return nil, validationError("Customer Group: " + g + " does not exist")
				}
				for _, k := range kids {
					groups[k] = true
				}
			}
			groupParties = map[string]bool{}
			for _, c := range ds.List("Customer") {
				if groups[c.Str("customer_group")] {
					groupParties[collationKey(c.Name)] = true
				}
			}
		}
		if f.truthy("territory") {
			kids := ds.descendants("Territory", f.str("territory"))
			if kids == nil {
				return nil, pythonError("TypeError", "cannot unpack non-iterable NoneType object")
			}
			terr := setOf(kids)
			byTerr := map[string]bool{}
			for _, c := range ds.List("Customer") {
				if terr[collationKey(c.Str("territory"))] && (groupParties == nil || groupParties[collationKey(c.Name)]) {
					byTerr[collationKey(c.Name)] = true
				}
			}
			groupParties = byTerr
		}
	} else if f.truthy("supplier_group") {
		groupParties = map[string]bool{}
		for _, s := range ds.List("Supplier") {
			if collateCompare(s.Str("supplier_group"), f.str("supplier_group")) == 0 {
				groupParties[collationKey(s.Name)] = true
			}
		}
	}
	fs, err := rc.glFilterSet()
	if err != nil {
		return nil, err
	}
	var out []*Doc
	for _, p := range ix.ple[r.company] {
		switch {
		case p.Int("delinked") != 0,
			p.Str("posting_date") > r.reportDate,
			!accounts[p.Str("account")],
			f.truthy("party_type") && collateCompare(f.str("party_type"), p.Str("party_type")) != 0,
			f.truthy("party") && !partyIn(parties, p.Str("party")),
			groupParties != nil && !groupParties[collationKey(p.Str("party"))],
			r.side.partyType == "Customer" && p.Str("party_type") == "Employee",
			!fs.match(p):
			continue
		}
		out = append(out, p)
	}
	first, second := "posting_date", "party"
	if r.groupByPart {
		first, second = "party", "posting_date"
	}
	sort.SliceStable(out, func(i, j int) bool {
		for _, k := range []string{first, second} {
			a, b := out[i].Str(k), out[j].Str(k)
			if c := collateCompare(a, b); c != 0 {
				return c < 0
			}
		}
		return false
	})
	return out, nil
}

// rows computes the voucher balances (init_voucher_balance and
// update_voucher_balance), keeping those with an outstanding amount.
func (r *arapReport) rows() ([]*arRow, *apiError) {
	ples, err := r.selectPLE()
	if err != nil {
		return nil, err
	}
	ds := r.rc.ds
	returns := map[string]string{} // returns that reduce the original
	for _, d := range ds.List(r.side.invoiceType) {
		if d.Int("is_return") == 1 && d.Int("docstatus") == 1 && d.Int("update_outstanding_for_self") == 0 &&
			d.Str("company") == r.company && d.Str("posting_date") <= r.reportDate {
			returns[d.Name] = d.Str("return_against")
		}
	}
	byKey := map[string]*arRow{}
	var order []*arRow
	key := func(account, vt, vn, party string) string {
		return account + "\x00" + vt + "\x00" + vn + "\x00" + party
	}
	for _, p := range ples {
		k := key(p.Str("account"), p.Str("voucher_type"), p.Str("voucher_no"), p.Str("party"))
		row := byKey[k]
		if row == nil {
			row = &arRow{voucherType: p.Str("voucher_type"), voucherNo: p.Str("voucher_no"), party: p.Str("party"),
				account: p.Str("account"), postingDate: p.Str("posting_date"), accountCcy: p.Str("account_currency")}
			byKey[k] = row
			order = append(order, row)
		}
		if p.Str("voucher_type") == p.Str("against_voucher_type") && p.Str("voucher_no") == p.Str("against_voucher_no") ||
			(p.Str("voucher_type") == "Payment Entry" || p.Str("voucher_type") == "Journal Entry") &&
				(p.Str("against_voucher_type") == "Sales Order" || p.Str("against_voucher_type") == "Purchase Order") {
			row.costCenter, row.project, row.hasCC = p.Get("cost_center"), p.Get("project"), true
		}
	}
	for _, p := range ples {
		against := p.Str("against_voucher_no")
		if orig, ok := returns[against]; ok && (p.Str("against_voucher_type") == "Sales Invoice" || p.Str("against_voucher_type") == "Purchase Invoice") {
			against = orig
		}
		row := byKey[key(p.Str("account"), p.Str("against_voucher_type"), against, p.Str("party"))]
		if row == nil {
			row = byKey[key(p.Str("account"), p.Str("voucher_type"), p.Str("voucher_no"), p.Str("party"))]
		}
		if row == nil {
			continue
		}
		row.partyType = p.Str("party_type")
		amount, acc := p.Dec("amount").Cents(), p.Dec("amount_in_account_currency").Cents()
		if r.inAccount {
			amount = acc
		}
		isInvoice := p.Str("voucher_type") == "Sales Invoice" || p.Str("voucher_type") == "Purchase Invoice"
		switch {
		case p.Dec("amount") > 0 && (p.Str("voucher_type") == "Journal Entry" || p.Str("voucher_type") == "Payment Entry") && p.Str("voucher_no") != p.Str("against_voucher_no"):
			row.paid -= amount
			row.paidAcc -= acc
		case p.Dec("amount") > 0:
			row.invoiced += amount
			row.invoicedAcc += acc
		case isInvoice && row.voucherNo == p.Str("voucher_no") && p.Str("voucher_no") == p.Str("against_voucher_no"):
			row.paid -= amount
			row.paidAcc -= acc
		case isInvoice:
			row.creditNote -= amount
			row.creditNoteAcc -= acc
		default:
			row.paid -= amount
			row.paidAcc -= acc
		}
	}
	var out []*arRow
	revaluation := r.rc.f.truthy("for_revaluation_journals")
	for _, row := range order {
		row.outstanding = row.invoiced - row.paid - row.creditNote
		row.outstandingAcc = row.invoicedAcc - row.paidAcc - row.creditNoteAcc
		keep := row.outstanding != 0 && row.outstandingAcc != 0
		if revaluation {
			keep = row.outstanding != 0 || row.outstandingAcc != 0
		}
		if keep {
			out = append(out, row)
		}
	}
	return out, nil
}

func runAccountsReceivable(rc *reportCtx) (*reportOutput, *apiError) {
	return rc.runARAP(receivableSide)
}
func runAccountsPayable(rc *reportCtx) (*reportOutput, *apiError) { return rc.runARAP(payableSide) }

func (rc *reportCtx) runARAP(side arapSide) (*reportOutput, *apiError) {
	r, err := rc.newARAP(side)
	if err != nil {
		return nil, err
	}
	cols := r.columns()
	rows, err := r.rows()
	if err != nil {
		return nil, err
	}
	data := make([]any, 0, len(rows)+2)
	var subtotals map[string]*object
	var totalRow *object
	var prevParty string
	var partyOrder []string
	for _, row := range rows {
		o := r.render(row)
		if r.groupByPart {
			if subtotals == nil {
				subtotals = map[string]*object{}
				totalRow = arSubtotal("Total")
			}
			if prevParty != "" && prevParty != row.party {
				data = append(data, subtotals[prevParty], newObject(0))
				addSubtotal(totalRow, subtotals[prevParty])
			}
			if subtotals[row.party] == nil {
				subtotals[row.party] = arSubtotal(row.party)
				partyOrder = append(partyOrder, row.party)
			}
			addSubtotal(subtotals[row.party], o)
			prevParty = row.party
		}
		data = append(data, o)
	}
	if r.groupByPart && prevParty != "" {
		data = append(data, subtotals[prevParty], newObject(0))
		addSubtotal(totalRow, subtotals[prevParty])
		data = append(data, totalRow)
	}
	// get_chart_data: one dataset per row that is not a bold subtotal.
	var datasets []any
	for _, d := range data {
		o := d.(*object)
		if cint(getKey(o, "bold")) != 0 {
			continue
		}
		vals := make([]any, len(r.ranges)+1)
		for i := range vals {
			vals[i] = cellDecimal(getKey(o, rangeKey(i)))
		}
		datasets = append(datasets, col("values", vals))
	}
	labels := []any{}
	for _, l := range r.rangeLabels() {
		labels = append(labels, l)
	}
	if datasets == nil {
		datasets = []any{}
	}
	chart := col("data", col("labels", labels, "datasets", datasets), "type", "percentage")
	return &reportOutput{columns: cols, result: data, chart: chart, skipTotal: r.skipTotal}, nil
}

var arCurrencyFields = []string{"invoiced", "paid", "credit_note", "outstanding", "range1", "range2", "range3", "range4", "range5", "future_amount", "remaining_balance"}

func arSubtotal(party string) *object {
	o := newObject(14)
	o.set("party", party)
	o.set("bold", int64(1))
	for _, k := range arCurrencyFields {
		o.set(k, Decimal(0))
	}
	return o
}

func addSubtotal(dst, src *object) {
	for _, k := range arCurrencyFields {
		dst.set(k, cellDecimal(getKey(dst, k))+cellDecimal(getKey(src, k)))
	}
	dst.set("currency", getKey(src, "currency"))
}
