// Package redact removes sensitive values from tool results, and from
// error text, before they reach a model. Fields are matched by name, word
// by word (names are split on snake_case, camelCase, PascalCase, digits and
// acronyms, so "TaxID", "tax_id" and "Tax Id" are one rule, and "adobe_id"
// is not "DOB"); values by shape wherever they are (IBANs, payment-card
// numbers, SSNs). Name/value rows ({"Name": "SSN", "Value": "…"}) have their
// value redacted when the row's name is sensitive. Matching values become
// "[REDACTED]"; the caller learns only the field paths, which it may log as
// a field_redaction event.
package redact

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Placeholder replaces every redacted value.
const Placeholder = "[REDACTED]"

// BuiltinPatterns are the field-name rules redacted everywhere unless a
// deployment or site skips them: MCP4Acumatica's sensitive-field list,
// widened by issue 14. Each is a word sequence written in any case style:
// "TaxID" matches tax_id, TaxID and "Tax ID", never "TaxIdentifierType"'s
// neighbours by accident.
var BuiltinPatterns = []string{
	// Personal identity.
	"SSN", "SocialSecurity", "NationalID", "NationalIdentity", "NationalInsurance",
	"Passport", "DriversLicense", "DriverLicense", "DrivingLicence", "DrivingLicense",
	"BirthDate", "DateOfBirth", "DOB", "Birthday",
	// Tax numbers.
	"TaxID", "TaxNo", "TaxNumber", "TaxNbr", "TaxRegistration", "TaxExemptionNbr",
	"TaxExemptionNumber", "TaxExemptionNo", "TaxExemptionID", "VatID", "VatNo", "VatNumber",
	"VatNbr", "VatRegistration", "EIN", "TIN", "GSTIN", "ABN", "IRD", "TFN",
	// Bank and card accounts.
	"BankAccount", "BankAcNo", "AcNo", "AccountNumber", "AccountNo", "AccountNbr", "AcctNo",
	"AcctNbr", "AcctNumber", "RoutingNumber", "RoutingNo", "RoutingNbr", "SortCode", "BSB",
	"BranchCode", "IBAN", "SWIFT", "BIC", "CreditCard", "CardNumber", "CardNo", "CardNbr",
	"CVV", "CVC",
	// Credentials.
	"Password", "Passwd", "Secret", "APIKey", "PrivateKey", "AccessToken", "RefreshToken",
	// Pay.
	"Salary", "PayRate", "HourlyRate", "AnnualRate", "Wage", "Wages", "GrossPay", "NetPay",
	"Compensation", "CTC",
}

// labelOnly are words that make a name/value row sensitive when they are
// the row's whole name, though a field of that name is not: a payment
// instruction {"ID": "ACCOUNT", "Value": "000123456789"} holds an account
// number, while a record's Account field names a ledger account.
var labelOnly = []string{"Account", "Acct", "Routing", "ABA", "PIN"}

// ssnHints are words that, in a field's name, make a nine-digit value an
// SSN even without dashes ("078051120", "078 05 1120").
var ssnHints = []string{"SSN", "SS", "SSNo", "Soc", "SocSec", "Social", "SIN"}

// Rules say what to redact.
type Rules struct {
	// Add are extra field-name patterns.
	Add []string
	// Skip are patterns never redacted: a field whose name contains a skip
	// pattern is left alone even if it also matches a redaction pattern.
	Skip []string
	// Exempt are exact field names (compared as normalised names) that are
	// never redacted. Connectors use it for fields whose names match a
	// pattern but whose values are not sensitive, such as Frappe's
	// bank_account, which holds the name of a Bank Account record; the
	// account number lives in bank_account_no, which stays redacted.
	Exempt []string
}

// Merge returns r with other's additions, skips and exemptions appended.
func (r Rules) Merge(other Rules) Rules {
	return Rules{
		Add:    append(slices.Clone(r.Add), other.Add...),
		Skip:   append(slices.Clone(r.Skip), other.Skip...),
		Exempt: append(slices.Clone(r.Exempt), other.Exempt...),
	}
}

// Redactor applies a fixed set of rules. It is safe for concurrent use.
type Redactor struct {
	patterns wordSet
	skip     wordSet
	exempt   map[string]bool
	labels   wordSet
	ssnHints wordSet

	// verdicts remembers SensitiveName's answer for the field names seen:
	// results repeat the same few names call after call. It stops growing
	// at maxVerdicts names, so odd names cannot grow it without bound.
	mu       sync.RWMutex
	verdicts map[string]verdict
}

const maxVerdicts = 4096

// New builds a redactor from the built-in patterns plus rules.
func New(rules Rules) *Redactor {
	r := &Redactor{patterns: wordSet{}, skip: wordSet{}, exempt: map[string]bool{}, labels: wordSet{}, ssnHints: wordSet{}}
	for _, p := range append(slices.Clone(BuiltinPatterns), rules.Add...) {
		r.patterns.add(p)
	}
	for _, p := range rules.Skip {
		r.skip.add(p)
	}
	for _, name := range rules.Exempt {
		r.exempt[normalize(name)] = true
	}
	for _, p := range labelOnly {
		r.labels.add(p)
	}
	for _, p := range ssnHints {
		r.ssnHints.add(p)
	}
	return r
}

