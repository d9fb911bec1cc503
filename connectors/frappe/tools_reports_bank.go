package frappe

import (
	"context"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// The Bank Reconciliation Statement: the bank balance per the ledger,
// the entries the bank has not cleared yet, and the balance the bank
// statement should show.

type bankReconciliationArgs struct {
	reportPageArgs
	Company    string `json:"company"`
	Account    string `json:"account"`
	ReportDate string `json:"report_date"`
}

// brsAmount is one of the statement's summary lines.
type brsAmount struct {
	Debit  any `json:"debit"`
	Credit any `json:"credit"`
}

type bankReconciliationResult struct {
	reportResult
	Account string `json:"account"`
	// Summary holds the statement's summary lines by key.
	Summary map[string]brsAmount `json:"summary"`
}

// brsSummaryLines maps the ERP's summary labels, in English, to stable
// keys.
var brsSummaryLines = map[string]string{
	"Bank Statement balance as per General Ledger": "balance_as_per_ledger",
	"Outstanding Cheques and Deposits to clear":    "outstanding_to_clear",
	"Cheques and Deposits incorrectly cleared":     "incorrectly_cleared",
	"Calculated Bank Statement balance":            "calculated_bank_balance",
}

// brsSummaryOrder are the keys of the summary lines in the order ERPNext
// appends them after the entries.
var brsSummaryOrder = []string{"balance_as_per_ledger", "outstanding_to_clear", "incorrectly_cleared", "calculated_bank_balance"}

func getBankReconciliationStatementTool() connector.Tool {
	props := []schema.Property{
		companyProp("The company that owns the bank account."),
		schema.Prop("account", schema.String("The bank or cash ledger account (exact name; list_accounts with account_type Bank finds them), not the Bank Account record.").Len(1, 140)).Required(),
		schema.Prop("report_date", schema.Date("The statement date (YYYY-MM-DD).")).Required(),
	}
	props = append(props, reportPageProps()...)
	row := schema.OpenObject(
		schema.Prop("posting_date", schema.String("Posting date.")),
		schema.Prop("payment_document", schema.String("Document type.")),
		schema.Prop("payment_entry", schema.String("Document name.")),
		schema.Prop("debit", money("Money in, account currency.")),
		schema.Prop("credit", money("Money out, account currency.")),
		schema.Prop("against_account", schema.String("Counter account.").Nullable()),
		schema.Prop("reference_no", schema.String("Cheque or bank reference.").Nullable()),
		schema.Prop("clearance_date", schema.String("Clearance date (empty while uncleared).").Nullable()),
		schema.Prop("account_currency", schema.String("Currency of debit and credit.")),
	)
	line := schema.Object(
		schema.Prop("debit", money("Debit side.")),
		schema.Prop("credit", money("Credit side.")),
	)
	return connector.Tool{
		Name:  "get_bank_reconciliation_statement",
		Title: "Bank Reconciliation Statement",
		Description: "Run ERPNext's Bank Reconciliation Statement for one bank ledger account at report_date: the balance per the ledger, the payments and deposits the bank has not cleared yet (rows), and the calculated balance the bank statement should show. " +
			"Amounts are in the account's currency (account_currency). summary keys: balance_as_per_ledger, outstanding_to_clear, incorrectly_cleared, calculated_bank_balance; a balance is debit minus credit. " +
			"Rows are paged with offset/next_offset. PERMISSION_DENIED means the user has no access to accounting reports.",
		Input: schema.Object(props...),
		Output: reportOutput(row,
			schema.Prop("account", schema.String("The bank ledger account.")).Required(),
			schema.Prop("summary", withDesc(schema.Map(line), "The statement's summary lines by key.")).Required(),
		),
		Effect:  connector.Read,
		Handler: getBankReconciliationStatement,
	}
}

func getBankReconciliationStatement(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[bankReconciliationArgs](call)
	if err != nil {
		return nil, err
	}
	if _, err := parseDate("report_date", a.ReportDate); err != nil {
		return nil, err
	}
	c := callClient(call)
	name, err := requireCompany(call, a.Company, "bank accounts belong to a company")
	if err != nil {
		return nil, err
	}
	company, err := c.company(ctx, name)
	if err != nil {
		return nil, err
	}
	f := map[string]any{"company": company.Name, "account": a.Account, "report_date": a.ReportDate, "include_pos_transactions": 0}
	d, err := c.runReport(ctx, reportBankReconciliation, f)
	if err != nil {
		return nil, err
	}
	out := bankReconciliationResult{reportResult: newReportResult(reportBankReconciliation, company, d), Account: a.Account, Summary: map[string]brsAmount{}}
	out.ReportDate = a.ReportDate
	// The summary lines are the rows without a payment document. Their
	// labels are translated into the user's language, so when there are
	// the four ERPNext sends they are known by their order.
	var entries, lines []map[string]any
	for _, r := range d.rows {
		if str(r["payment_document"]) == "" {
			lines = append(lines, r)
			continue
		}
		entries = append(entries, r)
	}
	for i, r := range lines {
		key, ok := brsSummaryLines[str(cleanCell(r["payment_entry"]))]
		if !ok && len(lines) == len(brsSummaryOrder) {
			key, ok = brsSummaryOrder[i], true
		}
		if ok {
			out.Summary[key] = brsAmount{Debit: cleanCell(r["debit"]), Credit: cleanCell(r["credit"])}
		} else {
			entries = append(entries, r)
		}
	}
	var warnings []string
	out.Currency = rowCurrencyField(d.rows, "account_currency", company.Currency, &warnings)
	out.Warnings = append(out.Warnings, warnings...)
	if len(out.Summary) == 0 {
		out.Warnings = append(out.Warnings, "The ERP returned no balance lines; check that account is a bank or cash ledger account of this company (list_accounts with account_type Bank).")
	}
	out.setRows(d, entries, a.reportPageArgs, call.MaxRecords)
	return out, nil
}

// rowCurrencyField is rowCurrency for a differently named currency column.
func rowCurrencyField(rows []map[string]any, field, fallback string, warnings *[]string) string {
	renamed := make([]map[string]any, 0, len(rows))
	for _, r := range rows {
		renamed = append(renamed, map[string]any{"currency": r[field]})
	}
	return rowCurrency(renamed, fallback, warnings)
}
