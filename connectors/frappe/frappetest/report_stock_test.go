package frappetest

import (
	"strings"
	"testing"
)

func TestStockBalanceIsAPreparedReport(t *testing.T) {
	s := testServer(t)
	u := s.User("all-companies")
	f := map[string]any{"company": nzCompany, "from_date": "2026-01-01", "to_date": "2026-06-15"}
	r := runReport(t, s, u, "Stock Balance", f, nil)
	r.expectStatus(t, 200)
	if r.raw != `{"message":{"prepared_report":true,"doc":null,"add_total_row":true}}` {
		t.Fatalf("prepared report answer %s", r.raw)
	}
	for _, v := range []string{"1", "true"} {
		r = runReport(t, s, u, "Stock Balance", f, map[string]string{"ignore_prepared_report": v})
		if r.status != 200 || len(r.rows) == 0 {
			t.Fatalf("ignore_prepared_report=%s: %.300s", v, r.raw)
		}
	}
}

func TestStockBalanceMatchesBins(t *testing.T) {
	s := testServer(t)
	ds := s.Data()
	r := mustReport(t, s, "Stock Balance", map[string]any{"company": nzCompany, "from_date": "2025-06-01", "to_date": "2026-06-15"})
	wantCols := "item_code,item_name,item_group,warehouse,stock_uom,bal_qty,bal_val,opening_qty,opening_val,in_qty,in_val,out_qty,out_val,val_rate,reserved_stock,company"
	if got := strings.Join(fieldnames(r.columns), ","); got != wantCols {
		t.Fatalf("columns %s", got)
	}
	bins := map[string]*Doc{}
	for _, b := range ds.List("Bin") {
		if w := ds.Get("Warehouse", b.Str("warehouse")); w.Str("company") == nzCompany && (b.Dec("actual_qty") != 0 || b.Dec("stock_value") != 0) {
			bins[b.Str("item_code")+"|"+b.Str("warehouse")] = b
		}
	}
	var balQty int64
	for _, row := range r.rows {
		b := bins[cstr(row["item_code"])+"|"+cstr(row["warehouse"])]
		if b == nil {
			t.Fatalf("row without bin: %v", row)
		}
		if cents(t, row["bal_qty"]) != b.Dec("actual_qty").Cents() || cents(t, row["bal_val"]) != b.Dec("stock_value").Cents() {
			t.Errorf("%v: %v/%v, bin %v/%v", row["item_code"], row["bal_qty"], row["bal_val"], b.Dec("actual_qty"), b.Dec("stock_value"))
		}
		if cents(t, row["opening_qty"])+cents(t, row["in_qty"])-cents(t, row["out_qty"]) != cents(t, row["bal_qty"]) ||
			cents(t, row["opening_val"])+cents(t, row["in_val"])-cents(t, row["out_val"]) != cents(t, row["bal_val"]) {
			t.Errorf("%v: opening + in - out != balance", row["item_code"])
		}
		if row["currency"] != jsonNumber("0.0") || row["company"] != nzCompany || len(row["opening_fifo_queue"].([]any)) != 0 {
			t.Errorf("row quirks %v", row)
		}
		balQty += cents(t, row["bal_qty"])
	}
	if len(r.rows) != len(bins) {
		t.Errorf("%d rows, %d bins with stock", len(r.rows), len(bins))
	}
	if r.tail == nil || r.tail[0] != "Total" || cents(t, r.tail[5]) != balQty || len(r.tail) != len(r.columns) {
		t.Errorf("total row %v", r.tail)
	}
	// Filters: item and warehouse (with descendants).
	r = mustReport(t, s, "Stock Balance", map[string]any{"from_date": "2025-06-01", "to_date": "2026-06-15",
		"item_code": []string{"HW-1001"}, "warehouse": []string{"All Warehouses - DHNZ"}})
	for _, row := range r.rows {
		if row["item_code"] != "HW-1001" || !strings.HasSuffix(cstr(row["warehouse"]), " - DHNZ") {
			t.Fatalf("filtered row %v", row)
		}
	}
	if len(r.rows) == 0 {
		t.Fatal("no HW-1001 stock in NZ")
	}
}

