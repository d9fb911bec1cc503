// Package rawjson reads the structure of JSON text without decoding it:
// it checks that bytes are valid JSON and finds the members of an object
// and the elements of an array as slices of the input.
//
// A connector that passes the ERP's rows on unchanged uses it instead of
// decoding them into maps and encoding them again, which was most of the
// gateway's own work on a list call. The checks are those of RFC 8259 and
// encoding/json: one value, surrounded only by whitespace, with strings of
// valid UTF-8 and no control characters, and at most 10,000 levels of
// nesting. The fuzz tests hold Valid to json.Valid.
package rawjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// SyntaxError says where JSON text stops being valid.
type SyntaxError struct {
	// Offset is the byte at which the text became invalid.
	Offset int
	msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.msg)
}

// Valid reports whether b is exactly one JSON value.
func Valid(b []byte) bool {
	_, err := whole(b)
	return err == nil
}

// Check returns nil when b is exactly one JSON value, or a *SyntaxError.
func Check(b []byte) error {
	_, err := whole(b)
	return err
}

// whole checks that b is one value with only whitespace around it and
// returns the index of that value's first byte.
func whole(b []byte) (int, error) {
	start := skipSpace(b, 0)
	stop, err := value(b, start, 0, nil)
	if err != nil {
		return 0, err
	}
	return start, end(b, stop)
}

// StringVisitor gets a string of a JSON text as written, without its
// quotes (s), whether it is a member's name, and whether it has escapes.
// Returning false stops the walk.
type StringVisitor func(s []byte, name, escaped bool) bool

// errStopped unwinds a walk its StringVisitor stopped.
var errStopped = errors.New("rawjson: stopped")

// Strings checks that b is exactly one JSON value, and calls sv with every
// string in it, member names included, in order, as it reads b once. It
// returns complete false, and no error, when sv stopped it: then only the
// text up to that string was checked.
func Strings(b []byte, sv StringVisitor) (complete bool, err error) {
	start := skipSpace(b, 0)
	stop, err := value(b, start, 0, sv)
	if errors.Is(err, errStopped) {
		return false, nil
	}
	if err == nil {
		err = end(b, stop)
	}
	return err == nil, err
}

