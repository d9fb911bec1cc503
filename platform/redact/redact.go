// Package redact removes sensitive values from tool results before they
// reach a model. Fields are matched by name (case-insensitive substrings,
// ignoring '_', '-', '.' and spaces, so "TaxID", "tax_id" and "Tax Id" are
// one pattern) and string values by shape (SSN-like and payment-card-like
// numbers). Matching values become "[REDACTED]"; the caller learns only the
// field paths, which it may log as a field_redaction event.
package redact

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Placeholder replaces every redacted value.
const Placeholder = "[REDACTED]"

// BuiltinPatterns are the field-name patterns redacted everywhere unless a
// deployment or site skips them (seed 000, "Sensitive Field Redaction").
var BuiltinPatterns = []string{
	"SSN", "SocialSecurity", "TaxRegistrationID", "TaxID", "BankAccount", "RoutingNumber",
	"IBAN", "SWIFT", "CreditCard", "CardNumber", "Password", "Secret", "Salary", "PayRate",
	"HourlyRate", "AnnualRate", "BirthDate", "DateOfBirth", "DOB",
}

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
	patterns []string
	skip     []string
	exempt   map[string]bool

	// verdicts remembers SensitiveName's answer for the field names seen:
	// results repeat the same few names call after call. It stops growing
	// at maxVerdicts names, so odd names cannot grow it without bound.
	mu       sync.RWMutex
	verdicts map[string]bool
}

const maxVerdicts = 4096

// New builds a redactor from the built-in patterns plus rules.
func New(rules Rules) *Redactor {
	r := &Redactor{}
	for _, p := range append(slices.Clone(BuiltinPatterns), rules.Add...) {
		if n := normalize(p); n != "" && !slices.Contains(r.patterns, n) {
			r.patterns = append(r.patterns, n)
		}
	}
	for _, p := range rules.Skip {
		if n := normalize(p); n != "" {
			r.skip = append(r.skip, n)
		}
	}
	r.exempt = map[string]bool{}
	for _, name := range rules.Exempt {
		r.exempt[normalize(name)] = true
	}
	return r
}

func normalize(name string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		switch c {
		case '_', '-', '.', ' ':
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// SensitiveName reports whether a field of this name is redacted.
func (r *Redactor) SensitiveName(name string) bool {
	r.mu.RLock()
	v, ok := r.verdicts[name]
	r.mu.RUnlock()
	if ok {
		return v
	}
	return r.judge(name)
}

// sensitiveNameBytes is SensitiveName for a name in a byte slice, without
// converting it to a string when its verdict is known.
func (r *Redactor) sensitiveNameBytes(name []byte) bool {
	r.mu.RLock()
	v, ok := r.verdicts[string(name)]
	r.mu.RUnlock()
	if ok {
		return v
	}
	return r.judge(string(name))
}

// judge decides whether a field of this name is redacted and remembers
// the verdict.
func (r *Redactor) judge(name string) bool {
	v := r.sensitive(name)
	r.mu.Lock()
	if r.verdicts == nil {
		r.verdicts = map[string]bool{}
	}
	if len(r.verdicts) < maxVerdicts {
		r.verdicts[name] = v
	}
	r.mu.Unlock()
	return v
}

func (r *Redactor) sensitive(name string) bool {
	n := normalize(name)
	if r.exempt[n] {
		return false
	}
	for _, s := range r.skip {
		if strings.Contains(n, s) {
			return false
		}
	}
	for _, p := range r.patterns {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// Apply redacts v in place (a value decoded from JSON: maps, slices,
// strings, numbers) and returns the new value and the redacted paths, such
// as "data.items[3].tax_id".
func (r *Redactor) Apply(v any) (any, []string) {
	var paths []string
	out := r.walk(v, "", &paths)
	return out, paths
}

func (r *Redactor) walk(v any, path string, paths *[]string) any {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			p := join(path, k)
			if child != nil && r.SensitiveName(k) && !isEmptyValue(child) {
				t[k] = Placeholder
				*paths = append(*paths, p)
				continue
			}
			t[k] = r.walk(child, p, paths)
		}
		return t
	case []any:
		for i, child := range t {
			t[i] = r.walk(child, path+"["+strconv.Itoa(i)+"]", paths)
		}
		return t
	case string:
		if looksSensitive(t) {
			*paths = append(*paths, path)
			return Placeholder
		}
	}
	return v
}

// isEmptyValue reports values with nothing to hide, including a value that
// is already the placeholder.
func isEmptyValue(v any) bool {
	switch t := v.(type) {
	case string:
		return t == "" || t == Placeholder
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var ssnShape = regexp.MustCompile(`^\d{3}-\d{2}-\d{4}$`)

// looksSensitive reports whether a whole string value has the shape of a
// US social security number or a payment card number (13–19 digits,
// optionally grouped by spaces or dashes, passing the Luhn check).
func looksSensitive(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 11 || len(s) > 23 {
		return false
	}
	if ssnShape.MatchString(s) {
		return true
	}
	digits := make([]byte, 0, 19)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c-'0')
		case c == ' ' || c == '-':
		default:
			return false
		}
	}
	return len(digits) >= 13 && len(digits) <= 19 && luhn(digits)
}

func luhn(d []byte) bool {
	sum := 0
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i])
		if (len(d)-1-i)%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}
