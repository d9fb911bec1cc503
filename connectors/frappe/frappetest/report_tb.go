package frappetest

// Trial Balance (erpnext/accounts/report/trial_balance/trial_balance.py):
// fiscal-year validation with clamping messages, opening balances, period
// debits and credits, parents accumulated, zero rows filtered and a quoted
// 'Total' row. Quirk kept: the opening balances query applies no User
// Permissions (the period query does).

var tbValueFields = []string{"opening_debit", "opening_credit", "debit", "credit", "closing_debit", "closing_credit"}

type tbValues [6]int64 // cents, in tbValueFields order

func runTrialBalance(rc *reportCtx) (*reportOutput, *apiError) {
	f, ds := rc.f, rc.ds
	if !f.truthy("fiscal_year") {
		return nil, validationError("Fiscal Year " + pyStrOfNone(f.get("fiscal_year")) + " is required")
	}
	fy := ds.Get("Fiscal Year", f.str("fiscal_year"))
	if fy == nil {
		return nil, validationError("Fiscal Year " + f.str("fiscal_year") + " does not exist")
	}
	yStart, yEnd := fy.Str("year_start_date"), fy.Str("year_end_date")
	from, to := yStart, yEnd
	var err *apiError
	if f.truthy("from_date") {
		if from, err = f.date("from_date"); err != nil {
			return nil, err
		}
	}
	if f.truthy("to_date") {
		if to, err = f.date("to_date"); err != nil {
			return nil, err
		}
	}
	if from > to {
		return nil, validationError("From Date cannot be greater than To Date")
	}
	if from < yStart || from > yEnd {
		rc.msgprint("From Date should be within the Fiscal Year. Assuming From Date = " + formatDateDMY(yStart))
		from = yStart
	}
	if to < yStart || to > yEnd {
		rc.msgprint("To Date should be within the Fiscal Year. Assuming To Date = " + formatDateDMY(yEnd))
		to = yEnd
	}
	data, err := rc.tbData(f.str("company"), from, to, yStart)
	if err != nil {
		return nil, err
	}
	cols := []*object{
		col("fieldname", "account", "label", "Account", "fieldtype", "Link", "options", "Account", "width", int64(300)),
		col("fieldname", "currency", "label", "Currency", "fieldtype", "Link", "options", "Currency", "hidden", int64(1)),
	}
	labels := []string{"Opening (Dr)", "Opening (Cr)", "Debit", "Credit", "Closing (Dr)", "Closing (Cr)"}
	for i, fn := range tbValueFields {
		cols = append(cols, col("fieldname", fn, "label", labels[i], "fieldtype", "Currency", "options", "currency", "width", int64(120)))
	}
	return &reportOutput{columns: cols, result: data}, nil
}

// pyStrOfNone is str(v) for a falsy filter value ("None" for None).
func pyStrOfNone(v any) string {
	if v == nil {
		return "None"
	}
	return cstr(v)
}

// glFilterSet holds the cost centre / project restrictions shared by the
// financial statements.
type glFilterSet struct{ costCenters, projects map[string]bool }

func (rc *reportCtx) glFilterSet() (*glFilterSet, *apiError) {
	fs := &glFilterSet{}
	f := rc.f
	if f.truthy("project") {
		v := f.get("project")
		if s, ok := v.(string); ok {
			d, err := jsonLoads(s)
			if err != nil {
				return nil, err
			}
			v = d
		}
		fs.projects = setOf(stringList(v))
	}
	if f.truthy("cost_center") {
		fs.costCenters = map[string]bool{}
		for _, c := range commaList(f.get("cost_center")) {
			kids := rc.ds.descendants("Cost Center", c)
			if kids == nil {
				return nil, validationError("Cost Center: " + c + " does not exist")
			}
			for _, k := range kids {
				fs.costCenters[k] = true
			}
		}
	}
	return fs, nil
}

func (fs *glFilterSet) match(e *Doc) bool {
	return (fs.costCenters == nil || fs.costCenters[e.Str("cost_center")]) &&
		(fs.projects == nil || fs.projects[collationKey(e.Str("project"))])
}

