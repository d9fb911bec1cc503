package acumaticatest

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// jsonString quotes s as a JSON string the way .NET's serialiser does:
// only quotes, backslashes and control characters are escaped ("<NEW>"
// stays literal, unlike encoding/json's HTML escaping).
func jsonString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	writeJSONString(&b, s)
	return b.String()
}

func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b.WriteString(`\"`)
			case c == '\\':
				b.WriteString(`\\`)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20:
				b.WriteString(`\u00`)
				b.WriteString(strconv.FormatInt(int64(c)>>4, 16))
				b.WriteString(strconv.FormatInt(int64(c)&0xf, 16))
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\ufffd`)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// jsonObject writes an object whose members appear in insertion order.
type jsonObject struct {
	b     *strings.Builder
	first bool
}

func newJSONObject(b *strings.Builder) *jsonObject {
	b.WriteByte('{')
	return &jsonObject{b: b, first: true}
}

// key writes the member name; the caller writes the value next.
func (o *jsonObject) key(k string) *strings.Builder {
	if !o.first {
		o.b.WriteByte(',')
	}
	o.first = false
	writeJSONString(o.b, k)
	o.b.WriteByte(':')
	return o.b
}

func (o *jsonObject) raw(k, v string) { o.key(k).WriteString(v) }

func (o *jsonObject) str(k, v string) { writeJSONString(o.key(k), v) }

func (o *jsonObject) close() { o.b.WriteByte('}') }
