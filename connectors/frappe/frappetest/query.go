package frappetest

import (
	"math/big"
	"sort"
	"strings"
	"time"
)

// query is one DatabaseQuery execution: the main table LEFT JOINed with
// child tables (and linked masters), filtered, grouped, ordered and
// limited, evaluated in memory with MariaDB semantics.
type query struct {
	ds    *Dataset
	user  *User
	today time.Time
	main  *DocMeta
	// parentType restricts a child-doctype main table to rows of one
	// parent doctype (frappe.client.get_list with parent=...).
	parentType string

	joins []*joinSpec // joined tables; row index = position + 1

	items   []boundItem
	where   []func(jrow) bool
	orWhere []func(jrow) bool
	groupBy []bound
	orderBy []orderTerm

	limitStart, limitPage int64
	asList                bool
	applyUserPerms        bool
	// accentSensitiveLike is Options.AccentSensitiveLike.
	accentSensitiveLike bool
}

type joinKind int

const (
	joinChild joinKind = iota
	joinLink
)

type joinSpec struct {
	kind      joinKind
	doctype   string
	meta      *DocMeta
	linkField string
}

// jrow is one joined row: index 0 is the main document.
type jrow []*Doc

type boundItem struct {
	key  string
	expr bound
}

type orderTerm struct {
	expr bound
	desc bool
}

// bound is a resolved expression.
type bound interface{}

type bCol struct {
	ti    int
	field string
	typ   string
}
type bLit struct{ v any }
type bFunc struct {
	name     string
	args     []bound
	distinct bool
	star     bool
}
type bBin struct {
	op   byte
	l, r bound
}
type bAlias struct{ idx int }

// tableName returns the SQL table name of row index ti.
func (q *query) tableName(ti int) string {
	if ti == 0 {
		return "tab" + q.main.Name
	}
	return "tab" + q.joins[ti-1].doctype
}

func (q *query) metaOf(ti int) *DocMeta {
	if ti == 0 {
		return q.main
	}
	return q.joins[ti-1].meta
}

// ensureJoin returns the row index of doctype, adding a LEFT JOIN (on
// parent = name and parenttype = main doctype) when needed.
func (q *query) ensureJoin(doctype string) (int, *apiError) {
	if doctype == q.main.Name {
		return 0, nil
	}
	for i, j := range q.joins {
		if j.kind == joinChild && j.doctype == doctype {
			return i + 1, nil
		}
	}
	m := q.ds.meta.get(doctype)
	if m == nil {
		return 0, doctypeNotFound(doctype)
	}
	if !m.IsTable {
		return 0, sqlError(1054, "Unknown column 'tab"+doctype+".parenttype' in 'on clause'")
	}
	q.joins = append(q.joins, &joinSpec{kind: joinChild, doctype: doctype, meta: m})
	return len(q.joins), nil
}

// ensureLinkJoin joins the document referenced by a Link field of the
// main table (v15 "link_field.fieldname" syntax).
func (q *query) ensureLinkJoin(f *Field) (int, *apiError) {
	for i, j := range q.joins {
		if j.kind == joinLink && j.linkField == f.Name {
			return i + 1, nil
		}
	}
	m := q.ds.meta.get(f.Options)
	if m == nil {
		return 0, doctypeNotFound(f.Options)
	}
	if !canRead(q.user, f.Options) {
		return 0, listPermissionError(userName(q.user), f.Options)
	}
	q.joins = append(q.joins, &joinSpec{kind: joinLink, doctype: f.Options, meta: m, linkField: f.Name})
	return len(q.joins), nil
}

