package frappetest

// Stock Ledger (erpnext/stock/report/stock_ledger/stock_ledger.py): the
// live Stock Ledger Entries of a period with item details, in_qty /
// out_qty split and the outgoing rate; an 'Opening' row only when both
// item_code and warehouse are filtered.

func runStockLedger(rc *reportCtx) (*reportOutput, *apiError) {
	f, ds := rc.f, rc.ds
	for _, k := range []string{"from_date", "to_date"} {
		if _, ok := f.get(k).(string); !ok {
			return nil, pythonError("TypeError", "unsupported operand type(s) for +: '"+pyTypeName(f.get(k))+"' and 'str'")
		}
	}
	from, err := parseReportDate(f.str("from_date"), f.today)
	if err != nil {
		return nil, err
	}
	to, err := parseReportDate(f.str("to_date"), f.today)
	if err != nil {
		return nil, err
	}
	// get_items
	var items map[string]bool
	switch {
	case f.truthy("item_code"):
		items = setOf(stringList(f.get("item_code")))
	case f.truthy("brand") || f.truthy("item_group"):
		var groups map[string]bool
		if f.truthy("item_group") {
			groups = setOf(ds.descendants("Item Group", f.str("item_group")))
		}
		items = map[string]bool{}
		for _, it := range ds.List("Item") {
			if (!f.truthy("brand") || collateCompare(it.Str("brand"), f.str("brand")) == 0) &&
				(groups == nil || groups[collationKey(it.Str("item_group"))]) {
				items[collationKey(it.Name)] = true
			}
		}
	}
	var warehouses map[string]bool
	if f.truthy("warehouse") {
		warehouses = map[string]bool{}
		for _, w := range stringList(f.get("warehouse")) {
			for _, k := range ds.descendants("Warehouse", w) {
				warehouses[collationKey(k)] = true
			}
		}
	}
	var data []any
	if f.truthy("item_code") && f.truthy("warehouse") && f.truthy("from_date") {
		row, err := rc.stockLedgerOpening(f, from, warehouses)
		if err != nil {
			return nil, err
		}
		data = append(data, row)
	}
	for _, s := range ds.ledger().sle {
		dt := s.Str("posting_datetime")
		switch {
		case s.Int("is_cancelled") != 0, s.Int("docstatus") >= 2,
			normDatetime(dt) < from+" 00:00:00.000000", normDatetime(dt) > to+" 23:59:59.000000",
			items != nil && !items[collationKey(s.Str("item_code"))],
			f.truthy("voucher_no") && collateCompare(s.Str("voucher_no"), f.str("voucher_no")) != 0,
			f.truthy("project") && collateCompare(s.Str("project"), f.str("project")) != 0,
			f.truthy("company") && collateCompare(s.Str("company"), f.str("company")) != 0,
			f.truthy("batch_no") && collateCompare(s.Str("batch_no"), f.str("batch_no")) != 0,
			warehouses != nil && !warehouses[collationKey(s.Str("warehouse"))]:
			continue
		}
		data = append(data, stockLedgerRow(ds, s))
	}
	if data == nil {
		data = []any{}
	}
	return &reportOutput{columns: stockLedgerColumns(f.str("valuation_field_type")), result: data}, nil
}

// stockLedgerOpening is get_opening_balance: the last live entry before the
// period for the item in the warehouses (several items are a SQL error, as
// the item list is bound to "item_code = %s").
func (rc *reportCtx) stockLedgerOpening(f *reportFilters, from string, warehouses map[string]bool) (*object, *apiError) {
	items := stringList(f.get("item_code"))
	if len(items) > 1 {
		return nil, pythonError("pymysql.err.OperationalError", "(1241, 'Operand should contain 1 column(s)')")
	}
	var last *Doc
	for _, s := range rc.ds.ledger().sle {
		if s.Int("is_cancelled") == 0 && collateCompare(s.Str("item_code"), items[0]) == 0 &&
			warehouses[collationKey(s.Str("warehouse"))] && s.Str("posting_date") < from {
			last = s
		}
	}
	o := newObject(4)
	o.set("item_code", rc.tr("'Opening'"))
	if last == nil {
		o.set("qty_after_transaction", int64(0))
		o.set("valuation_rate", int64(0))
		o.set("stock_value", int64(0))
		return o, nil
	}
	o.set("qty_after_transaction", last.Get("qty_after_transaction"))
	o.set("valuation_rate", last.Get("valuation_rate"))
	o.set("stock_value", last.Get("stock_value"))
	return o, nil
}

