package frappetest

// Stock Balance (erpnext/stock/report/stock_balance/stock_balance.py): per
// company, item and warehouse, the opening, in, out and balance quantities
// and values from the Stock Ledger. Opening-entry vouchers count as opening
// whatever their date. Quirk kept: filter_items_with_no_transactions turns
// every numeric-looking key into flt(value, 3), including "currency",
// which therefore comes out as 0.0. It is a prepared report: the run
// method answers {"prepared_report": true} unless ignore_prepared_report.

var stockBalanceNumeric = []string{"opening_qty", "opening_val", "in_qty", "in_val", "out_qty", "out_val", "bal_qty", "bal_val"}

type sbRow struct {
	first  *Doc
	vals   map[string]int64 // hundredths for qty, cents for values
	valRat Decimal
}

func runStockBalance(rc *reportCtx) (*reportOutput, *apiError) {
	f, ds := rc.f, rc.ds
	from, err := f.date("from_date")
	if err != nil {
		return nil, err
	}
	to, err := f.date("to_date")
	if err != nil {
		return nil, err
	}
	company := f.str("company")
	items := map[string]bool{}
	if f.truthy("item_code") {
		items = setOf(stringList(f.get("item_code")))
	}
	var groups map[string]bool
	if f.truthy("item_group") {
		groups = setOf(append(ds.descendants("Item Group", f.str("item_group")), f.str("item_group")))
	}
	var warehouses map[string]bool
	if f.truthy("warehouse") {
		warehouses = map[string]bool{}
		for _, w := range stringList(f.get("warehouse")) {
			for _, k := range ds.descendants("Warehouse", w) {
				warehouses[collationKey(k)] = true
			}
		}
	} else if f.truthy("warehouse_type") {
		warehouses = map[string]bool{}
		for _, w := range ds.List("Warehouse") {
			if collateCompare(w.Str("warehouse_type"), f.str("warehouse_type")) == 0 {
				warehouses[collationKey(w.Name)] = true
			}
		}
	}
	opening := map[string]bool{}
	for _, se := range ds.List("Stock Entry") {
		if se.Int("docstatus") == 1 && se.Str("is_opening") == "Yes" && se.Str("posting_date") <= to {
			opening[se.Name] = true
		}
	}
	var order []string
	rows := map[string]*sbRow{}
	for _, s := range ds.ledger().sle {
		item := ds.Get("Item", s.Str("item_code"))
		switch {
		case s.Int("is_cancelled") != 0, s.Int("docstatus") >= 2, s.Str("posting_date") > to,
			company != "" && s.Str("company") != company,
			len(items) > 0 && !items[collationKey(s.Str("item_code"))],
			groups != nil && !groups[collationKey(item.Str("item_group"))],
			f.truthy("brand") && collateCompare(item.Str("brand"), f.str("brand")) != 0,
			warehouses != nil && !warehouses[collationKey(s.Str("warehouse"))]:
			continue
		}
		key := s.Str("company") + "\x00" + s.Str("item_code") + "\x00" + s.Str("warehouse")
		r := rows[key]
		if r == nil {
			r = &sbRow{first: s, vals: map[string]int64{}}
			rows[key] = r
			order = append(order, key)
		}
		qty, val := s.Dec("actual_qty").Cents(), s.Dec("stock_value_difference").Cents()
		date := s.Str("posting_date")
		switch {
		case date < from || (s.Str("voucher_type") == "Stock Entry" && opening[s.Str("voucher_no")]):
			r.vals["opening_qty"] += qty
			r.vals["opening_val"] += val
		case date <= to:
			if qty >= 0 {
				r.vals["in_qty"] += qty
			} else {
				r.vals["out_qty"] -= qty
			}
			if val >= 0 {
				r.vals["in_val"] += val
			} else {
				r.vals["out_val"] -= val
			}
		}
		r.valRat = s.Dec("valuation_rate")
		r.vals["bal_qty"] += qty
		r.vals["bal_val"] += val
	}
	var data []any
	zero := f.truthy("include_zero_stock_items")
	for _, key := range order {
		r := rows[key]
		active := false
		for _, k := range stockBalanceNumeric {
			if r.vals[k] != 0 {
				active = true
			}
		}
		if !active || (!zero && r.vals["bal_qty"] == 0 && r.vals["bal_val"] == 0) {
			continue
		}
		s := r.first
		item := ds.Get("Item", s.Str("item_code"))
		o := newObject(20)
		o.set("item_code", s.Get("item_code"))
		o.set("warehouse", s.Get("warehouse"))
		o.set("item_group", item.Get("item_group"))
		o.set("company", s.Get("company"))
		o.set("currency", 0.0)
		o.set("stock_uom", item.Get("stock_uom"))
		o.set("item_name", item.Get("item_name"))
		for _, k := range []string{"opening_qty", "opening_val"} {
			o.set(k, Cents(r.vals[k]))
		}
		o.set("opening_fifo_queue", []any{})
		for _, k := range []string{"in_qty", "in_val", "out_qty", "out_val", "bal_qty", "bal_val"} {
			o.set(k, Cents(r.vals[k]))
		}
		o.set("val_rate", roundDecimal(r.valRat, 3))
		o.set("reserved_stock", 0.0)
		data = append(data, o)
	}
	if data == nil {
		data = []any{}
	}
	return &reportOutput{columns: stockBalanceColumns(f.str("valuation_field_type")), result: data}, nil
}

