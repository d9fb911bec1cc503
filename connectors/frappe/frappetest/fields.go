package frappetest

import (
	"regexp"
	"strings"
)

// fields handling: reportview.validate_fields (each entry's first column
// must be a standard or real field), db_query.sanitize_fields (blocked
// functions and sub-queries) and the "*" wildcard.

// fieldStrings turns the decoded fields argument into the list Python's
// list(data.fields) would iterate (a string iterates its characters).
func fieldStrings(v any) ([]string, *apiError) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, pythonError("TypeError", "expected string or bytes-like object, got '"+pyTypeName(e)+"'")
			}
			out[i] = s
		}
		return out, nil
	case string:
		if x == "*" {
			return []string{"*"}, nil
		}
		var out []string
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	case *object:
		return append([]string(nil), x.keys...), nil
	}
	return nil, pythonError("TypeError", "'"+pyTypeName(v)+"' object is not iterable")
}

var nonWord = regexp.MustCompile(`\W`)

// extractFieldname is reportview.extract_fieldnames(field)[0].
func extractFieldname(field string) (colRef, bool, *apiError) {
	if !nonWord.MatchString(field) {
		return colRef{field: field}, true, nil
	}
	it, ok := parseSelectItem(field)
	if ok {
		if c, found := firstColumn(it.expr); found {
			return c, true, nil
		}
	}
	lf := strings.ToLower(field)
	if (strings.Contains(lf, "count(") || strings.Contains(lf, "sum(") || strings.Contains(lf, "avg(")) && strings.Contains(lf, "*") {
		return colRef{field: "*"}, true, nil
	}
	if !ok {
		// sql_metadata finds some column in most malformed text; use the
		// first word so validation still names it.
		if w := regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`).FindString(field); w != "" {
			return colRef{field: w}, true, nil
		}
	}
	return colRef{}, false, pythonError("IndexError", "list index out of range")
}

// refName renders a column reference the way the error message shows it.
func refName(c colRef) string {
	if c.qual == "" {
		return c.field
	}
	return c.qual + "." + c.field
}

// validateFields is reportview.validate_fields for a non-wildcard list.
func validateFields(reg *registry, doctype string, fields []string) *apiError {
	for _, f := range fields {
		ref, ok, err := extractFieldname(f)
		if err != nil {
			return err
		}
		if !ok || ref.field == "" {
			return fieldNotPermitted("")
		}
		if ref.qual == "" && isStandardField(ref.field) {
			continue
		}
		dt, fieldname := doctype, ref.field
		if ref.qual != "" {
			main := reg.get(doctype)
			if main == nil {
				return doctypeNotFound(doctype)
			}
			if pf := main.Field(ref.qual); pf != nil && (pf.IsTable() || pf.Type == "Link") {
				dt = pf.Options
			} else {
				dt = strings.TrimPrefix(ref.qual, "tab")
			}
		}
		m := reg.get(dt)
		if m == nil {
			return doctypeNotFound(dt)
		}
		if ref.qual != "" && isStandardField(fieldname) {
			continue
		}
		if m.Field(fieldname) == nil {
			return fieldNotPermitted(refName(ref))
		}
	}
	return nil
}

var (
	subQueryPattern   = regexp.MustCompile(`^.*[,();@].*`)
	fieldQuotePattern = regexp.MustCompile(`^[0-9a-zA-Z]+\s*'`)
	fieldCommaPattern = regexp.MustCompile(`^[0-9a-zA-Z]+\s*,`)
	isQueryPattern1   = regexp.MustCompile(`^(select|delete|update|drop|create)\s`)
	isQueryPattern2   = regexp.MustCompile(`^\s*[0-9a-zA-z]*\s*( from | group by | order by | where | join )`)
)

var blacklistedKeywords = map[string]bool{"select": true, "create": true, "insert": true, "delete": true, "drop": true, "update": true, "case": true, "show": true}

var blacklistedFunctions = map[string]bool{
	"concat": true, "concat_ws": true, "if": true, "ifnull": true, "nullif": true, "coalesce": true,
	"connection_id": true, "current_user": true, "database": true, "last_insert_id": true,
	"session_user": true, "system_user": true, "user": true, "version": true, "global": true,
}

// sanitizeFields is DatabaseQuery.sanitize_fields.
func sanitizeFields(fields []string) *apiError {
	restricted := func() *apiError { return dataError("Use of sub-query or function is restricted") }
	for _, field := range fields {
		lower := strings.ToLower(strings.TrimSpace(field))
		if subQueryPattern.MatchString(field) {
			if strings.HasPrefix(lower, "(") {
				tok := strings.SplitN(strings.TrimLeft(lower[1:], " "), " ", 2)[0]
				if blacklistedKeywords[tok] {
					return restricted()
				}
			}
			fn := strings.TrimRight(strings.SplitN(lower, "(", 2)[0], " \t")
			if blacklistedFunctions[fn] {
				return dataError("Use of function " + fn + " in field is restricted")
			}
			if strings.Contains(lower, "@") {
				return restricted()
			}
		}
		if fieldQuotePattern.MatchString(field) || fieldCommaPattern.MatchString(field) {
			return restricted()
		}
		if isQueryPattern1.MatchString(lower) || isQueryPattern2.MatchString(lower) {
			return restricted()
		}
	}
	return nil
}

// wildcardFields is get_permitted_fields: standard columns, data fields,
// then the optional meta columns (child tables add parent columns).
func wildcardFields(m *DocMeta) []string {
	out := append([]string(nil), standardFields...)
	if m.IsTable {
		out = append(out, childTableFields...)
	}
	for _, f := range m.DataFields() {
		out = append(out, f.Name)
	}
	if !m.IsTable {
		out = append(out, optionalFields...)
	}
	return out
}

// bindSelect resolves the select list into query items.
func (q *query) bindSelect(fields []string) *apiError {
	for _, f := range fields {
		lower := strings.ToLower(f)
		if !strings.Contains(f, "(") && strings.Contains(lower, " as ") && len(strings.Fields(f)) != 3 {
			n := len(strings.Fields(f))
			if n > 3 {
				return pythonError("ValueError", "too many values to unpack (expected 3)")
			}
			return pythonError("ValueError", "not enough values to unpack (expected 3, got "+itoaPad(n, 1)+")")
		}
		it, ok := parseSelectItem(f)
		if !ok {
			return sqlSyntaxError(f)
		}
		b, err := q.bind(it.expr, "field list", true)
		if err != nil {
			return err
		}
		q.items = append(q.items, boundItem{key: it.outputKey(), expr: b})
	}
	return nil
}