// resolveRef binds a column reference. clause names the SQL clause for
// MariaDB error messages ("field list", "order clause", "group statement",
// "where clause"); qualify means Frappe prefixes a bare name with the main
// table (fields), so it cannot be ambiguous.
func (q *query) resolveRef(c colRef, clause string, qualify bool) (bound, *apiError) {
	if c.qual == "" {
		typ, ok := q.main.columnType(c.field)
		if !qualify && len(q.joins) > 0 {
			n := 0
			if ok {
				n++
			}
			for _, j := range q.joins {
				if _, ok2 := j.meta.columnType(c.field); ok2 {
					n++
				}
			}
			if n > 1 {
				return nil, sqlError(1052, "Column '"+c.field+"' in "+clause+" is ambiguous")
			}
			if !ok {
				for i, j := range q.joins {
					if t, ok2 := j.meta.columnType(c.field); ok2 {
						return bCol{ti: i + 1, field: c.field, typ: t}, nil
					}
				}
			}
		}
		if !ok {
			return nil, sqlError(1054, "Unknown column '"+c.field+"' in '"+clause+"'")
		}
		return bCol{ti: 0, field: c.field, typ: typ}, nil
	}
	qual := c.qual
	var ti int
	var err *apiError
	switch {
	case strings.HasPrefix(qual, "tab"):
		dt := strings.TrimPrefix(qual, "tab")
		if q.ds.meta.get(dt) == nil {
			return nil, sqlError(1054, "Unknown column '"+qual+"."+c.field+"' in '"+clause+"'")
		}
		ti, err = q.ensureJoin(dt)
	default:
		f := q.main.Field(qual)
		switch {
		case f != nil && f.IsTable():
			ti, err = q.ensureJoin(f.Options)
		case f != nil && f.Type == "Link":
			ti, err = q.ensureLinkJoin(f)
		default:
			return nil, sqlError(1054, "Unknown column '"+qual+"."+c.field+"' in '"+clause+"'")
		}
	}
	if err != nil {
		return nil, err
	}
	typ, ok := q.metaOf(ti).columnType(c.field)
	if !ok {
		return nil, sqlError(1054, "Unknown column '"+q.tableName(ti)+"."+c.field+"' in '"+clause+"'")
	}
	return bCol{ti: ti, field: c.field, typ: typ}, nil
}

// knownFuncs are the scalar SQL functions the simulator evaluates.
var knownFuncs = map[string]bool{
	"year": true, "month": true, "day": true, "dayofmonth": true, "quarter": true, "date": true,
	"round": true, "abs": true, "lower": true, "upper": true, "length": true, "trim": true,
}

// bind resolves a parsed expression.
func (q *query) bind(e sqlExpr, clause string, qualify bool) (bound, *apiError) {
	switch x := e.(type) {
	case colRef:
		return q.resolveRef(x, clause, qualify)
	case litExpr:
		return bLit{x.v}, nil
	case starExpr:
		return bLit{int64(1)}, nil
	case binExpr:
		l, err := q.bind(x.l, clause, qualify)
		if err != nil {
			return nil, err
		}
		r, err := q.bind(x.r, clause, qualify)
		if err != nil {
			return nil, err
		}
		return bBin{op: x.op, l: l, r: r}, nil
	case *funcCall:
		if !aggregateFuncs[x.name] && !knownFuncs[x.name] {
			return nil, sqlError(1305, "FUNCTION _5e5eaa6fd3a2d1b0."+x.name+" does not exist")
		}
		fb := bFunc{name: x.name, distinct: x.distinct}
		for _, a := range x.args {
			if _, isStar := a.(starExpr); isStar {
				fb.star = true
				continue
			}
			b, err := q.bind(a, clause, qualify)
			if err != nil {
				return nil, err
			}
			fb.args = append(fb.args, b)
		}
		return fb, nil
	}
	return nil, sqlSyntaxError("")
}

// rows builds the joined, filtered row set in natural order.
func (q *query) rows() []jrow {
	var src []*Doc
	if q.main.IsTable {
		for _, d := range q.ds.List(q.main.Name) {
			if q.parentType == "" || d.Str("parenttype") == q.parentType {
				src = append(src, d)
			}
		}
	} else {
		src = q.ds.List(q.main.Name)
	}
	out := make([]jrow, 0, len(src))
	for _, d := range src {
		if q.applyUserPerms && !rowAllowed(q.user, q.main, d) {
			continue
		}
		out = append(out, jrow{d})
	}
	for _, j := range q.joins {
		next := make([]jrow, 0, len(out))
		for _, r := range out {
			var matches []*Doc
			if j.kind == joinChild {
				matches = childRowsOf(r[0], q.main, j.doctype)
			} else if v := r[0].Str(j.linkField); v != "" {
				if d := q.ds.Get(j.doctype, v); d != nil {
					matches = []*Doc{d}
				}
			}
			if len(matches) == 0 {
				next = append(next, append(append(jrow{}, r...), nil))
				continue
			}
			for _, m := range matches {
				next = append(next, append(append(jrow{}, r...), m))
			}
		}
		out = next
	}
	filtered := out[:0]
	for _, r := range out {
		if q.match(r) {
			filtered = append(filtered, r)
		}
	}
	return filtered
}

func (q *query) match(r jrow) bool {
	for _, p := range q.where {
		if !p(r) {
			return false
		}
	}
	if len(q.orWhere) == 0 {
		return true
	}
	for _, p := range q.orWhere {
		if p(r) {
			return true
		}
	}
	return false
}

