package frappetest

import (
	"sort"
	"strings"
)

// General Ledger (erpnext/accounts/report/general_ledger/general_ledger.py,
// ERPNext 15.110): validation, the GL Entry query with the user's match
// conditions, opening / total / closing rows whose labels carry literal
// quotes, the categorize_by groupings and the running balance.

// glRow is one output row before it becomes a JSON object: a GL Entry (src)
// or a totals row (label). Amounts are float64, as ERPNext reads decimal
// columns as Python floats and adds them up as floats.
type glRow struct {
	src                 *Doc
	label               string
	debit, credit       float64
	debitAcc, creditAcc float64
	debitTxn, creditTxn float64
	// intZero marks amounts netting set to the int 0 (debit, credit,
	// debitAcc, creditAcc), which Python prints as 0, not 0.0.
	intZero        [4]bool
	againstVoucher string
	spacer         bool
	accountType    string
}

type glTotals struct{ opening, total, closing *glRow }

func (rc *reportCtx) newGLTotals() *glTotals {
	q := func(s string) string { return "'" + rc.tr(s) + "'" }
	return &glTotals{opening: &glRow{label: q("Opening")}, total: &glRow{label: q("Total")}, closing: &glRow{label: q("Closing (Opening + Total)")}}
}

// glFilters are the validated filters.
type glFilters struct {
	company, from, to          string
	accounts                   map[string]bool
	accountFilter, partyFilter bool
	costCenters, projects      map[string]bool
	voucherNo, againstVoucher  string
	partyType                  string
	parties                    map[string]bool
	categorize                 string
	includeDims, showCancelled bool
	showOpening, disableOpen   bool
	showRemarks, addTxn        bool
	netParty                   bool
	companyCcy, accountCcy     string
	presentation               string
}

func runGeneralLedger(rc *reportCtx) (*reportOutput, *apiError) {
	f := rc.f
	if f.empty() {
		return &reportOutput{columns: []*object{}, result: []any{}}, nil
	}
	if f.truthy("print_in_account_currency") && !f.truthy("account") {
		return nil, validationError("Select an account to print in account currency")
	}
	if f.truthy("party") {
		if _, err := f.parseJSON("party"); err != nil {
			return nil, err
		}
	}
	gf, err := rc.glValidate()
	if err != nil {
		return nil, err
	}
	columns := glColumns(gf)
	rows := rc.glResult(gf)
	return &reportOutput{columns: columns, result: rows}, nil
}

