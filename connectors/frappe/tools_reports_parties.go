package frappe

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// Detailed receivables and payables: one row per open document, with
// ageing. The summaries live in tools_summaries_parties.go.

type openItemsArgs struct {
	reportPageArgs
	ageingArgs
	Customer      string `json:"customer"`
	CustomerQuery string `json:"customer_query"`
	Supplier      string `json:"supplier"`
	SupplierQuery string `json:"supplier_query"`
}

type openItemsResult struct {
	reportResult
	PartyMatch *partyMatch            `json:"party_match,omitempty"`
	Totals     map[string]json.Number `json:"totals,omitempty"`
	Ageing     []ageingBucket         `json:"ageing,omitempty"`
}

func (s ledgerSide) openItemsTool(name, title, description string) connector.Tool {
	k := s.party
	props := s.ageingProps()
	props = append(props,
		schema.Prop(k.ExactArg, schema.String("Only this "+strings.ToLower(k.Doctype)+" (exact id).").Len(1, 140)),
		schema.Prop(k.QueryArg, schema.String("Only this "+strings.ToLower(k.Doctype)+", by name as the user said it; resolved or returned as candidates. Never combine with "+k.ExactArg+".").Len(1, 140)),
	)
	props = append(props, reportPageProps()...)
	row := schema.OpenObject(
		schema.Prop("posting_date", schema.String("Document date.")),
		schema.Prop("party", schema.String("Party id.")),
		schema.Prop("voucher_type", schema.String("Document type.")),
		schema.Prop("voucher_no", schema.String("Document name; use it with get_document.")),
		schema.Prop("due_date", schema.String("Due date.").Nullable()),
		schema.Prop("invoiced", money("Invoiced amount.")),
		schema.Prop("paid", money("Paid so far.")),
		schema.Prop("credit_note", money("Credited (returns) so far.")),
		schema.Prop("outstanding", money("Open balance; negative for an unallocated payment or credit.")),
		schema.Prop("age", schema.Integer("Age in days.")),
		schema.Prop("currency", schema.String("Currency of the amounts (the company currency).")),
	)
	return connector.Tool{
		Name:        name,
		Title:       title,
		Description: description,
		Input:       schema.Object(props...),
		Output: reportOutput(row,
			schema.Prop("party_match", withDesc(partyMatchSchema(), "Present when a spoken name was given; unless matched, the report was not run.")),
			schema.Prop("totals", withDesc(schema.Map(money("")), "Exact sums over every row (not only this page) of invoiced, paid, credit_note and outstanding.")),
			schema.Prop("ageing", ageingSchema()),
		),
		Effect:  connector.Read,
		Handler: s.openItems,
	}
}

func (s ledgerSide) openItems(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[openItemsArgs](call)
	if err != nil {
		return nil, err
	}
	c := callClient(call)
	exact, query := a.Customer, a.CustomerQuery
	if s.party.Doctype == "Supplier" {
		exact, query = a.Supplier, a.SupplierQuery
	}
	if query != "" {
		if err := c.checkReportAccess(ctx, s.detailReport); err != nil {
			return nil, err
		}
	}
	partyID, m, err := resolvePartyArgs(ctx, c, s.party, exact, query)
	if err != nil {
		return nil, err
	}
	company, err := sideCompany(ctx, call, c, a.Company)
	if err != nil {
		return nil, err
	}
	if m != nil && m.Status != matchMatched {
		r := openItemsResult{reportResult: reportResult{Report: s.detailReport, Company: company.Name, Currency: company.Currency, Columns: []reportColumn{}, Rows: []map[string]any{},
			Warnings: []string{"The report was not run: the " + strings.ToLower(s.party.Doctype) + " name needs confirmation (see party_match)."}}, PartyMatch: m}
		r.ReportDate = a.ReportDate
		return r, nil
	}
	d, rows, err := s.runDetail(ctx, c, company.Name, a.ageingArgs, partyID)
	if err != nil {
		return nil, err
	}
	out := openItemsResult{reportResult: newReportResult(s.detailReport, company, d), PartyMatch: m}
	out.ReportDate = a.ReportDate
	out.Currency = rowCurrency(rows, company.Currency, &out.Warnings)
	if out.Totals, err = sumColumns(rows, d.presentColumns(ageingAmountFields...)); err != nil {
		return nil, err
	}
	if out.Ageing, err = ageingTotals(d, rows); err != nil {
		return nil, err
	}
	out.setRows(d, rows, a.reportPageArgs, call.MaxRecords)
	return out, nil
}

func getAccountsReceivableTool() connector.Tool {
	return receivableSide.openItemsTool("get_accounts_receivable", "Accounts Receivable",
		"Run ERPNext's Accounts Receivable report for one company at report_date: every open customer document (invoice, credit note, unallocated payment) with its outstanding balance and age. "+
			"Amounts are in the company currency. totals and ageing add up every row exactly, not only this page. Narrow to one customer with customer (exact id) or customer_query (a name as said). "+
			"Rows are paged with offset/next_offset. For totals and top customers only, use get_accounts_receivable_summary. PERMISSION_DENIED means the user has no access to accounting reports.")
}

func getAccountsPayableTool() connector.Tool {
	return payableSide.openItemsTool("get_accounts_payable", "Accounts Payable",
		"Run ERPNext's Accounts Payable report for one company at report_date: every open supplier document (bill, debit note, unallocated payment) with its outstanding balance and age. "+
			"Amounts are in the company currency. totals and ageing add up every row exactly, not only this page. Narrow to one supplier with supplier (exact id) or supplier_query (a name as said). "+
			"Rows are paged with offset/next_offset. For totals and top suppliers only, use get_accounts_payable_summary. PERMISSION_DENIED means the user has no access to accounting reports.")
}
