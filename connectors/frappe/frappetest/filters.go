package frappetest

import (
	"encoding/json"
	"strings"
	"time"
)

// Filters follow frappe/desk/reportview.py validate_filters (field checks)
// and frappe/model/db_query.py get_filter + prepare_filter_condition
// (operators, value typing and ifnull/NULL handling).

const operatorList = "=, !=, >, <, >=, <=, like, not like, in, not in, is, between, timespan, previous, next, ancestors of, descendants of, not ancestors of, not descendants of, descendants of (inclusive)"

var validOperators = map[string]bool{}

func init() {
	for _, op := range strings.Split(operatorList, ", ") {
		validOperators[op] = true
	}
}

// pyLen is Python len() for decoded JSON values.
func pyLen(v any) (int, *apiError) {
	switch x := v.(type) {
	case []any:
		return len(x), nil
	case string:
		return len([]rune(x)), nil
	case *object:
		return len(x.keys), nil
	}
	return 0, pythonError("TypeError", "object of type '"+pyTypeName(v)+"' has no len()")
}

func pyTypeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case json.Number:
		if isPyInt(x) {
			return "int"
		}
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case *object:
		return "dict"
	}
	return "object"
}

// pyIndex is Python v[i] for lists and strings.
func pyIndex(v any, i int) (any, *apiError) {
	switch x := v.(type) {
	case []any:
		if i < len(x) {
			return x[i], nil
		}
	case string:
		r := []rune(x)
		if i < len(r) {
			return string(r[i]), nil
		}
	case *object:
		return nil, pythonError("KeyError", cstr(json.Number(string(rune('0'+i)))))
	}
	return nil, pythonError("IndexError", pyTypeName(v)+" index out of range")
}

// fieldKnown is meta.has_field / meta.get_field (a Table field counts).
func fieldKnown(m *DocMeta, f any) bool {
	s, ok := f.(string)
	return ok && m.Field(s) != nil
}

func isStandardValue(f any) bool {
	s, ok := f.(string)
	return ok && isStandardField(s)
}

// validateFilters is reportview.validate_filters.
func validateFilters(reg *registry, doctype string, filters any) *apiError {
	main := reg.get(doctype)
	mainMeta := func() (*DocMeta, *apiError) {
		if main == nil {
			return nil, doctypeNotFound(doctype)
		}
		return main, nil
	}
	if list, ok := filters.([]any); ok {
		for _, cond := range list {
			n, err := pyLen(cond)
			if err != nil {
				return err
			}
			if n == 3 {
				fieldname, err := pyIndex(cond, 0)
				if err != nil {
					return err
				}
				if isStandardValue(fieldname) {
					continue
				}
				m, err := mainMeta()
				if err != nil {
					return err
				}
				if !fieldKnown(m, fieldname) {
					return fieldNotPermitted(cstr(fieldname))
				}
				continue
			}
			fieldname, err := pyIndex(cond, 1)
			if err != nil {
				return err
			}
			if isStandardValue(fieldname) {
				continue
			}
			dt, err := pyIndex(cond, 0)
			if err != nil {
				return err
			}
			m := reg.get(cstr(dt))
			if m == nil {
				return doctypeNotFound(cstr(dt))
			}
			if !fieldKnown(m, fieldname) {
				return fieldNotPermitted(cstr(fieldname))
			}
		}
		return nil
	}
	var keys []any
	switch x := filters.(type) {
	case *object:
		for _, k := range x.keys {
			keys = append(keys, k)
		}
	case string:
		for _, r := range x {
			keys = append(keys, string(r))
		}
	default:
		return pythonError("TypeError", "'"+pyTypeName(filters)+"' object is not iterable")
	}
	for _, k := range keys {
		if isStandardValue(k) {
			continue
		}
		m, err := mainMeta()
		if err != nil {
			return err
		}
		if !fieldKnown(m, k) {
			return fieldNotPermitted(cstr(k))
		}
	}
	return nil
}

// filterCond is one normalised [doctype, fieldname, operator, value].
type filterCond struct {
	doctype, field, op string
	value              any
}

