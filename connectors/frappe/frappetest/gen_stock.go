package frappetest

import (
	"sort"
	"time"
)

// Stock: invoices with update_stock move goods (sales out of and returns
// into "Stores", purchase receipts in, debit notes out), Material Issue
// stock entries consume supplies, and one opening Material Receipt per
// company (2025-01-01, is_opening) holds enough stock that no balance ever
// goes negative. Valuation is moving average in whole cents: each move's
// stock_value_difference is rounded to the cent and stock_value is their
// running sum, so the Stock In Hand GL balance equals the stock value.

// Move kinds.
const (
	moveOpening  = iota // opening Material Receipt
	moveReceipt         // purchase invoice line (incoming)
	moveSale            // sales invoice line (outgoing)
	moveIssue           // Material Issue line (outgoing)
	moveSaleRet         // credit note line (incoming at the original rate)
	movePurchRet        // debit note line (outgoing at the original rate)
)

// stockMove is one stock-affecting voucher line and, after valuation, its
// effect on the item's warehouse balance.
type stockMove struct {
	kind      int
	voucher   *Doc
	line      *Doc
	company   *companyInfo
	item      *itemInfo
	warehouse string
	qtyH      int64 // signed, hundredths
	at        time.Time
	created   time.Time
	cancelled bool
	cancelAt  time.Time
	rateC     int64 // opening: incoming rate in cents

	valueC      int64   // stock_value_difference (cents, signed)
	rate        Decimal // incoming or outgoing valuation rate
	qtyAfterH   int64
	valueAfterC int64
	valRate     Decimal
}

// stockState is the running balance of one item in one warehouse.
type stockState struct {
	qtyH, valueC int64
	rate         Decimal
	moves        []*stockMove
}

// stockResult is what the ledger and bin stages read.
type stockResult struct {
	moves     []*stockMove
	byVoucher map[string][]*stockMove
	states    map[string]*stockState // item code + "\x00" + warehouse
}

func stockKey(item, warehouse string) string { return item + "\x00" + warehouse }

func (g *generator) genStock() {
	g.completeSalesInvoices()
	var moves []*stockMove
	moves = append(moves, g.invoiceMoves("Sales Invoice")...)
	moves = append(moves, g.invoiceMoves("Purchase Invoice")...)
	moves = append(moves, g.genMaterialIssues()...)
	moves = append(moves, g.genOpeningStock(moves)...)
	sortMoves(moves)
	res := &stockResult{moves: moves, byVoucher: map[string][]*stockMove{}, states: map[string]*stockState{}}
	for _, m := range moves {
		g.valueMove(res, m)
		writeBackStockValue(m)
		res.byVoucher[m.voucher.Name] = append(res.byVoucher[m.voucher.Name], m)
	}
	g.stock = res
}

func sortMoves(moves []*stockMove) {
	sort.SliceStable(moves, func(i, j int) bool {
		if !moves[i].at.Equal(moves[j].at) {
			return moves[i].at.Before(moves[j].at)
		}
		return moves[i].created.Before(moves[j].created)
	})
}

// completeSalesInvoices fills the accounting fields the selling stage left
// empty: the company cost centre and, on every invoice with a stock item,
// update_stock (benchmark invoices excepted).
func (g *generator) completeSalesInvoices() {
	for _, d := range g.docs("Sales Invoice") {
		c := g.companyByName(d.Str("company"))
		d.Fields["cost_center"] = c.acct("Main")
		if d.Str("remarks") == "Benchmark invoice" {
			continue
		}
		for _, it := range d.Children["items"] {
			if it.Str("warehouse") != "" {
				d.Fields["update_stock"] = int64(1)
				d.Fields["set_warehouse"] = c.acct("Stores")
				break
			}
		}
	}
}

