package frappetest

import (
	"sort"
	"testing"
)

// These tests check the generated ledger against the documents it was
// posted from. Expected values are computed here from the vouchers.

func testData(t *testing.T) *Dataset {
	t.Helper()
	return testServer(t).Data()
}

func TestTrialBalanceBalancesPerCompany(t *testing.T) {
	ds := testData(t)
	type sums struct{ debit, credit, all int64 }
	perCompany := map[string]*sums{}
	perVoucher := map[string]int64{}
	for _, e := range ds.List("GL Entry") {
		s := perCompany[e.Str("company")]
		if s == nil {
			s = &sums{}
			perCompany[e.Str("company")] = s
		}
		dr, cr := e.Dec("debit").Cents(), e.Dec("credit").Cents()
		if (dr != 0) == (cr != 0) || dr < 0 || cr < 0 {
			t.Fatalf("%s: debit %d credit %d (exactly one side must be positive)", e.Name, dr, cr)
		}
		s.all += dr - cr
		if e.Int("is_cancelled") == 0 {
			s.debit += dr
			s.credit += cr
			perVoucher[e.Str("voucher_no")] += dr - cr
		}
	}
	if len(perCompany) != 3 {
		t.Fatalf("GL for %d companies", len(perCompany))
	}
	for c, s := range perCompany {
		if s.debit != s.credit || s.all != 0 || s.debit == 0 {
			t.Errorf("%s: debits %d credits %d (all entries net %d)", c, s.debit, s.credit, s.all)
		}
	}
	for v, net := range perVoucher {
		if net != 0 {
			t.Errorf("voucher %s nets %d", v, net)
		}
	}
}

func TestLedgerCoversEverySubmittedVoucher(t *testing.T) {
	ds := testData(t)
	posted := map[string]map[int64]bool{} // voucher -> is_cancelled flags seen
	for _, e := range ds.List("GL Entry") {
		v := e.Str("voucher_no")
		if posted[v] == nil {
			posted[v] = map[int64]bool{}
		}
		posted[v][e.Int("is_cancelled")] = true
	}
	for _, dt := range []string{"Sales Invoice", "Purchase Invoice", "Payment Entry", "Stock Entry", "Journal Entry"} {
		for _, d := range ds.List(dt) {
			flags := posted[d.Name]
			switch d.Int("docstatus") {
			case 0:
				if flags != nil {
					t.Errorf("draft %s %s has GL entries", dt, d.Name)
				}
			case 1:
				if !flags[0] || flags[1] {
					t.Errorf("submitted %s %s GL flags %v", dt, d.Name, flags)
				}
			case 2:
				if flags[0] || !flags[1] {
					t.Errorf("cancelled %s %s GL flags %v", dt, d.Name, flags)
				}
			}
		}
	}
}

// outstandingFromPayments is invoice total minus the allocations of
// submitted Payment Entries, in party account currency.
func outstandingFromPayments(ds *Dataset) map[string]int64 {
	out := map[string]int64{}
	for _, dt := range []string{"Sales Invoice", "Purchase Invoice"} {
		for _, d := range ds.List(dt) {
			if d.Int("docstatus") == 1 {
				out[d.Name] = partyTotal(d)
			}
		}
	}
	for _, pe := range ds.List("Payment Entry") {
		if pe.Int("docstatus") != 1 {
			continue
		}
		for _, r := range pe.Table("references") {
			out[r.Str("reference_name")] -= r.Dec("allocated_amount").Cents()
		}
	}
	return out
}

func TestInvoiceOutstandingEqualsTotalMinusAllocations(t *testing.T) {
	ds := testData(t)
	want := outstandingFromPayments(ds)
	n := 0
	for _, dt := range []string{"Sales Invoice", "Purchase Invoice"} {
		for _, d := range ds.List(dt) {
			if d.Int("docstatus") != 1 {
				continue
			}
			n++
			if got := d.Dec("outstanding_amount").Cents(); got != want[d.Name] {
				t.Errorf("%s %s outstanding %d, total - allocations %d", dt, d.Name, got, want[d.Name])
			}
		}
	}
	if n < 500 {
		t.Fatalf("only %d submitted invoices", n)
	}
}

