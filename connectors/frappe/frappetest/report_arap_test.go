package frappetest

import (
	"strings"
	"testing"
)

// openItems computes, from the documents, what Accounts Receivable /
// Payable must show as of the last data day: every submitted invoice with
// an outstanding amount and every payment with an unallocated amount, in
// party account currency (negative for credits).
func openItems(ds *Dataset, side arapSide, company string) map[string]int64 {
	out := map[string]int64{}
	for _, d := range ds.List(side.invoiceType) {
		if d.Int("docstatus") == 1 && d.Str("company") == company && d.Dec("outstanding_amount") != 0 {
			out[d.Name] = d.Dec("outstanding_amount").Cents()
		}
	}
	for _, pe := range ds.List("Payment Entry") {
		if pe.Int("docstatus") == 1 && pe.Str("company") == company && pe.Str("party_type") == side.partyType && pe.Dec("unallocated_amount") != 0 {
			out[pe.Name] = -pe.Dec("unallocated_amount").Cents()
		}
	}
	return out
}

func TestAccountsReceivableEqualsOpenInvoices(t *testing.T) {
	s := testServer(t)
	ds := s.Data()
	for _, company := range []string{nzCompany, auCompany, usCompany} {
		want := openItems(ds, receivableSide, company)
		r := mustReport(t, s, "Accounts Receivable", map[string]any{"company": company, "report_date": "2026-06-15", "in_party_currency": 1})
		got := map[string]int64{}
		var sum, wantSum int64
		for _, row := range r.rows {
			got[cstr(row["voucher_no"])] = cents(t, row["outstanding"])
			sum += cents(t, row["outstanding"])
			if row["currency"] != row["account_currency"] {
				t.Fatalf("in_party_currency row %v", row)
			}
		}
		for k, v := range want {
			wantSum += v
			if got[k] != v {
				t.Errorf("%s %s: report %d, documents %d", company, k, got[k], v)
			}
		}
		if len(got) != len(want) || len(want) < 10 || sum != wantSum {
			t.Errorf("%s: %d rows (sum %d), documents %d (sum %d)", company, len(got), sum, len(want), wantSum)
		}
		// in_party_currency with several parties has no total row.
		if r.tail != nil || r.msg["skip_total_row"] != json1 || r.msg["add_total_row"] != false {
			t.Errorf("%s: total row / flags %v %v %v", company, r.tail, r.msg["skip_total_row"], r.msg["add_total_row"])
		}
	}
}

func TestAccountsReceivableCompanyCurrencyAndTotalRow(t *testing.T) {
	s := testServer(t)
	ds := s.Data()
	r := mustReport(t, s, "Accounts Receivable", map[string]any{"company": nzCompany, "report_date": "2026-06-15",
		"party_account": "Debtors - DHNZ", "ageing_based_on": "Due Date", "calculate_ageing_with": "Report Date"})
	wantCols := "posting_date,party_type,party,party_account,customer_primary_contact,cost_center,project,voucher_type,voucher_no,due_date," +
		"invoiced,paid,credit_note,outstanding,age,range1,range2,range3,range4,range5,currency,po_no,territory,customer_group"
	if got := strings.Join(fieldnames(r.columns), ","); got != wantCols {
		t.Fatalf("columns %s", got)
	}
	if r.columns[15]["label"] != "0-30" || r.columns[19]["label"] != "121-Above" || r.columns[3]["label"] != "Receivable Account" {
		t.Fatalf("labels %v %v", r.columns[15], r.columns[19])
	}
	var want int64
	for _, d := range ds.List("Sales Invoice") {
		if d.Int("docstatus") == 1 && d.Str("debit_to") == "Debtors - DHNZ" {
			want += d.Dec("outstanding_amount").Cents()
		}
	}
	for _, pe := range ds.List("Payment Entry") {
		if pe.Int("docstatus") == 1 && pe.Str("paid_from") == "Debtors - DHNZ" {
			want -= pe.Dec("unallocated_amount").Cents()
		}
	}
	var sum int64
	for _, row := range r.rows {
		sum += cents(t, row["outstanding"])
	}
	if sum != want {
		t.Fatalf("receivable %d, documents %d", sum, want)
	}
	// The total row is a JSON array as long as the columns: "" under the
	// Date first column, exact sums under amounts, the currency copied.
	tail := r.tail
	if len(tail) != len(r.columns) || tail[0] != "" || cents(t, tail[13]) != sum || tail[20] != "NZD" || cents(t, tail[14]) == 0 {
		t.Fatalf("total row %v", tail)
	}
	if r.msg["add_total_row"] != true || r.msg["skip_total_row"] != json0 {
		t.Fatalf("flags %v %v", r.msg["add_total_row"], r.msg["skip_total_row"])
	}
	if chart := r.msg["chart"].(map[string]any); chart["type"] != "percentage" || len(chart["data"].(map[string]any)["datasets"].([]any)) != len(r.rows) {
		t.Fatalf("chart %v", chart["type"])
	}
}

