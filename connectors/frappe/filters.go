package frappe

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// filter is one Frappe filter condition, sent as [field, operator, value],
// or as [doctype, field, operator, value] when Doctype names a child table
// (Frappe then joins the child rows).
type filter struct {
	Field string
	Op    string
	Value any
	// Doctype is set only for conditions on a child table's field.
	Doctype string
}

// filters is a list of conditions that Frappe ANDs together (or ORs, when
// sent as or_filters).
type filters []filter

func (f filters) encode() string {
	rows := make([][]any, len(f))
	for i, c := range f {
		if c.Doctype != "" {
			rows[i] = []any{c.Doctype, c.Field, c.Op, c.Value}
		} else {
			rows[i] = []any{c.Field, c.Op, c.Value}
		}
	}
	b, _ := json.Marshal(rows)
	return string(b)
}

func (f *filters) add(field, op string, value any) {
	*f = append(*f, filter{Field: field, Op: op, Value: value})
}

// addChild adds a condition on a field of child table doctype.
func (f *filters) addChild(doctype, field, op string, value any) {
	*f = append(*f, filter{Field: field, Op: op, Value: value, Doctype: doctype})
}

// addIf adds an equality filter when value is not empty.
func (f *filters) addIf(field, value string) {
	if value != "" {
		f.add(field, "=", value)
	}
}

// Frappe v15 doubles backslashes in LIKE values, so a wildcard in text a
// person typed cannot be escaped over REST: "\%" would match a backslash
// followed by anything. erpgate therefore never sends the person's % or _
// as wildcards. It sends each as "_" (exactly one character, so the pattern
// still matches the literal text) and then keeps only the rows that really
// contain the text (textSearch.keep).

// containsPattern is a LIKE pattern that matches text anywhere and matches
// at least every value that literally contains it.
func containsPattern(text string) string {
	r := strings.NewReplacer(`%`, `_`)
	return "%" + r.Replace(text) + "%"
}

// hasWildcards reports whether text contains characters LIKE would treat
// specially, so that matches must be re-checked literally.
func hasWildcards(text string) bool { return strings.ContainsAny(text, `%_`) }

// textSearch is a literal, case-insensitive search over some fields.
type textSearch struct {
	text   string
	fields []string
}

// orFilters returns the LIKE conditions that find candidate rows.
func (s textSearch) orFilters() filters {
	p := containsPattern(s.text)
	out := make(filters, len(s.fields))
	for i, f := range s.fields {
		out[i] = filter{Field: f, Op: "like", Value: p}
	}
	return out
}

// keep reports whether a row literally contains the text in one of the
// fields, ignoring case and accents as the ERP's collation does. It is
// needed only when the text has LIKE wildcards; otherwise the ERP's match
// is already exact.
func (s textSearch) keep(row map[string]any) bool {
	needle := foldText(s.text)
	for _, f := range s.fields {
		if v, ok := row[f].(string); ok && strings.Contains(foldText(v), needle) {
			return true
		}
	}
	return false
}

// accentProne are the letters that carry accents in the Latin alphabets
// in use (French, German, Nordic, Polish, Czech, Turkish, Baltic, Māori,
// Vietnamese, ...). On an accent-sensitive ERP a LIKE pattern with the
// plain letter would miss the accented one, so foldedPattern leaves each
// of them to "_".
const accentProne = "acdegiklnorstuwyz"

// foldedPairs are folded letter pairs that one letter may stand for in the
// ERP ("ss" for "ß", "ae" for "æ"): foldedPattern lets "%" stand for them.
var foldedPairs = []string{"ss", "ae", "oe", "th", "ij"}

// foldedPattern is a LIKE pattern that, on any collation that ignores case
// (MariaDB's, PostgreSQL's ILIKE), matches every value that contains the
// word as typed, and every value whose accents on accent-prone letters are
// all that differ from it. Accent-prone letters, any other letter typed
// with an accent, and the person's own % and _ become "_" (any one
// character); letter pairs one letter may fold to ("ss" for "ß"), letters
// that fold to two ("ß" itself) and combining marks become "%". Digits,
// punctuation and the other letters stay as they are. The pattern is wider
// than the word: rows it finds must still be checked with foldText.
func foldedPattern(word string) string {
	rs := []rune(word)
	var b strings.Builder
	b.WriteByte('%')
	for i := 0; i < len(rs); i++ {
		r := unicode.ToLower(rs[i])
		if r < utf8.RuneSelf {
			if i+1 < len(rs) && slices.Contains(foldedPairs, string([]rune{r, unicode.ToLower(rs[i+1])})) {
				b.WriteByte('%')
				i++
				continue
			}
			if r == '%' || r == '_' || strings.ContainsRune(accentProne, r) {
				b.WriteByte('_')
			} else {
				b.WriteRune(r)
			}
			continue
		}
		switch f := []rune(foldText(string(r))); {
		case len(f) == 1 && f[0] == r:
			// A letter without an accent outside the Latin alphabet.
			b.WriteRune(r)
		case len(f) == 1:
			b.WriteByte('_')
		default:
			b.WriteByte('%')
		}
	}
	b.WriteByte('%')
	return b.String()
}

// patternLiterals counts the characters of a LIKE pattern that are not
// wildcards: the more, the fewer rows the ERP returns for it.
func patternLiterals(p string) int {
	n := 0
	for _, r := range p {
		if r != '%' && r != '_' {
			n++
		}
	}
	return n
}

// mostSelective returns the word whose foldedPattern has the most literal
// characters (the longer word on a tie, then the first).
func mostSelective(words []string) string {
	best, bestLit := "", -1
	for _, w := range words {
		lit := patternLiterals(foldedPattern(w))
		if lit > bestLit || lit == bestLit && utf8.RuneCountInString(w) > utf8.RuneCountInString(best) {
			best, bestLit = w, lit
		}
	}
	return best
}