func TestPaymentLedgerMatchesInvoices(t *testing.T) {
	ds := testData(t)
	byAgainst := map[string]int64{}
	for _, p := range ds.List("Payment Ledger Entry") {
		if p.Int("delinked") == 0 {
			byAgainst[p.Str("against_voucher_no")] += p.Dec("amount_in_account_currency").Cents()
		}
	}
	for _, dt := range []string{"Sales Invoice", "Purchase Invoice"} {
		for _, d := range ds.List(dt) {
			if d.Int("docstatus") == 1 && byAgainst[d.Name] != d.Dec("outstanding_amount").Cents() {
				t.Errorf("%s: payment ledger %d, outstanding %d", d.Name, byAgainst[d.Name], d.Dec("outstanding_amount").Cents())
			}
			if d.Int("docstatus") != 1 && byAgainst[d.Name] != 0 {
				t.Errorf("%s (docstatus %d) has live payment ledger entries", d.Name, d.Int("docstatus"))
			}
		}
	}
	advances := 0
	for _, pe := range ds.List("Payment Entry") {
		un := pe.Dec("unallocated_amount").Cents()
		if pe.Int("docstatus") != 1 {
			continue
		}
		if un != 0 {
			advances++
		}
		if byAgainst[pe.Name] != -un {
			t.Errorf("%s: unallocated %d, payment ledger %d", pe.Name, un, byAgainst[pe.Name])
		}
	}
	if advances < 6 {
		t.Errorf("want unallocated advances, got %d", advances)
	}
}

// TestPartyAccountBalances: each receivable / payable account's GL balance
// (in account currency) is the outstanding of its submitted invoices less
// unallocated payments.
func TestPartyAccountBalances(t *testing.T) {
	ds := testData(t)
	want := map[string]int64{}
	for _, d := range ds.List("Sales Invoice") {
		if d.Int("docstatus") == 1 {
			want[d.Str("debit_to")] += d.Dec("outstanding_amount").Cents()
		}
	}
	for _, d := range ds.List("Purchase Invoice") {
		if d.Int("docstatus") == 1 {
			want[d.Str("credit_to")] -= d.Dec("outstanding_amount").Cents()
		}
	}
	for _, pe := range ds.List("Payment Entry") {
		if pe.Int("docstatus") != 1 {
			continue
		}
		un := pe.Dec("unallocated_amount").Cents()
		if pe.Str("payment_type") == "Receive" {
			want[pe.Str("paid_from")] -= un
		} else {
			want[pe.Str("paid_to")] += un
		}
	}
	got := map[string]int64{}
	for _, e := range ds.List("GL Entry") {
		if e.Int("is_cancelled") == 0 {
			got[e.Str("account")] += e.Dec("debit_in_account_currency").Cents() - e.Dec("credit_in_account_currency").Cents()
		}
	}
	if len(want) < 7 {
		t.Fatalf("party accounts %v", want)
	}
	for acct, w := range want {
		if got[acct] != w {
			t.Errorf("%s: GL balance %d, documents say %d", acct, got[acct], w)
		}
	}
}

func TestCancelledVouchersNetToZero(t *testing.T) {
	ds := testData(t)
	net := map[string]int64{}
	for _, e := range ds.List("GL Entry") {
		if e.Int("is_cancelled") == 1 {
			net[e.Str("voucher_no")] += e.Dec("debit").Cents() - e.Dec("credit").Cents()
		}
	}
	if len(net) < 10 {
		t.Fatalf("only %d cancelled vouchers in the GL", len(net))
	}
	for v, n := range net {
		if n != 0 {
			t.Errorf("cancelled voucher %s nets %d", v, n)
		}
	}
	pairs := map[string]int{}
	for _, e := range ds.List("GL Entry") {
		if e.Int("is_cancelled") == 1 {
			pairs[e.Str("voucher_no")+"|"+e.Str("account")+"|"+e.Str("party")]++
		}
	}
	for k, n := range pairs {
		if n%2 != 0 {
			t.Errorf("%s: %d cancelled entries (want original + reversal)", k, n)
		}
	}
	for _, p := range ds.List("Payment Ledger Entry") {
		if v := ds.Get(p.Str("voucher_type"), p.Str("voucher_no")); v == nil || (v.Int("docstatus") == 2) != (p.Int("delinked") == 1) {
			t.Fatalf("%s: delinked %d for voucher %s", p.Name, p.Int("delinked"), p.Str("voucher_no"))
		}
	}
}

