package schema

import (
	"bytes"
	"regexp"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/erpgate/erpgate/platform/connector/rawjson"
)

// CompileValidator compiles s for the full JSON Schema validator (draft
// 2020-12, formats asserted), under the resource name url. It decides every
// case the Checker is not sure of, and describes what is wrong.
func CompileValidator(s *Schema, url string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.JSON()))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Checker answers, for the JSON text of a tool's arguments, whether it is
// certainly valid under the schema it was compiled from. It reads the text
// once, decodes nothing and allocates little, which is why the engine asks
// it before the full JSON Schema validator: almost every call of a tool has
// valid arguments, and for those the full validator (which decodes the
// arguments into maps and compares numbers as big rationals) was a tenth
// of the gateway's own work.
//
// It answers false whenever it is not sure: invalid arguments, and valid
// ones it does not judge itself (escaped strings, numbers with fractions or
// exponents where an integer or a bound is asked for, repeated member
// names). The engine then runs the full validator, which decides, and
// describes what is wrong. So a Checker may only ever be stricter than the
// full validator; the tests hold it to that, on every tool of both
// catalogues and under fuzzing.
type Checker struct {
	root *check
}

// CompileChecker compiles s. It returns nil when s uses something the
// Checker does not judge (a const, a format other than date, an enum of
// anything but strings, an unknown type), and a nil *Checker answers false
// to everything.
func CompileChecker(s *Schema) *Checker {
	c, ok := compileCheck(s)
	if !ok {
		return nil
	}
	return &Checker{root: c}
}

// Valid reports whether doc, the JSON text of one value, is certainly
// valid. False means invalid or not sure.
func (c *Checker) Valid(doc []byte) bool {
	if c == nil || !rawjson.Valid(doc) {
		return false
	}
	return c.root.valid(trimSpace(doc))
}

// kinds of JSON values, as a bit set of the types a schema allows.
const (
	kString = 1 << iota
	kInteger
	kNumber
	kBoolean
	kArray
	kObject
	kNull
	kAny = kString | kInteger | kNumber | kBoolean | kArray | kObject | kNull
)

var kindNames = map[string]uint8{
	"string": kString, "integer": kInteger, "number": kNumber, "boolean": kBoolean,
	"array": kArray, "object": kObject, "null": kNull,
}

// check is one compiled schema node.
type check struct {
	types              uint8
	enum               []string
	pattern            *regexp.Regexp
	date               bool
	minLen, maxLen     int // -1: unbounded
	minimum, maximum   *float64
	minItems, maxItems int // -1: unbounded
	items              *check
	props              map[string]*check
	required           []string
	closed             bool   // additionalProperties: false
	additional         *check // additionalProperties: a schema
	anyOf              []*check
}

func compileCheck(s *Schema) (*check, bool) {
	if s == nil {
		return &check{types: kAny, minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}, true
	}
	c := &check{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1, minimum: s.Minimum, maximum: s.Maximum}
	switch t := s.Type.(type) {
	case nil:
		c.types = kAny
	case string:
		k, ok := kindNames[t]
		if !ok {
			return nil, false
		}
		c.types = k
	case []string:
		for _, name := range t {
			k, ok := kindNames[name]
			if !ok {
				return nil, false
			}
			c.types |= k
		}
	default:
		return nil, false
	}
	if s.Const != nil {
		return nil, false
	}
	switch s.Format {
	case "":
	case "date":
		c.date = true
	default:
		return nil, false
	}
	for _, v := range s.Enum {
		str, ok := v.(string)
		if !ok {
			return nil, false
		}
		c.enum = append(c.enum, str)
	}
	if s.Enum != nil && len(c.enum) == 0 {
		return nil, false
	}
	if s.Pattern != "" {
		re, err := compilePattern(s.Pattern)
		if err != nil {
			return nil, false
		}
		c.pattern = re
	}
	if s.MinLength != nil {
		c.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		c.maxLen = *s.MaxLength
	}
	if s.MinItems != nil {
		c.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		c.maxItems = *s.MaxItems
	}
	if s.Items != nil {
		items, ok := compileCheck(s.Items)
		if !ok {
			return nil, false
		}
		c.items = items
	}
	if s.Properties != nil {
		c.props = make(map[string]*check, len(s.Properties))
		for name, p := range s.Properties {
			pc, ok := compileCheck(p)
			if !ok {
				return nil, false
			}
			c.props[name] = pc
		}
	}
	c.required = s.Required
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		c.closed = !a
	case *Schema:
		ac, ok := compileCheck(a)
		if !ok {
			return nil, false
		}
		c.additional = ac
	default:
		return nil, false
	}
	for _, branch := range s.AnyOf {
		bc, ok := compileCheck(branch)
		if !ok {
			return nil, false
		}
		c.anyOf = append(c.anyOf, bc)
	}
	return c, true
}

