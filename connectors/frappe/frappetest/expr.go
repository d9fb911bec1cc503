package frappetest

import (
	"strings"
)

// A tiny SQL expression parser for the parts of fields / order_by /
// group_by that Frappe passes to MariaDB verbatim: column references
// (name, `tabX`.`f`, items.item_code, customer.customer_group), literals,
// function calls (count(distinct x), sum(x), round(x, 2), year(d)) and
// "expr [as] alias".

type tokKind int

const (
	tkIdent tokKind = iota
	tkQuoted
	tkString
	tkNumber
	tkPunct
)

type token struct {
	kind tokKind
	text string
}

// tokenize splits SQL text; ok is false on an unterminated quote.
func tokenize(s string) ([]token, bool) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '`':
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				return nil, false
			}
			out = append(out, token{tkQuoted, s[i+1 : i+1+j]})
			i += j + 2
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, false
			}
			out = append(out, token{tkString, s[i+1 : i+1+j]})
			i += j + 2
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			out = append(out, token{tkNumber, s[i:j]})
			i = j
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			out = append(out, token{tkIdent, s[i:j]})
			i = j
		default:
			out = append(out, token{tkPunct, string(c)})
			i++
		}
	}
	return out, true
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// sqlExpr is a parsed expression.
type sqlExpr interface{ isExpr() }

// colRef is an unresolved column reference: qualifier may be "".
type colRef struct {
	qual, field string
	quotedQual  bool
}

type litExpr struct{ v any } // string or Decimal
type starExpr struct{}
type funcCall struct {
	name     string // lower-case
	args     []sqlExpr
	distinct bool
}

// binExpr is arithmetic on two operands.
type binExpr struct {
	op   byte
	l, r sqlExpr
}

func (colRef) isExpr()    {}
func (litExpr) isExpr()   {}
func (starExpr) isExpr()  {}
func (*funcCall) isExpr() {}
func (binExpr) isExpr()   {}

var aggregateFuncs = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true}

type exprParser struct {
	toks []token
	pos  int
}

func (p *exprParser) peek() *token {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

func (p *exprParser) isPunct(s string) bool {
	t := p.peek()
	return t != nil && t.kind == tkPunct && t.text == s
}

func (p *exprParser) isKeyword(s string) bool {
	t := p.peek()
	return t != nil && t.kind == tkIdent && strings.EqualFold(t.text, s)
}

// parseExpr parses one expression with + - over * / precedence.
func (p *exprParser) parseExpr() (sqlExpr, bool) {
	e, ok := p.parseTerm()
	for ok && (p.isPunct("+") || p.isPunct("-")) {
		op := p.peek().text[0]
		p.pos++
		var r sqlExpr
		r, ok = p.parseTerm()
		e = binExpr{op: op, l: e, r: r}
	}
	return e, ok
}

func (p *exprParser) parseTerm() (sqlExpr, bool) {
	e, ok := p.parsePrimary()
	for ok && (p.isPunct("*") || p.isPunct("/")) {
		op := p.peek().text[0]
		p.pos++
		var r sqlExpr
		r, ok = p.parsePrimary()
		e = binExpr{op: op, l: e, r: r}
	}
	return e, ok
}

func (p *exprParser) parsePrimary() (sqlExpr, bool) {
	t := p.peek()
	if t == nil {
		return nil, false
	}
	switch t.kind {
	case tkString:
		p.pos++
		return litExpr{t.text}, true
	case tkNumber:
		p.pos++
		d, ok := parseDecimal(t.text)
		return litExpr{d}, ok
	case tkPunct:
		if t.text == "*" {
			p.pos++
			return starExpr{}, true
		}
		if t.text == "(" {
			p.pos++
			e, ok := p.parseExpr()
			if !ok || !p.isPunct(")") {
				return nil, false
			}
			p.pos++
			return e, true
		}
		if t.text == "-" {
			p.pos++
			e, ok := p.parsePrimary()
			if l, isLit := e.(litExpr); ok && isLit {
				if d, isDec := l.v.(Decimal); isDec {
					return litExpr{-d}, true
				}
			}
			return binExpr{op: '-', l: litExpr{Decimal(0)}, r: e}, ok
		}
		return nil, false
	}
	// identifier or quoted identifier
	p.pos++
	if t.kind == tkIdent && p.isPunct("(") {
		p.pos++
		fc := &funcCall{name: strings.ToLower(t.text)}
		if p.isKeyword("distinct") {
			p.pos++
			fc.distinct = true
		}
		for !p.isPunct(")") {
			a, ok := p.parseExpr()
			if !ok {
				return nil, false
			}
			fc.args = append(fc.args, a)
			if p.isPunct(",") {
				p.pos++
				continue
			}
			if !p.isPunct(")") {
				return nil, false
			}
		}
		p.pos++
		return fc, true
	}
	if p.isPunct(".") {
		p.pos++
		n := p.peek()
		if n == nil || (n.kind != tkIdent && n.kind != tkQuoted) {
			if n != nil && n.kind == tkPunct && n.text == "*" {
				p.pos++
				return colRef{qual: t.text, field: "*", quotedQual: t.kind == tkQuoted}, true
			}
			return nil, false
		}
		p.pos++
		return colRef{qual: t.text, field: n.text, quotedQual: t.kind == tkQuoted}, true
	}
	return colRef{field: t.text}, true
}

// selectItem is "expr [[as] alias]" parsed from one fields entry.
type selectItem struct {
	raw   string
	expr  sqlExpr
	alias string
}

// parseSelectItem parses a fields entry; ok is false on syntax errors.
func parseSelectItem(raw string) (selectItem, bool) {
	toks, ok := tokenize(raw)
	if !ok || len(toks) == 0 {
		return selectItem{}, false
	}
	p := &exprParser{toks: toks}
	e, ok := p.parseExpr()
	if !ok {
		return selectItem{}, false
	}
	it := selectItem{raw: strings.TrimSpace(raw), expr: e}
	if p.isKeyword("as") {
		p.pos++
	}
	if t := p.peek(); t != nil {
		if t.kind != tkIdent && t.kind != tkQuoted && t.kind != tkString {
			return selectItem{}, false
		}
		it.alias = t.text
		p.pos++
	}
	return it, p.pos == len(toks)
}

// firstColumn returns the first column reference in e (like sql_metadata's
// Parser.columns[0]); "*" for count(*); "" if none.
func firstColumn(e sqlExpr) (colRef, bool) {
	switch x := e.(type) {
	case colRef:
		return x, true
	case starExpr:
		return colRef{field: "*"}, true
	case *funcCall:
		for _, a := range x.args {
			if c, ok := firstColumn(a); ok {
				return c, true
			}
		}
	case binExpr:
		if c, ok := firstColumn(x.l); ok {
			return c, true
		}
		return firstColumn(x.r)
	}
	return colRef{}, false
}

// hasAggregate reports whether e contains an aggregate call.
func hasAggregate(e sqlExpr) bool {
	if b, ok := e.(binExpr); ok {
		return hasAggregate(b.l) || hasAggregate(b.r)
	}
	if fc, ok := e.(*funcCall); ok {
		if aggregateFuncs[fc.name] {
			return true
		}
		for _, a := range fc.args {
			if hasAggregate(a) {
				return true
			}
		}
	}
	return false
}

// outputKey is the result column name MariaDB reports for an item.
func (it selectItem) outputKey() string {
	if it.alias != "" {
		return it.alias
	}
	if c, ok := it.expr.(colRef); ok {
		return c.field
	}
	return it.raw
}
