package frappetest

import (
	"regexp"
	"strings"
)

var orderGroupPattern = regexp.MustCompile(`.*[^a-z0-9\-_ ,` + "`" + `'"\.\(\)].*`)

// validateOrderGroup is DatabaseQuery.validate_order_by_and_group_by.
func (q *query) validateOrderGroup(param string) *apiError {
	if param == "" {
		return nil
	}
	lower := strings.ToLower(param)
	if strings.Contains(lower, "select") && strings.Contains(lower, "from") {
		return validationError("Cannot use sub-query in order by")
	}
	if orderGroupPattern.MatchString(lower) {
		return validationError("Illegal SQL Query")
	}
	for _, field := range strings.Split(param, ",") {
		field = strings.TrimSpace(field)
		fn := strings.ToLower(strings.TrimRight(strings.SplitN(field, "(", 2)[0], " "))
		if strings.Contains(field, ".") && strings.HasPrefix(field, "`tab") {
			tbl := strings.SplitN(field, ".", 2)[0]
			found := tbl == "`"+q.tableName(0)+"`"
			for i := range q.joins {
				if tbl == "`"+q.tableName(i+1)+"`" {
					found = true
				}
			}
			if !found {
				return validationError("Please select atleast 1 column from " + strings.Trim(tbl, "`")[3:] + " to sort/group")
			}
		}
		if fn == "sleep" {
			return validationError("Cannot use " + field + " in order/group by")
		}
	}
	return nil
}

// splitTopLevel splits on commas outside parentheses and quotes.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// bindOrderBy parses "expr [asc|desc], ..." after validation. Bare names
// resolve to select-list names first (MariaDB ORDER BY rule).
func (q *query) bindOrderBy(param string) *apiError {
	if strings.TrimSpace(param) == "" {
		return nil
	}
	for _, part := range splitTopLevel(param) {
		toks, ok := tokenize(part)
		if !ok || len(toks) == 0 {
			return sqlSyntaxError(strings.TrimSpace(part))
		}
		desc := false
		if last := toks[len(toks)-1]; last.kind == tkIdent && (strings.EqualFold(last.text, "asc") || strings.EqualFold(last.text, "desc")) {
			desc = strings.EqualFold(last.text, "desc")
			toks = toks[:len(toks)-1]
		}
		p := &exprParser{toks: toks}
		e, ok := p.parseExpr()
		if !ok || p.pos != len(toks) {
			return sqlSyntaxError(strings.TrimSpace(part))
		}
		if c, isCol := e.(colRef); isCol && c.qual == "" {
			if idx := q.itemIndex(c.field); idx >= 0 {
				q.orderBy = append(q.orderBy, orderTerm{expr: bAlias{idx}, desc: desc})
				continue
			}
		}
		b, err := q.bind(e, "order clause", false)
		if err != nil {
			return err
		}
		q.orderBy = append(q.orderBy, orderTerm{expr: b, desc: desc})
	}
	return nil
}

func (q *query) itemIndex(key string) int {
	for i, it := range q.items {
		if strings.EqualFold(it.key, key) {
			return i
		}
	}
	return -1
}

// bindGroupBy parses the group_by list. Bare names resolve to table
// columns first, then to select-list aliases (MariaDB GROUP BY rule).
func (q *query) bindGroupBy(param string) *apiError {
	if strings.TrimSpace(param) == "" {
		return nil
	}
	for _, part := range splitTopLevel(param) {
		toks, ok := tokenize(part)
		if !ok || len(toks) == 0 {
			return sqlSyntaxError(strings.TrimSpace(part))
		}
		p := &exprParser{toks: toks}
		e, ok := p.parseExpr()
		if !ok || p.pos != len(toks) {
			return sqlSyntaxError(strings.TrimSpace(part))
		}
		if c, isCol := e.(colRef); isCol && c.qual == "" {
			if _, exists := q.main.columnType(c.field); !exists {
				if idx := q.itemIndex(c.field); idx >= 0 {
					q.groupBy = append(q.groupBy, q.items[idx].expr)
					continue
				}
			}
		}
		b, err := q.bind(e, "group statement", false)
		if err != nil {
			return err
		}
		q.groupBy = append(q.groupBy, b)
	}
	return nil
}
