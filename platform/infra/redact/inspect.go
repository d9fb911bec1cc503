package redact

import (
	"bytes"

	"github.com/erpgate/erpgate/platform/connector/rawjson"
)

// Inspect reports whether Apply could change the JSON document doc: whether
// it has a field whose name is sensitive, a value that looks sensitive, or
// a name/value row whose name is. It reads the encoded bytes and decodes
// nothing, so the common case, a result with nothing to redact, costs a
// scan instead of a decode, a walk and an encode. It errs on the side of
// true: malformed input, or anything it cannot decide, reports true, and
// the caller then runs the full Apply.
func (r *Redactor) Inspect(doc []byte) bool {
	in := inspection{r: r}
	if in.scan(doc) || hasCardRun(doc) {
		return true
	}
	return in.rowsPending() && in.labels(doc)
}

// scan runs the inspection over every string of doc.
func (in *inspection) scan(doc []byte) bool {
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
	if err != nil || found {
		return found, err
	}
	if hasCardRun(doc) {
		return true, nil
	}
	return in.rowsPending() && in.labels(doc), nil
}

// inspection judges the strings of one document, remembering the verdicts
// on the field names it has seen (they repeat in every row of a result),
// rather than normalising each name again.
type inspection struct {
	r    *Redactor
	seen [32]struct {
		name    []byte
		verdict verdict
	}
	n int
	// scratch holds the decoded text of an escaped string (a longer one
	// is decoded on the heap).
	scratch [128]byte

	// last is the verdict on the name of the member being read.
	last verdict
	// rowLabels and rowValues say whether the document has members that
	// name a name/value row and members that hold a row's value; only
	// then are the labels judged (labels), in a second reading.
	rowLabels, rowValues bool
	// judgeLabels is set during that second reading.
	judgeLabels bool
}

func (in *inspection) rowsPending() bool { return in.rowLabels && in.rowValues }

// labels reads doc again and reports whether a name/value row's label is
// sensitive.
func (in *inspection) labels(doc []byte) bool {
	in.judgeLabels = true
	in.last = 0
	return in.scan(doc)
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
			return in.name(text, in.r.verdictBytes(text))
		}
		return in.value(text)
	}
	if !name {
		if len(s) < 9 && !in.judgeLabels {
			// Shorter than every shape: most values (the call is saved).
			in.last = 0
			return false
		}
		return in.value(s)
	}
	return in.name(s, in.seenVerdict(s))
}

// seenVerdict returns the verdict on a name written without escapes,
// remembered for the document (s is a slice of it).
func (in *inspection) seenVerdict(s []byte) verdict {
	for j := range in.n {
		if bytes.Equal(in.seen[j].name, s) {
			return in.seen[j].verdict
		}
	}
	v := in.r.verdictBytes(s)
	if in.n < len(in.seen) {
		in.seen[in.n].name, in.seen[in.n].verdict = s, v
		in.n++
	}
	return v
}

// name judges a member's name whose verdict is v.
func (in *inspection) name(s []byte, v verdict) bool {
	if v&nameSensitive != 0 && !in.judgeLabels {
		return true
	}
	if v&nameRowValue != 0 {
		in.rowValues = true
		if string(s) == "value" && in.last&nameRowLabel != 0 {
			// Acumatica's wrapper: {"Name": {"value": "…"}} is still the
			// row's label.
			return false
		}
	}
	if v&nameRowLabel != 0 {
		in.rowLabels = true
	}
	in.last = v
	return false
}

// value judges a value string.
func (in *inspection) value(s []byte) bool {
	last := in.last
	in.last = 0
	if len(s) < 9 && !in.judgeLabels {
		// Shorter than every shape (a nine-digit SSN is the shortest).
		return false
	}
	if in.judgeLabels {
		return last&nameRowLabel != 0 && in.r.sensitiveLabel(string(s))
	}
	if mayLookSensitive(s) && looksSensitive(string(s)) {
		return true
	}
	if last&nameHintsSSN != 0 && ssnUndashed(s) {
		return true
	}
	return mayHoldNumbers(s) && hasEmbedded(s)
}

// hasCardRun reports whether doc has a run of 13 to 19 digits, not part of
// a decimal or an exponent, that is a card number: a JSON number Apply
// would redact (a run inside a string is judged with its string, and may
// be reported here too, which only costs a decode).
func hasCardRun(doc []byte) bool {
	// A run of at least 13 digits that starts in [i, i+12] covers i+12:
	// when that byte is not a digit, no run starts there.
	for i := 0; i+12 < len(doc); {
		if !isDigit(doc[i+12]) {
			i += 13
			continue
		}
		start := i + 12
		for start > 0 && isDigit(doc[start-1]) {
			start--
		}
		end := i + 12
		for end < len(doc) && isDigit(doc[end]) {
			end++
		}
		if n := end - start; n >= 13 && n <= 19 &&
			(start == 0 || (doc[start-1] != '.' && !isAlnum(doc[start-1]))) &&
			(end == len(doc) || (doc[end] != '.' && !isAlnum(doc[end]))) &&
			cardNumber(string(doc[start:end])) {
			return true
		}
		i = end + 1
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
