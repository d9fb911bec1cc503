package frappetest

import (
	"math"
	"strings"
)

// Profit and Loss Statement (profit_and_loss_statement.py over
// financial_statements.py): Income and Expense trees per period, quoted
// total rows, the net profit row, report_summary and chart, and the
// 6-tuple quirk that puts the net profit in skip_total_row.

// fsSection is one root type's rows and its total row.
type fsSection struct {
	rows  []*object
	total *object // nil when no account has a value
}

func runProfitAndLoss(rc *reportCtx) (*reportOutput, *apiError) {
	f := rc.f
	company := f.str("company")
	periods, yStart, yEnd, err := rc.periodList(company)
	if err != nil {
		return nil, err
	}
	fs, err := rc.glFilterSet()
	if err != nil {
		return nil, err
	}
	currency := f.str("presentation_currency")
	if currency == "" {
		currency = companyCurrency(rc.ds, company)
	}
	accumulated := f.truthy("accumulated_values")
	income := rc.fsSection(company, "Income", "Credit", periods, yStart, yEnd, currency, fs)
	expense := rc.fsSection(company, "Expense", "Debit", periods, yStart, yEnd, currency, fs)
	var data []any
	for _, s := range []*fsSection{income, expense} {
		for _, r := range s.rows {
			data = append(data, r)
		}
		if s.total != nil {
			data = append(data, s.total, newObject(0))
		}
	}
	netRow := fsNetProfit(income, expense, periods, currency, "'"+rc.tr("Profit for the year")+"'")
	if netRow != nil {
		data = append(data, netRow)
	}
	// columns
	cols := []*object{col("fieldname", "account", "label", "Account", "fieldtype", "Link", "options", "Account", "width", int64(300))}
	if company != "" {
		cols = append(cols, col("fieldname", "currency", "label", "Currency", "fieldtype", "Link", "options", "Currency", "hidden", int64(1)))
	}
	for _, p := range periods {
		cols = append(cols, col("fieldname", p.key, "label", p.label, "fieldtype", "Currency", "options", "currency", "width", int64(150)))
	}
	if f.str("periodicity") != "Yearly" && !accumulated {
		cols = append(cols, col("fieldname", "total", "label", "Total", "fieldtype", "Currency", "width", int64(150), "options", "currency"))
	}
	chart := fsChart(periods, income, expense, netRow, currency, accumulated)
	summary, netProfit := fsSummary(periods, f.str("periodicity"), income, expense, netRow, currency, accumulated)
	switch f.str("selected_view") {
	case "Growth":
		growthView(data, periods)
	case "Margin":
		marginView(data, periods, accumulated)
	}
	var skip any = int64(0)
	if netProfit != 0 {
		skip = Cents(netProfit)
	}
	if data == nil {
		data = []any{}
	}
	return &reportOutput{columns: cols, result: data, chart: chart, summary: summary, skipTotal: skip}, nil
}

