package frappetest

import "time"

// moreItems are stock items that are bought but not (yet) sold: spare
// parts, packaging and raw materials. They were added after the selling
// data was generated, so they never appear on seeded sales documents.
var moreItems = []struct {
	code, name, group, uom string
	usdCents               int64
	brand                  string
}{
	{"RM-CU-SHEET", "Copper Sheet 0.5mm", "Raw Material", "Kg", 1450, ""},
	{"RM-BOLT-M8", "Bolt M8 (box of 200)", "Raw Material", "Box", 2100, "Ironclad"},
	{"RM-SOLDER", "Solder Wire", "Raw Material", "Kg", 5200, ""},
	{"PKG-BOX-L", "Shipping Carton Large", "Consumable", "Nos", 250, ""},
	{"PKG-TAPE", "Packing Tape Roll", "Consumable", "Nos", 390, ""},
	{"SP-FILTER-10", "Replacement Filter 10in", "Products", "Nos", 1890, ""},
	{"SP-FUSE-20A", "Fuse 20A (pack of 10)", "Products", "Box", 1150, "Voltmax"},
	{"SP-RELAY-24V", "Relay 24V DC", "Products", "Nos", 2400, "Voltmax"},
	{"SOL-CABLE-6", "Solar Cable 6mm (100m)", "Products", "Nos", 18500, "SunPeak"},
	{"SOL-MC4", "MC4 Connector Pair", "Products", "Nos", 450, "SunPeak"},
}

func (g *generator) genMoreItems() {
	base := len(g.items)
	for i, it := range moreItems {
		info := &itemInfo{Code: it.code, Name: it.name, Group: it.group, UOM: it.uom, PriceCents: it.usdCents,
			Stock: true, Fractional: it.uom == "Kg"}
		d := g.newDoc("Item", it.code, "Administrator", time.Date(2025, 2, 3, 9, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Hour))
		f := d.Fields
		f["naming_series"] = "STO-ITEM-.YYYY.-"
		f["item_code"] = it.code
		f["item_name"] = it.name
		f["item_group"] = it.group
		f["stock_uom"] = it.uom
		f["description"] = it.name
		f["standard_rate"] = Cents(it.usdCents)
		f["valuation_rate"] = Cents(it.usdCents * 6 / 10)
		f["valuation_method"] = "Moving Average"
		f["lead_time_days"] = int64(g.rng.between(3, 21))
		if it.brand != "" {
			f["brand"] = it.brand
		}
		info.doc = d
		g.ds.add(d)
		g.items = append(g.items, info)
	}
	// Every stock item values stock by moving average. (No Item Default
	// rows: their Company links would hide items from users restricted to
	// one company.)
	for i, it := range g.items {
		if !it.Stock {
			continue
		}
		it.doc.Fields["valuation_method"] = "Moving Average"
		if i >= base {
			it.doc.Fields["min_order_qty"] = Units(int64(g.rng.between(1, 5) * 5))
		}
	}
}
