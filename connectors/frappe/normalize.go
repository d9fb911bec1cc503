package frappe

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Names people say ("acme widgets", "o brien and sons") rarely match the
// ERP's record exactly. normalizeName reduces a party name to a comparable
// key: accents folded, lower case, "&" read as "and", apostrophes dropped
// (O'Brien = OBrien), other punctuation as spaces, and trailing legal
// suffixes (Ltd, Limited, LLC, Inc, GmbH, Pty, ...) removed. Two names with
// the same key are the same name for a person, so "Acme Widgets Inc" and
// "Acme Widgets LLC" collide on purpose: the caller must then ask which one
// is meant.

// legalSuffixes are tokens removed from the end of a normalised name.
var legalSuffixes = map[string]bool{
	"ltd": true, "limited": true, "llc": true, "inc": true, "incorporated": true,
	"gmbh": true, "pty": true, "plc": true, "llp": true, "corp": true,
	"corporation": true, "co": true, "company": true, "ag": true, "bv": true,
	"nv": true, "sa": true, "srl": true, "sarl": true, "kg": true, "oy": true,
	"ab": true, "as": true, "aps": true, "pte": true, "pvt": true, "lp": true,
}

// Accents are folded on erpgate's side, whatever the ERP's collation:
// MariaDB's utf8mb4_unicode_ci ignores them, but Frappe on PostgreSQL
// (ILIKE) and accent-sensitive MariaDB collations do not. A letter is
// decomposed (NFD) and its combining marks dropped ("ü" → "u", "ā" → "a");
// the letters that do not decompose are mapped by letterFold.
var letterFold = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'œ': "oe", 'ø': "o", 'ł': "l", 'đ': "d",
	'ð': "d", 'þ': "th", 'ı': "i", 'ħ': "h", 'ŧ': "t", 'ĳ': "ij", 'ŀ': "l",
}

// foldRune appends the folded, lower-case form of r to b.
func foldRune(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf {
		b.WriteRune(unicode.ToLower(r))
		return
	}
	r = unicode.ToLower(r)
	if f, ok := letterFold[r]; ok {
		b.WriteString(f)
		return
	}
	for _, d := range norm.NFD.String(string(r)) {
		if !unicode.Is(unicode.Mn, d) {
			b.WriteRune(d)
		}
	}
}

// foldText lower-cases s and folds accents, keeping every other character,
// so "cafe" is found in "Aroha Café" and "creme brulee" in "Crème Brûlée".
func foldText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		foldRune(&b, r)
	}
	return b.String()
}

// apostrophes are dropped rather than split on: "Hawke's" is one word.
const apostrophes = "'’‘`´"

// nameTokens returns the normalised tokens of s, legal suffixes included.
func nameTokens(s string) []string {
	var b strings.Builder
	for _, r := range foldText(s) {
		switch {
		case strings.ContainsRune(apostrophes, r):
			continue
		case r == '&' || r == '+':
			b.WriteString(" and ")
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	return strings.Fields(b.String())
}

// stripLegal removes trailing legal-suffix tokens and a leading "the",
// never leaving the name empty.
func stripLegal(tokens []string) []string {
	if len(tokens) > 1 && tokens[0] == "the" {
		tokens = tokens[1:]
	}
	for len(tokens) > 1 && legalSuffixes[tokens[len(tokens)-1]] {
		tokens = tokens[:len(tokens)-1]
	}
	return tokens
}

// normalizeName returns the comparison key of a party name.
func normalizeName(s string) string {
	return strings.Join(stripLegal(nameTokens(s)), " ")
}

// compactKey is normalizeName without spaces, so a spoken "O Brien and
// Sons" equals "O'Brien & Sons Ltd" and "Kiwi Fresh" equals "KiwiFresh".
func compactKey(s string) string {
	return strings.Join(stripLegal(nameTokens(s)), "")
}

// searchTokens returns the tokens of a spoken query worth searching for:
// normalised, without legal suffixes, "and", or single characters, longest
// first, at most max of them.
func searchTokens(s string, maxTokens int) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range stripLegal(nameTokens(s)) {
		if len([]rune(t)) < 2 || t == "and" || t == "the" || legalSuffixes[t] || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	// Longer tokens are more selective; keep the order stable otherwise.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	if len(out) > maxTokens {
		out = out[:maxTokens]
	}
	return out
}

// containsAllTokens reports whether every token of query appears among the
// tokens of name, so "acme" partially matches "Acme Widgets Inc".
func containsAllTokens(name string, query []string) bool {
	have := map[string]bool{}
	for _, t := range nameTokens(name) {
		have[t] = true
	}
	for _, q := range query {
		if !have[q] {
			return false
		}
	}
	return len(query) > 0
}
