package acumaticatest

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// odataDialect distinguishes the contract API's OData v3 $filter from the
// GI endpoint's OData v4 $filter.
type odataDialect int

const (
	odataV3 odataDialect = iota // substringof, datetimeoffset'…', guid'…', date'…'
	odataV4                     // contains, bare 2025-01-31 / 2025-01-31T10:00:00Z / GUID literals
)

// filterError is a $filter the server rejects; message is the text the
// OData library reports.
type filterError struct{ message string }

func (e *filterError) Error() string { return e.message }

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokString
	tokNumber
	tokTyped // typed literal: prefix + quoted body, or a v4 bare date/guid
	tokLParen
	tokRParen
	tokComma
	tokSlash
	tokEquals
)

type token struct {
	kind   tokKind
	text   string // identifier, string body, number text, literal body
	prefix string // typed-literal prefix ("datetimeoffset", "guid", "date", "datetime"; v4: "date", "datetimeoffset", "guid")
	pos    int
	bare   bool // v4 literal written without a prefix
}

var (
	reGUID     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	reDateTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,7})?)?(Z|[+-]\d{2}:\d{2})`)
	reDate     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}`)
	reNumber   = regexp.MustCompile(`^-?\d+(\.\d+)?([eE][+-]?\d+)?[mMdDfFlL]?`)
)

func lexFilter(src string, d odataDialect) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '(':
			toks = append(toks, token{kind: tokLParen, pos: i})
			i++
		case c == ')':
			toks = append(toks, token{kind: tokRParen, pos: i})
			i++
		case c == ',':
			toks = append(toks, token{kind: tokComma, pos: i})
			i++
		case c == '/':
			toks = append(toks, token{kind: tokSlash, pos: i})
			i++
		case c == '=':
			toks = append(toks, token{kind: tokEquals, pos: i})
			i++
		case c == '\'':
			body, n, ok := readQuoted(src[i:])
			if !ok {
				return nil, &filterError{fmt.Sprintf("There is an unterminated string literal at position %d in '%s'.", i, src)}
			}
			toks = append(toks, token{kind: tokString, text: body, pos: i})
			i += n
		default:
			if d == odataV4 {
				if m := reGUID.FindString(src[i:]); m != "" {
					toks = append(toks, token{kind: tokTyped, prefix: "guid", text: m, pos: i, bare: true})
					i += len(m)
					continue
				}
				if m := reDateTime.FindString(src[i:]); m != "" {
					toks = append(toks, token{kind: tokTyped, prefix: "datetimeoffset", text: m, pos: i, bare: true})
					i += len(m)
					continue
				}
				if m := reDate.FindString(src[i:]); m != "" {
					toks = append(toks, token{kind: tokTyped, prefix: "date", text: m, pos: i, bare: true})
					i += len(m)
					continue
				}
			}
			if c >= '0' && c <= '9' || c == '-' {
				m := reNumber.FindString(src[i:])
				if m == "" {
					return nil, syntaxError(src, i)
				}
				toks = append(toks, token{kind: tokNumber, text: m, pos: i})
				i += len(m)
				continue
			}
			if isIdentStart(c) {
				j := i
				for j < len(src) && isIdentPart(src[j]) {
					j++
				}
				word := src[i:j]
				if j < len(src) && src[j] == '\'' {
					body, n, ok := readQuoted(src[j:])
					if !ok {
						return nil, &filterError{fmt.Sprintf("There is an unterminated literal at position %d in '%s'.", i, src)}
					}
					toks = append(toks, token{kind: tokTyped, prefix: strings.ToLower(word), text: body, pos: i})
					i = j + n
					continue
				}
				toks = append(toks, token{kind: tokIdent, text: word, pos: i})
				i = j
				continue
			}
			return nil, syntaxError(src, i)
		}
	}
	return append(toks, token{kind: tokEOF, pos: len(src)}), nil
}

func readQuoted(s string) (body string, n int, ok bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), i + 1, true
		}
		b.WriteByte(s[i])
	}
	return "", 0, false
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '.' }

func syntaxError(src string, pos int) error {
	return &filterError{fmt.Sprintf("Syntax error at position %d in '%s'.", pos, src)}
}

// AST

type fexpr interface{}

type fBinary struct {
	op   string // and, or, eq, ne, gt, ge, lt, le
	l, r fexpr
}

type fNot struct{ x fexpr }

type fMember struct {
	path []string
	pos  int
}

type fCustom struct{ text string } // cf.Type(f='View.Field')

type fCall struct {
	name string
	args []fexpr
	pos  int
}

type fLiteral struct {
	typ string // Edm type or "null"
	v   any    // string, Decimal, bool, time.Time, nil
}

type filterParser struct {
	src  string
	toks []token
	i    int
	d    odataDialect
}

func parseFilter(src string, d odataDialect) (fexpr, error) {
	toks, err := lexFilter(src, d)
	if err != nil {
		return nil, err
	}
	p := &filterParser{src: src, toks: toks, d: d}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokEOF {
		return nil, syntaxError(src, p.peek().pos)
	}
	return e, nil
}

func (p *filterParser) peek() token { return p.toks[p.i] }

func (p *filterParser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *filterParser) keyword(w string) bool {
	t := p.peek()
	if t.kind == tokIdent && t.text == w {
		p.i++
		return true
	}
	return false
}

func (p *filterParser) or() (fexpr, error) {
	l, err := p.and()
	for err == nil && p.keyword("or") {
		var r fexpr
		if r, err = p.and(); err == nil {
			l = &fBinary{op: "or", l: l, r: r}
		}
	}
	return l, err
}