// colValue reads a column of a joined row; NULL for a missing join.
func colValue(c bCol, r jrow) any {
	d := r[c.ti]
	if d == nil {
		return nil
	}
	return d.Get(c.field)
}

// evalRow evaluates a non-aggregate expression on one row.
func (q *query) evalRow(b bound, r jrow) any {
	switch x := b.(type) {
	case bCol:
		return colValue(x, r)
	case bLit:
		return x.v
	case bBin:
		return arith(x.op, q.evalRow(x.l, r), q.evalRow(x.r, r))
	case bFunc:
		args := make([]any, len(x.args))
		for i, a := range x.args {
			args[i] = q.evalRow(a, r)
		}
		return scalarFunc(x.name, args)
	}
	return nil
}

// evalGroup evaluates an expression over a group of rows: aggregates over
// all rows, plain columns from the first row (MariaDB without
// ONLY_FULL_GROUP_BY).
func (q *query) evalGroup(b bound, rows []jrow) any {
	switch x := b.(type) {
	case bFunc:
		if aggregateFuncs[x.name] {
			return q.aggregate(x, rows)
		}
		args := make([]any, len(x.args))
		for i, a := range x.args {
			args[i] = q.evalGroup(a, rows)
		}
		return scalarFunc(x.name, args)
	case bBin:
		return arith(x.op, q.evalGroup(x.l, rows), q.evalGroup(x.r, rows))
	case bLit:
		return x.v
	}
	if len(rows) == 0 {
		return nil
	}
	return q.evalRow(b, rows[0])
}

// outRow is one result row before projection.
type outRow struct {
	rows []jrow
	vals []any
}

// execute runs the query and returns the projected rows.
func (q *query) execute() []any {
	all := q.rows()
	aggregate := len(q.groupBy) > 0
	for _, it := range q.items {
		if boundHasAggregate(it.expr) {
			aggregate = true
		}
	}
	var results []*outRow
	if aggregate {
		if len(q.groupBy) == 0 {
			results = append(results, &outRow{rows: all})
		} else {
			idx := map[string]*outRow{}
			var keys [][]any
			for _, r := range all {
				vals := make([]any, len(q.groupBy))
				var kb strings.Builder
				for i, g := range q.groupBy {
					vals[i] = q.evalGroup(g, []jrow{r})
					kb.WriteString(groupKey(vals[i]))
					kb.WriteByte(0)
				}
				k := kb.String()
				if o := idx[k]; o != nil {
					o.rows = append(o.rows, r)
					continue
				}
				o := &outRow{rows: []jrow{r}}
				idx[k] = o
				results = append(results, o)
				keys = append(keys, vals)
			}
			// MariaDB sorts GROUP BY results by the grouping columns.
			order := make([]int, len(results))
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool {
				ka, kb := keys[order[a]], keys[order[b]]
				for i := range ka {
					if c := orderCompare(ka[i], kb[i]); c != 0 {
						return c < 0
					}
				}
				return false
			})
			sorted := make([]*outRow, len(results))
			for i, o := range order {
				sorted[i] = results[o]
			}
			results = sorted
		}
		for _, o := range results {
			o.vals = make([]any, len(q.items))
			for i, it := range q.items {
				o.vals[i] = q.evalGroup(it.expr, o.rows)
			}
		}
	} else {
		results = make([]*outRow, len(all))
		for i, r := range all {
			o := &outRow{rows: []jrow{r}, vals: make([]any, len(q.items))}
			for j, it := range q.items {
				o.vals[j] = q.evalRow(it.expr, r)
			}
			results[i] = o
		}
	}
	if len(q.orderBy) > 0 {
		keys := make([][]any, len(results))
		for i, o := range results {
			keys[i] = make([]any, len(q.orderBy))
			for j, t := range q.orderBy {
				if a, ok := t.expr.(bAlias); ok {
					keys[i][j] = o.vals[a.idx]
				} else if aggregate {
					keys[i][j] = q.evalGroup(t.expr, o.rows)
				} else {
					keys[i][j] = q.evalRow(t.expr, o.rows[0])
				}
			}
		}
		order := make([]int, len(results))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool {
			for j, t := range q.orderBy {
				c := orderCompare(keys[order[a]][j], keys[order[b]][j])
				if c != 0 {
					if t.desc {
						return c > 0
					}
					return c < 0
				}
			}
			return false
		})
		sorted := make([]*outRow, len(results))
		for i, o := range order {
			sorted[i] = results[o]
		}
		results = sorted
	}
	if q.limitPage > 0 {
		start := q.limitStart
		if start > int64(len(results)) {
			start = int64(len(results))
		}
		end := start + q.limitPage
		if end > int64(len(results)) {
			end = int64(len(results))
		}
		results = results[start:end]
	}
	out := make([]any, len(results))
	for i, o := range results {
		if q.asList {
			vals := make([]any, len(o.vals))
			for j, v := range o.vals {
				vals[j] = jsonValue(v)
			}
			out[i] = vals
			continue
		}
		obj := newObject(len(q.items))
		for j, it := range q.items {
			obj.set(it.key, jsonValue(o.vals[j]))
		}
		out[i] = obj
	}
	return out
}

