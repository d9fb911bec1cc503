package frappetest

import "time"

// deriveInvoiceStatuses applies ERPNext v15 SalesInvoice.set_status (and
// the identical PurchaseInvoice.set_status, "Debit Note Issued" for
// "Credit Note Issued") to every invoice as of today:
//
//	docstatus 2 -> Cancelled; 0 -> Draft; 1 -> (internal transfer ->
//	Internal Transfer); overdue -> Overdue; 0 < outstanding < total ->
//	Partly Paid; outstanding > 0 and due_date >= today -> Unpaid; a
//	submitted return exists against it -> Credit Note Issued; is_return ->
//	Return; outstanding <= 0 -> Paid; else Submitted.
//
// "total" is rounded_total (grand_total when rounding is disabled), in
// company currency when party_account_currency differs from currency.
// Overdue uses the payment schedule: the amount due before today
// (base_payment_amount when currencies differ) exceeds what was paid.
func deriveInvoiceStatuses(invoices []*Doc, today time.Time) {
	returned := map[string]bool{}
	for _, d := range invoices {
		if d.Int("is_return") == 1 && d.Int("docstatus") == 1 {
			returned[d.Str("return_against")] = true
		}
	}
	t := fmtDate(today)
	for _, d := range invoices {
		d.Fields["status"] = invoiceStatus(d, t, returned[d.Name])
	}
}

func invoiceStatus(d *Doc, today string, creditNoteIssued bool) string {
	switch d.Int("docstatus") {
	case 2:
		return "Cancelled"
	case 0:
		return "Draft"
	}
	outstanding := d.Dec("outstanding_amount").Cents()
	total := partyTotal(d)
	switch {
	case invoiceOverdue(d, today, outstanding, total):
		return "Overdue"
	case 0 < outstanding && outstanding < total:
		return "Partly Paid"
	case outstanding > 0 && d.Str("due_date") >= today:
		return "Unpaid"
	case d.Int("is_return") == 0 && creditNoteIssued && d.DocType == "Purchase Invoice":
		return "Debit Note Issued"
	case d.Int("is_return") == 0 && creditNoteIssued:
		return "Credit Note Issued"
	case d.Int("is_return") == 1:
		return "Return"
	case outstanding <= 0:
		return "Paid"
	}
	return "Submitted"
}

// invoiceOverdue mirrors erpnext.accounts.doctype.sales_invoice.is_overdue.
func invoiceOverdue(d *Doc, today string, outstanding, total int64) bool {
	if outstanding <= 0 {
		return false
	}
	rows := d.Children["payment_schedule"]
	if d.Int("is_pos") == 1 || len(rows) == 0 {
		return d.Str("due_date") < today
	}
	field := "payment_amount"
	if d.Str("party_account_currency") != d.Str("currency") {
		field = "base_payment_amount"
	}
	var payable int64
	for _, r := range rows {
		if r.Str("due_date") < today {
			payable += r.Dec(field).Cents()
		}
	}
	return total-outstanding < payable
}