// patterns holds the compiled patterns: many tools repeat the same ones
// (every date argument has one), and a *regexp.Regexp is safe to share.
var patterns sync.Map // string → *regexp.Regexp

func compilePattern(p string) (*regexp.Regexp, error) {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	patterns.Store(p, re)
	return re, nil
}

// valid judges v, one valid JSON value without surrounding whitespace.
func (c *check) valid(v []byte) bool {
	if len(c.anyOf) > 0 {
		matched := false
		for _, b := range c.anyOf {
			if b.valid(v) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	switch v[0] {
	case '"':
		return c.types&kString != 0 && c.validString(v)
	case '{':
		return c.types&kObject != 0 && c.validObject(v)
	case '[':
		return c.types&kArray != 0 && c.validArray(v)
	case 't', 'f':
		return c.types&kBoolean != 0 && c.enum == nil
	case 'n':
		return c.types&kNull != 0 && c.enum == nil
	default:
		return c.validNumber(v)
	}
}

func (c *check) validString(v []byte) bool {
	s := v[1 : len(v)-1]
	for _, b := range s {
		if b == '\\' {
			return false // escaped: the full validator decodes it
		}
	}
	if c.minLen >= 0 || c.maxLen >= 0 {
		n := utf8.RuneCount(s)
		if (c.minLen >= 0 && n < c.minLen) || (c.maxLen >= 0 && n > c.maxLen) {
			return false
		}
	}
	if c.pattern != nil && !c.pattern.Match(s) {
		return false
	}
	if c.date && !isDate(s) {
		return false
	}
	if c.enum != nil {
		for _, e := range c.enum {
			if string(s) == e {
				return true
			}
		}
		return false
	}
	return true
}

// validNumber judges a number. It is sure of integers written without a
// fraction or an exponent, compared with a bound only when exact as a
// float64, and of any number where neither an integer nor a bound is asked
// for. (The full validator also counts 2.0 and 1e2 as integers.)
func (c *check) validNumber(v []byte) bool {
	if c.enum != nil {
		return false
	}
	plainInt := true
	for i, b := range v {
		if !(b >= '0' && b <= '9') && !(i == 0 && b == '-') {
			plainInt = false
			break
		}
	}
	switch {
	case c.types&kInteger != 0 && plainInt:
	case c.types&kNumber != 0 && (plainInt || (c.minimum == nil && c.maximum == nil)):
	default:
		return false
	}
	if c.minimum == nil && c.maximum == nil {
		return true
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n > 1<<53 || n < -(1<<53) {
		return false
	}
	f := float64(n)
	return (c.minimum == nil || f >= *c.minimum) && (c.maximum == nil || f <= *c.maximum)
}

func (c *check) validArray(v []byte) bool {
	if c.enum != nil {
		return false
	}
	elems, err := rawjson.Elements(v)
	if err != nil {
		return false
	}
	if (c.minItems >= 0 && len(elems) < c.minItems) || (c.maxItems >= 0 && len(elems) > c.maxItems) {
		return false
	}
	if c.items != nil {
		for _, e := range elems {
			if !c.items.valid(e) {
				return false
			}
		}
	}
	return true
}

// maxCheckedMembers is the most members of one object the checker judges
// (it compares each name with the ones before it); a bigger object, which
// no tool's arguments need, goes to the full validator.
const maxCheckedMembers = 64

func (c *check) validObject(v []byte) bool {
	if c.enum != nil {
		return false
	}
	fields, err := rawjson.Fields(v)
	if err != nil || len(fields) > maxCheckedMembers {
		return false
	}
	for i, f := range fields {
		name := f.Name[1 : len(f.Name)-1]
		for _, b := range name {
			if b == '\\' {
				return false // escaped name: the full validator decodes it
			}
		}
		for _, g := range fields[:i] {
			if string(g.Name) == string(f.Name) {
				return false // repeated: the full validator keeps the last
			}
		}
		if p, ok := c.props[string(name)]; ok {
			if !p.valid(f.Value) {
				return false
			}
			continue
		}
		switch {
		case c.closed:
			return false
		case c.additional != nil && !c.additional.valid(f.Value):
			return false
		}
	}
	for _, r := range c.required {
		found := false
		for _, f := range fields {
			if string(f.Name[1:len(f.Name)-1]) == r {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// isDate reports whether s is a calendar date written YYYY-MM-DD, as
// time.Parse("2006-01-02") accepts it (the full validator's date format).
func isDate(s []byte) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	num := func(b []byte) (int, bool) {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(s[0:4])
	m, ok2 := num(s[5:7])
	d, ok3 := num(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

func trimSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
