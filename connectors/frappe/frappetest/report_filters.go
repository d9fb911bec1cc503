package frappetest

import (
	"encoding/json"
	"strings"
	"time"
)

// reportFilters is the frappe._dict of report filters decoded from JSON:
// values are string, json.Number, bool, []any, *object or nil, and a
// missing key reads as None.
type reportFilters struct {
	o     *object
	today time.Time
}

func (f *reportFilters) get(k string) any {
	v, _ := f.o.get(k)
	return v
}

func (f *reportFilters) has(k string) bool {
	_, ok := f.o.get(k)
	return ok
}

// str is cstr(filters.get(k)).
func (f *reportFilters) str(k string) string { return cstr(f.get(k)) }

// truthy is bool(filters.get(k)) in Python.
func (f *reportFilters) truthy(k string) bool { return valueTruthy(f.get(k)) }

func (f *reportFilters) set(k string, v any) { f.o.set(k, v) }

// empty reports a falsy filters dict ("if not filters").
func (f *reportFilters) empty() bool { return len(f.o.keys) == 0 }

// valueTruthy is Python truthiness for decoded and computed values.
func valueTruthy(v any) bool {
	switch x := v.(type) {
	case int64:
		return x != 0
	case float64:
		return x != 0
	case Decimal:
		return x != 0
	}
	return pyTruthy(v)
}

// parseJSONFilter is frappe.parse_json on a filter value: strings must be
// JSON (else JSONDecodeError, HTTP 500); lists and other values pass.
func (f *reportFilters) parseJSON(k string) (any, *apiError) {
	v := f.get(k)
	if s, ok := v.(string); ok {
		decoded, err := jsonLoads(s)
		if err != nil {
			return nil, err
		}
		f.set(k, decoded)
		return decoded, nil
	}
	return v, nil
}

// stringList turns a list filter into its string items; a bare string is
// one item (frappe's MultiSelectList values arrive as JSON lists).
func stringList(v any) []string {
	switch x := v.(type) {
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, cstr(e))
		}
		return out
	case string:
		if x == "" {
			return nil
		}
		return []string{x}
	case nil:
		return nil
	}
	return []string{cstr(v)}
}

// commaList splits a "a, b" filter like get_cost_centers_with_children and
// get_party_group_with_children do for non-list values.
func commaList(v any) []string {
	if s, ok := v.(string); ok {
		var out []string
		for _, p := range strings.Split(strings.TrimSpace(s), ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	return stringList(v)
}

// date is getdate(filters.get(k)): today when empty, else a parsed date.
func (f *reportFilters) date(k string) (string, *apiError) {
	return parseReportDate(f.get(k), f.today)
}

// parseReportDate is frappe.utils.getdate for a filter value.
func parseReportDate(v any, today time.Time) (string, *apiError) {
	s := strings.TrimSpace(cstr(v))
	if n, ok := v.(json.Number); ok {
		s = string(n)
	}
	if !valueTruthy(v) {
		return fmtDate(today), nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02 15:04:05", "2006-01-02 15:04:05.999999", "2006-1-2"} {
		if t, err := time.Parse(layout, s); err == nil {
			return fmtDate(t), nil
		}
	}
	return "", frappeThrow("ValidationError", "<strong>"+s+"</strong> is not a valid date string.", "Invalid Date")
}

// dateDiff is the number of days from a to b ("YYYY-MM-DD").
func dateDiff(a, b string) int64 {
	return int64(mustDate(b).Sub(mustDate(a)).Hours() / 24)
}

// col builds a report column from key/value pairs, keeping their order.
func col(kv ...any) *object {
	o := newObject(len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}
