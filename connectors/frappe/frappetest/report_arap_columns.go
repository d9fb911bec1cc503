package frappetest

// Accounts Receivable / Payable rows and columns: party details, invoice
// details, ageing buckets (set_ageing) and get_columns.

// partyDetails is get_party_details: the party fields copied into a row.
func (r *arapReport) partyDetails(party string) *object {
	o := newObject(4)
	if r.side.partyType == "Customer" {
		c := r.rc.ds.Get("Customer", party)
		if c == nil {
			return o
		}
		o.set("customer_name", c.Get("customer_name"))
		o.set("territory", c.Get("territory"))
		o.set("customer_group", c.Get("customer_group"))
		o.set("customer_primary_contact", c.Get("customer_primary_contact"))
		return o
	}
	s := r.rc.ds.Get("Supplier", party)
	if s == nil {
		return o
	}
	o.set("supplier_name", s.Get("supplier_name"))
	o.set("supplier_group", s.Get("supplier_group"))
	return o
}

// render builds the row object in ERPNext's key order and sets its ageing.
func (r *arapReport) render(row *arRow) *object {
	ds := r.rc.ds
	o := newObject(40)
	o.set("voucher_type", row.voucherType)
	o.set("voucher_no", row.voucherNo)
	o.set("party", row.party)
	o.set("party_account", row.account)
	o.set("posting_date", row.postingDate)
	o.set("account_currency", row.accountCcy)
	o.set("remarks", nil)
	o.set("invoiced", Cents(row.invoiced))
	o.set("paid", Cents(row.paid))
	o.set("credit_note", Cents(row.creditNote))
	o.set("outstanding", Cents(row.outstanding))
	o.set("invoiced_in_account_currency", Cents(row.invoicedAcc))
	o.set("paid_in_account_currency", Cents(row.paidAcc))
	o.set("credit_note_in_account_currency", Cents(row.creditNoteAcc))
	o.set("outstanding_in_account_currency", Cents(row.outstandingAcc))
	if row.hasCC {
		o.set("cost_center", row.costCenter)
		o.set("project", row.project)
	}
	o.set("party_type", row.partyType)
	o.set("invoice_grand_total", Cents(row.invoiced))
	if row.voucherType == r.side.invoiceType {
		if inv := ds.Get(row.voucherType, row.voucherNo); inv != nil && inv.Int("docstatus") == 1 && inv.Str("posting_date") <= r.reportDate && inv.Str("company") == r.company {
			o.set("name", inv.Name)
			o.set("due_date", inv.Get("due_date"))
			row.dueDate = inv.Str("due_date")
			if r.side.partyType == "Customer" {
				o.set("po_no", inv.Get("po_no"))
			} else {
				o.set("bill_no", inv.Get("bill_no"))
				o.set("bill_date", inv.Get("bill_date"))
				row.billDate = inv.Str("bill_date")
			}
		}
	}
	details := r.partyDetails(row.party)
	for i, k := range details.keys {
		o.set(k, details.vals[i])
	}
	r.currency = r.companyCcy
	if r.inAccount {
		r.currency = row.accountCcy
	}
	o.set("currency", r.currency)
	// set_ageing
	entry := row.postingDate
	switch r.rc.f.str("ageing_based_on") {
	case "Due Date":
		if row.dueDate != "" {
			entry = row.dueDate
		}
	case "Supplier Invoice Date":
		entry = row.billDate
	}
	row.ranges = make([]int64, len(r.ranges)+1)
	if entry != "" {
		row.age = dateDiff(entry, r.ageAsOn)
		row.hasAge = true
		idx := len(r.ranges)
		for i, d := range r.ranges {
			if row.age <= cint(d) {
				idx = i
				break
			}
		}
		if entry <= r.ageAsOn {
			row.ranges[idx] = row.outstanding
		}
	}
	var totalDue int64
	for i, v := range row.ranges {
		o.set(rangeKey(i), Cents(v))
		totalDue += v
	}
	if row.hasAge {
		o.set("age", row.age)
	}
	o.set("total_due", Cents(totalDue))
	row.o = o
	return o
}

func rangeKey(i int) string { return "range" + itoaPad(i+1, 1) }

// rangeLabels are setup_ageing_columns' labels: "0-30", "31-60", ...,
// "121-Above".
func (r *arapReport) rangeLabels() []string {
	var out []string
	prev := "0"
	for _, d := range r.ranges {
		out = append(out, prev+"-"+d)
		prev = itoaPad(int(cint(d))+1, 1)
	}
	return append(out, prev+"-Above")
}

// arColumn is ReceivablePayableReport.add_column.
func arColumn(label, fieldname, fieldtype string, options any, width int64) *object {
	if fieldtype == "Currency" {
		options = "currency"
	}
	if fieldtype == "Date" {
		width = 90
	}
	return col("label", label, "fieldname", fieldname, "fieldtype", fieldtype, "options", options, "width", width)
}

func (r *arapReport) columns() []*object {
	f := r.rc.f
	recv := r.side.partyType == "Customer"
	cols := []*object{
		arColumn("Posting Date", "posting_date", "Date", nil, 120),
		arColumn("Party Type", "party_type", "Data", nil, 100),
		arColumn("Party", "party", "Dynamic Link", "party_type", 180),
	}
	if recv {
		cols = append(cols, arColumn("Receivable Account", "party_account", "Link", "Account", 180),
			arColumn("Customer Contact", "customer_primary_contact", "Link", "Contact", 120))
	} else {
		cols = append(cols, arColumn("Payable Account", "party_account", "Link", "Account", 180))
	}
	cols = append(cols,
		arColumn("Cost Center", "cost_center", "Data", nil, 120),
		arColumn("Project", "project", "Link", "Project", 120),
		arColumn("Voucher Type", "voucher_type", "Data", nil, 120),
		arColumn("Voucher No", "voucher_no", "Dynamic Link", "voucher_type", 180),
		arColumn("Due Date", "due_date", "Date", nil, 120))
	if !recv {
		cols = append(cols, arColumn("Bill No", "bill_no", "Data", nil, 120), arColumn("Bill Date", "bill_date", "Date", nil, 120))
	}
	cols = append(cols, arColumn("Invoiced Amount", "invoiced", "Currency", nil, 120), arColumn("Paid Amount", "paid", "Currency", nil, 120))
	if recv {
		cols = append(cols, arColumn("Credit Note", "credit_note", "Currency", nil, 120))
	} else {
		cols = append(cols, arColumn("Debit Note", "credit_note", "Currency", nil, 120))
	}
	cols = append(cols, arColumn("Outstanding Amount", "outstanding", "Currency", nil, 120), arColumn("Age (Days)", "age", "Int", nil, 80))
	for i, l := range r.rangeLabels() {
		cols = append(cols, arColumn(l, rangeKey(i), "Currency", nil, 120))
	}
	cols = append(cols, arColumn("Currency", "currency", "Link", "Currency", 80))
	if recv {
		cols = append(cols, arColumn("Customer LPO", "po_no", "Data", nil, 120),
			arColumn("Territory", "territory", "Link", "Territory", 120),
			arColumn("Customer Group", "customer_group", "Link", "Customer Group", 120))
	} else {
		cols = append(cols, arColumn("Supplier Group", "supplier_group", "Link", "Supplier Group", 120))
	}
	if f.truthy("show_remarks") {
		cols = append(cols, arColumn("Remarks", "remarks", "Text", nil, 200))
	}
	return cols
}