func stockLedgerRow(ds *Dataset, s *Doc) *object {
	o := newObject(32)
	o.set("item_code", s.Get("item_code"))
	o.set("date", s.Get("posting_datetime"))
	for _, k := range []string{"warehouse", "posting_date", "posting_time", "actual_qty", "incoming_rate", "valuation_rate",
		"company", "voucher_type", "qty_after_transaction", "stock_value_difference", "serial_and_batch_bundle",
		"voucher_no", "stock_value", "batch_no", "serial_no", "project"} {
		o.set(k, s.Get(k))
	}
	item := ds.Get("Item", s.Str("item_code"))
	o.set("name", item.Name)
	for _, k := range []string{"item_name", "description", "item_group", "brand", "stock_uom"} {
		o.set(k, item.Get(k))
	}
	qty := s.Dec("actual_qty")
	o.set("in_qty", max(qty, 0))
	o.set("out_qty", min(qty, 0))
	if qty < 0 {
		o.set("in_out_rate", roundDecimal(ratioDecimal(int64(s.Dec("stock_value_difference")), int64(qty)), 3))
		o.set("incoming_rate", int64(0))
	}
	return o
}

func stockLedgerColumns(valuationType string) []*object {
	var opts any
	if valuationType == "Currency" {
		opts = "Company:company:default_currency"
	}
	var vt any
	if valuationType != "" {
		vt = valuationType
	}
	return []*object{
		col("label", "Date", "fieldname", "date", "fieldtype", "Datetime", "width", int64(150)),
		col("label", "Item", "fieldname", "item_code", "fieldtype", "Link", "options", "Item", "width", int64(100)),
		col("label", "Item Name", "fieldname", "item_name", "width", int64(100)),
		col("label", "Stock UOM", "fieldname", "stock_uom", "fieldtype", "Link", "options", "UOM", "width", int64(90)),
		col("label", "In Qty", "fieldname", "in_qty", "fieldtype", "Float", "width", int64(80), "convertible", "qty"),
		col("label", "Out Qty", "fieldname", "out_qty", "fieldtype", "Float", "width", int64(80), "convertible", "qty"),
		col("label", "Balance Qty", "fieldname", "qty_after_transaction", "fieldtype", "Float", "width", int64(100), "convertible", "qty"),
		col("label", "Warehouse", "fieldname", "warehouse", "fieldtype", "Link", "options", "Warehouse", "width", int64(150)),
		col("label", "Item Group", "fieldname", "item_group", "fieldtype", "Link", "options", "Item Group", "width", int64(100)),
		col("label", "Brand", "fieldname", "brand", "fieldtype", "Link", "options", "Brand", "width", int64(100)),
		col("label", "Description", "fieldname", "description", "width", int64(200)),
		col("label", "Incoming Rate", "fieldname", "incoming_rate", "fieldtype", "Currency", "width", int64(110), "options", "Company:company:default_currency", "convertible", "rate"),
		col("label", "Avg Rate (Balance Stock)", "fieldname", "valuation_rate", "fieldtype", vt, "width", int64(180), "options", opts, "convertible", "rate"),
		col("label", "Outgoing Rate", "fieldname", "in_out_rate", "fieldtype", vt, "width", int64(140), "options", opts, "convertible", "rate"),
		col("label", "Balance Value", "fieldname", "stock_value", "fieldtype", "Currency", "width", int64(110), "options", "Company:company:default_currency"),
		col("label", "Value Change", "fieldname", "stock_value_difference", "fieldtype", "Currency", "width", int64(110), "options", "Company:company:default_currency"),
		col("label", "Voucher Type", "fieldname", "voucher_type", "width", int64(110)),
		col("label", "Voucher #", "fieldname", "voucher_no", "fieldtype", "Dynamic Link", "options", "voucher_type", "width", int64(100)),
		col("label", "Batch", "fieldname", "batch_no", "fieldtype", "Link", "options", "Batch", "width", int64(100)),
		col("label", "Serial No", "fieldname", "serial_no", "fieldtype", "Link", "options", "Serial No", "width", int64(100)),
		col("label", "Serial and Batch Bundle", "fieldname", "serial_and_batch_bundle", "fieldtype", "Link", "options", "Serial and Batch Bundle", "width", int64(100)),
		col("label", "Project", "fieldname", "project", "fieldtype", "Link", "options", "Project", "width", int64(100)),
		col("label", "Company", "fieldname", "company", "fieldtype", "Link", "options", "Company", "width", int64(110)),
	}
}