// Elements checks that b is exactly one JSON array and returns its
// elements, each a slice of b without surrounding whitespace. It reads b
// once.
func Elements(b []byte) ([]json.RawMessage, error) {
	out := []json.RawMessage{}
	err := top(b, '[', "not an array", func(b []byte, i int) (int, error) {
		return array(b, i, 1, nil, func(e json.RawMessage) { out = append(out, e) })
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// top checks that b is exactly one value that opens with open, read by
// walk from its first byte, with only whitespace around it.
func top(b []byte, open byte, what string, walk func(b []byte, i int) (int, error)) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != open {
		if _, err := whole(b); err != nil {
			return err
		}
		return &SyntaxError{i, what}
	}
	stop, err := walk(b, i)
	if err != nil {
		return err
	}
	return end(b, stop)
}

// Field is one member of an object, as written.
type Field struct {
	// Name is the member's name as written, with its quotes.
	Name json.RawMessage
	// Value is the member's value.
	Value   json.RawMessage
	escaped bool
}

// Is reports whether the field's name, unescaped, is name.
func (f Field) Is(name string) bool {
	return sameName(f.Name[1:len(f.Name)-1], f.escaped, name)
}

// Fields checks that b is exactly one JSON object and returns its
// members in order, repeated names included, as slices of b. It reads b
// once.
func Fields(b []byte) ([]Field, error) {
	var out []Field
	err := members(b, func(f Field) { out = append(out, f) })
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []Field{}
	}
	return out, nil
}

// EachMember checks that b is exactly one JSON object and calls fn with
// each of its members in order, repeated names included, as slices of b. It
// reads b once and, unlike Fields, allocates nothing.
func EachMember(b []byte, fn func(Field)) error {
	return members(b, fn)
}

// Member checks that b is exactly one JSON object and returns the value of
// its member name (the last one, when the name repeats, as encoding/json
// decodes it), as a slice of b. Names are compared exactly, after
// unescaping. It reads b once.
func Member(b []byte, name string) (json.RawMessage, bool, error) {
	var found json.RawMessage
	ok := false
	err := members(b, func(f Field) {
		if f.Is(name) {
			found, ok = f.Value, true
		}
	})
	if err != nil {
		return nil, false, err
	}
	return found, ok, nil
}

// members checks that b is exactly one JSON object and calls fn with each
// of its members, in order.
func members(b []byte, fn func(Field)) error {
	return top(b, '{', "not an object", func(b []byte, i int) (int, error) {
		return object(b, i, 1, nil, fn)
	})
}

// end checks that only whitespace follows b[i:].
func end(b []byte, i int) error {
	if i = skipSpace(b, i); i != len(b) {
		return &SyntaxError{i, "data after the value"}
	}
	return nil
}

// sameName compares a member name as written (without its quotes) with
// name.
func sameName(written []byte, escaped bool, name string) bool {
	if !escaped {
		return string(written) == name
	}
	var buf [64]byte
	text, ok := AppendUnquoted(buf[:0], written)
	return ok && string(text) == name
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value checks the value that starts at b[i] and returns the index just
// past it; sv, if not nil, gets every string in it.
func value(b []byte, i, depth int, sv StringVisitor) (int, error) {
	if i >= len(b) {
		return 0, &SyntaxError{i, "unexpected end"}
	}
	switch c := b[i]; {
	case c == '"':
		end, escaped, err := str(b, i)
		if err == nil && sv != nil && !sv(b[i+1:end-1], false, escaped) {
			return 0, errStopped
		}
		return end, err
	case c == '{':
		return object(b, i, depth+1, sv, nil)
	case c == '[':
		return array(b, i, depth+1, sv, nil)
	case c == '-' || (c >= '0' && c <= '9'):
		return number(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return 0, &SyntaxError{i, "unexpected character"}
}

// object checks the object whose opening brace is b[i] and returns the
// index just past it; fn, if not nil, gets each member, and sv each string.
func object(b []byte, i, depth int, sv StringVisitor, fn func(Field)) (int, error) {
	if depth > maxDepth {
		return 0, &SyntaxError{i, "nested too deeply"}
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, &SyntaxError{i, "expected a member name"}
		}
		keyEnd, escaped, err := str(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i:keyEnd:keyEnd]
		if sv != nil && !sv(b[i+1:keyEnd-1], true, escaped) {
			return 0, errStopped
		}
		if i = skipSpace(b, keyEnd); i >= len(b) || b[i] != ':' {
			return 0, &SyntaxError{i, "expected a colon"}
		}
		start := skipSpace(b, i+1)
		if i, err = value(b, start, depth, sv); err != nil {
			return 0, err
		}
		if fn != nil {
			fn(Field{Name: key, Value: b[start:i:i], escaped: escaped})
		}
		var closed bool
		if i, closed, err = next(b, i, '}', "expected a comma or the object's end"); closed || err != nil {
			return i, err
		}
	}
}

// array checks the array whose opening bracket is b[i] and returns the
// index just past it; fn, if not nil, gets each element, and sv each
// string.
func array(b []byte, i, depth int, sv StringVisitor, fn func(json.RawMessage)) (int, error) {
	if depth > maxDepth {
		return 0, &SyntaxError{i, "nested too deeply"}
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		start := i
		var err error
		if i, err = value(b, i, depth, sv); err != nil {
			return 0, err
		}
		if fn != nil {
			fn(b[start:i:i])
		}
		var closed bool
		if i, closed, err = next(b, i, ']', "expected a comma or the array's end"); closed || err != nil {
			return i, err
		}
	}
}

// next reads what follows a member or an element at b[i]: a comma, after
// which it returns the start of the next one, or the closing byte, after
// which it returns the index just past it and closed.
func next(b []byte, i int, closing byte, msg string) (_ int, closed bool, _ error) {
	if i = skipSpace(b, i); i >= len(b) {
		return 0, false, &SyntaxError{i, "unexpected end"}
	}
	switch b[i] {
	case closing:
		return i + 1, true, nil
	case ',':
		return skipSpace(b, i+1), false, nil
	}
	return 0, false, &SyntaxError{i, msg}
}

// str checks the string whose opening quote is b[i] and returns the index
// just past its closing quote, and whether it contains escapes.
func str(b []byte, i int) (end int, escaped bool, err error) {
	i++
	for i < len(b) {
		// Most bytes of most strings are plain ASCII: skip them in a tight
		// loop.
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, &SyntaxError{i, "unexpected end"}
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return 0, false, &SyntaxError{i, "invalid \\u escape"}
				}
				i += 6
			default:
				return 0, false, &SyntaxError{i, "invalid escape"}
			}
		case c < 0x20:
			return 0, false, &SyntaxError{i, "control character in a string"}
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, &SyntaxError{i, "invalid UTF-8 in a string"}
			}
			i += size
		}
	}
	return 0, false, &SyntaxError{i, "unterminated string"}
}