// invoiceMoves lists the stock lines of submitted and cancelled invoices
// that update stock.
func (g *generator) invoiceMoves(doctype string) []*stockMove {
	var out []*stockMove
	for _, d := range g.docs(doctype) {
		ds := d.Int("docstatus")
		if ds == 0 || d.Int("update_stock") != 1 {
			continue
		}
		c := g.companyByName(d.Str("company"))
		for _, row := range d.Children["items"] {
			if row.Str("warehouse") == "" {
				continue
			}
			m := &stockMove{voucher: d, line: row, company: c, item: g.itemByCode(row.Str("item_code")),
				warehouse: row.Str("warehouse"), at: postedAt(d), created: mustDatetime(d.Str("creation")), cancelled: ds == 2}
			qty := row.Dec("qty").Cents()
			switch {
			case doctype == "Sales Invoice" && d.Int("is_return") == 1:
				m.kind, m.qtyH = moveSaleRet, -qty
			case doctype == "Sales Invoice":
				m.kind, m.qtyH = moveSale, -qty
			case d.Int("is_return") == 1:
				m.kind, m.qtyH = movePurchRet, qty
			default:
				m.kind, m.qtyH = moveReceipt, qty
			}
			if m.cancelled {
				m.cancelAt = mustDatetime(d.Str("modified"))
			}
			out = append(out, m)
		}
	}
	return out
}

// valueMove applies one move to its balance (cancelled moves are valued at
// their time but not applied: reposting ignores them).
func (g *generator) valueMove(res *stockResult, m *stockMove) {
	key := stockKey(m.item.Code, m.warehouse)
	st := res.states[key]
	if st == nil {
		st = &stockState{}
		res.states[key] = st
	}
	abs := abs64(m.qtyH)
	switch m.kind {
	case moveOpening:
		m.rate = Cents(m.rateC)
		m.valueC = roundHalfEven(m.qtyH*m.rateC, 100)
	case moveReceipt:
		m.valueC = m.line.Dec("base_net_amount").Cents()
		m.rate = ratioDecimal(m.valueC, m.qtyH)
	case moveSaleRet:
		m.rate = g.lineRate(m.voucher, m.line, "sales_invoice_item", "incoming_rate")
		m.valueC = roundHalfEven(abs*int64(m.rate), decimalScale)
	case movePurchRet:
		m.rate = g.lineRate(m.voucher, m.line, "purchase_invoice_item", "valuation_rate")
		m.valueC = -min(roundHalfEven(abs*int64(m.rate), decimalScale), st.valueC)
	default: // sale, issue: moving average
		switch {
		case st.qtyH <= abs:
			m.valueC = -st.valueC
		default:
			m.valueC = -roundHalfEven(abs*st.valueC, st.qtyH)
		}
		m.rate = ratioDecimal(-m.valueC, abs)
	}
	m.qtyAfterH = st.qtyH + m.qtyH
	m.valueAfterC = st.valueC + m.valueC
	m.valRate = st.rate
	if m.qtyAfterH != 0 {
		m.valRate = ratioDecimal(m.valueAfterC, m.qtyAfterH)
	}
	if m.cancelled {
		return
	}
	st.qtyH, st.valueC, st.rate = m.qtyAfterH, m.valueAfterC, m.valRate
	st.moves = append(st.moves, m)
}

// lineRate returns the valuation rate recorded on the original invoice line
// a return line points to.
func (g *generator) lineRate(ret, line *Doc, linkField, rateField string) Decimal {
	orig := g.ds.Get(ret.DocType, ret.Str("return_against"))
	for _, row := range orig.Children["items"] {
		if row.Name == line.Str(linkField) {
			return row.Dec(rateField)
		}
	}
	panic("frappetest: return line without original " + ret.Name)
}

// writeBackStockValue stores a move's valuation on its voucher line: the
// outgoing rate as Sales Invoice Item incoming_rate, the receipt rate as
// Purchase Invoice Item valuation_rate, and stock entry amounts and totals.
func writeBackStockValue(m *stockMove) {
	switch m.voucher.DocType {
	case "Sales Invoice":
		m.line.Fields["incoming_rate"] = m.rate
	case "Purchase Invoice":
		m.line.Fields["valuation_rate"] = m.rate
	case "Stock Entry":
		m.line.Fields["basic_rate"] = m.rate
		m.line.Fields["valuation_rate"] = m.rate
		m.line.Fields["basic_amount"] = Cents(abs64(m.valueC))
		m.line.Fields["amount"] = Cents(abs64(m.valueC))
		f := m.voucher.Fields
		in, out := m.voucher.Dec("total_incoming_value").Cents(), m.voucher.Dec("total_outgoing_value").Cents()
		if m.valueC > 0 {
			in += m.valueC
		} else {
			out -= m.valueC
		}
		f["total_incoming_value"], f["total_outgoing_value"] = Cents(in), Cents(out)
		f["value_difference"] = Cents(in - out)
		f["total_amount"] = Cents(max(in, out))
	}
}