func TestStockLedgerRunsAndMatchesBins(t *testing.T) {
	ds := testData(t)
	sles := filterDocs(testServer(t), "Stock Ledger Entry", func(d *Doc) bool { return d.Int("is_cancelled") == 0 })
	sort.SliceStable(sles, func(i, j int) bool {
		a, b := sles[i], sles[j]
		if a.Str("posting_datetime") != b.Str("posting_datetime") {
			return a.Str("posting_datetime") < b.Str("posting_datetime")
		}
		return a.Str("creation") < b.Str("creation")
	})
	type bal struct{ qty, value int64 }
	running := map[string]*bal{}
	stockByCompany := map[string]int64{}
	for _, s := range sles {
		k := s.Str("item_code") + "|" + s.Str("warehouse")
		b := running[k]
		if b == nil {
			b = &bal{}
			running[k] = b
		}
		b.qty += s.Dec("actual_qty").Cents()
		b.value += s.Dec("stock_value_difference").Cents()
		if b.qty < 0 {
			t.Fatalf("%s: negative stock %d", s.Name, b.qty)
		}
		if s.Dec("qty_after_transaction").Cents() != b.qty || s.Dec("stock_value").Cents() != b.value {
			t.Fatalf("%s: after %v/%v, running %d/%d", s.Name, s.Dec("qty_after_transaction"), s.Dec("stock_value"), b.qty, b.value)
		}
		stockByCompany[s.Str("company")] += s.Dec("stock_value_difference").Cents()
	}
	bins := map[string]*Doc{}
	for _, b := range ds.List("Bin") {
		bins[b.Str("item_code")+"|"+b.Str("warehouse")] = b
		proj := b.Dec("actual_qty") + b.Dec("ordered_qty") + b.Dec("indented_qty") + b.Dec("planned_qty") -
			b.Dec("reserved_qty") - b.Dec("reserved_qty_for_production") - b.Dec("reserved_qty_for_sub_contract")
		if proj != b.Dec("projected_qty") {
			t.Errorf("bin %s projected %v, parts give %v", b.Name, b.Dec("projected_qty"), proj)
		}
	}
	for k, r := range running {
		b := bins[k]
		if b == nil || b.Dec("actual_qty").Cents() != r.qty || b.Dec("stock_value").Cents() != r.value {
			t.Errorf("%s: ledger %d/%d, bin %v", k, r.qty, r.value, b)
		}
	}
	// Perpetual inventory: the Stock In Hand balance is the stock value.
	gl := map[string]int64{}
	for _, e := range ds.List("GL Entry") {
		if e.Int("is_cancelled") == 0 && e.Str("account") == "Stock In Hand - "+companyAbbr(ds, e.Str("company")) {
			gl[e.Str("company")] += e.Dec("debit").Cents() - e.Dec("credit").Cents()
		}
	}
	for c, v := range stockByCompany {
		if gl[c] != v || v <= 0 {
			t.Errorf("%s: Stock In Hand %d, stock value %d", c, gl[c], v)
		}
	}
}

func companyAbbr(ds *Dataset, company string) string { return ds.Get("Company", company).Str("abbr") }

func TestBinOrderedAndReservedQuantities(t *testing.T) {
	ds := testData(t)
	ordered, reserved := map[string]int64{}, map[string]int64{}
	for _, po := range ds.List("Purchase Order") {
		if po.Int("docstatus") == 1 && po.Str("status") != "Closed" {
			for _, r := range po.Table("items") {
				ordered[r.Str("item_code")+"|"+r.Str("warehouse")] += r.Dec("qty").Cents() - r.Dec("received_qty").Cents()
			}
		}
	}
	for _, so := range ds.List("Sales Order") {
		if st := so.Str("status"); so.Int("docstatus") == 1 && st != "Closed" && st != "On Hold" {
			for _, r := range so.Table("items") {
				if r.Str("warehouse") != "" {
					reserved[r.Str("item_code")+"|"+r.Str("warehouse")] += r.Dec("qty").Cents() - r.Dec("delivered_qty").Cents()
				}
			}
		}
	}
	withOrders := 0
	for _, b := range ds.List("Bin") {
		k := b.Str("item_code") + "|" + b.Str("warehouse")
		if b.Dec("ordered_qty").Cents() != ordered[k] || b.Dec("reserved_qty").Cents() != reserved[k] {
			t.Errorf("bin %s ordered %v reserved %v, orders say %d/%d", k, b.Dec("ordered_qty"), b.Dec("reserved_qty"), ordered[k], reserved[k])
		}
		if ordered[k] > 0 {
			withOrders++
		}
	}
	if withOrders == 0 {
		t.Error("no bin has ordered quantity")
	}
}

