package acumatica

import (
	"bytes"
	"encoding/json"

	"github.com/erpgate/erpgate/platform/connector/rawjson"
)

// The list tools unwrap records without decoding them: the same rules as
// unwrapRecord, applied to the JSON text, so a row costs a scan and a copy
// instead of nested maps built and encoded again. Values are copied as
// Acumatica wrote them (digits, escapes); members keep Acumatica's order. A
// name repeated within one object (which Acumatica never sends) is
// unwrapped each time it occurs. unwrapRecord stays the reference: the
// fuzz test holds this to it.

// unwrapper walks records with rawjson's checking walks, or, for rows
// rawjson has already checked (a page rawjson.Elements split), with its
// checked walks, which find the same members several times faster. The
// rules are the same code either way.
type unwrapper struct{ checked bool }

func (u unwrapper) members(b []byte, fn func(rawjson.Field)) error {
	if u.checked {
		rawjson.EachMemberChecked(b, fn)
		return nil
	}
	return rawjson.EachMember(b, fn)
}

func (u unwrapper) elements(b []byte) ([]json.RawMessage, error) {
	if u.checked {
		return rawjson.ElementsChecked(b), nil
	}
	return rawjson.Elements(b)
}

// appendUnwrappedRecord appends rec, a record object, unwrapped.
func appendUnwrappedRecord(dst, rec []byte) ([]byte, error) {
	return unwrapper{}.record(dst, rec)
}

// appendCheckedRecord is appendUnwrappedRecord for a record rawjson has
// checked.
func appendCheckedRecord(dst, rec []byte) ([]byte, error) {
	return unwrapper{checked: true}.record(dst, rec)
}

func (u unwrapper) record(dst, rec []byte) ([]byte, error) {
	dst = append(dst, '{')
	first := true
	var failed error
	member := func(f rawjson.Field) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(append(dst, f.Name...), ':')
	}
	err := u.members(rec, func(f rawjson.Field) {
		if failed != nil {
			return
		}
		var err error
		switch {
		case !mayBeRuled(f.Name):
			member(f)
			dst, err = u.value(dst, f.Value)
		case f.Is("rowNumber"), f.Is("_links"):
			return
		case f.Is("custom"):
			if !hasMembers(f.Value) {
				return
			}
			member(f)
			dst, err = appendUnwrappedCustom(dst, f.Value)
		case f.Is("files"), f.Is("error"), f.Is("id"):
			member(f)
			dst = append(dst, f.Value...)
		default:
			member(f)
			dst, err = u.value(dst, f.Value)
		}
		failed = err
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// mayBeRuled reports whether a member name, as written with its quotes,
// can be one of the names the rules single out (rowNumber, _links, custom,
// files, error, id): one of their lengths, or escaped. Most names are
// neither, and skip the comparisons.
func mayBeRuled(name []byte) bool {
	switch len(name) {
	case len(`"id"`), len(`"files"`), len(`"custom"`), len(`"rowNumber"`):
		return true
	}
	return bytes.IndexByte(name, '\\') >= 0
}

// value appends one member of a record, unwrapped. The record's walk has
// checked v.
func (u unwrapper) value(dst, v []byte) ([]byte, error) {
	switch v[0] {
	case '{':
		if val, ok := plainWrapper(v); ok {
			return append(dst, val...), nil
		}
		// A field wrapper has one or two members: keep them on the stack.
		var small [4]rawjson.Field
		fields := small[:0]
		if err := (unwrapper{checked: true}).members(v, func(f rawjson.Field) { fields = append(fields, f) }); err != nil {
			return nil, err
		}
		if val, ok := rawWrapperValue(fields); ok {
			return appendWrapperValue(dst, v, val, fields), nil
		}
		return unwrapper{checked: true}.record(dst, v)
	case '[':
		lines, err := unwrapper{checked: true}.elements(v)
		if err != nil {
			return nil, err
		}
		dst = append(dst, '[')
		for i, line := range lines {
			if i > 0 {
				dst = append(dst, ',')
			}
			if line[0] == '{' {
				if dst, err = (unwrapper{checked: true}).record(dst, line); err != nil {
					return nil, err
				}
			} else {
				dst = append(dst, line...)
			}
		}
		return append(dst, ']'), nil
	}
	return append(dst, v...), nil
}

// plainWrapper recognises the two wrappers nearly every field is, {} and
// {"value":X} written without spaces, from their bytes, without walking
// their members: it returns null or X. v must be one whole, checked JSON
// object, so X is the value when it ends just before the closing brace.
// Anything else is left to the walk.
func plainWrapper(v []byte) ([]byte, bool) {
	if len(v) == 2 {
		return null, true // v is an object: "{}"
	}
	const prefix = `{"value":`
	if len(v) <= len(prefix)+1 || string(v[:len(prefix)]) != prefix {
		return nil, false
	}
	x := v[len(prefix) : len(v)-1]
	return x, rawjson.ValueEndChecked(x, 0) == len(x)
}

var null = []byte("null")

// rawWrapperValue is wrapperValue on a member list: whether the object is
// a field wrapper, and its "value" member if it has one (the last, as
// decoding keeps it).
func rawWrapperValue(fields []rawjson.Field) (value []byte, wrapper bool) {
	for _, f := range fields {
		switch {
		case f.Is("value"):
			value = f.Value
		case f.Is("error"):
		default:
			// Anything else, "id" included (a linked entity), makes it a
			// record.
			return nil, false
		}
	}
	return value, true
}

// appendWrapperValue appends what a field wrapper stands for: null for {},
// the wrapper itself when it has only an error, the value with its error
// when the error is a non-empty string, else the value.
func appendWrapperValue(dst, wrapper, value []byte, fields []rawjson.Field) []byte {
	if len(fields) == 0 {
		return append(dst, "null"...)
	}
	if value == nil {
		return append(dst, wrapper...)
	}
	var errText []byte
	for _, f := range fields {
		if f.Is("error") {
			errText = f.Value
		}
	}
	if len(errText) > 2 && errText[0] == '"' { // a string other than ""
		dst = append(dst, `{"value":`...)
		dst = append(dst, value...)
		dst = append(dst, `,"error":`...)
		dst = append(dst, errText...)
		return append(dst, '}')
	}
	return append(dst, value...)
}

// appendUnwrappedCustom is unwrapCustom on JSON text: views of custom
// fields, each field replaced by its value.
func appendUnwrappedCustom(dst, custom []byte) ([]byte, error) {
	views, err := rawjson.Fields(custom)
	if err != nil {
		return nil, err
	}
	dst = append(dst, '{')
	for i, view := range views {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(append(dst, view.Name...), ':')
		if view.Value[0] != '{' {
			dst = append(dst, view.Value...)
			continue
		}
		fields, err := rawjson.Fields(view.Value)
		if err != nil {
			return nil, err
		}
		dst = append(dst, '{')
		for j, f := range fields {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = append(append(dst, f.Name...), ':')
			if f.Value[0] != '{' {
				dst = append(dst, f.Value...)
				continue
			}
			v, found, err := rawjson.Member(f.Value, "value")
			if err != nil {
				return nil, err
			}
			if !found {
				v = []byte("null")
			}
			dst = append(dst, v...)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

// hasMembers reports whether v is an object with at least one member: the
// custom member is left out otherwise, as unwrapCustom leaves it out.
func hasMembers(v []byte) bool {
	if v[0] != '{' {
		return false
	}
	for _, c := range v[1:] {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return c != '}'
		}
	}
	return false
}