func (rc *reportCtx) glValidate() (*glFilters, *apiError) {
	f, ds := rc.f, rc.ds
	ix := ds.ledger()
	gf := &glFilters{company: f.str("company")}
	if !f.truthy("company") {
		return nil, validationError("Company is mandatory")
	}
	if !f.truthy("from_date") && !f.truthy("to_date") {
		return nil, validationError("<strong>From Date</strong> and <strong>To Date</strong> are mandatory")
	}
	var accounts []string
	if f.truthy("account") {
		v, err := f.parseJSON("account")
		if err != nil {
			return nil, err
		}
		accounts = stringList(v)
		for _, a := range accounts {
			if ix.accounts[a] == nil {
				return nil, validationError("Account " + a + " does not exists")
			}
		}
	}
	gf.categorize = f.str("categorize_by")
	if gf.categorize == "" && f.truthy("group_by") {
		gf.categorize = strings.ReplaceAll(f.str("group_by"), "Group by", "Categorize by")
	}
	if len(accounts) > 0 && gf.categorize == "Categorize by Account" {
		for _, a := range accounts {
			if ix.accounts[a].Int("is_group") == 0 {
				return nil, validationError("Can not filter based on Child Account, if grouped by Account")
			}
		}
	}
	if f.truthy("voucher_no") && gf.categorize == "Categorize by Voucher" {
		return nil, validationError("Can not filter based on Voucher No, if grouped by Voucher")
	}
	from, to := f.get("from_date"), f.get("to_date")
	if _, ok := from.(string); !ok {
		return nil, pythonError("TypeError", "'>' not supported between instances of '"+pyTypeName(from)+"' and '"+pyTypeName(to)+"'")
	}
	if _, ok := to.(string); !ok {
		return nil, pythonError("TypeError", "'>' not supported between instances of '"+pyTypeName(from)+"' and '"+pyTypeName(to)+"'")
	}
	if from.(string) > to.(string) {
		return nil, validationError("From Date must be before To Date")
	}
	var err *apiError
	if gf.from, err = f.date("from_date"); err != nil {
		return nil, err
	}
	if gf.to, err = f.date("to_date"); err != nil {
		return nil, err
	}
	var projects, costCenters []string
	if f.truthy("project") {
		v, err := f.parseJSON("project")
		if err != nil {
			return nil, err
		}
		projects = stringList(v)
	}
	if f.truthy("cost_center") {
		v, err := f.parseJSON("cost_center")
		if err != nil {
			return nil, err
		}
		costCenters = stringList(v)
	}
	// validate_party
	gf.partyType = f.str("party_type")
	parties := stringList(f.get("party"))
	if len(parties) > 0 && gf.partyType != "" {
		for _, p := range parties {
			if ds.Get(gf.partyType, p) == nil {
				return nil, validationError("Invalid " + gf.partyType + ": " + p)
			}
		}
	}
	gf.companyCcy = companyCurrency(ds, gf.company)
	gf.presentation = f.str("presentation_currency")
	// set_account_currency
	if len(accounts) > 0 || len(parties) == 1 {
		accountCcy := ""
		switch {
		case len(accounts) == 1:
			accountCcy = ix.accounts[accounts[0]].Str("account_currency")
		case len(accounts) > 1:
			accountCcy = ix.accounts[accounts[0]].Str("account_currency")
			for _, a := range accounts {
				if ix.accounts[a].Str("account_currency") != accountCcy {
					accountCcy = ""
				}
			}
		case gf.partyType != "":
			for _, e := range ix.gl[gf.company] {
				if e.Str("party_type") == gf.partyType && collateCompare(e.Str("party"), parties[0]) == 0 {
					accountCcy = e.Str("account_currency")
					break
				}
			}
			if accountCcy == "" {
				if p := ds.Get(gf.partyType, parties[0]); p != nil {
					accountCcy = p.Str("default_currency")
				}
			}
		}
		if accountCcy == "" {
			accountCcy = gf.companyCcy
		}
		gf.accountCcy = accountCcy
		if accountCcy != gf.companyCcy && gf.presentation == "" {
			gf.presentation = accountCcy
		}
	}
	if gf.presentation == "" {
		gf.presentation = gf.companyCcy
	}
	if f.truthy("show_amount_in_company_currency") && gf.presentation != gf.companyCcy {
		return nil, validationError("Presentation Currency cannot be <strong>" + gf.presentation + "</strong> , When <strong>Show Credit / Debit in Company Currency</strong> is enabled.")
	}
	// get_conditions
	if len(accounts) > 0 {
		gf.accountFilter = true
		gf.accounts = map[string]bool{}
		for _, a := range accounts {
			for _, c := range accountWithChildren(ix, a) {
				gf.accounts[c] = true
			}
		}
	}
	if len(costCenters) > 0 {
		gf.costCenters = map[string]bool{}
		for _, c := range costCenters {
			kids := ds.descendants("Cost Center", c)
			if kids == nil {
				return nil, validationError("Cost Center: " + c + " does not exist")
			}
			for _, k := range kids {
				gf.costCenters[k] = true
			}
		}
	}
	if len(projects) > 0 {
		gf.projects = setOf(projects)
	}
	if len(parties) > 0 {
		gf.partyFilter = true
		gf.parties = setOf(parties)
	}
	gf.voucherNo, gf.againstVoucher = f.str("voucher_no"), f.str("against_voucher_no")
	gf.includeDims = f.truthy("include_dimensions")
	gf.showCancelled = f.truthy("show_cancelled_entries")
	gf.showOpening = f.truthy("show_opening_entries")
	gf.disableOpen = f.truthy("disable_opening_balance_calculation")
	gf.showRemarks = f.truthy("show_remarks")
	gf.addTxn = f.truthy("add_values_in_transaction_currency")
	gf.netParty = f.truthy("show_net_values_in_party_account")
	return gf, nil
}

// accountWithChildren is get_accounts_with_children for one account.
func accountWithChildren(ix *ledgerIndex, name string) []string {
	a := ix.accounts[name]
	var out []string
	for _, d := range ix.companyAccts[a.Str("company")] {
		if d.Int("lft") >= a.Int("lft") && d.Int("rgt") <= a.Int("rgt") {
			out = append(out, d.Name)
		}
	}
	return out
}

func setOf(list []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range list {
		m[collationKey(s)] = true
	}
	return m
}

func companyCurrency(ds *Dataset, company string) string {
	if c := ds.Get("Company", company); c != nil {
		return c.Str("default_currency")
	}
	return ""
}