func TestAccountsReceivableAgeing(t *testing.T) {
	s := testServer(t)
	ds := s.Data()
	reportDate := "2026-03-31"
	check := func(filters map[string]any, bounds []int64, labels []string) {
		t.Helper()
		r := mustReport(t, s, "Accounts Receivable", filters)
		for i, l := range labels {
			if r.columns[15+i]["label"] != l || r.columns[15+i]["fieldname"] != rangeKey(i) {
				t.Fatalf("range column %d: %v", i, r.columns[15+i])
			}
		}
		notDue := 0
		for _, row := range r.rows {
			entry := cstr(row["posting_date"])
			if d := ds.Get("Sales Invoice", cstr(row["voucher_no"])); d != nil {
				entry = d.Str("due_date")
			}
			age := dateDiff(entry, reportDate)
			if cents(t, row["age"]) != age*100 {
				t.Fatalf("%v age %v, want %d", row["voucher_no"], row["age"], age)
			}
			idx := len(bounds)
			for i, b := range bounds {
				if age <= b {
					idx = i
					break
				}
			}
			out := cents(t, row["outstanding"])
			for i := 0; i <= len(bounds); i++ {
				want := int64(0)
				if i == idx && entry <= reportDate {
					want = out
				}
				if got := cents(t, row[rangeKey(i)]); got != want {
					t.Fatalf("%v (age %d): range%d %d, want %d", row["voucher_no"], age, i+1, got, want)
				}
			}
			if _, extra := row[rangeKey(len(bounds)+1)]; extra {
				t.Fatalf("unexpected %s", rangeKey(len(bounds)+1))
			}
			if entry > reportDate {
				notDue++
				if cents(t, row["total_due"]) != 0 {
					t.Fatalf("not yet due but total_due %v", row["total_due"])
				}
			} else if cents(t, row["total_due"]) != out {
				t.Fatalf("total_due %v, outstanding %d", row["total_due"], out)
			}
		}
		if notDue == 0 || len(r.rows) < 20 {
			t.Fatalf("%d rows, %d not yet due", len(r.rows), notDue)
		}
	}
	base := map[string]any{"company": nzCompany, "report_date": reportDate, "ageing_based_on": "Due Date", "calculate_ageing_with": "Report Date"}
	check(base, []int64{30, 60, 90, 120}, []string{"0-30", "31-60", "61-90", "91-120", "121-Above"})
	f := copyMap(base)
	f["range"] = "15, 45"
	check(f, []int64{15, 45}, []string{"0-15", "16-45", "46-Above"})
	f = copyMap(base)
	f["range1"], f["range2"], f["range3"], f["range4"] = 20, 40, 80, 160 // older v15 filters
	check(f, []int64{20, 40, 80, 160}, []string{"0-20", "21-40", "41-80", "81-160", "161-Above"})
}

func TestAccountsReceivableGroupByParty(t *testing.T) {
	s := testServer(t)
	r := mustReport(t, s, "Accounts Receivable", map[string]any{"company": auCompany, "group_by_party": 1})
	if r.tail != nil || r.msg["skip_total_row"] != json1 || r.msg["add_total_row"] != false {
		t.Fatalf("group_by_party keeps no total row: %v", r.msg["skip_total_row"])
	}
	last := r.rows[len(r.rows)-1]
	if last["party"] != "Total" || last["bold"] != json1 {
		t.Fatalf("last row %v", last)
	}
	var sum int64
	for _, row := range r.rows {
		if row["voucher_no"] != nil {
			sum += cents(t, row["outstanding"])
		}
	}
	if cents(t, last["outstanding"]) != sum {
		t.Fatalf("Total %v, rows %d", last["outstanding"], sum)
	}
}

