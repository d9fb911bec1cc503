package frappetest

// Post-processing of generate_report_result: get_filtered_data (User
// Permissions applied to the report's Link columns) and add_total_row.

// filteredReportData is query_report.get_filtered_data for the simulator's
// permission model (User Permissions on Company only). Frappe checks every
// Link column's value against the user's match filters, and those filters
// are keyed by the permitted doctype, so only a Link-to-Company column
// can drop a row: rows whose company is an existing company the user may
// not see are removed. Link columns without any value are ignored, as are
// empty rows.
func filteredReportData(user *User, columns []*object, rows []any) []any {
	if user == nil || user.Companies == nil {
		return rows
	}
	linked := map[string]string{} // options -> fieldname, as Frappe builds it
	for _, c := range columns {
		if cstr(getKey(c, "fieldtype")) == "Link" {
			linked[cstr(getKey(c, "options"))] = cstr(getKey(c, "fieldname"))
		}
	}
	field, ok := linked["Company"]
	if !ok || !columnHasValue(rows, field) {
		return rows
	}
	out := make([]any, 0, len(rows))
	for _, r := range rows {
		o, isObj := r.(*object)
		if isObj && len(o.keys) > 0 {
			v := cstr(getKey(o, field))
			if v != "" && !companyAllowed(user, v) && isCompany(v) {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

func isCompany(name string) bool {
	for _, c := range demoCompanies {
		if collateCompare(c.Name, name) == 0 {
			return true
		}
	}
	return false
}

func getKey(o *object, k string) any {
	v, _ := o.get(k)
	return v
}

// columnHasValue mirrors get_linked_doctypes' scan, including its shortcut
// of skipping a row whose key count equals the number of columns found
// with a value so far.
func columnHasValue(rows []any, field string) bool {
	found := map[string]bool{}
	for _, r := range rows {
		o, ok := r.(*object)
		if !ok || len(o.keys) == 0 || len(o.keys) == len(found) {
			continue
		}
		for i, k := range o.keys {
			if valueTruthy(o.vals[i]) {
				found[k] = true
			}
		}
	}
	return found[field]
}

var numericColumnTypes = map[string]bool{"Currency": true, "Int": true, "Float": true, "Percent": true, "Duration": true}

// totalRow is query_report.add_total_row: a JSON array as long as the
// columns, numeric columns summed over their non-zero cells ("" when there
// are none), Percent columns averaged, a Link-to-Currency column copying
// the first row, and "Total" in the first cell unless the first column is
// numeric or a Date. Sums are exact (Frappe adds Python floats).
func totalRow(rows []any, columns []*object) []any {
	total := make([]any, len(columns))
	for i := range total {
		total[i] = ""
	}
	var percent []int
	for i, c := range columns {
		fieldtype, _ := getKey(c, "fieldtype").(string)
		fieldname := cstr(getKey(c, "fieldname"))
		var sum Decimal
		summed := false
		for _, r := range rows {
			o, ok := r.(*object)
			if !ok || i >= len(o.keys) {
				continue
			}
			cell := getKey(o, fieldname)
			if fieldtype == "" {
				switch cell.(type) {
				case int64, bool:
					fieldtype = "Int"
				case float64, Decimal:
					fieldtype = "Float"
				}
			}
			if numericColumnTypes[fieldtype] {
				if v := cellDecimal(cell); v != 0 {
					sum += v
					summed = true
				}
			}
			if fieldtype == "Percent" && !containsInt(percent, i) {
				percent = append(percent, i)
			}
		}
		if summed {
			total[i] = sum
		}
		if fieldtype == "Link" && cstr(getKey(c, "options")) == "Currency" {
			if o, ok := rows[0].(*object); ok {
				total[i] = getKey(o, fieldname)
			}
		}
	}
	for _, i := range percent {
		total[i] = Decimal(int64(cellDecimal(total[i])) / int64(len(rows)))
	}
	if len(columns) > 0 {
		if ft, _ := getKey(columns[0], "fieldtype").(string); !numericColumnTypes[ft] || ft == "Duration" {
			if ft != "Date" {
				total[0] = "Total"
			}
		}
	}
	return total
}

// cellDecimal is flt(cell) for report cells.
func cellDecimal(v any) Decimal {
	switch x := v.(type) {
	case Decimal:
		return x
	case int64:
		return Units(x)
	case float64:
		d, _ := parseDecimal(pyFloat(x))
		return d
	case bool:
		if x {
			return Units(1)
		}
	case string:
		return flt(x)
	}
	return 0
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
