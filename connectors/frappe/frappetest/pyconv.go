package frappetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// This file holds Python/Frappe value conversions (cstr, cint, flt, sbool,
// repr) and a JSON decoder that keeps object key order like Python dicts.

// jsonLoads decodes s like Python json.loads: objects become *object (key
// order kept), numbers json.Number. Errors mimic Python's messages.
func jsonLoads(s string) (any, *apiError) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			off := int(dec.InputOffset())
			for off < len(s) && (s[off] == ' ' || s[off] == '\t' || s[off] == '\n' || s[off] == '\r') {
				off++
			}
			return nil, jsonDecodeError("Extra data", s, off)
		}
		return v, nil
	}
	off := 0
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = int(se.Offset)
		if off > 0 {
			off--
		}
		if strings.Contains(se.Error(), "in literal") {
			// Python reports the start of a bad true/false/null literal.
			for off > 0 && off <= len(s) && isLetter(s[off-1]) {
				off--
			}
		}
	} else if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		off = len(s)
	}
	trim := strings.TrimLeft(s, " \t\r\n")
	if trim == "" || !strings.ContainsAny(trim[:1], "{[\"-0123456789tfn") {
		return nil, jsonDecodeError("Expecting value", s, len(s)-len(trim))
	}
	return nil, jsonDecodeError("Expecting value", s, off)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func jsonDecodeError(what, s string, off int) *apiError {
	line, col := 1, 1
	for i := 0; i < off && i < len(s); i++ {
		if s[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return pythonError("json.decoder.JSONDecodeError", fmt.Sprintf("%s: line %d column %d (char %d)", what, line, col, off))
}

func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '{':
			o := newObject(4)
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return list, nil
		}
		return nil, &json.SyntaxError{}
	default:
		return t, nil
	}
}

// isPyInt reports whether a JSON number would be a Python int.
func isPyInt(n json.Number) bool { return !strings.ContainsAny(string(n), ".eE") }

// pyTruthy is Python truthiness of a decoded JSON value.
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, _ := x.Float64()
		return f != 0
	case []any:
		return len(x) > 0
	case *object:
		return len(x.keys) > 0
	}
	return true
}

// cstr is frappe.utils.cstr: str(v), "" for None.
func cstr(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		if isPyInt(x) {
			return string(x)
		}
		f, _ := x.Float64()
		return pyFloat(f)
	}
	return pyRepr(v)
}

// cint is frappe.utils.cint: int(float(s)) or 0.
func cint(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 0
	case int64:
		return x
	case bool:
		if x {
			return 1
		}
		return 0
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return 0
		}
		return int64(f)
	case string:
		s := strings.TrimSpace(strings.ReplaceAll(x, ",", ""))
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return int64(f)
		}
	}
	return 0
}

// flt is frappe.utils.flt as a Decimal: 0 for anything unparseable.
func flt(v any) Decimal {
	switch x := v.(type) {
	case json.Number:
		if d, ok := parseDecimal(string(x)); ok {
			return d
		}
	case string:
		if d, ok := parseDecimal(strings.ReplaceAll(x, ",", "")); ok {
			return d
		}
	case bool:
		if x {
			return Units(1)
		}
	}
	return 0
}

// sbool is frappe.utils.sbool for form values.
func sbool(v any) bool {
	if s, ok := v.(string); ok {
		switch strings.ToLower(s) {
		case "true", "1":
			return true
		case "false", "0", "":
			return false
		}
		return true
	}
	return pyTruthy(v)
}

// pyStrRepr is Python repr() of a str.
func pyStrRepr(s string) string {
	q := "'"
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = `"`
	}
	var b bytes.Buffer
	b.WriteString(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case string(r) == q:
			b.WriteString(`\` + q)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(q)
	return b.String()
}

// pyRepr is Python repr() of a decoded JSON value.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return pyStrRepr(x)
	case bool, json.Number:
		return cstr(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *object:
		parts := make([]string, len(x.keys))
		for i, k := range x.keys {
			parts[i] = pyStrRepr(k) + ": " + pyRepr(x.vals[i])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}