// normalize is a name as exemptions compare it: lower case, without
// separators.
func normalize(name string) string {
	return strings.Join(Words(name), "")
}

// A verdict is what the rules say about a field name, as bits.
type verdict uint8

const (
	// nameSensitive: a field of this name is redacted.
	nameSensitive verdict = 1 << iota
	// nameHintsSSN: a nine-digit value under this name is an SSN.
	nameHintsSSN
	// nameRowLabel: the name names a name/value row (rowLabelKeys).
	nameRowLabel
	// nameRowValue: the name holds a name/value row's value.
	nameRowValue
)

// SensitiveName reports whether a field of this name is redacted.
func (r *Redactor) SensitiveName(name string) bool {
	return r.verdict(name)&nameSensitive != 0
}

// verdict returns the verdict on a field name, remembered.
func (r *Redactor) verdict(name string) verdict {
	r.mu.RLock()
	v, ok := r.verdicts[name]
	r.mu.RUnlock()
	if ok {
		return v
	}
	return r.judge(name)
}

// sensitiveNameBytes is SensitiveName for a name in a byte slice.
func (r *Redactor) sensitiveNameBytes(name []byte) bool {
	return r.verdictBytes(name)&nameSensitive != 0
}

// verdictBytes is verdict for a name in a byte slice, without converting
// it to a string when its verdict is known.
func (r *Redactor) verdictBytes(name []byte) verdict {
	r.mu.RLock()
	v, ok := r.verdicts[string(name)]
	r.mu.RUnlock()
	if ok {
		return v
	}
	return r.judge(string(name))
}

// judge decides the verdict on a field name and remembers it.
func (r *Redactor) judge(name string) verdict {
	var v verdict
	if r.sensitive(name) {
		v |= nameSensitive
	}
	if r.hintsSSN(name) {
		v |= nameHintsSSN
	}
	if slices.Contains(rowLabelKeys, name) {
		v |= nameRowLabel
	}
	if name == "Value" || name == "value" {
		v |= nameRowValue
	}
	r.mu.Lock()
	if r.verdicts == nil {
		r.verdicts = map[string]verdict{}
	}
	if len(r.verdicts) < maxVerdicts {
		r.verdicts[name] = v
	}
	r.mu.Unlock()
	return v
}

func (r *Redactor) sensitive(name string) bool {
	return r.sensitiveWords(Words(name))
}

func (r *Redactor) sensitiveWords(words []string) bool {
	if r.exempt[strings.Join(words, "")] {
		return false
	}
	if r.skip.match(words) {
		return false
	}
	return r.patterns.match(words)
}

// sensitiveLabel reports whether a name/value row whose name is label
// holds a sensitive value: the label is a sensitive name, a bare word such
// as ACCOUNT, or names an SSN.
func (r *Redactor) sensitiveLabel(label string) bool {
	if len(label) == 0 || len(label) > 100 {
		return false
	}
	words := Words(label)
	if r.sensitiveWords(words) {
		return true
	}
	if len(words) == 1 && r.labels[words[0]] {
		return true
	}
	return r.ssnHints.match(words)
}

// hintsSSN reports whether a field of this name may hold an SSN written
// without dashes.
func (r *Redactor) hintsSSN(name string) bool {
	return r.ssnHints.match(Words(name))
}

// Redacted says what Apply redacted: Count values, at Paths, such as
// "data.items[3].tax_id". Paths holds at most maxPaths of them: the first
// path of each field (its path without positions), then the first others
// found; a path longer than maxPathBytes keeps its end, after "…".
type Redacted struct {
	Count int
	Paths []string
}

// The bounds of Redacted.Paths: an answer (at most the response bound)
// may hold hundreds of thousands of values to redact, nested as deep as
// the ERP likes, and the paths go on one log line.
const (
	maxPaths     = 200
	maxPathBytes = 512
)

// Apply redacts v in place (a value decoded from JSON: maps, slices,
// strings, numbers) and says what it redacted. It builds a value's path
// only when it redacts the value: the paths of the rest would cost, in an
// answer nested deep, far more than the answer.
func (r *Redactor) Apply(v any) (any, Redacted) {
	w := walker{r: r, path: make([]byte, 0, 128)}
	out := w.walk(v, "")
	return out, w.found
}

// walker is one Apply: path is the path of the value being visited.
type walker struct {
	r      *Redactor
	path   []byte
	found  Redacted
	fields map[string]bool // found's paths without positions
	field  []byte          // scratch for one path without positions
}