// normaliseFilters is get_filter applied to every condition.
func normaliseFilters(doctype string, filters any) ([]filterCond, *apiError) {
	var raw []any
	switch x := filters.(type) {
	case nil:
		return nil, nil
	case *object:
		for i, k := range x.keys {
			o := newObject(1)
			o.set(k, x.vals[i])
			raw = append(raw, o)
		}
	case []any:
		raw = x
	default:
		return nil, nil
	}
	var out []filterCond
	for _, f := range raw {
		var tuple []any
		switch x := f.(type) {
		case *object:
			if len(x.keys) == 0 {
				return nil, pythonError("StopIteration", "")
			}
			key, val := x.keys[0], x.vals[0]
			if list, ok := val.([]any); ok {
				if len(list) < 2 {
					return nil, pythonError("IndexError", "list index out of range")
				}
				tuple = []any{doctype, key, list[0], list[1]}
			} else {
				tuple = []any{doctype, key, "=", val}
			}
		case []any:
			tuple = x
		default:
			return nil, validationError("Filter must be a tuple or list (in a list)")
		}
		switch {
		case len(tuple) == 3:
			tuple = []any{doctype, tuple[0], tuple[1], tuple[2]}
		case len(tuple) > 4:
			tuple = tuple[:4]
		case len(tuple) != 4:
			return nil, validationError("Filter must have 4 values (doctype, fieldname, operator, value): " + pyRepr(tuple))
		}
		op := tuple[2]
		if !pyTruthy(op) {
			op = "="
		}
		ops, ok := op.(string)
		if !ok {
			return nil, pythonError("AttributeError", "'"+pyTypeName(op)+"' object has no attribute 'lower'")
		}
		if !validOperators[strings.ToLower(ops)] {
			return nil, validationError("Operator must be one of " + operatorList)
		}
		out = append(out, filterCond{doctype: cstr(tuple[0]), field: cstr(tuple[1]), op: strings.ToLower(ops), value: tuple[3]})
	}
	return out, nil
}

// fieldDef returns the docfield of a column (nil for standard columns).
func fieldDef(m *DocMeta, f string) *Field {
	if m == nil {
		return nil
	}
	return m.Field(f)
}

var stringColumnTypes = map[string]bool{
	"Data": true, "Link": true, "Dynamic Link": true, "Select": true, "Small Text": true, "Text": true,
	"Long Text": true, "Text Editor": true, "Code": true, "Read Only": true, "Attach": true,
	"Attach Image": true, "HTML Editor": true, "Markdown Editor": true, "Password": true, "Phone": true,
	"Autocomplete": true, "Color": true, "JSON": true, "Signature": true, "Geolocation": true, "Barcode": true,
	"Rating": false,
}