func TestAccountsReceivableSummaryPerParty(t *testing.T) {
	s := testServer(t)
	ds := s.Data()
	r := mustReport(t, s, "Accounts Receivable Summary", map[string]any{"company": nzCompany, "in_party_currency": 1, "party_account": "Debtors - DHNZ"})
	wantCols := "party_type,party,advance,invoiced,paid,credit_note,outstanding,range1,range2,range3,range4,range5,total_due,territory,customer_group,currency"
	if got := strings.Join(fieldnames(r.columns), ","); got != wantCols {
		t.Fatalf("columns %s", got)
	}
	out, adv := map[string]int64{}, map[string]int64{}
	for _, d := range ds.List("Sales Invoice") {
		if d.Int("docstatus") == 1 && d.Str("debit_to") == "Debtors - DHNZ" {
			out[d.Str("customer")] += d.Dec("outstanding_amount").Cents()
		}
	}
	for _, pe := range ds.List("Payment Entry") {
		if pe.Int("docstatus") == 1 && pe.Str("paid_from") == "Debtors - DHNZ" {
			out[pe.Str("party")] -= pe.Dec("unallocated_amount").Cents()
		}
		if pe.Int("docstatus") == 1 && pe.Str("party_type") == "Customer" && pe.Str("company") == nzCompany {
			adv[pe.Str("party")] += pe.Dec("unallocated_amount").Cents()
		}
	}
	n, withAdvance := 0, 0
	for _, v := range out {
		if v != 0 {
			n++
		}
	}
	if len(r.rows) != n {
		t.Fatalf("%d party rows, documents give %d", len(r.rows), n)
	}
	for _, row := range r.rows {
		p := cstr(row["party"])
		if cents(t, row["outstanding"]) != out[p] || cents(t, row["advance"]) != adv[p] {
			t.Errorf("%s: outstanding %v advance %v, documents %d / %d", p, row["outstanding"], row["advance"], out[p], adv[p])
		}
		if cents(t, row["invoiced"])-cents(t, row["paid"])-cents(t, row["advance"])-cents(t, row["credit_note"]) != out[p] {
			t.Errorf("%s: invoiced - paid - advance - credit note != outstanding", p)
		}
		if adv[p] != 0 {
			withAdvance++
		}
	}
	if withAdvance == 0 || r.tail == nil || r.tail[0] != "Total" {
		t.Errorf("advances %d, total row %v", withAdvance, r.tail)
	}
}

func TestAccountsPayableEqualsOpenBills(t *testing.T) {
	s := testServer(t)
	ds := s.Data()
	for _, company := range []string{nzCompany, auCompany, usCompany} {
		want := openItems(ds, payableSide, company)
		r := mustReport(t, s, "Accounts Payable", map[string]any{"company": company})
		if company == nzCompany {
			cols := fieldnames(r.columns)
			if strings.Join(cols[8:12], ",") != "due_date,bill_no,bill_date,invoiced" || r.columns[13]["label"] != "Debit Note" ||
				cols[len(cols)-1] != "supplier_group" || r.columns[3]["label"] != "Payable Account" {
				t.Fatalf("columns %v", cols)
			}
		}
		got := map[string]int64{}
		for _, row := range r.rows {
			got[cstr(row["voucher_no"])] = cents(t, row["outstanding"])
			if d := ds.Get("Purchase Invoice", cstr(row["voucher_no"])); d != nil && row["bill_no"] != d.Str("bill_no") {
				t.Fatalf("bill_no %v", row["bill_no"])
			}
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s %s: report %d, documents %d", company, k, got[k], v)
			}
		}
		if len(got) != len(want) || len(want) == 0 {
			t.Errorf("%s: %d rows, documents %d", company, len(got), len(want))
		}
	}
	r := mustReport(t, s, "Accounts Payable Summary", map[string]any{"company": auCompany})
	var sum int64
	for _, row := range r.rows {
		sum += cents(t, row["outstanding"])
	}
	var want int64
	for _, v := range openItems(ds, payableSide, auCompany) {
		want += v
	}
	if sum != want || fieldnames(r.columns)[13] != "supplier_group" {
		t.Fatalf("payable summary %d, documents %d", sum, want)
	}
}
