package frappe

import (
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// Selling transactions: sales orders and sales invoices.

var salesInvoiceStatuses = []string{
	"Draft", "Return", "Credit Note Issued", "Submitted", "Paid", "Partly Paid", "Unpaid",
	"Unpaid and Discounted", "Partly Paid and Discounted", "Overdue and Discounted", "Overdue",
	"Cancelled", "Internal Transfer",
}

var salesOrderStatuses = []string{
	"Draft", "On Hold", "To Deliver and Bill", "To Bill", "To Deliver", "Completed", "Cancelled", "Closed",
}

// invoiceTotals are the totals of sales and purchase invoices.
var invoiceTotals = totalsSpec{
	fields:       []string{"grand_total", "net_total", "base_grand_total", "base_net_total"},
	currencyOf:   map[string]string{"grand_total": "document", "net_total": "document", "base_grand_total": "company", "base_net_total": "company"},
	groupBy:      "party_account_currency",
	groupFields:  []string{"outstanding_amount"},
	needCurrency: true,
	rule:         "invoice grand_total needs one company and one document currency",
	note: "grand_total and net_total are in the document currency, base_* in the company currency. outstanding_amount is stated in each invoice's party_account_currency, so it is split per currency in breakdown. " +
		"These are current document amounts, not recognised revenue or a ledger balance; use get_accounts_receivable_summary or get_accounts_payable_summary for balances.",
}

// orderTotals are the totals of sales and purchase orders.
var orderTotals = totalsSpec{
	fields:       []string{"grand_total", "net_total", "base_grand_total", "base_net_total"},
	currencyOf:   map[string]string{"grand_total": "document", "net_total": "document", "base_grand_total": "company", "base_net_total": "company"},
	needCurrency: true,
	rule:         "order grand_total needs one company and one document currency",
	note:         "grand_total and net_total are in the document currency, base_* in the company currency. These are ordered amounts, not invoiced or paid amounts.",
}

// amountRank are the ranking rules of invoice and order amounts.
var amountRank = map[string][]string{
	"grand_total":        {"currency"},
	"net_total":          {"currency"},
	"base_grand_total":   {"company"},
	"base_net_total":     {"company"},
	"outstanding_amount": {"party_account_currency"},
}

func listSalesInvoicesTool() connector.Tool {
	return txnSpec{
		tool:    "list_sales_invoices",
		title:   "Sales invoices",
		doctype: "Sales Invoice",
		description: "Search and filter sales invoices, or count or total them with summary. Repeat the same request with meta.next_offset for the next page: the order is fixed, with the document name as tie-breaker, though documents changed between calls can shift pages. " +
			"grand_total is in the document currency, base_grand_total in the company currency and outstanding_amount in party_account_currency (the receivable account's currency, which can differ from the document currency). " +
			"Sorting by grand_total needs a currency filter, by base_grand_total a company filter and by outstanding_amount a party_account_currency filter, so that ranked amounts are comparable. " +
			"Use unpaid_only for invoices with a balance and overdue_as_of for balances due before a date. customer_query takes a name as the user said it; when party_match is not matched nothing was read. " +
			"Lists include drafts and cancelled invoices unless docstatus is set. A failure is an error, never an empty list.",
		party:          &customerParty,
		dateField:      "posting_date",
		statuses:       salesInvoiceStatuses,
		fields:         []string{"name", "customer", "customer_name", "company", "posting_date", "due_date", "currency", "grand_total", "net_total", "base_grand_total", "outstanding_amount", "party_account_currency", "status", "docstatus", "is_return"},
		row:            invoiceRow("customer"),
		order:          ordering{fields: []string{"posting_date", "due_date", "name", "customer", "grand_total", "base_grand_total", "outstanding_amount"}, defaultField: "posting_date", defaultDir: "desc"},
		rank:           amountRank,
		searchFields:   []string{"name", "customer_name"},
		invoice:        true,
		currencyFilter: "currency",
		currencyDesc:   "Exact document currency (ISO code) of grand_total.",
		totals:         invoiceTotals,
	}.build()
}

func listSalesOrdersTool() connector.Tool {
	return txnSpec{
		tool:    "list_sales_orders",
		title:   "Sales orders",
		doctype: "Sales Order",
		description: "Search and filter sales orders, or count or total them with summary. Repeat the same request with meta.next_offset for the next page: the order is fixed, with the document name as tie-breaker, though documents changed between calls can shift pages. " +
			"grand_total is in the document currency and base_grand_total in the company currency; per_delivered and per_billed are percentages. " +
			"Sorting by grand_total needs a currency filter and by base_grand_total a company filter. customer_query takes a name as the user said it; when party_match is not matched nothing was read. " +
			"Lists include drafts and cancelled orders unless docstatus is set. A failure is an error, never an empty list.",
		party:          &customerParty,
		dateField:      "transaction_date",
		statuses:       salesOrderStatuses,
		fields:         []string{"name", "customer", "customer_name", "company", "transaction_date", "delivery_date", "currency", "grand_total", "net_total", "base_grand_total", "per_delivered", "per_billed", "status", "docstatus"},
		row:            orderRow("customer", "delivery_date", "per_delivered"),
		order:          ordering{fields: []string{"transaction_date", "delivery_date", "name", "customer", "grand_total", "base_grand_total"}, defaultField: "transaction_date", defaultDir: "desc"},
		rank:           amountRank,
		searchFields:   []string{"name", "customer_name"},
		currencyFilter: "currency",
		currencyDesc:   "Exact document currency (ISO code) of grand_total.",
		totals:         orderTotals,
	}.build()
}

// invoiceRow describes a sales or purchase invoice row; party is customer
// or supplier.
func invoiceRow(party string) *schema.Schema {
	props := []schema.Property{
		schema.Prop("name", schema.String("Invoice id; use it with get_document.")),
		schema.Prop(party, schema.String("Party id.")),
		schema.Prop(party+"_name", schema.String("Party name.")),
		schema.Prop("company", schema.String("Company.")),
		schema.Prop("posting_date", schema.String("Posting date.")),
		schema.Prop("due_date", schema.String("Due date.").Nullable()),
		schema.Prop("currency", schema.String("Document currency of grand_total and net_total.")),
		schema.Prop("grand_total", money("Total including taxes, in the document currency.")),
		schema.Prop("net_total", money("Total before taxes, in the document currency.")),
		schema.Prop("base_grand_total", money("grand_total in the company currency.")),
		schema.Prop("outstanding_amount", money("Unpaid balance in party_account_currency; negative on returns.")),
		schema.Prop("party_account_currency", schema.String("Currency of outstanding_amount.").Nullable()),
		schema.Prop("status", schema.String("Invoice status.")),
		schema.Prop("docstatus", schema.Integer("0 draft, 1 submitted, 2 cancelled.")),
		schema.Prop("is_return", schema.Integer("1 for a return or credit/debit note (negative amounts).")),
	}
	if party == "supplier" {
		props = append(props,
			schema.Prop("bill_no", schema.String("The supplier's invoice number.").Nullable()),
			schema.Prop("bill_date", schema.String("The supplier's invoice date.").Nullable()),
			schema.Prop("on_hold", schema.Integer("1 when payment is on hold.")),
		)
	}
	return schema.OpenObject(props...)
}

// orderRow describes a sales or purchase order row.
func orderRow(party, dueField, progressField string) *schema.Schema {
	return schema.OpenObject(
		schema.Prop("name", schema.String("Order id; use it with get_document.")),
		schema.Prop(party, schema.String("Party id.")),
		schema.Prop(party+"_name", schema.String("Party name.")),
		schema.Prop("company", schema.String("Company.")),
		schema.Prop("transaction_date", schema.String("Order date.")),
		schema.Prop(dueField, schema.String("Expected date.").Nullable()),
		schema.Prop("currency", schema.String("Document currency of grand_total and net_total.")),
		schema.Prop("grand_total", money("Total including taxes, in the document currency.")),
		schema.Prop("net_total", money("Total before taxes, in the document currency.")),
		schema.Prop("base_grand_total", money("grand_total in the company currency.")),
		schema.Prop(progressField, schema.Number("Percent delivered or received.")),
		schema.Prop("per_billed", schema.Number("Percent billed.")),
		schema.Prop("status", schema.String("Order status.")),
		schema.Prop("docstatus", schema.Integer("0 draft, 1 submitted, 2 cancelled.")),
	)
}