// fsSection is financial_statements.get_data for one root type.
func (rc *reportCtx) fsSection(company, rootType, balanceMustBe string, periods []fsPeriod, yStart, yEnd, currency string, fs *glFilterSet) *fsSection {
	ix := rc.ds.ledger()
	nodes := accountTree(ix, company, rootType)
	sec := &fsSection{}
	if len(nodes) == 0 {
		return sec
	}
	vals := map[string]map[string]int64{}
	for _, n := range nodes {
		vals[n.doc.Name] = map[string]int64{}
	}
	accumulated := rc.f.truthy("accumulated_values")
	last := periods[len(periods)-1].to
	if companyAllowed(rc.user, company) {
		for _, e := range ix.gl[company] {
			date := e.Str("posting_date")
			v := vals[e.Str("account")]
			if v == nil || e.Int("is_cancelled") != 0 || date < periods[0].from || date > last ||
				e.Str("voucher_type") == "Period Closing Voucher" || !fs.match(e) {
				continue
			}
			amt := e.Dec("debit").Cents() - e.Dec("credit").Cents()
			for _, p := range periods {
				if date <= p.to && (accumulated || date >= p.from) {
					v[p.key] += amt
				}
			}
		}
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if p := nodes[i].parent; p != nil {
			for k, x := range vals[nodes[i].doc.Name] {
				vals[p.doc.Name][k] += x
			}
		}
	}
	sign := int64(1)
	if balanceMustBe == "Credit" {
		sign = -1
	}
	type row struct {
		n   *acctNode
		o   *object
		has bool
		tot int64
	}
	var rows []row
	for _, n := range nodes {
		o := newObject(16)
		o.set("account", n.doc.Name)
		o.set("parent_account", n.doc.Str("parent_account"))
		o.set("indent", float64(n.indent))
		o.set("year_start_date", yStart)
		o.set("year_end_date", yEnd)
		o.set("currency", currency)
		o.set("include_in_gross", n.doc.Int("include_in_gross"))
		o.set("account_type", nilIfEmpty(n.doc.Str("account_type")))
		o.set("is_group", n.doc.Int("is_group"))
		o.set("opening_balance", 0.0*float64(sign))
		o.set("account_name", accountName(n.doc))
		has := false
		var total int64
		for _, p := range periods {
			x := sign * vals[n.doc.Name][p.key]
			o.set(p.key, Cents(x))
			if x != 0 {
				has = true
				total += x
			}
		}
		o.set("has_value", has)
		switch {
		case accumulated:
			total = sign * vals[n.doc.Name][periods[len(periods)-1].key]
			o.set("total", Cents(total))
		case has:
			o.set("total", Cents(total))
		default:
			o.set("total", int64(0))
		}
		rows = append(rows, row{n, o, has, total})
	}
	show := map[string]bool{}
	zero := rc.f.truthy("show_zero_values")
	for _, r := range rows {
		if zero || r.has {
			for n := r.n; n != nil; n = n.parent {
				show[n.doc.Name] = true
			}
		}
	}
	t := newObject(8)
	label := "'" + strings.NewReplacer("{0}", rc.tr(rootType), "{1}", rc.tr(balanceMustBe)).Replace(rc.tr("Total {0} ({1})")) + "'"
	t.set("account_name", label)
	t.set("account", label)
	t.set("currency", currency)
	t.set("opening_balance", 0.0)
	var tTotal int64
	tPeriods := map[string]int64{}
	hasRoot := false
	for _, r := range rows {
		if !show[r.n.doc.Name] {
			continue
		}
		sec.rows = append(sec.rows, r.o)
		if r.n.parent == nil {
			hasRoot = true
			for _, p := range periods {
				tPeriods[p.key] += sign * vals[r.n.doc.Name][p.key]
			}
			tTotal += r.tot
		}
	}
	if hasRoot {
		for _, p := range periods {
			t.set(p.key, Cents(tPeriods[p.key]))
		}
		t.set("total", Cents(tTotal))
		sec.total = t
	}
	return sec
}

func sectionValue(s *fsSection, key string) int64 {
	if s.total == nil {
		return 0
	}
	return cellDecimal(getKey(s.total, key)).Cents()
}

// fsNetProfit is get_net_profit_loss (nil when every period is zero).
func fsNetProfit(income, expense *fsSection, periods []fsPeriod, currency, label string) *object {
	o := newObject(8)
	o.set("account_name", label)
	o.set("account", label)
	o.set("warn_if_negative", true)
	o.set("currency", currency)
	has := false
	var total int64
	for _, p := range periods {
		net := sectionValue(income, p.key) - sectionValue(expense, p.key)
		o.set(p.key, Cents(net))
		if net != 0 {
			has = true
		}
		total += net
		o.set("total", Cents(total))
	}
	if !has {
		return nil
	}
	return o
}

