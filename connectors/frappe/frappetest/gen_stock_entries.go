package frappetest

import (
	"sort"
	"time"
)

// Stock Entries: one opening Material Receipt per company and a few
// Material Issues of supplies per company.

const materialIssuesPerCompany = 5

var issueItems = []string{"CON-A4", "CON-TONER", "CON-CLEAN-5L", "CON-COFFEE", "PKG-BOX-L", "PKG-TAPE"}

// genMaterialIssues creates submitted Material Issue entries (named later,
// with the opening entries) and returns their moves.
func (g *generator) genMaterialIssues() []*stockMove {
	var out []*stockMove
	for _, c := range g.companies {
		for i := 0; i < materialIssuesPerCompany; i++ {
			at := g.at(time.Date(2025, 1, 15, 0, 0, 0, 0, time.UTC).AddDate(0, 0, g.rng.intn(500)))
			d := g.newStockEntry(c, "Material Issue", at)
			used := map[string]bool{}
			for n := g.rng.between(1, 2); len(used) < n; {
				code := issueItems[g.rng.intn(len(issueItems))]
				if used[code] {
					continue
				}
				used[code] = true
				it := g.itemByCode(code)
				qtyH := int64(g.rng.between(2, 10)) * 100
				row := g.addStockEntryRow(d, c, it, qtyH, c.acct("Stores"), "", c.acct("Administrative Expenses"))
				out = append(out, &stockMove{kind: moveIssue, voucher: d, line: row, company: c, item: it,
					warehouse: c.acct("Stores"), qtyH: -qtyH, at: at, created: at})
			}
			d.Fields["remarks"] = "Office and warehouse supplies"
		}
	}
	return out
}

// genOpeningStock creates each company's opening Material Receipt: for
// every item warehouse the moves would otherwise drive negative, the
// deficit plus a buffer; for some other items a plain opening balance.
// It then names all stock entries in posting order and adds them.
func (g *generator) genOpeningStock(moves []*stockMove) []*stockMove {
	sortMoves(moves)
	running := map[string]int64{}
	low := map[string]int64{}
	for _, m := range moves {
		if m.cancelled {
			continue
		}
		k := stockKey(m.item.Code, m.warehouse)
		running[k] += m.qtyH
		low[k] = min(low[k], running[k])
	}
	var out []*stockMove
	var entries []*Doc
	for ci, c := range g.companies {
		at := time.Date(2025, 1, 1, 0, 30+ci, 0, 0, time.UTC)
		d := g.newStockEntry(c, "Material Receipt", at)
		d.Fields["is_opening"] = "Yes"
		d.Fields["remarks"] = "Opening stock"
		for _, it := range g.items {
			if !it.Stock {
				continue
			}
			for _, wh := range []string{c.acct("Stores"), c.acct("Finished Goods")} {
				k := stockKey(it.Code, wh)
				_, moved := running[k]
				var qtyH int64
				switch {
				case wh == c.acct("Stores") && (moved || g.rng.chance(55)):
					qtyH = -low[k] + openingBuffer(g, it)
				case wh != c.acct("Stores") && it.Group == "Products" && g.rng.chance(35):
					qtyH = int64(g.rng.between(3, 25)) * 100
				}
				if qtyH <= 0 {
					continue
				}
				row := g.addStockEntryRow(d, c, it, qtyH, "", wh, c.acct("Capital Stock"))
				out = append(out, &stockMove{kind: moveOpening, voucher: d, line: row, company: c, item: it,
					warehouse: wh, qtyH: qtyH, at: at, created: at, rateC: costIn(it, c.Currency)})
			}
		}
		entries = append(entries, d)
	}
	seen := map[*Doc]bool{}
	for _, m := range moves {
		if m.kind == moveIssue && !seen[m.voucher] {
			seen[m.voucher] = true
			entries = append(entries, m.voucher)
		}
	}
	sort.SliceStable(entries, func(i, j int) bool { return postedAt(entries[i]).Before(postedAt(entries[j])) })
	names := series{}
	for _, d := range entries {
		d.Name = names.next("MAT-STE-", postedAt(d).Year())
		for _, row := range d.Children["items"] {
			row.Fields["parent"] = d.Name
		}
		g.ds.add(d)
	}
	return out
}

func openingBuffer(g *generator, it *itemInfo) int64 {
	switch {
	case it.Fractional:
		return int64(g.rng.between(20, 200)) * 25
	case it.PriceCents >= 100000:
		return int64(g.rng.between(1, 4)) * 100
	}
	return int64(g.rng.between(5, 40)) * 100
}

// newStockEntry starts a submitted stock entry (its name is set once all
// entries are known).
func (g *generator) newStockEntry(c *companyInfo, purpose string, at time.Time) *Doc {
	d := g.newDoc("Stock Entry", "", "accounts@demo.example", at)
	f := d.Fields
	f["naming_series"] = "MAT-STE-.YYYY.-"
	f["stock_entry_type"] = purpose
	f["purpose"] = purpose
	f["company"] = c.Name
	setPosting(d, at)
	f["set_posting_time"] = int64(1)
	f["is_opening"] = "No"
	setDocstatus(d, 1)
	return d
}

func (g *generator) addStockEntryRow(d *Doc, c *companyInfo, it *itemInfo, qtyH int64, from, to, expense string) *Doc {
	row := map[string]any{
		"item_code":         it.Code,
		"item_name":         it.Name,
		"description":       it.Name,
		"item_group":        it.Group,
		"qty":               qtyDec(qtyH),
		"transfer_qty":      qtyDec(qtyH),
		"uom":               it.UOM,
		"stock_uom":         it.UOM,
		"conversion_factor": Units(1),
		"expense_account":   expense,
		"cost_center":       c.acct("Main"),
	}
	if from != "" {
		row["s_warehouse"] = from
		d.Fields["from_warehouse"] = from
	}
	if to != "" {
		row["t_warehouse"] = to
		if d.Fields["to_warehouse"] == nil {
			d.Fields["to_warehouse"] = to
		}
	}
	r := g.addChild(d, "items", row)
	r.Fields["docstatus"] = int64(1)
	return r
}