func glColumns(gf *glFilters) []*object {
	ccy := gf.presentation
	cols := []*object{
		col("label", "GL Entry", "fieldname", "gl_entry", "fieldtype", "Link", "options", "GL Entry", "hidden", int64(1)),
		col("label", "Posting Date", "fieldname", "posting_date", "fieldtype", "Date", "width", int64(120)),
		col("label", "Account", "fieldname", "account", "fieldtype", "Link", "options", "Account", "width", int64(180)),
		col("label", "Debit ("+ccy+")", "fieldname", "debit", "fieldtype", "Currency", "options", "presentation_currency", "width", int64(130)),
		col("label", "Credit ("+ccy+")", "fieldname", "credit", "fieldtype", "Currency", "options", "presentation_currency", "width", int64(130)),
		col("label", "Balance ("+ccy+")", "fieldname", "balance", "fieldtype", "Currency", "options", "presentation_currency", "width", int64(130)),
	}
	if gf.addTxn {
		cols = append(cols,
			col("label", "Debit (Transaction)", "fieldname", "debit_in_transaction_currency", "fieldtype", "Currency", "width", int64(130), "options", "transaction_currency"),
			col("label", "Credit (Transaction)", "fieldname", "credit_in_transaction_currency", "fieldtype", "Currency", "width", int64(130), "options", "transaction_currency"),
			col("label", "Transaction Currency", "fieldname", "transaction_currency", "fieldtype", "Link", "options", "Currency", "width", int64(70)))
	}
	cols = append(cols,
		col("label", "Voucher Type", "fieldname", "voucher_type", "width", int64(120)),
		col("label", "Voucher Subtype", "fieldname", "voucher_subtype", "fieldtype", "Data", "width", int64(180)),
		col("label", "Voucher No", "fieldname", "voucher_no", "fieldtype", "Dynamic Link", "options", "voucher_type", "width", int64(180)),
		col("label", "Against Account", "fieldname", "against", "width", int64(120)),
		col("label", "Party Type", "fieldname", "party_type", "width", int64(100)),
		col("label", "Party", "fieldname", "party", "width", int64(100)))
	if gf.includeDims {
		cols = append(cols,
			col("label", "Project", "options", "Project", "fieldname", "project", "width", int64(100)),
			col("label", "Cost Center", "options", "Cost Center", "fieldname", "cost_center", "width", int64(100)))
	}
	cols = append(cols,
		col("label", "Against Voucher Type", "fieldname", "against_voucher_type", "width", int64(100)),
		col("label", "Against Voucher", "fieldname", "against_voucher", "fieldtype", "Dynamic Link", "options", "against_voucher_type", "width", int64(100)),
		col("label", "Supplier Invoice No", "fieldname", "bill_no", "fieldtype", "Data", "width", int64(100)))
	if gf.showRemarks {
		cols = append(cols, col("label", "Remarks", "fieldname", "remarks", "width", int64(400)))
	}
	return cols
}

// glSelect returns the GL Entries the report query selects, in its order.
func (rc *reportCtx) glSelect(gf *glFilters) []*Doc {
	if !companyAllowed(rc.user, gf.company) {
		return nil // match conditions: the User Permission on Company
	}
	openingOnlyBefore := gf.disableOpen || !(gf.accountFilter || gf.partyFilter ||
		gf.categorize == "Categorize by Account" || gf.categorize == "Categorize by Party")
	var out []*Doc
	for _, e := range rc.ds.ledger().gl[gf.company] {
		date, opening := e.Str("posting_date"), e.Str("is_opening") == "Yes"
		switch {
		case gf.accounts != nil && !gf.accounts[e.Str("account")],
			gf.costCenters != nil && !gf.costCenters[e.Str("cost_center")],
			gf.voucherNo != "" && collateCompare(e.Str("voucher_no"), gf.voucherNo) != 0,
			gf.againstVoucher != "" && collateCompare(e.Str("against_voucher"), gf.againstVoucher) != 0,
			gf.categorize == "Categorize by Party" && gf.partyType == "" && e.Str("party_type") != "Customer" && e.Str("party_type") != "Supplier",
			gf.partyType != "" && collateCompare(e.Str("party_type"), gf.partyType) != 0,
			gf.parties != nil && !gf.parties[collationKey(e.Str("party"))],
			openingOnlyBefore && date < gf.from && !opening,
			date > gf.to && !opening,
			gf.projects != nil && !gf.projects[collationKey(e.Str("project"))],
			!gf.showCancelled && e.Int("is_cancelled") != 0:
			continue
		}
		out = append(out, e)
	}
	// ORDER BY as one precomputed key per entry (accounts and vouchers
	// compare under the collation), the name breaking ties.
	var fields []string
	switch {
	case gf.categorize == "Categorize by Voucher":
		fields = []string{"posting_date", "voucher_type", "voucher_no"}
	case gf.categorize == "Categorize by Account":
		fields = []string{"account", "posting_date", "creation"}
	case gf.includeDims:
		fields = []string{"posting_date", "creation"}
	default:
		fields = []string{"posting_date", "account", "creation"}
	}
	type keyed struct {
		key string
		e   *Doc
	}
	list := make([]keyed, len(out))
	var b strings.Builder
	for i, e := range out {
		b.Reset()
		for _, k := range fields {
			v := e.Str(k)
			if k == "account" || k == "voucher_type" || k == "voucher_no" {
				v = collationKey(v)
			}
			b.WriteString(v)
			b.WriteByte(0)
		}
		b.WriteString(e.Name)
		list[i] = keyed{b.String(), e}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].key < list[j].key })
	for i := range list {
		out[i] = list[i].e
	}
	return out
}