// roundDecimal is flt(v, places).
func roundDecimal(d Decimal, places int) Decimal {
	unit := int64(1)
	for i := places; i < 9; i++ {
		unit *= 10
	}
	return Decimal(roundHalfEven(int64(d), unit) * unit)
}

func stockBalanceColumns(valuationType string) []*object {
	rateType := valuationType
	var rateOptions any
	if rateType == "" {
		rateType = "Currency"
	}
	if valuationType == "Currency" {
		rateOptions = "Company:company:default_currency"
	}
	return []*object{
		col("label", "Item", "fieldname", "item_code", "fieldtype", "Link", "options", "Item", "width", int64(100)),
		col("label", "Item Name", "fieldname", "item_name", "width", int64(150)),
		col("label", "Item Group", "fieldname", "item_group", "fieldtype", "Link", "options", "Item Group", "width", int64(100)),
		col("label", "Warehouse", "fieldname", "warehouse", "fieldtype", "Link", "options", "Warehouse", "width", int64(100)),
		col("label", "Stock UOM", "fieldname", "stock_uom", "fieldtype", "Link", "options", "UOM", "width", int64(90)),
		col("label", "Balance Qty", "fieldname", "bal_qty", "fieldtype", "Float", "width", int64(100), "convertible", "qty"),
		col("label", "Balance Value", "fieldname", "bal_val", "fieldtype", "Currency", "width", int64(100), "options", "Company:company:default_currency"),
		col("label", "Opening Qty", "fieldname", "opening_qty", "fieldtype", "Float", "width", int64(100), "convertible", "qty"),
		col("label", "Opening Value", "fieldname", "opening_val", "fieldtype", "Currency", "width", int64(110), "options", "Company:company:default_currency"),
		col("label", "In Qty", "fieldname", "in_qty", "fieldtype", "Float", "width", int64(80), "convertible", "qty"),
		col("label", "In Value", "fieldname", "in_val", "fieldtype", "Float", "width", int64(80)),
		col("label", "Out Qty", "fieldname", "out_qty", "fieldtype", "Float", "width", int64(80), "convertible", "qty"),
		col("label", "Out Value", "fieldname", "out_val", "fieldtype", "Float", "width", int64(80)),
		col("label", "Valuation Rate", "fieldname", "val_rate", "fieldtype", rateType, "width", int64(90), "convertible", "rate", "options", rateOptions),
		col("label", "Reserved Stock", "fieldname", "reserved_stock", "fieldtype", "Float", "width", int64(80), "convertible", "qty"),
		col("label", "Company", "fieldname", "company", "fieldtype", "Link", "options", "Company", "width", int64(100)),
	}
}