// walk redacts v, found at w.path under a member called name ("" in an
// array or at the top).
func (w *walker) walk(v any, name string) any {
	r := w.r
	switch t := v.(type) {
	case map[string]any:
		rowValue := r.rowValueKey(t)
		for k, child := range t {
			n := len(w.path)
			if n > 0 {
				w.path = append(w.path, '.')
			}
			w.path = append(w.path, k...)
			if child != nil && !isEmptyValue(child) && ((rowValue != "" && k == rowValue) || r.SensitiveName(k)) {
				t[k] = Placeholder
				w.note()
			} else {
				t[k] = w.walk(child, k)
			}
			w.path = w.path[:n]
		}
		return t
	case []any:
		for i, child := range t {
			n := len(w.path)
			w.path = append(w.path, '[')
			w.path = strconv.AppendInt(w.path, int64(i), 10)
			w.path = append(w.path, ']')
			t[i] = w.walk(child, "")
			w.path = w.path[:n]
		}
		return t
	case string:
		if out, changed := r.redactString(t, name); changed {
			w.note()
			return out
		}
	case json.Number:
		if cardNumber(string(t)) {
			w.note()
			return Placeholder
		}
	case float64:
		if t >= 1e12 && t < 1e19 && t == float64(int64(t)) && cardNumber(strconv.FormatInt(int64(t), 10)) {
			w.note()
			return Placeholder
		}
	}
	return v
}

// note counts the value at w.path as redacted, and keeps its path if it
// is the first of its field or there is room.
func (w *walker) note() {
	w.found.Count++
	if len(w.found.Paths) >= maxPaths {
		return
	}
	w.field = appendField(w.field[:0], w.path)
	if w.fields == nil {
		w.fields = map[string]bool{}
	}
	if w.fields[string(w.field)] && len(w.found.Paths) >= maxPaths/2 {
		// Half the room is kept for fields not seen yet.
		return
	}
	w.fields[string(w.field)] = true
	p := w.path
	if len(p) > maxPathBytes {
		start := len(p) - maxPathBytes
		for start < len(p) && !utf8.RuneStart(p[start]) {
			start++
		}
		p = append([]byte("…"), p[start:]...)
	}
	w.found.Paths = append(w.found.Paths, string(p))
}

// redactString redacts a string value of a member called name: the whole
// value when it has a sensitive shape, or the IBANs and card numbers
// inside it.
func (r *Redactor) redactString(s, name string) (string, bool) {
	if looksSensitive(s) || (name != "" && ssnUndashed(s) && r.verdict(name)&nameHintsSSN != 0) {
		return Placeholder, true
	}
	if !mayHoldNumbers(s) {
		return s, false
	}
	out := redactEmbedded(s)
	return out, out != s
}

// rowLabelKeys are the members that name a name/value row: Acumatica's
// attributes (AttributeID), payment instructions (PaymentInstructionsID,
// Description), payment-method details (Name), and key/value child tables.
var rowLabelKeys = []string{"ID", "Name", "name", "Key", "key", "Attribute", "attribute", "AttributeID",
	"AttributeDescription", "PaymentInstructionsID", "Description", "description", "Label", "label"}

// rowValueKey returns the member holding a name/value row's value when the
// row's name is sensitive ("Value" or "value"), or "".
func (r *Redactor) rowValueKey(m map[string]any) string {
	valueKey := ""
	for _, k := range [...]string{"Value", "value"} {
		if _, ok := m[k]; ok {
			valueKey = k
			break
		}
	}
	if valueKey == "" || len(m) < 2 {
		return ""
	}
	for _, k := range rowLabelKeys {
		if label, ok := unwrapString(m[k]); ok && r.sensitiveLabel(label) {
			return valueKey
		}
	}
	return ""
}

// unwrapString returns a string member's text, also when Acumatica wraps
// it as {"value": "…"}.
func unwrapString(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case map[string]any:
		if len(t) == 1 {
			s, ok := t["value"].(string)
			return s, ok
		}
	}
	return "", false
}

// isEmptyValue reports values with nothing to hide, including a value that
// is already the placeholder.
func isEmptyValue(v any) bool {
	switch t := v.(type) {
	case string:
		return t == "" || t == Placeholder
	case map[string]any:
		if len(t) == 1 {
			if inner, ok := t["value"]; ok {
				return inner == nil || isEmptyValue(inner)
			}
		}
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// SensitivePath reports whether a field path a call names (a filter's
// field, a select or expand entry: "TaxID", "MainContact/Email",
// "Document.UsrSSN") covers a redacted field, and which part of it does.
func (r *Redactor) SensitivePath(path string) (string, bool) {
	start := 0
	for i := 0; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' && path[i] != '.' {
			continue
		}
		if part := path[start:i]; part != "" && r.SensitiveName(part) {
			return part, true
		}
		start = i + 1
	}
	if start > 0 && r.SensitiveName(path) {
		return path, true
	}
	return "", false
}

// Field is a path's field: the path without its array positions
// ("data[3].tax_id" is "data[].tax_id").
func Field(path string) string {
	return string(appendField(nil, path))
}

// appendField appends path to dst without the digits of each [n].
func appendField[P ~string | ~[]byte](dst []byte, path P) []byte {
	inIndex := false
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '[':
			inIndex = true
		case c == ']':
			inIndex = false
		case inIndex && c >= '0' && c <= '9':
			continue
		}
		dst = append(dst, c)
	}
	return dst
}