func TestPurchaseOrdersFollowTheirReceipts(t *testing.T) {
	ds := testData(t)
	received := map[string]int64{} // po_detail -> qty on submitted receipts
	for _, pi := range ds.List("Purchase Invoice") {
		if pi.Int("docstatus") == 1 && pi.Int("is_return") == 0 {
			for _, r := range pi.Table("items") {
				if r.Str("po_detail") != "" {
					received[r.Str("po_detail")] += r.Dec("qty").Cents()
				}
			}
		}
	}
	statuses := map[string]int{}
	for _, po := range ds.List("Purchase Order") {
		statuses[po.Str("status")]++
		var rec, qty int64
		for _, r := range po.Table("items") {
			if r.Dec("received_qty").Cents() != received[r.Name] {
				t.Errorf("%s row %s received %v, receipts %d", po.Name, r.Name, r.Dec("received_qty"), received[r.Name])
			}
			rec += received[r.Name]
			qty += r.Dec("qty").Cents()
		}
		if po.Int("docstatus") == 1 && po.Dec("per_received") != ratioDecimal(rec*100, qty) {
			t.Errorf("%s per_received %v, want %d/%d", po.Name, po.Dec("per_received"), rec, qty)
		}
		if po.Str("status") == "Completed" && rec != qty {
			t.Errorf("%s completed but received %d of %d", po.Name, rec, qty)
		}
	}
	for _, st := range []string{"Draft", "Cancelled", "To Receive and Bill", "Completed", "Closed", "On Hold"} {
		if statuses[st] == 0 {
			t.Errorf("no %s purchase orders: %v", st, statuses)
		}
	}
}

func TestBankTransactionsReconcilePayments(t *testing.T) {
	ds := testData(t)
	statuses := map[string]int{}
	linked := map[string]string{}
	for _, bt := range ds.List("Bank Transaction") {
		statuses[bt.Str("status")]++
		var alloc int64
		for _, p := range bt.Table("payment_entries") {
			alloc += p.Dec("allocated_amount").Cents()
			linked[p.Str("payment_entry")] = p.Str("clearance_date")
			pe := ds.Get("Payment Entry", p.Str("payment_entry"))
			if pe == nil || pe.Int("docstatus") != 1 || pe.Str("clearance_date") != bt.Str("date") || pe.Str("company") != bt.Str("company") {
				t.Fatalf("%s links %s (clearance %s)", bt.Name, p.Str("payment_entry"), pe.Str("clearance_date"))
			}
		}
		total := bt.Dec("deposit").Cents() + bt.Dec("withdrawal").Cents()
		if bt.Dec("allocated_amount").Cents() != alloc || bt.Dec("unallocated_amount").Cents() != total-alloc {
			t.Errorf("%s allocated %v unallocated %v, links %d of %d", bt.Name, bt.Dec("allocated_amount"), bt.Dec("unallocated_amount"), alloc, total)
		}
		want := "Unreconciled"
		switch {
		case bt.Int("docstatus") == 0:
			want = "Pending"
		case alloc == total:
			want = "Reconciled"
		}
		if bt.Str("status") != want {
			t.Errorf("%s status %s, want %s", bt.Name, bt.Str("status"), want)
		}
	}
	uncleared := 0
	for _, pe := range ds.List("Payment Entry") {
		if pe.Str("clearance_date") != linked[pe.Name] {
			t.Errorf("%s clearance %q without a matching bank line", pe.Name, pe.Str("clearance_date"))
		}
		if pe.Int("docstatus") == 1 && pe.Str("clearance_date") == "" {
			uncleared++
		}
	}
	if statuses["Reconciled"] == 0 || statuses["Unreconciled"] == 0 || statuses["Pending"] == 0 || uncleared == 0 {
		t.Errorf("statuses %v, uncleared payments %d", statuses, uncleared)
	}
}

func TestReorderLevelsGiveCoverageCases(t *testing.T) {
	ds := testData(t)
	bins := map[string]*Doc{}
	for _, b := range ds.List("Bin") {
		bins[b.Str("item_code")+"|"+b.Str("warehouse")] = b
	}
	var with, without, below, above, noBin, inert int
	for _, it := range ds.List("Item") {
		rows := it.Table("reorder_levels")
		if it.Int("is_stock_item") == 1 && len(rows) == 0 {
			without++
		}
		if len(rows) > 0 {
			with++
		}
		for _, r := range rows {
			level := r.Dec("warehouse_reorder_level")
			if level == 0 && r.Dec("warehouse_reorder_qty") == 0 {
				inert++
				continue
			}
			b := bins[it.Name+"|"+r.Str("warehouse")]
			switch {
			case b == nil:
				noBin++
			case b.Dec("projected_qty") <= level:
				below++
			default:
				above++
			}
		}
	}
	if with < 10 || without < 5 || below < 3 || above < 3 || noBin < 1 || inert != 1 {
		t.Errorf("items with levels %d without %d; rules below %d above %d without bin %d inert %d", with, without, below, above, noBin, inert)
	}
}
