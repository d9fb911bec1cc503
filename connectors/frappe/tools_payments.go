package frappe

import (
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// Money movements: payment entries and imported bank transactions.

func listPaymentsTool() connector.Tool {
	return txnSpec{
		tool:    "list_payments",
		title:   "Payments",
		doctype: "Payment Entry",
		description: "Search and filter payment entries (money received from customers, paid to suppliers, or moved between accounts), or count or total them with summary. Repeat the same request with meta.next_offset for the next page: the order is fixed, with the document name as tie-breaker, though documents changed between calls can shift pages. " +
			"paid_amount is in paid_from_account_currency, received_amount in paid_to_account_currency, and base_paid_amount/base_received_amount in the company currency; totals use the company currency and need a company. " +
			"unallocated_amount is the part not yet matched to invoices. get_document shows which invoices a payment settled. party_query (with party_type) takes a name as the user said it. " +
			"Lists include drafts and cancelled payments unless docstatus is set. A failure is an error, never an empty list.",
		partyTypeArg: true,
		dateField:    "posting_date",
		statuses:     []string{"Draft", "Submitted", "Cancelled"},
		fields: []string{"name", "payment_type", "posting_date", "company", "party_type", "party", "party_name", "mode_of_payment",
			"paid_from", "paid_to", "paid_from_account_currency", "paid_to_account_currency", "paid_amount", "received_amount",
			"base_paid_amount", "base_received_amount", "unallocated_amount", "reference_no", "reference_date", "status", "docstatus"},
		row: schema.OpenObject(
			schema.Prop("name", schema.String("Payment id; use it with get_document.")),
			schema.Prop("payment_type", schema.String("Receive, Pay or Internal Transfer.")),
			schema.Prop("posting_date", schema.String("Posting date.")),
			schema.Prop("company", schema.String("Company.")),
			schema.Prop("party_type", schema.String("Customer, Supplier, ...").Nullable()),
			schema.Prop("party", schema.String("Party id.").Nullable()),
			schema.Prop("party_name", schema.String("Party name.").Nullable()),
			schema.Prop("mode_of_payment", schema.String("Mode of payment.").Nullable()),
			schema.Prop("paid_from", schema.String("Account the money left.")),
			schema.Prop("paid_to", schema.String("Account the money reached.")),
			schema.Prop("paid_from_account_currency", schema.String("Currency of paid_amount.")),
			schema.Prop("paid_to_account_currency", schema.String("Currency of received_amount.")),
			schema.Prop("paid_amount", money("Amount in paid_from_account_currency.")),
			schema.Prop("received_amount", money("Amount in paid_to_account_currency.")),
			schema.Prop("base_paid_amount", money("paid_amount in the company currency.")),
			schema.Prop("base_received_amount", money("received_amount in the company currency.")),
			schema.Prop("unallocated_amount", money("Part not allocated to invoices, in the party account's currency.")),
			schema.Prop("reference_no", schema.String("Cheque or bank reference.").Nullable()),
			schema.Prop("reference_date", schema.String("Reference date.").Nullable()),
			schema.Prop("status", schema.String("Draft, Submitted or Cancelled.")),
			schema.Prop("docstatus", schema.Integer("0 draft, 1 submitted, 2 cancelled.")),
		),
		order: ordering{fields: []string{"posting_date", "name", "party", "base_paid_amount", "base_received_amount"}, defaultField: "posting_date", defaultDir: "desc"},
		rank: map[string][]string{
			"base_paid_amount":     {"company"},
			"base_received_amount": {"company"},
		},
		searchFields:   []string{"name", "party_name", "reference_no"},
		paymentFilters: true,
		totals: totalsSpec{
			fields:     []string{"base_paid_amount", "base_received_amount"},
			currencyOf: map[string]string{"base_paid_amount": "company", "base_received_amount": "company"},
			rule:       "payment totals are in the company currency, so they need one company",
			note: "base_paid_amount and base_received_amount are in the company currency; for a Receive payment they are the money received, for Pay the money paid, so filter payment_type before reading a total as cash in or out. " +
				"These are payment documents, not net cash or a bank balance.",
		},
	}.build()
}

func listBankTransactionsTool() connector.Tool {
	return txnSpec{
		tool:    "list_bank_transactions",
		title:   "Bank transactions",
		doctype: "Bank Transaction",
		description: "Search and filter bank statement lines imported into the ERP, or count or total them with summary. Repeat the same request with meta.next_offset for the next page: the order is fixed, with the document name as tie-breaker, though documents changed between calls can shift pages. " +
			"deposit, withdrawal and unallocated_amount are in the bank account's currency (currency); sorting by them needs a currency filter, and totals need a company and a currency. " +
			"unallocated_amount is the part not yet reconciled with payments; get_document shows the payment links of a transaction. " +
			"A failure is an error, never an empty list.",
		partyTypeArg: true,
		dateField:    "date",
		statuses:     []string{"Pending", "Settled", "Unreconciled", "Reconciled", "Cancelled"},
		fields: []string{"name", "date", "company", "bank_account", "currency", "deposit", "withdrawal", "allocated_amount", "unallocated_amount",
			"description", "reference_number", "transaction_id", "transaction_type", "party_type", "party", "status", "docstatus"},
		row: schema.OpenObject(
			schema.Prop("name", schema.String("Bank transaction id; use it with get_document.")),
			// ERPNext requires none of these four (bank_transaction.json):
			// a statement line imported from a file without a currency
			// column has no currency, and so on.
			schema.Prop("date", schema.String("Statement date.").Nullable()),
			schema.Prop("company", schema.String("Company (that of bank_account).").Nullable()),
			schema.Prop("bank_account", schema.String("Bank Account record.").Nullable()),
			schema.Prop("currency", schema.String("Currency of the amounts; null when the line was imported without one, and then its amounts are in its bank account's currency.").Nullable()),
			schema.Prop("deposit", money("Money in.")),
			schema.Prop("withdrawal", money("Money out.")),
			schema.Prop("allocated_amount", money("Part reconciled with payments.")),
			schema.Prop("unallocated_amount", money("Part not yet reconciled.")),
			schema.Prop("description", schema.String("Statement text.").Nullable()),
			schema.Prop("reference_number", schema.String("Bank reference.").Nullable()),
			schema.Prop("status", schema.String("Pending, Settled, Unreconciled, Reconciled or Cancelled.")),
			schema.Prop("docstatus", schema.Integer("0 draft, 1 submitted, 2 cancelled.")),
		),
		order: ordering{fields: []string{"date", "name", "deposit", "withdrawal", "unallocated_amount"}, defaultField: "date", defaultDir: "desc"},
		rank: map[string][]string{
			"deposit":            {"currency"},
			"withdrawal":         {"currency"},
			"unallocated_amount": {"currency"},
		},
		searchFields:   []string{"name", "description", "reference_number"},
		currencyFilter: "currency",
		currencyDesc:   "Exact bank account currency (ISO code) of the amounts.",
		bankFilters:    true,
		totals: totalsSpec{
			fields:           []string{"deposit", "withdrawal", "unallocated_amount"},
			currencyOf:       map[string]string{"deposit": "bank", "withdrawal": "bank", "unallocated_amount": "bank"},
			needCurrency:     true,
			currencyOptional: true,
			rule:             "bank totals need one company and one bank currency",
			note:             "Amounts are in the bank account currency. deposit minus withdrawal is the net movement of these statement lines, not a bank balance.",
		},
	}.build()
}