// plain marks the bytes a string may hold as they are: ASCII other than
// control characters, the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func literal(b []byte, i int, word string) (int, error) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return 0, &SyntaxError{i, "invalid literal"}
	}
	return i + len(word), nil
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func number(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, &SyntaxError{start, "invalid number"}
	}
	if i < len(b) && b[i] == '.' {
		if i+1 >= len(b) || !isDigit(b[i+1]) {
			return 0, &SyntaxError{start, "invalid number"}
		}
		i = digits(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0, &SyntaxError{start, "invalid number"}
		}
		i = digits(b, i)
	}
	return i, nil
}

func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// ArrayLen is the length of the array AppendArray makes of elems.
func ArrayLen(elems []json.RawMessage) int {
	n := 2 + max(len(elems)-1, 0)
	for _, e := range elems {
		n += len(e)
	}
	return n
}

// AppendArray appends the JSON array of elems, each valid JSON text,
// growing dst at most once.
func AppendArray(dst []byte, elems []json.RawMessage) []byte {
	dst = slices.Grow(dst, ArrayLen(elems))
	dst = append(dst, '[')
	for i, e := range elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, e...)
	}
	return append(dst, ']')
}

// AppendMembers appends the members of obj, an object as encoding/json
// writes it (no space before its opening brace), to dst, which holds an
// object's opening and at least one member, and closes the object. It is
// how a result is built around rows that are already JSON: the rows are
// written first, then the members encoding/json wrote for the rest.
func AppendMembers(dst, obj []byte) ([]byte, error) {
	if len(obj) < 2 || obj[0] != '{' {
		return nil, &SyntaxError{0, "not an object"}
	}
	if rest := skipSpace(obj, 1); rest < len(obj) && obj[rest] != '}' {
		dst = append(dst, ',')
	}
	return append(dst, obj[1:]...), nil
}

// AppendUnquoted appends the text of s, the content of a JSON string as
// written (without its quotes), to dst, decoded as encoding/json decodes
// it: escapes resolved, a lone surrogate and each invalid UTF-8 byte
// replaced with U+FFFD. It reports false, with dst unchanged, when s is
// not a string's content (an invalid escape, a quote or a control
// character). With a dst of enough capacity it allocates nothing.
func AppendUnquoted(dst, s []byte) ([]byte, bool) {
	start := len(dst)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return dst[:start], false
			}
			switch s[i+1] {
			case '"', '\\', '/':
				dst = append(dst, s[i+1])
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok {
					return dst[:start], false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if s2, ok := hex4(s, i+2); ok && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if pair := utf16.DecodeRune(r, s2); pair != utf8.RuneError {
							dst = utf8.AppendRune(dst, pair)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default:
				return dst[:start], false
			}
			i += 2
		case c == '"' || c < 0x20:
			return dst[:start], false
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			dst = utf8.AppendRune(dst, r)
			i += size
		}
	}
	return dst, true
}

// hex4 reads the four hexadecimal digits at s[i:].
func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
