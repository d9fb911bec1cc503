package frappetest

import (
	"sort"
	"time"
)

// genStockLedgerEntries writes one Stock Ledger Entry per move; a cancelled
// voucher's entry and its reversal are both flagged is_cancelled, as
// ERPNext does on cancel. Entries are named MAT-SLE-.YYYY.-.##### in
// creation order.
func (g *generator) genStockLedgerEntries() {
	res := g.stock
	type sle struct {
		m       *stockMove
		reverse bool
		created time.Time
	}
	var list []sle
	for _, m := range res.moves {
		list = append(list, sle{m: m, created: m.created})
		if m.cancelled {
			list = append(list, sle{m: m, reverse: true, created: m.cancelAt})
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].created.Before(list[j].created) })
	names := series{}
	var prev time.Time
	tie := 0
	for _, e := range list {
		m := e.m
		// Entries written by one voucher get consecutive microseconds, so
		// "order by creation" is deterministic.
		if e.created.Equal(prev) {
			tie++
		} else {
			prev, tie = e.created, 0
		}
		created := e.created.Add(time.Duration(tie) * time.Microsecond)
		d := g.newDoc("Stock Ledger Entry", names.next("MAT-SLE-", created.Year()), "accounts@demo.example", created)
		f := d.Fields
		f["item_code"] = m.item.Code
		f["warehouse"] = m.warehouse
		setPosting(d, m.at)
		f["posting_datetime"] = fmtDatetime(m.at)
		f["voucher_type"] = m.voucher.DocType
		f["voucher_no"] = m.voucher.Name
		f["voucher_detail_no"] = m.line.Name
		f["stock_uom"] = m.item.UOM
		f["company"] = m.company.Name
		f["fiscal_year"] = fiscalYearOf(fmtDate(m.at))
		f["stock_queue"] = "[]"
		if p := m.voucher.Str("project"); p != "" {
			f["project"] = p
		}
		qty, value := m.qtyH, m.valueC
		qtyAfter, valueAfter, rate := m.qtyAfterH, m.valueAfterC, m.valRate
		if e.reverse {
			qty, value = -qty, -value
			qtyAfter, valueAfter = m.qtyAfterH-m.qtyH, m.valueAfterC-m.valueC
		}
		f["actual_qty"] = qtyDec(qty)
		f["qty_after_transaction"] = qtyDec(qtyAfter)
		f["stock_value"] = Cents(valueAfter)
		f["stock_value_difference"] = Cents(value)
		f["valuation_rate"] = rate
		if qty > 0 {
			f["incoming_rate"] = m.rate
		} else if m.kind == movePurchRet {
			f["outgoing_rate"] = m.rate
		}
		if m.cancelled {
			f["is_cancelled"] = int64(1)
		}
		d.Fields["docstatus"] = int64(1)
		g.ds.add(d)
	}
}
