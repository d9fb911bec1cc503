package frappetest

import (
	"bytes"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// object is a JSON object that keeps key order, like a Python dict.
type object struct {
	keys []string
	vals []any
}

func newObject(capacity int) *object {
	return &object{keys: make([]string, 0, capacity), vals: make([]any, 0, capacity)}
}

// set adds k or, as a Python dict does, replaces its value in place.
func (o *object) set(k string, v any) {
	for i, kk := range o.keys {
		if kk == k {
			o.vals[i] = v
			return
		}
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

func (o *object) get(k string) (any, bool) {
	for i, kk := range o.keys {
		if kk == k {
			return o.vals[i], true
		}
	}
	return nil, false
}

// pyJSON encodes v like Python's json.dumps(v, separators=(",", ":")) with
// the default ensure_ascii=True: floats always carry a decimal point or an
// exponent, non-ASCII text is \u-escaped and "<>&" are left alone.
func pyJSON(v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, v, ",", ":")
	return b.Bytes()
}

// pyJSONSpaced encodes v with Python's default separators (", ", ": "), as
// json.dumps(v) does; used inside _server_messages.
func pyJSONSpaced(v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, v, ", ", ": ")
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any, itemSep, keySep string) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writeJSONString(b, x)
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case Decimal:
		b.WriteString(pyFloat(x.Float64()))
	case float64:
		b.WriteString(pyFloat(x))
	case *object:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(itemSep)
			}
			writeJSONString(b, k)
			b.WriteString(keySep)
			writeJSON(b, x.vals[i], itemSep, keySep)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(itemSep)
			}
			writeJSON(b, e, itemSep, keySep)
		}
		b.WriteByte(']')
	case []*object:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(itemSep)
			}
			writeJSON(b, e, itemSep, keySep)
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(itemSep)
			}
			writeJSONString(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := newObject(len(keys))
		for _, k := range keys {
			o.set(k, x[k])
		}
		writeJSON(b, o, itemSep, keySep)
	default:
		panic("frappetest: cannot encode value")
	}
}

// pyFloat formats f like Python's repr(float).
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	exp := int(math.Floor(math.Log10(math.Abs(f))))
	// Log10 can be off by one near powers of ten; confirm with the 'e' form.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	if i := bytes.IndexByte([]byte(e), 'e'); i >= 0 {
		if n, err := strconv.Atoi(e[i+1:]); err == nil {
			exp = n
		}
	}
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !bytes.ContainsAny([]byte(s), ".") {
		s += ".0"
	}
	return s
}

const hexDigits = "0123456789abcdef"

func writeJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				if c < 0x20 || c == 0x7f {
					if c == 0x7f {
						b.WriteByte(c)
					} else {
						writeU16(b, uint16(c))
					}
				} else {
					b.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r > 0xFFFF {
			r -= 0x10000
			writeU16(b, uint16(0xD800+(r>>10)))
			writeU16(b, uint16(0xDC00+(r&0x3FF)))
		} else {
			writeU16(b, uint16(r))
		}
		i += size
	}
	b.WriteByte('"')
}

func writeU16(b *bytes.Buffer, u uint16) {
	b.WriteString(`\u`)
	b.WriteByte(hexDigits[u>>12&0xF])
	b.WriteByte(hexDigits[u>>8&0xF])
	b.WriteByte(hexDigits[u>>4&0xF])
	b.WriteByte(hexDigits[u&0xF])
}
