package frappe

import "github.com/erpgate/erpgate/platform/connector"

// Buying transactions: purchase orders and purchase invoices.

var purchaseInvoiceStatuses = []string{
	"Draft", "Return", "Debit Note Issued", "Submitted", "Paid", "Partly Paid", "Unpaid",
	"Overdue", "Cancelled", "Internal Transfer",
}

var purchaseOrderStatuses = []string{
	"Draft", "On Hold", "To Receive and Bill", "To Bill", "To Receive", "Completed", "Cancelled", "Closed", "Delivered",
}

func listPurchaseInvoicesTool() connector.Tool {
	return txnSpec{
		tool:    "list_purchase_invoices",
		title:   "Purchase invoices",
		doctype: "Purchase Invoice",
		description: "Search and filter purchase invoices (supplier bills), or count or total them with summary. Repeat the same request with meta.next_offset for the next page: the order is fixed, with the document name as tie-breaker, though documents changed between calls can shift pages. " +
			"grand_total is in the document currency, base_grand_total in the company currency and outstanding_amount in party_account_currency (the payable account's currency). " +
			"Sorting by grand_total needs a currency filter, by base_grand_total a company filter and by outstanding_amount a party_account_currency filter. " +
			"Use unpaid_only for bills with a balance and overdue_as_of for balances due before a date. supplier_query takes a name as the user said it; when party_match is not matched nothing was read. " +
			"Lists include drafts and cancelled bills unless docstatus is set. A failure is an error, never an empty list.",
		party:          &supplierParty,
		dateField:      "posting_date",
		statuses:       purchaseInvoiceStatuses,
		fields:         []string{"name", "supplier", "supplier_name", "bill_no", "bill_date", "company", "posting_date", "due_date", "currency", "grand_total", "net_total", "base_grand_total", "outstanding_amount", "party_account_currency", "status", "docstatus", "is_return", "on_hold"},
		row:            invoiceRow("supplier"),
		order:          ordering{fields: []string{"posting_date", "due_date", "name", "supplier", "grand_total", "base_grand_total", "outstanding_amount"}, defaultField: "posting_date", defaultDir: "desc"},
		rank:           amountRank,
		searchFields:   []string{"name", "supplier_name", "bill_no"},
		invoice:        true,
		currencyFilter: "currency",
		currencyDesc:   "Exact document currency (ISO code) of grand_total.",
		totals:         invoiceTotals,
	}.build()
}

func listPurchaseOrdersTool() connector.Tool {
	return txnSpec{
		tool:    "list_purchase_orders",
		title:   "Purchase orders",
		doctype: "Purchase Order",
		description: "Search and filter purchase orders, or count or total them with summary. Repeat the same request with meta.next_offset for the next page: the order is fixed, with the document name as tie-breaker, though documents changed between calls can shift pages. " +
			"grand_total is in the document currency and base_grand_total in the company currency; per_received and per_billed are percentages. " +
			"pending_receipt lists submitted, open orders that are not fully received. Sorting by grand_total needs a currency filter and by base_grand_total a company filter. " +
			"supplier_query takes a name as the user said it; when party_match is not matched nothing was read. " +
			"Lists include drafts and cancelled orders unless docstatus is set. A failure is an error, never an empty list.",
		party:          &supplierParty,
		dateField:      "transaction_date",
		statuses:       purchaseOrderStatuses,
		fields:         []string{"name", "supplier", "supplier_name", "company", "transaction_date", "schedule_date", "currency", "grand_total", "net_total", "base_grand_total", "per_received", "per_billed", "status", "docstatus"},
		row:            orderRow("supplier", "schedule_date", "per_received"),
		order:          ordering{fields: []string{"transaction_date", "schedule_date", "name", "supplier", "grand_total", "base_grand_total"}, defaultField: "transaction_date", defaultDir: "desc"},
		rank:           amountRank,
		searchFields:   []string{"name", "supplier_name"},
		pendingReceipt: true,
		currencyFilter: "currency",
		currencyDesc:   "Exact document currency (ISO code) of grand_total.",
		totals:         orderTotals,
	}.build()
}
