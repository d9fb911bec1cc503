package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Words splits a field name into its lower-case word parts: on anything
// that is not a letter or digit (snake_case, kebab-case, dotted paths,
// spaces), between a lower-case letter and an upper-case one (camelCase),
// between letters and digits, and before the last capital of an acronym
// that starts a new word (PascalCase with acronyms):
//
//	BankAcctNbr       → bank acct nbr
//	TaxRegistrationID → tax registration id
//	SSNLast4          → ssn last 4
//	DOBSON_NOTES      → dobson notes
//
// Rules match whole words, so "adobe_id" (adobe id) is not "dob".
func Words(name string) []string {
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, strings.ToLower(cur.String()))
			cur.Reset()
		}
	}
	const (
		none = iota
		lower
		upper
		digit
	)
	prev := none
	for _, c := range name {
		var class int
		switch {
		case unicode.IsDigit(c):
			class = digit
		case unicode.IsUpper(c):
			class = upper
		case unicode.IsLetter(c):
			class = lower
		default:
			flush()
			prev = none
			continue
		}
		switch {
		case prev == none:
		case class == digit && prev != digit, class != digit && prev == digit:
			flush()
		case class == upper && prev == lower:
			flush()
		case class == lower && prev == upper && cur.Len() > 1:
			// "SSNLast": the L begins a new word, "SSN" is one.
			s := cur.String()
			_, size := utf8.DecodeLastRuneInString(s)
			cur.Reset()
			cur.WriteString(s[:len(s)-size])
			flush()
			cur.WriteString(s[len(s)-size:])
		}
		cur.WriteRune(c)
		prev = class
	}
	flush()
	return words
}

// maxRuleWords bounds how many consecutive words of a name are joined
// when looking for a rule: no rule has more.
const maxRuleWords = 5

// wordSet is a set of rules, each stored as its words joined
// ("tax id" as "taxid"). A name matches when some run of its consecutive
// words, joined, is a rule: "TaxID", "tax_id", "Tax Id" and "taxid" all
// match the rule TaxID, while "adobe_id" (adobe id) does not match DOB.
type wordSet map[string]bool

func (s wordSet) add(pattern string) {
	if w := strings.Join(Words(pattern), ""); w != "" {
		s[w] = true
	}
}

// match reports whether a run of consecutive words is in the set.
func (s wordSet) match(words []string) bool {
	if len(s) == 0 {
		return false
	}
	var b strings.Builder
	for i := range words {
		b.Reset()
		for j := i; j < len(words) && j < i+maxRuleWords; j++ {
			b.WriteString(words[j])
			if s[b.String()] {
				return true
			}
		}
	}
	return false
}