// compileFilter turns a condition into a row predicate, following
// prepare_filter_condition. noIfnull selects the frappe.qb semantics used
// by frappe.client.get_count (no ifnull wrapping).
func (q *query) compileFilter(f filterCond, noIfnull bool) (func(jrow) bool, *apiError) {
	ti, err := q.ensureJoin(f.doctype)
	if err != nil {
		return nil, err
	}
	m := q.metaOf(ti)
	typ, exists := m.columnType(f.field)
	if !exists {
		return nil, sqlError(1054, "Unknown column '"+q.tableName(ti)+"."+f.field+"' in 'where clause'")
	}
	col := bCol{ti: ti, field: f.field, typ: typ}
	df := fieldDef(m, f.field)
	op := f.op
	value := f.value
	canBeNull := true
	forceIfnull := false
	var fallback any = ""
	isDateCol := typ == "Date" || typ == "Datetime"

	// Nested-set operators become in / not in.
	if strings.Contains(op, "ancestors of") || strings.Contains(op, "descendants of") {
		refDoctype := q.main.Name
		if df != nil && df.Type == "Link" {
			refDoctype = df.Options
		}
		names, err := q.nestedSet(refDoctype, op, cstr(value))
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(op, "not") {
			op = "not in"
		} else {
			op = "in"
		}
		value = names
	}

	var pred func(v any) bool
	switch op {
	case "in", "not in":
		var vals []string
		switch x := value.(type) {
		case []any:
			for _, v := range x {
				vals = append(vals, strings.TrimSpace(cstr(v)))
			}
		case nil:
		default:
			if s := cstr(x); s != "" {
				for _, p := range strings.Split(s, ",") {
					vals = append(vals, strings.TrimSpace(p))
				}
			}
		}
		if op == "in" {
			canBeNull = !pyTruthy(value)
			if list, ok := value.([]any); ok {
				for _, v := range list {
					if v == nil || v == "" {
						canBeNull = true
					}
				}
			}
		}
		if len(vals) == 0 {
			vals = []string{""}
		}
		in := op == "in"
		pred = func(v any) bool {
			if v == nil {
				return false
			}
			for _, s := range vals {
				if sqlCompare(v, s) == 0 {
					return in
				}
			}
			return !in
		}
	default:
		var operand any
		switch {
		case op == "timespan" || op == "previous" || op == "next":
			if !isDateCol && f.field != "creation" && f.field != "modified" {
				return nil, sqlSyntaxError("between 0")
			}
			from, to := timespanRange(q.today, op, cstr(value))
			op = "between"
			value = []any{from, to}
			fallback = "0001-01-01 00:00:00.000000"
		}
		switch {
		case df != nil && isNumericType(df.Type) && op != "is":
			canBeNull = false
		}
		switch {
		case (op == ">" || op == ">=") && (f.field == "creation" || f.field == "modified"):
			operand = normDatetime(cstr(value))
			canBeNull = false
			fallback = "0001-01-01 00:00:00.000000"
		case (op == "<" || op == "<=") && (f.field == "creation" || f.field == "modified"):
			operand = normDatetime(cstr(value))
			fallback = "0001-01-01 00:00:00.000000"
		case op == "between":
			if !isDateCol {
				return nil, sqlSyntaxError("between 0")
			}
			from, to := fmtDate(q.today), fmtDate(q.today)
			if list, ok := value.([]any); ok {
				if len(list) >= 1 {
					from = cstr(list[0])
				}
				if len(list) >= 2 {
					to = cstr(list[1])
				}
			}
			lo, e1 := formatDatetimeValue(from, false)
			hi, e2 := formatDatetimeValue(to, typ == "Datetime")
			if e1 != nil {
				return nil, e1
			}
			if e2 != nil {
				return nil, e2
			}
			fallback = "0001-01-01 00:00:00.000000"
			pred = func(v any) bool {
				s := normDatetime(toText(v))
				return s >= lo && s <= hi
			}
		case op == "is":
			switch value {
			case "set":
				op, operand, canBeNull = "!=", "", false
			case "not set":
				op, operand, canBeNull = "=", "", true
				fallback = ""
				forceIfnull = !noIfnull
			default:
				return nil, pythonError("UnboundLocalError", "cannot access local variable 'fallback' where it is not associated with a value")
			}
		case df != nil && df.Type == "Date":
			s, err := formatDateValue(value, q.today)
			if err != nil {
				return nil, err
			}
			operand = s
			fallback = "0001-01-01"
		case df != nil && df.Type == "Datetime":
			s, err := formatDatetimeValue(cstr(value), false)
			if err != nil {
				return nil, err
			}
			operand = s
			fallback = "0001-01-01 00:00:00.000000"
		case df != nil && df.Type == "Time":
			us, ok := timeMicros(cstr(value))
			if !ok {
				return nil, validationError(cstr(value) + " is not a valid time")
			}
			fallback = "0:00:00"
			pred = timePredicate(op, us)
		case op == "like" || op == "not like" || (isString(value) && (df == nil || !isNumericType(df.Type))):
			if value == nil {
				operand = ""
			} else {
				operand = cstr(value)
			}
			fallback = ""
		case op == "=" && df != nil && (df.Type == "Link" || df.Type == "Data" || df.Type == "Dynamic Link"):
			operand = cstr(value)
		case f.field == "name":
			if value == nil {
				operand = ""
			} else {
				operand = cstr(value)
			}
		case df != nil && stringColumnTypes[df.Type]:
			operand = cstr(value)
		default:
			operand = flt(value)
			fallback = Decimal(0)
		}
		if pred == nil {
			pred = comparePredicate(op, operand, q.accentSensitiveLike)
		}
	}
	if (op == "between") && isDateCol {
		canBeNull = true
	}
	useIfnull := forceIfnull || !noIfnull && canBeNull && !(pyTruthy(f.value) && (op == "=" || op == "like"))
	if df != nil && isNumericType(df.Type) {
		// NOT NULL DEFAULT 0 columns are never NULL.
		useIfnull = false
	}
	return func(r jrow) bool {
		v := colValue(col, r)
		if v == nil {
			if !useIfnull {
				return false
			}
			v = fallback
		}
		if col.typ == "Datetime" {
			v = normDatetime(toText(v))
		}
		return pred(v)
	}, nil
}