func (rc *reportCtx) tbData(company, from, to, yStart string) ([]any, *apiError) {
	f, ix := rc.f, rc.ds.ledger()
	nodes := accountTree(ix, company, "")
	if len(nodes) == 0 {
		return nil, nil
	}
	fs, err := rc.glFilterSet()
	if err != nil {
		return nil, err
	}
	currency := f.str("presentation_currency")
	if currency == "" {
		currency = companyCurrency(rc.ds, company)
	}
	vals := map[string]*tbValues{}
	for _, n := range nodes {
		vals[n.doc.Name] = &tbValues{}
	}
	allowed := companyAllowed(rc.user, company)
	for _, e := range ix.gl[company] {
		if e.Int("is_cancelled") != 0 || !fs.match(e) {
			continue
		}
		v := vals[e.Str("account")]
		dr, cr := e.Dec("debit").Cents(), e.Dec("credit").Cents()
		date, opening := e.Str("posting_date"), e.Str("is_opening") == "Yes"
		pl := ix.accounts[e.Str("account")].Str("report_type") == "Profit and Loss"
		// Opening balances: every entry before the period or marked as
		// opening (P&L accounts only from the start of the year).
		if (date < from || opening) && (!pl || f.truthy("show_unclosed_fy_pl_balances") || date >= yStart) {
			v[0] += dr
			v[1] += cr
		}
		if allowed && !opening && date >= from && date <= to {
			v[2] += dr
			v[3] += cr
		}
	}
	net := f.truthy("show_net_values")
	for _, n := range nodes {
		v := vals[n.doc.Name]
		v[4], v[5] = v[0]+v[2], v[1]+v[3]
		if net {
			netOpeningClosing(v, n.doc.Str("root_type"))
		}
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if p := nodes[i].parent; p != nil {
			pv, cv := vals[p.doc.Name], vals[nodes[i].doc.Name]
			for k := range pv {
				pv[k] += cv[k]
			}
		}
	}
	type tbRow struct {
		n *acctNode
		o *object
		v *tbValues
	}
	var rows []tbRow
	showGroups := f.truthy("show_group_accounts")
	for _, n := range nodes {
		v := vals[n.doc.Name]
		if net {
			netOpeningClosing(v, n.doc.Str("root_type"))
		}
		if !showGroups && n.doc.Int("is_group") == 1 {
			continue
		}
		indent := n.indent
		if !showGroups {
			indent = 0
		}
		o := newObject(16)
		o.set("account", n.doc.Name)
		o.set("parent_account", nilIfEmpty(n.doc.Str("parent_account")))
		o.set("indent", indent)
		o.set("from_date", from)
		o.set("to_date", to)
		o.set("currency", currency)
		o.set("is_group_account", n.doc.Int("is_group"))
		o.set("account_name", accountName(n.doc))
		hasValue := false
		for i, fn := range tbValueFields {
			o.set(fn, Cents(v[i]))
			if v[i] != 0 {
				hasValue = true
			}
		}
		o.set("has_value", hasValue)
		rows = append(rows, tbRow{n, o, v})
	}
	var total tbValues
	for _, r := range rows {
		if !showGroups || r.n.parent == nil {
			for k := range total {
				total[k] += r.v[k]
			}
		}
	}
	// filter_out_zero_value_rows: rows with a value and their ancestors;
	// the blank row survives only with show_zero_values.
	show := map[string]bool{}
	zero := f.truthy("show_zero_values")
	for _, r := range rows {
		if zero || getKey(r.o, "has_value") == true {
			for n := r.n; n != nil; n = n.parent {
				show[n.doc.Name] = true
			}
		}
	}
	var out []any
	for _, r := range rows {
		if show[r.n.doc.Name] {
			out = append(out, r.o)
		}
	}
	if zero {
		out = append(out, newObject(0))
	}
	t := newObject(14)
	t.set("account", "'"+rc.tr("Total")+"'")
	t.set("account_name", "'"+rc.tr("Total")+"'")
	t.set("warn_if_negative", true)
	for i, fn := range tbValueFields {
		t.set(fn, Cents(total[i]))
	}
	t.set("parent_account", nil)
	t.set("indent", int64(0))
	t.set("has_value", true)
	t.set("currency", currency)
	return append(out, t), nil
}

// netOpeningClosing is prepare_opening_closing: opening and closing shown
// net on the account's natural side.
func netOpeningClosing(v *tbValues, rootType string) {
	debitSide := rootType == "Asset" || rootType == "Equity" || rootType == "Expense"
	for _, i := range []int{0, 4} {
		dr, cr := &v[i], &v[i+1]
		if debitSide {
			*dr -= *cr
			if *dr < 0 {
				*cr, *dr = -*dr, 0
			} else {
				*cr = 0
			}
		} else {
			*cr -= *dr
			if *cr < 0 {
				*dr, *cr = -*cr, 0
			} else {
				*dr = 0
			}
		}
	}
}