func (p *filterParser) and() (fexpr, error) {
	l, err := p.not()
	for err == nil && p.keyword("and") {
		var r fexpr
		if r, err = p.not(); err == nil {
			l = &fBinary{op: "and", l: l, r: r}
		}
	}
	return l, err
}

func (p *filterParser) not() (fexpr, error) {
	if p.keyword("not") {
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &fNot{x: x}, nil
	}
	return p.comparison()
}

var comparisonOps = map[string]string{"eq": "Equal", "ne": "NotEqual", "gt": "GreaterThan",
	"ge": "GreaterThanOrEqual", "lt": "LessThan", "le": "LessThanOrEqual"}

var arithmeticOps = map[string]bool{"add": true, "sub": true, "mul": true, "div": true, "mod": true}

func (p *filterParser) comparison() (fexpr, error) {
	l, err := p.primary()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind == tokIdent {
		if _, ok := comparisonOps[t.text]; ok {
			p.i++
			r, err := p.primary()
			if err != nil {
				return nil, err
			}
			return &fBinary{op: t.text, l: l, r: r}, nil
		}
		if arithmeticOps[t.text] {
			return nil, &filterError{fmt.Sprintf("The arithmetic operator '%s' is not supported in this filter.", t.text)}
		}
	}
	return l, nil
}

func (p *filterParser) primary() (fexpr, error) {
	t := p.next()
	switch t.kind {
	case tokLParen:
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.next().kind != tokRParen {
			return nil, syntaxError(p.src, t.pos)
		}
		return e, nil
	case tokString:
		return &fLiteral{typ: "Edm.String", v: t.text}, nil
	case tokNumber:
		return p.number(t)
	case tokTyped:
		return p.typed(t)
	case tokIdent:
		switch t.text {
		case "true", "false":
			return &fLiteral{typ: "Edm.Boolean", v: t.text == "true"}, nil
		case "null":
			return &fLiteral{typ: "null"}, nil
		}
		if p.peek().kind == tokLParen {
			return p.call(t)
		}
		m := &fMember{path: []string{t.text}, pos: t.pos}
		for p.peek().kind == tokSlash {
			p.i++
			n := p.next()
			if n.kind != tokIdent {
				return nil, syntaxError(p.src, n.pos)
			}
			m.path = append(m.path, n.text)
		}
		return m, nil
	}
	return nil, syntaxError(p.src, t.pos)
}

func (p *filterParser) number(t token) (fexpr, error) {
	s := t.text
	suffix := s[len(s)-1]
	switch suffix {
	case 'm', 'M', 'd', 'D', 'f', 'F', 'l', 'L':
		s = s[:len(s)-1]
	}
	v, err := ParseDecimal(s)
	if err != nil {
		return nil, &filterError{fmt.Sprintf("Unrecognized number literal '%s' at '%d' in '%s'.", t.text, t.pos, p.src)}
	}
	typ := "Edm.Int32"
	switch {
	case suffix == 'm' || suffix == 'M' || strings.ContainsAny(s, ".eE"):
		typ = "Edm.Decimal"
	case suffix == 'l' || suffix == 'L':
		typ = "Edm.Int64"
	}
	return &fLiteral{typ: typ, v: v}, nil
}

func (p *filterParser) typed(t token) (fexpr, error) {
	bad := func(edm string) error {
		return &filterError{fmt.Sprintf("Unrecognized '%s' literal '%s'%s'' at '%d' in '%s'.", edm, t.prefix, t.text, t.pos, p.src)}
	}
	if p.d == odataV4 && !t.bare {
		// OData v4 writes these literals bare; datetimeoffset'…' is v3 syntax.
		return nil, &filterError{fmt.Sprintf("Syntax error at position %d in '%s'.", t.pos+len(t.prefix), p.src)}
	}
	switch t.prefix {
	case "datetimeoffset", "datetime":
		tm, ok := parseFilterTime(t.text)
		if !ok {
			return nil, bad("Edm.DateTimeOffset")
		}
		return &fLiteral{typ: "Edm.DateTimeOffset", v: tm}, nil
	case "date":
		tm, err := time.Parse("2006-01-02", t.text)
		if err != nil {
			return nil, bad("Edm.Date")
		}
		return &fLiteral{typ: "Edm.Date", v: tm}, nil
	case "guid":
		if !reGUID.MatchString(t.text) || len(t.text) != 36 {
			return nil, bad("Edm.Guid")
		}
		return &fLiteral{typ: "Edm.Guid", v: strings.ToLower(t.text)}, nil
	}
	return nil, &filterError{fmt.Sprintf("Unrecognized literal prefix '%s' at position %d in '%s'.", t.prefix, t.pos, p.src)}
}

func parseFilterTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05.9999999",
		"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func (p *filterParser) call(name token) (fexpr, error) {
	p.i++ // (
	if strings.HasPrefix(name.text, "cf.") {
		depth := 1
		for depth > 0 {
			t := p.next()
			switch t.kind {
			case tokLParen:
				depth++
			case tokRParen:
				depth--
			case tokEOF:
				return nil, syntaxError(p.src, t.pos)
			}
		}
		return &fCustom{text: name.text}, nil
	}
	c := &fCall{name: name.text, pos: name.pos}
	if p.peek().kind == tokRParen {
		p.i++
		return c, nil
	}
	for {
		a, err := p.or()
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, a)
		t := p.next()
		if t.kind == tokRParen {
			return c, nil
		}
		if t.kind != tokComma {
			return nil, syntaxError(p.src, t.pos)
		}
	}
}