func isString(v any) bool { _, ok := v.(string); return ok }

// comparePredicate implements = != < > <= >= like / not like.
// accentSensitive makes like compare accents (Options.AccentSensitiveLike).
func comparePredicate(op string, operand any, accentSensitive bool) func(any) bool {
	switch op {
	case "like", "not like":
		pattern := toText(operand)
		neg := op == "not like"
		return func(v any) bool {
			s := toText(v)
			if d, ok := v.(Decimal); ok {
				s = d.String()
			}
			if accentSensitive {
				return likeMatchAccents(s, pattern) != neg
			}
			return likeMatch(s, pattern) != neg
		}
	}
	return func(v any) bool {
		c := sqlCompare(v, operand)
		switch op {
		case "=":
			return c == 0
		case "!=":
			return c != 0
		case "<":
			return c < 0
		case ">":
			return c > 0
		case "<=":
			return c <= 0
		case ">=":
			return c >= 0
		}
		return false
	}
}

func timePredicate(op string, us int64) func(any) bool {
	return func(v any) bool {
		t, ok := timeMicros(toText(v))
		if !ok {
			return false
		}
		switch op {
		case "=":
			return t == us
		case "!=":
			return t != us
		case "<":
			return t < us
		case ">":
			return t > us
		case "<=":
			return t <= us
		case ">=":
			return t >= us
		}
		return false
	}
}

// parseLooseDate accepts the date spellings getdate() commonly sees.
func parseLooseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02", "2006-1-2", "2006/01/02", "2006-01-02 15:04:05", "2006-01-02 15:04:05.999999", "2006-01-02T15:04:05", "2006-01-02T15:04:05.999999", "2006-01-02T15:04:05Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// formatDateValue is frappe.db.format_date(getdate(value)): empty -> today.
func formatDateValue(v any, today time.Time) (string, *apiError) {
	s := cstr(v)
	if s == "" {
		return fmtDate(today), nil
	}
	t, ok := parseLooseDate(s)
	if !ok {
		return "", frappeThrow("ValidationError", "<strong>"+s+"</strong> is not a valid date string.", "Invalid Date")
	}
	return fmtDate(t), nil
}

// formatDatetimeValue renders a datetime bound; a date-only upper bound of
// a Datetime column extends to 23:59:59.999999.
func formatDatetimeValue(s string, endOfDay bool) (string, *apiError) {
	t, ok := parseLooseDate(s)
	if !ok {
		return "", frappeThrow("ValidationError", "<strong>"+s+"</strong> is not a valid date string.", "Invalid Date")
	}
	if endOfDay && len(strings.TrimSpace(s)) <= 10 {
		t = t.Add(24*time.Hour - time.Microsecond)
	}
	return t.Format("2006-01-02 15:04:05.000000"), nil
}

// nestedSet resolves ancestors/descendants of a tree node into names.
func (q *query) nestedSet(doctype, op, node string) ([]any, *apiError) {
	n := q.ds.Get(doctype, node)
	if n == nil || n.Get("lft") == nil {
		return nil, pythonError("TypeError", "cannot unpack non-iterable NoneType object")
	}
	lft, rgt := n.Int("lft"), n.Int("rgt")
	var out []any
	for _, d := range q.ds.List(doctype) {
		l, r := d.Int("lft"), d.Int("rgt")
		switch {
		case strings.HasSuffix(op, "ancestors of") && l < lft && r > rgt,
			strings.Contains(op, "descendants of") && l > lft && r < rgt,
			op == "descendants of (inclusive)" && d == n:
			out = append(out, d.Name)
		}
	}
	return out, nil
}