func boundHasAggregate(b bound) bool {
	switch x := b.(type) {
	case bFunc:
		if aggregateFuncs[x.name] {
			return true
		}
		for _, a := range x.args {
			if boundHasAggregate(a) {
				return true
			}
		}
	case bBin:
		return boundHasAggregate(x.l) || boundHasAggregate(x.r)
	}
	return false
}

// aggregate computes count/sum/avg/min/max over rows.
func (q *query) aggregate(f bFunc, rows []jrow) any {
	var vals []any
	seen := map[string]bool{}
	for _, r := range rows {
		var v any = int64(1)
		if !f.star && len(f.args) > 0 {
			v = q.evalRow(f.args[0], r)
		}
		if v == nil {
			continue
		}
		if f.distinct {
			k := groupKey(v)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		vals = append(vals, v)
	}
	switch f.name {
	case "count":
		return int64(len(vals))
	case "sum", "avg":
		if len(vals) == 0 {
			return nil
		}
		exact := true
		scale := 4
		sum := new(big.Rat)
		for _, v := range vals {
			switch v.(type) {
			case Decimal:
				scale = 13
			case int64:
			default:
				exact = false
			}
			sum.Add(sum, toRat(v))
		}
		if f.name == "sum" {
			if !exact {
				fl, _ := sum.Float64()
				return fl
			}
			return decimalFromRat(sum)
		}
		avg := new(big.Rat).Quo(sum, new(big.Rat).SetInt64(int64(len(vals))))
		if !exact {
			fl, _ := avg.Float64()
			return fl
		}
		rounded := new(big.Rat).SetFrac(roundRat(avg, scale), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
		fl, _ := rounded.Float64()
		return fl
	case "min", "max":
		var best any
		for _, v := range vals {
			if best == nil {
				best = v
				continue
			}
			c := sqlCompare(v, best)
			if f.name == "min" && c < 0 || f.name == "max" && c > 0 {
				best = v
			}
		}
		return best
	}
	return nil
}

// arith applies + - * / with MariaDB NULL propagation.
func arith(op byte, a, b any) any {
	if a == nil || b == nil {
		return nil
	}
	x, y := toRat(a), toRat(b)
	r := new(big.Rat)
	switch op {
	case '+':
		r.Add(x, y)
	case '-':
		r.Sub(x, y)
	case '*':
		r.Mul(x, y)
	case '/':
		if y.Sign() == 0 {
			return nil
		}
		r.Quo(x, y)
	}
	return decimalFromRat(r)
}

// scalarFunc evaluates the supported scalar functions.
func scalarFunc(name string, args []any) any {
	if len(args) == 0 || args[0] == nil {
		return nil
	}
	a := args[0]
	switch name {
	case "year", "month", "day", "dayofmonth", "quarter", "date":
		s := toText(a)
		t, err := time.Parse("2006-01-02", firstN(s, 10))
		if err != nil {
			return nil
		}
		switch name {
		case "year":
			return int64(t.Year())
		case "month":
			return int64(t.Month())
		case "quarter":
			return int64((int(t.Month())-1)/3 + 1)
		case "date":
			return t.Format("2006-01-02")
		}
		return int64(t.Day())
	case "round":
		n := int64(0)
		if len(args) > 1 {
			n = toRat(args[1]).Num().Int64()
		}
		if n > 9 {
			n = 9
		}
		r := roundRat(toRat(a), int(n))
		return decimalFromRat(new(big.Rat).SetFrac(r, new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil)))
	case "abs":
		r := toRat(a)
		return decimalFromRat(r.Abs(r))
	case "lower":
		return strings.ToLower(toText(a))
	case "upper":
		return strings.ToUpper(toText(a))
	case "trim":
		return strings.TrimSpace(toText(a))
	case "length":
		return int64(len(toText(a)))
	}
	return nil
}

func firstN(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
