package frappetest

import "time"

// itemInfo is what later stages need to know about an item.
type itemInfo struct {
	Code, Name, Group, UOM string
	PriceCents             int64 // standard selling rate in USD cents
	Stock, Disabled        bool
	Fractional             bool // sold in fractional quantities (hours, kg)
	doc                    *Doc
}

var demoItems = []struct {
	code, name, group, uom string
	usdCents               int64
	brand                  string
}{
	{"HW-1001", "Steel Bracket 50mm", "Products", "Nos", 450, "Ironclad"},
	{"HW-1002", "Steel Bracket 100mm", "Products", "Nos", 680, "Ironclad"},
	{"HW-1003", "Galvanised Bolt M10 (box of 50)", "Products", "Box", 1200, "Ironclad"},
	{"HW-1004", "Heavy Duty Hinge", "Products", "Nos", 995, "Ironclad"},
	{"HW-1005", "Cable Tie Pack", "Products", "Nos", 320, ""},
	{"HW-1006", "Brass Padlock 40mm", "Products", "Nos", 1450, "Lockwell"},
	{"HW-1007", "Steel Tool Box", "Products", "Nos", 5900, "Lockwell"},
	{"HW-1008", "Cordless Drill 18V", "Products", "Nos", 18900, "Voltmax"},
	{"HW-1009", "Angle Grinder 125mm", "Products", "Nos", 12900, "Voltmax"},
	{"HW-1010", "Safety Helmet", "Products", "Nos", 2490, ""},
	{"HW-1011", "Hi-Vis Vest", "Products", "Nos", 1250, ""},
	{"HW-1012", "Work Gloves (pair)", "Products", "Nos", 875, ""},
	{"HW-1013", "LED Floodlight 50W", "Products", "Nos", 4500, "Lumena"},
	{"HW-1014", "Extension Lead 10m", "Products", "Nos", 2200, "Voltmax"},
	{"HW-1015", "Ladder 3m Aluminium", "Products", "Nos", 16500, ""},
	{"SOL-400W", "Solar Panel 400W", "Products", "Nos", 24900, "SunPeak"},
	{"SOL-INV-5K", "Hybrid Inverter 5kW", "Products", "Nos", 145000, "SunPeak"},
	{"SOL-BAT-10", "Home Battery 10kWh", "Products", "Nos", 620000, "SunPeak"},
	{"SOL-RAIL", "Mounting Rail 4m", "Products", "Nos", 3850, "SunPeak"},
	{"RM-CU-WIRE", "Copper Wire 2.5mm", "Raw Material", "Kg", 920, ""},
	{"RM-AL-SHEET", "Aluminium Sheet 1mm", "Raw Material", "Kg", 740, ""},
	{"RM-ST-ROD", "Steel Rod 12mm", "Raw Material", "Kg", 310, ""},
	{"RM-PVC-50", "PVC Pipe 50mm", "Raw Material", "Nos", 460, ""},
	{"CON-A4", "A4 Printer Paper (box)", "Consumable", "Box", 3800, ""},
	{"CON-TONER", "Toner Cartridge", "Consumable", "Nos", 8900, ""},
	{"CON-CLEAN-5L", "Cleaning Solution 5L", "Consumable", "Litre", 390, ""},
	{"CON-COFFEE", "Coffee Beans 1kg", "Consumable", "Kg", 3200, ""},
	{"SA-CTRL-PANEL", "Control Panel Assembly", "Sub Assemblies", "Nos", 78000, ""},
	{"SA-MOUNT-KIT", "Mounting Kit", "Sub Assemblies", "Set", 6500, ""},
	{"SVC-INSTALL", "Installation Labour", "Services", "Hour", 9500, ""},
	{"SVC-CONSULT", "Consulting", "Services", "Hour", 18000, ""},
	{"SVC-SURVEY", "Site Survey", "Services", "Nos", 35000, ""},
	{"SVC-AMC", "Annual Maintenance Contract", "Services", "Nos", 120000, ""},
	{"SVC-TRAINING", "Training Session", "Services", "Nos", 45000, ""},
	{"SVC-DELIVERY", "Delivery Charge", "Services", "Nos", 3500, ""},
	{"SVC-SUBS-M", "Software Subscription (monthly)", "Services", "Nos", 4900, ""},
	{"SVC-SUPPORT", "Support Hours", "Services", "Hour", 12000, ""},
	{"SVC-DESIGN", "Design Services", "Services", "Hour", 15000, ""},
	{"SVC-CALLOUT", "Call-out Fee", "Services", "Nos", 8500, ""},
	{"HW-1099", "Discontinued Widget", "Products", "Nos", 199, ""},
	{"HW-1016", "Spirit Level 600mm", "Products", "Nos", 3450, ""},
	{"HW-1017", "Tape Measure 8m", "Products", "Nos", 1890, ""},
}

func (g *generator) genItems() {
	for i, it := range demoItems {
		info := &itemInfo{Code: it.code, Name: it.name, Group: it.group, UOM: it.uom, PriceCents: it.usdCents,
			Stock: it.group != "Services", Disabled: it.code == "HW-1099",
			Fractional: it.uom == "Hour" || it.uom == "Kg" || it.uom == "Litre"}
		d := g.newDoc("Item", it.code, "Administrator", setupTime.Add(time.Duration(i+3)*time.Hour))
		f := d.Fields
		f["naming_series"] = "STO-ITEM-.YYYY.-"
		f["item_code"] = it.code
		f["item_name"] = it.name
		f["item_group"] = it.group
		f["stock_uom"] = it.uom
		f["description"] = it.name
		f["standard_rate"] = Cents(it.usdCents)
		f["valuation_rate"] = Cents(it.usdCents * 6 / 10)
		if !info.Stock {
			f["is_stock_item"] = int64(0)
		}
		if info.Disabled {
			f["disabled"] = int64(1)
		}
		if it.brand != "" {
			f["brand"] = it.brand
		}
		if info.Stock {
			f["valuation_method"] = "FIFO"
		}
		info.doc = d
		g.ds.add(d)
		g.items = append(g.items, info)
	}
}