// timespanRange is frappe.utils.get_timespan_date_range (weeks start on
// Sunday) for timespan/previous/next filters.
func timespanRange(today time.Time, op, v string) (string, string) {
	if op == "previous" || op == "next" {
		word := map[string]string{"1 week": "week", "1 month": "month", "3 months": "quarter", "6 months": "6 months", "1 year": "year"}[v]
		if op == "previous" {
			v = "last " + word
		} else {
			v = "next " + word
		}
	}
	t := today
	d := func(x time.Time) string { return fmtDate(x) }
	weekStart := func(x time.Time) time.Time { return x.AddDate(0, 0, -int(x.Weekday())) }
	monthStart := func(x time.Time) time.Time { return time.Date(x.Year(), x.Month(), 1, 0, 0, 0, 0, time.UTC) }
	quarterStart := func(x time.Time) time.Time {
		return time.Date(x.Year(), time.Month((int(x.Month())-1)/3*3+1), 1, 0, 0, 0, 0, time.UTC)
	}
	yearStart := func(x time.Time) time.Time { return time.Date(x.Year(), 1, 1, 0, 0, 0, 0, time.UTC) }
	switch v {
	case "last week":
		s := weekStart(t.AddDate(0, 0, -7))
		return d(s), d(s.AddDate(0, 0, 6))
	case "last month":
		s := monthStart(t).AddDate(0, -1, 0)
		return d(s), d(s.AddDate(0, 1, -1))
	case "last quarter":
		s := quarterStart(t.AddDate(0, -3, 0))
		return d(s), d(s.AddDate(0, 3, -1))
	case "last 6 months":
		return d(quarterStart(t.AddDate(0, -6, 0))), d(quarterStart(t.AddDate(0, -3, 0)).AddDate(0, 3, -1))
	case "last year":
		s := yearStart(t).AddDate(-1, 0, 0)
		return d(s), d(s.AddDate(1, 0, -1))
	case "yesterday":
		return d(t.AddDate(0, 0, -1)), d(t.AddDate(0, 0, -1))
	case "today":
		return d(t), d(t)
	case "tomorrow":
		return d(t.AddDate(0, 0, 1)), d(t.AddDate(0, 0, 1))
	case "this week":
		return d(weekStart(t)), d(weekStart(t).AddDate(0, 0, 6))
	case "this month":
		return d(monthStart(t)), d(monthStart(t).AddDate(0, 1, -1))
	case "this quarter":
		return d(quarterStart(t)), d(quarterStart(t).AddDate(0, 3, -1))
	case "this year":
		return d(yearStart(t)), d(yearStart(t).AddDate(1, 0, -1))
	case "next week":
		s := weekStart(t.AddDate(0, 0, 7))
		return d(s), d(s.AddDate(0, 0, 6))
	case "next month":
		s := monthStart(t).AddDate(0, 1, 0)
		return d(s), d(s.AddDate(0, 1, -1))
	case "next quarter":
		s := quarterStart(t.AddDate(0, 3, 0))
		return d(s), d(s.AddDate(0, 3, -1))
	case "next 6 months":
		return d(quarterStart(t.AddDate(0, 3, 0))), d(quarterStart(t.AddDate(0, 6, 0)).AddDate(0, 3, -1))
	case "next year":
		s := yearStart(t).AddDate(1, 0, 0)
		return d(s), d(s.AddDate(1, 0, -1))
	case "last 7 days", "last 14 days", "last 30 days":
		n := map[string]int{"last 7 days": 7, "last 14 days": 14, "last 30 days": 30}[v]
		return d(t.AddDate(0, 0, -n)), d(t)
	case "next 7 days", "next 14 days", "next 30 days":
		n := map[string]int{"next 7 days": 7, "next 14 days": 14, "next 30 days": 30}[v]
		return d(t), d(t.AddDate(0, 0, n))
	}
	return d(t), d(t)
}
