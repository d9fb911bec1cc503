package frappe

import (
	"context"
	"fmt"
	"math/big"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Ledger reports: General Ledger, Trial Balance, Profit and Loss Statement.

type generalLedgerArgs struct {
	reportPageArgs
	dateArgs
	Company    string `json:"company"`
	Account    string `json:"account"`
	PartyType  string `json:"party_type"`
	Party      string `json:"party"`
	VoucherNo  string `json:"voucher_no"`
	CostCenter string `json:"cost_center"`
	Project    string `json:"project"`
}

// ledgerBalance is one of the General Ledger's labelled summary rows.
type ledgerBalance struct {
	Debit   any `json:"debit"`
	Credit  any `json:"credit"`
	Balance any `json:"balance"`
}

func ledgerBalanceSchema(what string) *schema.Schema {
	return withDesc(schema.Object(
		schema.Prop("debit", money("Debit.")),
		schema.Prop("credit", money("Credit.")),
		schema.Prop("balance", money("Debit minus credit.")),
	), what)
}

type generalLedgerResult struct {
	reportResult
	Opening *ledgerBalance `json:"opening"`
	Total   *ledgerBalance `json:"total"`
	Closing *ledgerBalance `json:"closing"`
}

func getGeneralLedgerTool() connector.Tool {
	props := []schema.Property{companyProp("The company whose ledger to read.")}
	props = append(props, dateRangeProps("posting date")...)
	props = append(props,
		schema.Prop("account", schema.String("Only this ledger account (exact name from list_accounts).").Len(1, 140)),
		schema.Prop("party_type", schema.String("Party type of party.").OneOf("Customer", "Supplier", "Employee", "Shareholder")),
		schema.Prop("party", schema.String("Only this party (exact id; needs party_type).").Len(1, 140)),
		schema.Prop("voucher_no", schema.String("Only the entries of this voucher (document name).").Len(1, 140)),
		schema.Prop("cost_center", schema.String("Only this cost centre (exact name).").Len(1, 140)),
		schema.Prop("project", schema.String("Only this project (exact id).").Len(1, 140)),
	)
	props = append(props, reportPageProps()...)
	row := schema.OpenObject(
		schema.Prop("posting_date", schema.String("Posting date.")),
		schema.Prop("account", schema.String("Account.")),
		schema.Prop("debit", money("Debit in the company currency.")),
		schema.Prop("credit", money("Credit in the company currency.")),
		schema.Prop("balance", money("Running balance (debit minus credit) from the opening balance.")),
		schema.Prop("voucher_type", schema.String("Document type that posted the entry.")),
		schema.Prop("voucher_no", schema.String("Document that posted the entry.")),
		schema.Prop("party_type", schema.String("Party type.").Nullable()),
		schema.Prop("party", schema.String("Party.").Nullable()),
	)
	return connector.Tool{
		Name:  "get_general_ledger",
		Title: "General Ledger",
		Description: "Run ERPNext's General Ledger report for one company and at most 366 days: the ledger entries (debit, credit, running balance) with the opening balance before the range, the total of the range and the closing balance. " +
			"Amounts are in the company currency. Narrow it with account, party, voucher_no, cost_center or project. Rows are paged with offset/next_offset; opening, total and closing always cover the whole range. " +
			"PERMISSION_DENIED means the user has no access to accounting reports; it never means there are no entries.",
		Input: schema.Object(props...),
		Output: reportOutput(row,
			schema.Prop("opening", ledgerBalanceSchema("Balance before from_date, as the ERP reports it.").Nullable()).Required(),
			schema.Prop("total", ledgerBalanceSchema("Sum of the entries in the range, as the ERP reports it.").Nullable()).Required(),
			schema.Prop("closing", ledgerBalanceSchema("Opening plus total, as the ERP reports it.").Nullable()).Required(),
		),
		Effect:  connector.Read,
		Handler: getGeneralLedger,
	}
}

func getGeneralLedger(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[generalLedgerArgs](call)
	if err != nil {
		return nil, err
	}
	if a.Party != "" && a.PartyType == "" {
		return nil, toolerr.New(toolerr.InvalidArgument, "add party_type to say what kind of party %q is", a.Party)
	}
	c := callClient(call)
	company, dr, err := reportScope(ctx, call, c, a.Company, a.dateArgs, "the General Ledger is kept per company")
	if err != nil {
		return nil, err
	}
	f := map[string]any{
		"company": company.Name, "from_date": dr.From, "to_date": dr.To,
		"categorize_by":                "Categorize by Voucher (Consolidated)",
		"include_dimensions":           1,
		"include_default_book_entries": 1,
		// Without it ERPNext presents one foreign-currency account (or one
		// party) in that account's currency, while the tool states
		// company-currency amounts.
		"presentation_currency": company.Currency,
	}
	setIf(f, "account", listFilter(a.Account))
	setIf(f, "party_type", a.PartyType)
	setIf(f, "party", listFilter(a.Party))
	setIf(f, "voucher_no", a.VoucherNo)
	setIf(f, "cost_center", listFilter(a.CostCenter))
	setIf(f, "project", listFilter(a.Project))
	d, err := c.runReport(ctx, reportGeneralLedger, f)
	if err != nil {
		return nil, err
	}
	out := generalLedgerResult{reportResult: newReportResult(reportGeneralLedger, company, d)}
	out.DateRange = dr
	// ERPNext's consolidated ledger is an 'Opening' row, the entries, a
	// 'Total' and a 'Closing (Opening + Total)' row. Their labels are
	// translated into the user's language, so the three are known by
	// their quotes and their order, not by their words.
	var entries []map[string]any
	var labelled []*ledgerBalance
	for _, row := range d.rows {
		if rowLabel(row, "account") == "" {
			entries = append(entries, row)
			continue
		}
		labelled = append(labelled, &ledgerBalance{Debit: cleanCell(row["debit"]), Credit: cleanCell(row["credit"]), Balance: cleanCell(row["balance"])})
	}
	if len(labelled) == 3 {
		out.Opening, out.Total, out.Closing = labelled[0], labelled[1], labelled[2]
	}
	if out.Opening == nil || out.Closing == nil {
		out.Warnings = append(out.Warnings, "The ERP sent no opening or closing row; read only the entries listed.")
	}
	out.setRows(d, entries, a.reportPageArgs, call.MaxRecords)
	return out, nil
}

// reportScope resolves and checks the company and date range of a report.
func reportScope(ctx context.Context, call *connector.Call, c *client, companyArg string, da dateArgs, why string) (companyInfo, *dateRange, error) {
	name, err := requireCompany(call, companyArg, why)
	if err != nil {
		return companyInfo{}, nil, err
	}
	company, err := c.company(ctx, name)
	if err != nil {
		return companyInfo{}, nil, err
	}
	dr, err := resolveRange(ctx, c, da, rangeRules{required: true, maxDays: maxDetailDays, company: company.Name})
	if err != nil {
		return companyInfo{}, nil, err
	}
	return company, dr, nil
}

type trialBalanceArgs struct {
	reportPageArgs
	dateArgs
	Company        string `json:"company"`
	FiscalYear     string `json:"fiscal_year"`
	CostCenter     string `json:"cost_center"`
	Project        string `json:"project"`
	ShowZeroValues bool   `json:"show_zero_values"`
}

type trialBalanceResult struct {
	reportResult
	FiscalYear string         `json:"fiscal_year"`
	Total      map[string]any `json:"total"`
}

var trialBalanceAmounts = []string{"opening_debit", "opening_credit", "debit", "credit", "closing_debit", "closing_credit"}

func getTrialBalanceTool() connector.Tool {
	props := []schema.Property{
		companyProp("The company whose trial balance to read."),
		schema.Prop("fiscal_year", schema.String("Fiscal year id (see list_fiscal_years). When omitted, the company's fiscal year containing from_date (or as_of_date) is used.").Len(1, 140)),
	}
	props = append(props, dateRangeProps("date")...)
	props = append(props,
		schema.Prop("cost_center", schema.String("Only this cost centre (exact name).").Len(1, 140)),
		schema.Prop("project", schema.String("Only this project (exact id).").Len(1, 140)),
		schema.Prop("show_zero_values", schema.Boolean("Include accounts without any balance or movement.").WithDefault(false)),
	)
	props = append(props, reportPageProps()...)
	row := schema.OpenObject(
		schema.Prop("account", schema.String("Account.")),
		schema.Prop("account_name", schema.String("Account name with number.")),
		schema.Prop("parent_account", schema.String("Parent group account.").Nullable()),
		schema.Prop("indent", schema.Number("Depth in the account tree.")),
		schema.Prop("is_group_account", schema.Boolean("True for a group account, whose amounts include its children.")),
		schema.Prop("opening_debit", money("Opening debit.")),
		schema.Prop("opening_credit", money("Opening credit.")),
		schema.Prop("debit", money("Debits in the range.")),
		schema.Prop("credit", money("Credits in the range.")),
		schema.Prop("closing_debit", money("Closing debit.")),
		schema.Prop("closing_credit", money("Closing credit.")),
	)
	return connector.Tool{
		Name:  "get_trial_balance",
		Title: "Trial Balance",
		Description: "Run ERPNext's Trial Balance report for one company and one fiscal year (optionally a date range inside it): opening, movement and closing debit/credit per account, in the company currency. " +
			"Rows form the account tree: a group account's amounts include its children, so add up only rows with is_group_account false, or read total. " +
			"Rows are paged with offset/next_offset; total covers every account. PERMISSION_DENIED means the user has no access to accounting reports.",
		Input: schema.Object(props...),
		Output: reportOutput(row,
			schema.Prop("fiscal_year", schema.String("The fiscal year reported.")).Required(),
			schema.Prop("total", withDesc(schema.Map(money("")), "The report's total row: opening, movement and closing debit/credit over all accounts.").Nullable()).Required(),
		),
		Effect:  connector.Read,
		Handler: getTrialBalance,
	}
}

func getTrialBalance(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[trialBalanceArgs](call)
	if err != nil {
		return nil, err
	}
	c := callClient(call)
	name, err := requireCompany(call, a.Company, "the Trial Balance is kept per company")
	if err != nil {
		return nil, err
	}
	company, err := c.company(ctx, name)
	if err != nil {
		return nil, err
	}
	dr, err := resolveRange(ctx, c, a.dateArgs, rangeRules{maxDays: maxDetailDays, company: company.Name})
	if err != nil {
		return nil, err
	}
	fy := a.FiscalYear
	switch {
	case fy == "" && dr != nil:
		y, err := c.fiscalYearFor(ctx, company.Name, dr.From)
		if err != nil {
			return nil, err
		}
		if dr.To > y.End {
			return nil, toolerr.New(toolerr.InvalidArgument, "the range %s to %s crosses the end of fiscal year %s (%s); the Trial Balance covers one fiscal year, so split the range", dr.From, dr.To, y.Name, y.End)
		}
		fy = y.Name
	case fy == "":
		return nil, toolerr.New(toolerr.InvalidArgument, "add fiscal_year (see list_fiscal_years), or a date range (from_date/to_date, or period with as_of_date)")
	case dr != nil:
		// ERPNext would clamp a range leaving the year to the year, and
		// the figures would not cover the date_range stated.
		doc, err := c.get(ctx, "Fiscal Year", fy)
		if err != nil {
			return nil, err
		}
		start, end := str(doc["year_start_date"]), str(doc["year_end_date"])
		if dr.From < start || dr.To > end {
			return nil, toolerr.New(toolerr.InvalidArgument, "the range %s to %s is not inside fiscal year %s (%s to %s); the Trial Balance covers one fiscal year, so narrow or split the range", dr.From, dr.To, fy, start, end)
		}
	}
	f := map[string]any{
		"company": company.Name, "fiscal_year": fy,
		"with_period_closing_entry_for_opening":        1,
		"with_period_closing_entry_for_current_period": 1,
		"include_default_book_entries":                 1,
		"show_net_values":                              1,
		"show_group_accounts":                          1,
		"show_zero_values":                             boolInt(a.ShowZeroValues),
	}
	if dr != nil {
		f["from_date"], f["to_date"] = dr.From, dr.To
	}
	setIf(f, "cost_center", listFilter(a.CostCenter))
	setIf(f, "project", listFilter(a.Project))
	d, err := c.runReport(ctx, reportTrialBalance, f)
	if err != nil {
		return nil, err
	}
	out := trialBalanceResult{reportResult: newReportResult(reportTrialBalance, company, d), FiscalYear: fy}
	out.DateRange = dr
	var accounts []map[string]any
	for _, row := range d.rows {
		// The one quoted row is the total, 'Total' in the user's language.
		if rowLabel(row, "account") != "" {
			out.Total = map[string]any{}
			for _, k := range trialBalanceAmounts {
				out.Total[k] = cleanCell(row[k])
			}
			continue
		}
		accounts = append(accounts, row)
	}
	out.setRows(d, accounts, a.reportPageArgs, call.MaxRecords, "account_name", "parent_account", "indent", "is_group_account")
	for _, r := range out.Rows {
		r["is_group_account"] = isTrue(r["is_group_account"]) || r["is_group_account"] == true
	}
	return out, nil
}

type profitAndLossArgs struct {
	reportPageArgs
	dateArgs
	Company     string `json:"company"`
	Periodicity string `json:"periodicity"`
	CostCenter  string `json:"cost_center"`
	Project     string `json:"project"`
}

type profitAndLossResult struct {
	reportResult
	Periodicity string `json:"periodicity"`
	// Periods are the period columns, in order.
	Periods []reportColumn `json:"periods"`
	// Totals are the report's own total rows.
	TotalIncome  map[string]any `json:"total_income"`
	TotalExpense map[string]any `json:"total_expense"`
	NetProfit    map[string]any `json:"net_profit"`
}

func getProfitAndLossTool() connector.Tool {
	props := []schema.Property{companyProp("The company whose profit and loss to read.")}
	props = append(props, dateRangeProps("date")...)
	props = append(props,
		schema.Prop("periodicity", schema.String("One column per month, quarter, half-year or year.").OneOf("Monthly", "Quarterly", "Half-Yearly", "Yearly").WithDefault("Yearly")),
		schema.Prop("cost_center", schema.String("Only this cost centre (exact name).").Len(1, 140)),
		schema.Prop("project", schema.String("Only this project (exact id).").Len(1, 140)),
	)
	props = append(props, reportPageProps()...)
	row := schema.OpenObject(
		schema.Prop("section", schema.String("Income or Expense; absent on a row the ERP did not close with a section total (see warnings).")),
		schema.Prop("account", schema.String("Account.")),
		schema.Prop("account_name", schema.String("Account name.")),
		schema.Prop("parent_account", schema.String("Parent group account.").Nullable()),
		schema.Prop("indent", schema.Number("Depth in the account tree.")),
		schema.Prop("is_group", schema.Boolean("True for a group account, whose amounts include its children.")),
		schema.Prop("total", money("Total over all periods (not for Yearly).")),
	)
	return connector.Tool{
		Name:  "get_profit_and_loss",
		Title: "Profit and Loss Statement",
		Description: "Run ERPNext's Profit and Loss Statement for one company over at most 366 days, by month, quarter, half-year or year: income and expense accounts with an amount per period, and the total income, total expense and net profit. " +
			"Amounts are in the company currency; income is shown positive. Account rows form a tree: a group account includes its children, so add up only rows with is_group false, or read the totals. " +
			"PERMISSION_DENIED means the user has no access to accounting reports.",
		Input: schema.Object(props...),
		Output: reportOutput(row,
			schema.Prop("periodicity", schema.String("Periodicity used.")).Required(),
			schema.Prop("periods", withDesc(columnsSchema(), "The period columns: fieldname is the key in rows and totals, label the period.")).Required(),
			schema.Prop("total_income", withDesc(schema.Map(money("")), "Total income by period fieldname (see periods), plus total when not Yearly.").Nullable()).Required(),
			schema.Prop("total_expense", withDesc(schema.Map(money("")), "Total expense by period fieldname.").Nullable()).Required(),
			schema.Prop("net_profit", withDesc(schema.Map(money("")), "Profit (negative for a loss) by period fieldname; null when the ERP reports no profit row because every amount is zero.").Nullable()).Required(),
		),
		Effect:  connector.Read,
		Handler: getProfitAndLoss,
	}
}

func getProfitAndLoss(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[profitAndLossArgs](call)
	if err != nil {
		return nil, err
	}
	if a.Periodicity == "" {
		a.Periodicity = "Yearly"
	}
	c := callClient(call)
	company, dr, err := reportScope(ctx, call, c, a.Company, a.dateArgs, "the Profit and Loss Statement is kept per company")
	if err != nil {
		return nil, err
	}
	f := map[string]any{
		"company": company.Name, "filter_based_on": "Date Range",
		"period_start_date": dr.From, "period_end_date": dr.To,
		"periodicity": a.Periodicity, "selected_view": "Report",
		"accumulated_values": 0, "include_default_book_entries": 1,
	}
	setIf(f, "cost_center", listFilter(a.CostCenter))
	setIf(f, "project", listFilter(a.Project))
	d, err := c.runReport(ctx, reportProfitAndLoss, f)
	if err != nil {
		return nil, err
	}
	out := profitAndLossResult{reportResult: newReportResult(reportProfitAndLoss, company, d), Periodicity: a.Periodicity, Periods: []reportColumn{}}
	out.DateRange = dr
	var amountKeys []string
	for _, col := range d.visibleColumns() {
		if col.Fieldname == "account" {
			continue
		}
		amountKeys = append(amountKeys, col.Fieldname)
		if col.Fieldname != "total" {
			out.Periods = append(out.Periods, col)
		}
	}
	amounts := func(row map[string]any) map[string]any {
		m := map[string]any{}
		for _, k := range amountKeys {
			if v, ok := row[k]; ok {
				m[k] = cleanCell(v)
			}
		}
		return m
	}
	// A section's account rows come before its total row, and ERPNext
	// leaves out a section without amounts, total row included, so each
	// row takes the section of the total row that closes it. The quoted
	// labels ('Total Income (Credit)', 'Total Expense (Debit)', 'Profit
	// for the year') are translated into the user's language, so the rows
	// are told apart by shape: the profit row alone carries
	// warn_if_negative, and the income section comes before the expense
	// section.
	var accounts, open []map[string]any
	type section struct {
		label string
		total map[string]any
		rows  []map[string]any
	}
	var sections []section
	for _, row := range d.rows {
		switch {
		case rowLabel(row, "account") == "":
			accounts = append(accounts, row)
			open = append(open, row)
		case isTrue(row["warn_if_negative"]) || row["warn_if_negative"] == true:
			out.NetProfit = amounts(row)
		default:
			sections = append(sections, section{label: rowLabel(row, "account"), total: amounts(row), rows: open})
			open = nil
		}
	}
	names := sectionNames(len(sections), func() string {
		switch compareAmounts(sections[0].total, out.NetProfit) {
		case 1:
			return "Income"
		case -1:
			return "Expense"
		}
		return englishSections[sections[0].label]
	})
	unplaced := 0
	for i, s := range sections {
		switch names[i] {
		case "Income":
			out.TotalIncome = s.total
		case "Expense":
			out.TotalExpense = s.total
		default:
			unplaced += len(s.rows)
			continue
		}
		for _, r := range s.rows {
			r["section"] = names[i]
		}
	}
	if unplaced > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d account row(s) came before a total row that cannot be told to be income or expense (the only section, with no profit row to compare), so they have no section and the ERP's section total is not given.", unplaced))
	}
	if len(open) > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("The last %d account row(s) came after the ERP's last total row, so it is not known whether they are income or expense; they have no section.", len(open)))
	}
	out.setRows(d, accounts, a.reportPageArgs, call.MaxRecords, "section", "account_name", "parent_account", "indent", "is_group")
	for _, r := range out.Rows {
		if v, ok := r["is_group"]; ok {
			r["is_group"] = isTrue(v) || v == true
		}
	}
	if out.NetProfit == nil {
		out.Warnings = append(out.Warnings, "The ERP reported no profit row, which it omits when every amount is zero.")
	}
	return out, nil
}

// englishSections are the section total rows' labels in English.
var englishSections = map[string]string{"Total Income (Credit)": "Income", "Total Expense (Debit)": "Expense"}

// sectionNames names the P&L's section total rows, in order: two are
// income then expense; one is what single says (income when the profit
// equals it, expense when the profit is its negative, else its English
// label if it has one, else unknown: "").
func sectionNames(n int, single func() string) []string {
	switch n {
	case 0:
		return nil
	case 1:
		return []string{single()}
	case 2:
		return []string{"Income", "Expense"}
	}
	return make([]string, n)
}

// compareAmounts is +1 when b has a's amounts, -1 when it has their
// negatives, and 0 otherwise (or when either is missing or all zero).
func compareAmounts(a, b map[string]any) int {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	same, negated, nonzero := true, true, false
	for k, v := range a {
		x, ok1 := decimalText(v)
		y, ok2 := decimalText(b[k])
		if !ok1 || !ok2 {
			return 0
		}
		nonzero = nonzero || x.Sign() != 0
		same = same && x.Cmp(y) == 0
		negated = negated && new(big.Rat).Neg(x).Cmp(y) == 0
	}
	switch {
	case !nonzero:
		return 0
	case same:
		return 1
	case negated:
		return -1
	}
	return 0
}
