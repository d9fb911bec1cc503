package frappe

import (
	"context"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/schema"
	"github.com/erpgate/erpgate/platform/toolerr"
)

type listSalesInvoicesArgs struct {
	pageArgs
	Company              string `json:"company"`
	Customer             string `json:"customer"`
	Status               string `json:"status"`
	Docstatus            *int   `json:"docstatus"`
	Currency             string `json:"currency"`
	PartyAccountCurrency string `json:"party_account_currency"`
	FromDate             string `json:"from_date"`
	ToDate               string `json:"to_date"`
	Search               string `json:"search"`
	OrderBy              string `json:"order_by"`
	Order                string `json:"order"`
}

var salesInvoiceStatuses = []string{
	"Draft", "Return", "Credit Note Issued", "Submitted", "Paid", "Partly Paid", "Unpaid",
	"Unpaid and Discounted", "Partly Paid and Discounted", "Overdue and Discounted", "Overdue",
	"Cancelled", "Internal Transfer",
}

var invoiceOrdering = ordering{
	fields:       []string{"posting_date", "due_date", "name", "customer", "grand_total", "base_grand_total", "outstanding_amount"},
	defaultField: "posting_date",
	defaultDir:   "desc",
}

var salesInvoiceFields = []string{
	"name", "customer", "customer_name", "company", "posting_date", "due_date", "currency",
	"grand_total", "base_grand_total", "outstanding_amount", "party_account_currency",
	"status", "docstatus", "is_return",
}

func listSalesInvoicesTool() connector.Tool {
	props := []schema.Property{
		schema.Prop("company", schema.String("Exact company name (see list_companies).").Len(1, 140)),
		schema.Prop("customer", schema.String("Exact customer id (see list_customers).").Len(1, 140)),
		schema.Prop("status", schema.String("Exact invoice status.").OneOf(salesInvoiceStatuses...)),
		schema.Prop("docstatus", schema.Integer("0 draft, 1 submitted, 2 cancelled. Lists include every state unless this is set; totals should use 1.").Min(0).Max(2)),
		schema.Prop("currency", schema.String("Exact document currency (ISO code).").Match(`^[A-Z]{3}$`)),
		schema.Prop("party_account_currency", schema.String("Exact currency of the receivable account, in which outstanding_amount is stated.").Match(`^[A-Z]{3}$`)),
		schema.Prop("from_date", schema.Date("First posting date to include (YYYY-MM-DD).")),
		schema.Prop("to_date", schema.Date("Last posting date to include (YYYY-MM-DD).")),
		schema.Prop("search", schema.String("Text to find in the invoice id or customer name, matched literally.").Len(1, 140)),
	}
	props = append(props, invoiceOrdering.props()...)
	props = append(props, pageProps()...)
	money := func(d string) *schema.Schema { return schema.Number(d) }
	row := schema.OpenObject(
		schema.Prop("name", schema.String("Invoice id.")),
		schema.Prop("customer", schema.String("Customer id.")),
		schema.Prop("customer_name", schema.String("Customer name.")),
		schema.Prop("company", schema.String("Company.")),
		schema.Prop("posting_date", schema.String("Posting date.")),
		schema.Prop("due_date", schema.String("Due date.").Nullable()),
		schema.Prop("currency", schema.String("Document currency of grand_total.")),
		schema.Prop("grand_total", money("Total in the document currency.")),
		schema.Prop("base_grand_total", money("Total in the company currency.")),
		schema.Prop("outstanding_amount", money("Unpaid balance in party_account_currency.")),
		schema.Prop("party_account_currency", schema.String("Currency of outstanding_amount.").Nullable()),
		schema.Prop("status", schema.String("Invoice status.")),
		schema.Prop("docstatus", schema.Integer("0 draft, 1 submitted, 2 cancelled.")),
		schema.Prop("is_return", schema.Integer("1 for a credit note (negative amounts).")),
	)
	return connector.Tool{
		Name:  "list_sales_invoices",
		Title: "Sales invoices",
		Description: "Search and filter sales invoices. Pages are stable: repeat the same request with meta.next_offset. " +
			"grand_total is in the document currency, base_grand_total in the company currency and outstanding_amount in party_account_currency: " +
			"sorting by grand_total needs a currency filter, by base_grand_total a company filter and by outstanding_amount a party_account_currency filter, so that ranked amounts are comparable. " +
			"Lists include drafts and cancelled invoices unless docstatus is set.",
		Input:   schema.Object(props...),
		Output:  listPageSchema(row),
		Effect:  connector.Read,
		Handler: listSalesInvoices,
	}
}

func listSalesInvoices(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[listSalesInvoicesArgs](call)
	if err != nil {
		return nil, err
	}
	switch a.OrderBy {
	case "grand_total":
		if a.Currency == "" {
			return nil, toolerr.New(toolerr.InvalidArgument, "sorting by grand_total compares document-currency amounts: add a currency filter")
		}
	case "base_grand_total":
		if a.Company == "" {
			return nil, toolerr.New(toolerr.InvalidArgument, "sorting by base_grand_total compares company-currency amounts: add a company filter")
		}
	case "outstanding_amount":
		if a.PartyAccountCurrency == "" {
			return nil, toolerr.New(toolerr.InvalidArgument, "sorting by outstanding_amount compares balances in the receivable account's currency: add a party_account_currency filter")
		}
	}
	if a.FromDate != "" && a.ToDate != "" && a.FromDate > a.ToDate {
		return nil, toolerr.New(toolerr.InvalidArgument, "from_date %s is after to_date %s", a.FromDate, a.ToDate)
	}
	orderBy, err := invoiceOrdering.build(a.OrderBy, a.Order)
	if err != nil {
		return nil, err
	}
	q := listQuery{Fields: salesInvoiceFields, OrderBy: orderBy}
	q.Filters.addIf("company", a.Company)
	q.Filters.addIf("customer", a.Customer)
	q.Filters.addIf("status", a.Status)
	q.Filters.addIf("currency", a.Currency)
	q.Filters.addIf("party_account_currency", a.PartyAccountCurrency)
	if a.Docstatus != nil {
		q.Filters.add("docstatus", "=", *a.Docstatus)
	}
	if a.FromDate != "" {
		q.Filters.add("posting_date", ">=", a.FromDate)
	}
	if a.ToDate != "" {
		q.Filters.add("posting_date", "<=", a.ToDate)
	}
	var search *textSearch
	if a.Search != "" {
		search = &textSearch{text: a.Search, fields: []string{"name", "customer_name"}}
	}
	return fetchPage(ctx, newClient(call.Site, call.HTTP), "Sales Invoice", q, a.pageArgs, call.MaxRecords, search)
}
