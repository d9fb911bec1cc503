package redact

import (
	"bytes"

	"github.com/erpgate/erpgate/platform/rawjson"
)

// Inspect reports whether Apply could change the JSON document doc: whether
// it has a field whose name is sensitive or a string value that looks
// sensitive. It reads the encoded bytes once and decodes nothing, so the
// common case, a result with nothing to redact, costs a scan instead of a
// decode, a walk and an encode. It errs on the side of true: malformed
// input, or anything it cannot decide, reports true, and the caller then
// runs the full Apply.
func (r *Redactor) Inspect(doc []byte) bool {
	in := inspection{r: r}
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		end, escaped := stringEnd(doc, i+1)
		if end < 0 {
			return true
		}
		k := end + 1
		for k < len(doc) && isJSONSpace(doc[k]) {
			k++
		}
		isName := k < len(doc) && doc[k] == ':'
		if in.sensitive(doc[i+1:end], isName, escaped) {
			return true
		}
		i = end
	}
	return false
}

// InspectChecked is Inspect for a document that has not been checked to
// be JSON: it also checks it, in the same single reading (rawjson). It
// returns an error when doc is not exactly one JSON value. When it reports
// true, it stopped at the first string Apply could change, so the rest of
// doc is unchecked: a caller that goes on to apply the rules checks the
// rest first (decoding alone would let trailing data or invalid UTF-8
// through).
func (r *Redactor) InspectChecked(doc []byte) (bool, error) {
	in := inspection{r: r}
	found := false
	_, err := rawjson.Strings(doc, func(s []byte, name, escaped bool) bool {
		found = in.sensitive(s, name, escaped)
		return !found
	})
	return found, err
}

// inspection judges the strings of one document, remembering the verdicts
// on the field names it has seen (they repeat in every row of a result),
// rather than normalising each name again.
type inspection struct {
	r    *Redactor
	seen [32]struct {
		name      []byte
		sensitive bool
	}
	n int
	// scratch holds the decoded text of an escaped string (a longer one
	// is decoded on the heap).
	scratch [128]byte
}

// sensitive reports whether Apply could change a document because of s, a
// string as written without its quotes: a member's name when name is true,
// a value otherwise. Undecodable escapes count as sensitive.
func (in *inspection) sensitive(s []byte, name, escaped bool) bool {
	if escaped {
		// Real ERPs escape every non-ASCII character (Frappe writes
		// JSON with ensure_ascii): decode into the scratch buffer.
		text, ok := rawjson.AppendUnquoted(in.scratch[:0], s)
		if !ok {
			return true
		}
		if name {
			return in.r.sensitiveNameBytes(text)
		}
		return mayLookSensitive(text) && looksSensitive(string(text))
	}
	if !name {
		return mayLookSensitive(s) && looksSensitive(string(s))
	}
	for j := range in.n {
		if bytes.Equal(in.seen[j].name, s) {
			return in.seen[j].sensitive
		}
	}
	if in.r.sensitiveNameBytes(s) {
		return true
	}
	if in.n < len(in.seen) {
		in.seen[in.n].name, in.seen[in.n].sensitive = s, false
		in.n++
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
