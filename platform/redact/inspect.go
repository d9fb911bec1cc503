package redact

import (
	"bytes"
	"encoding/json"
)

// Inspect reports whether Apply could change the JSON document doc: whether
// it has a field whose name is sensitive or a string value that looks
// sensitive. It reads the encoded bytes once and decodes nothing, so the
// common case, a result with nothing to redact, costs a scan instead of a
// decode, a walk and an encode. It errs on the side of true: malformed
// input, or anything it cannot decide, reports true, and the caller then
// runs the full Apply.
func (r *Redactor) Inspect(doc []byte) bool {
	// Field names repeat in every row of a result; remember a few verdicts
	// for this document rather than normalising each name again.
	var seen [32]struct {
		name      []byte
		sensitive bool
	}
	nSeen := 0
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		open := i
		end, escaped := stringEnd(doc, i+1)
		if end < 0 {
			return true
		}
		s := doc[i+1 : end]
		k := end + 1
		for k < len(doc) && isJSONSpace(doc[k]) {
			k++
		}
		isName := k < len(doc) && doc[k] == ':'
		i = end
		if escaped {
			var text string
			if err := json.Unmarshal(doc[open:end+1], &text); err != nil {
				return true
			}
			if (isName && r.SensitiveName(text)) || (!isName && looksSensitive(text)) {
				return true
			}
			continue
		}
		if !isName {
			if mayLookSensitive(s) && looksSensitive(string(s)) {
				return true
			}
			continue
		}
		known := false
		for j := range nSeen {
			if bytes.Equal(seen[j].name, s) {
				if seen[j].sensitive {
					return true
				}
				known = true
				break
			}
		}
		if known {
			continue
		}
		if r.sensitiveNameBytes(s) {
			return true
		}
		if nSeen < len(seen) {
			seen[nSeen].name, seen[nSeen].sensitive = s, false
			nSeen++
		}
	}
	return false
}

// stringEnd returns the index of the quote closing the JSON string whose
// content starts at start, and whether it contains escapes; -1 if it is
// not closed.
func stringEnd(doc []byte, start int) (int, bool) {
	escaped := false
	for j := start; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j, escaped
		}
	}
	return -1, escaped
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// mayLookSensitive is looksSensitive's cheap precondition: a value of the
// shapes it matches has 11 to 23 characters besides surrounding spaces, all
// of them digits, spaces or dashes.
func mayLookSensitive(s []byte) bool {
	if len(s) < 11 {
		return false
	}
	t := bytes.TrimSpace(s)
	if len(t) < 11 || len(t) > 23 {
		return false
	}
	for _, c := range t {
		if (c < '0' || c > '9') && c != ' ' && c != '-' {
			return false
		}
	}
	return true
}