func TestStockLedgerRows(t *testing.T) {
	s := testServer(t)
	ds := s.Data()
	from, to := "2026-01-01", "2026-03-31"
	r := mustReport(t, s, "Stock Ledger", map[string]any{"company": auCompany, "from_date": from, "to_date": to})
	var want []*Doc
	for _, e := range ds.List("Stock Ledger Entry") {
		if e.Str("company") == auCompany && e.Int("is_cancelled") == 0 && e.Str("posting_date") >= from && e.Str("posting_date") <= to {
			want = append(want, e)
		}
	}
	if len(r.rows) != len(want) || len(want) < 10 {
		t.Fatalf("%d rows, %d entries", len(r.rows), len(want))
	}
	for i, row := range r.rows {
		if i > 0 && cstr(r.rows[i-1]["date"]) > cstr(row["date"]) {
			t.Fatalf("rows out of order at %d", i)
		}
		qty := cents(t, row["actual_qty"])
		if cents(t, row["in_qty"]) != max(qty, 0) || cents(t, row["out_qty"]) != min(qty, 0) {
			t.Fatalf("in/out split %v", row)
		}
		if qty < 0 && (row["in_out_rate"] == nil || row["incoming_rate"] != json0) {
			t.Fatalf("outgoing row %v", row)
		}
	}
	// Item and warehouse filters add an 'Opening' row.
	item, wh := cstr(r.rows[0]["item_code"]), cstr(r.rows[0]["warehouse"])
	r = mustReport(t, s, "Stock Ledger", map[string]any{"company": auCompany, "from_date": from, "to_date": to, "item_code": []string{item}, "warehouse": []string{wh}})
	var last *Doc
	for _, e := range ds.List("Stock Ledger Entry") {
		if e.Str("item_code") == item && e.Str("warehouse") == wh && e.Int("is_cancelled") == 0 && e.Str("posting_date") < from &&
			(last == nil || e.Str("posting_datetime") > last.Str("posting_datetime")) {
			last = e
		}
	}
	open := r.rows[0]
	if open["item_code"] != "'Opening'" || cents(t, open["qty_after_transaction"]) != last.Dec("qty_after_transaction").Cents() {
		t.Fatalf("opening row %v, last entry %v", open, last.Dec("qty_after_transaction"))
	}
	u := s.User("all-companies")
	expectError(t, runReport(t, s, u, "Stock Ledger", map[string]any{"company": auCompany, "to_date": to}, nil).resp,
		500, "TypeError", "unsupported operand type(s) for +: 'NoneType' and 'str'")
	expectError(t, runReport(t, s, u, "Stock Ledger", map[string]any{"company": auCompany, "from_date": from, "to_date": to,
		"item_code": []string{"HW-1001", "HW-1002"}, "warehouse": []string{wh}}, nil).resp, 500, "OperationalError", "Operand should contain 1 column(s)")
}

func TestBankReconciliationStatement(t *testing.T) {
	s := testServer(t)
	ds := s.Data()
	account := "ANZ Business Account - DHNZ"
	for _, date := range []string{"2025-06-30", "2026-06-15"} {
		r := mustReport(t, s, "Bank Reconciliation Statement", map[string]any{"company": nzCompany, "account": account, "report_date": date})
		var debit, credit, early int64
		open := map[string]bool{}
		for _, pe := range ds.List("Payment Entry") {
			if pe.Int("docstatus") != 1 || pe.Str("company") != nzCompany {
				continue
			}
			cleared := pe.Str("clearance_date")
			if pe.Str("posting_date") <= date && (cleared == "" || cleared > date) {
				open[pe.Name] = true
				if pe.Str("payment_type") == "Receive" {
					debit += pe.Dec("received_amount").Cents()
				} else {
					credit += pe.Dec("paid_amount").Cents()
				}
			}
			if pe.Str("posting_date") > date && cleared != "" && cleared <= date {
				early += pe.Dec("base_received_amount").Cents()
			}
		}
		var gl int64
		for _, e := range liveGL(ds, nzCompany) {
			if e.Str("account") == account && e.Str("posting_date") <= date {
				gl += e.Dec("debit").Cents() - e.Dec("credit").Cents()
			}
		}
		rows := r.rows
		entries := rows[:len(rows)-6]
		if len(entries) != len(open) || len(open) == 0 {
			t.Fatalf("%s: %d uncleared rows, documents %d", date, len(entries), len(open))
		}
		for _, e := range entries {
			if !open[cstr(e["payment_entry"])] || e["clearance_date"] != nil && cstr(e["clearance_date"]) <= date {
				t.Fatalf("%s: unexpected row %v", date, e)
			}
		}
		summary := rows[len(rows)-6:]
		if summary[0]["payment_entry"] != "Bank Statement balance as per General Ledger" || cents(t, summary[0]["debit"])-cents(t, summary[0]["credit"]) != gl {
			t.Fatalf("%s: GL balance row %v, GL %d", date, summary[0], gl)
		}
		if cents(t, summary[2]["debit"]) != debit || cents(t, summary[2]["credit"]) != credit {
			t.Fatalf("%s: outstanding row %v, want %d/%d", date, summary[2], debit, credit)
		}
		if cents(t, summary[3]["debit"])-cents(t, summary[3]["credit"]) != early {
			t.Fatalf("%s: incorrectly cleared %v, want %d", date, summary[3], early)
		}
		calc := summary[5]
		if calc["payment_entry"] != "Calculated Bank Statement balance" || cents(t, calc["debit"])-cents(t, calc["credit"]) != gl-debit+credit+early {
			t.Fatalf("%s: calculated %v", date, calc)
		}
	}
	r := mustReport(t, s, "Bank Reconciliation Statement", map[string]any{"company": nzCompany})
	if len(r.rows) != 0 || len(r.columns) != 10 {
		t.Fatalf("no account: %s", r.raw)
	}
}
