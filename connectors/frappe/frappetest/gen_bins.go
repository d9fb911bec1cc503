package frappetest

import (
	"sort"
)

// Bins (one per item and warehouse with stock or open orders) and the
// items' per-warehouse reorder levels (Item Reorder rows).
//
// Bin quantities follow ERPNext's bin.py: actual_qty is the balance of the
// Stock Ledger (cancelled entries excluded); ordered_qty is what submitted
// purchase orders not Closed still expect (qty - received_qty); reserved_qty
// is what submitted sales orders not Closed or On Hold still have to
// deliver (qty - delivered_qty); projected_qty = actual + ordered +
// indented + planned - reserved - reserved for production / subcontracting.

type binQty struct {
	item                *itemInfo
	warehouse           string
	ordered, reserved   int64
	hasStock            bool
	actual, valueC      int64
	rate                Decimal
	firstSeen, lastSeen string
}

func (g *generator) genBinsAndReorderLevels() {
	bins := map[string]*binQty{}
	get := func(code, wh string) *binQty {
		k := stockKey(code, wh)
		if bins[k] == nil {
			bins[k] = &binQty{item: g.itemByCode(code), warehouse: wh}
		}
		return bins[k]
	}
	touch := func(b *binQty, ts string) {
		if b.firstSeen == "" || ts < b.firstSeen {
			b.firstSeen = ts
		}
		if ts > b.lastSeen {
			b.lastSeen = ts
		}
	}
	for _, st := range g.stock.states {
		if len(st.moves) == 0 {
			continue
		}
		first, last := st.moves[0], st.moves[len(st.moves)-1]
		b := get(first.item.Code, first.warehouse)
		b.hasStock, b.actual, b.valueC, b.rate = true, st.qtyH, st.valueC, st.rate
		touch(b, fmtDatetime(first.created))
		touch(b, fmtDatetime(last.created))
	}
	for _, po := range g.docs("Purchase Order") {
		if po.Int("docstatus") != 1 || po.Str("status") == "Closed" {
			continue
		}
		for _, row := range po.Children["items"] {
			if open := row.Dec("qty").Cents() - row.Dec("received_qty").Cents(); open > 0 {
				b := get(row.Str("item_code"), row.Str("warehouse"))
				b.ordered += open
				touch(b, po.Str("modified"))
			}
		}
	}
	for _, so := range g.docs("Sales Order") {
		if st := so.Str("status"); so.Int("docstatus") != 1 || st == "Closed" || st == "On Hold" {
			continue
		}
		for _, row := range so.Children["items"] {
			if row.Str("warehouse") == "" {
				continue
			}
			if open := row.Dec("qty").Cents() - row.Dec("delivered_qty").Cents(); open > 0 {
				b := get(row.Str("item_code"), row.Str("warehouse"))
				b.reserved += open
				touch(b, so.Str("modified"))
			}
		}
	}
	keys := make([]string, 0, len(bins))
	for k := range bins {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	projected := map[string]int64{}
	for _, k := range keys {
		b := bins[k]
		d := g.newDocAt("Bin", g.rng.hash(10), "Administrator", b.firstSeen)
		f := d.Fields
		f["modified"] = b.lastSeen
		f["item_code"] = b.item.Code
		f["warehouse"] = b.warehouse
		f["stock_uom"] = b.item.UOM
		f["actual_qty"] = qtyDec(b.actual)
		f["ordered_qty"] = qtyDec(b.ordered)
		f["reserved_qty"] = qtyDec(b.reserved)
		proj := b.actual + b.ordered - b.reserved
		f["projected_qty"] = qtyDec(proj)
		f["valuation_rate"] = b.rate
		f["stock_value"] = Cents(b.valueC)
		g.ds.add(d)
		projected[k] = proj
		b.item.doc.Fields["total_projected_qty"] = qtyDec(b.item.doc.Dec("total_projected_qty").Cents() + proj)
	}
	g.genReorderLevels(projected)
}

// genReorderLevels gives about two thirds of the stock items reorder
// levels for the Stores warehouse of one to three companies, set around
// the projected quantity so that some items are below their level; a few
// items also have levels for Finished Goods or for Work In Progress (where
// no Bin exists), two raw materials are checked against their warehouse
// group, and one rule is an inert zero rule. The other items and
// warehouses have no levels.
func (g *generator) genReorderLevels(projected map[string]int64) {
	factors := []int64{40, 70, 90, 110, 150, 220} // level as % of projected
	zeroDone, groupRules := false, 0
	for _, it := range g.items {
		if !it.Stock || it.Disabled || g.rng.chance(35) {
			continue
		}
		for _, c := range g.companies {
			if g.rng.chance(40) {
				continue
			}
			whs := []string{c.acct("Stores")}
			if g.rng.chance(15) {
				whs = append(whs, c.acct("Finished Goods"))
			}
			if g.rng.chance(6) {
				whs = append(whs, c.acct("Work In Progress"))
			}
			for _, wh := range whs {
				proj := projected[stockKey(it.Code, wh)]
				step := int64(100)
				if it.Fractional {
					step = 25
				}
				level := max(proj*factors[g.rng.intn(len(factors))]/100/step*step, step*int64(g.rng.between(2, 10)))
				qty := max(level, step*10)
				mrType := "Purchase"
				if wh != c.acct("Stores") {
					mrType = "Transfer"
				}
				if !zeroDone && wh == c.acct("Stores") && it.Group == "Consumable" {
					level, qty, zeroDone = 0, 0, true
				}
				row := map[string]any{
					"warehouse":               wh,
					"warehouse_reorder_level": qtyDec(level),
					"warehouse_reorder_qty":   qtyDec(qty),
					"material_request_type":   mrType,
				}
				// A few rules watch the whole warehouse tree (Check in
				// (group)), which reorder_item.py evaluates on the group.
				if groupRules < 2 && wh == c.acct("Stores") && it.Group == "Raw Material" {
					row["warehouse_group"] = c.acct("All Warehouses")
					groupRules++
				}
				g.addChild(it.doc, "reorder_levels", row)
			}
		}
	}
}