func fsChart(periods []fsPeriod, income, expense *fsSection, net *object, currency string, accumulated bool) *object {
	labels := make([]any, len(periods))
	var inc, exp, np []any
	for i, p := range periods {
		labels[i] = p.label
		if income.total != nil {
			inc = append(inc, getKey(income.total, p.key))
		}
		if expense.total != nil {
			exp = append(exp, getKey(expense.total, p.key))
		}
		if net != nil {
			np = append(np, getKey(net, p.key))
		}
	}
	var datasets []any
	for _, d := range []struct {
		name string
		vals []any
	}{{"Income", inc}, {"Expense", exp}, {"Net Profit/Loss", np}} {
		if len(d.vals) > 0 {
			datasets = append(datasets, col("name", d.name, "values", d.vals))
		}
	}
	if datasets == nil {
		datasets = []any{}
	}
	chart := newObject(5)
	chart.set("data", col("labels", labels, "datasets", datasets))
	chart.set("type", "bar")
	if accumulated {
		chart.set("type", "line")
	}
	chart.set("fieldtype", "Currency")
	chart.set("options", "currency")
	chart.set("currency", currency)
	return chart
}

// fsSummary is get_report_summary; it also returns the net profit (cents).
func fsSummary(periods []fsPeriod, periodicity string, income, expense *fsSection, net *object, currency string, accumulated bool) ([]any, int64) {
	var ni, ne, np int64
	keys := []string{}
	if accumulated {
		keys = append(keys, periods[len(periods)-1].key)
	} else {
		for _, p := range periods {
			keys = append(keys, p.key)
		}
	}
	for _, k := range keys {
		ni += sectionValue(income, k)
		ne += sectionValue(expense, k)
		if net != nil {
			np += cellDecimal(getKey(net, k)).Cents()
		}
	}
	profit, inc, exp := "Net Profit", "Total Income", "Total Expense"
	if len(periods) == 1 && periodicity == "Yearly" {
		profit, inc, exp = "Profit This Year", "Total Income This Year", "Total Expense This Year"
	}
	indicator := "Red"
	if np > 0 {
		indicator = "Green"
	}
	return []any{
		col("value", Cents(ni), "label", inc, "datatype", "Currency", "currency", currency),
		col("type", "separator", "value", "-"),
		col("value", Cents(ne), "label", exp, "datatype", "Currency", "currency", currency),
		col("type", "separator", "value", "=", "color", "blue"),
		col("value", Cents(np), "indicator", indicator, "label", profit, "datatype", "Currency", "currency", currency),
	}, np
}

func floatOf(v any) (float64, bool) {
	switch x := v.(type) {
	case Decimal:
		return x.Float64(), true
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// growthView is compute_growth_view_data: each period after the first
// becomes its growth over the previous one, in percent.
func growthView(data []any, periods []fsPeriod) {
	for _, r := range data {
		o := r.(*object)
		orig := map[string]any{}
		for _, p := range periods {
			orig[p.key] = getKey(o, p.key)
		}
		for i := 1; i < len(periods); i++ {
			cur, okCur := floatOf(orig[periods[i].key])
			prev, _ := floatOf(orig[periods[i-1].key])
			if orig[periods[i].key] == nil || !okCur {
				o.set(periods[i].key, nil)
				continue
			}
			g := 0.0
			switch {
			case prev == 0 && cur > 0:
				g = 1
			case prev > 0:
				g = (cur - prev) / prev
			}
			o.set(periods[i].key, round2(g*100))
		}
	}
}

// marginView is compute_margin_view_data: values as a percentage of the
// "Income" account row.
func marginView(data []any, periods []fsPeriod, accumulated bool) {
	keys := []string{}
	for _, p := range periods {
		keys = append(keys, p.key)
	}
	if !accumulated {
		keys = append(keys, "total")
	}
	var base map[string]float64
	for _, r := range data {
		o := r.(*object)
		if getKey(o, "account_name") == "Income" {
			base = map[string]float64{}
			for _, k := range keys {
				base[k], _ = floatOf(getKey(o, k))
			}
			break
		}
	}
	if base == nil {
		return
	}
	for _, r := range data {
		o := r.(*object)
		if len(o.keys) == 0 {
			continue
		}
		for _, k := range keys {
			cur, ok := floatOf(getKey(o, k))
			if !ok || base[k] <= 0 {
				o.set(k, nil)
				continue
			}
			o.set(k, round2(cur/base[k]*100))
		}
	}
}
