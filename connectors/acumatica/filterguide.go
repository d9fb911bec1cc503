package acumatica

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/erpgate/erpgate/platform/connector"
)

// Acumatica speaks two OData dialects, and a model mixing them is the most
// common reason a filter fails: the contract-based REST API takes OData v3
// ($filter with substringof, datetimeoffset'…' literals), the GI endpoint
// takes OData v4 (contains, bare dates). When Acumatica rejects a filter,
// explainFilter says which dialect the tool speaks, what in the expression
// looks wrong, and which field names really exist — and that the query
// never ran, so the failure says nothing about whether records exist.

// filterDialect is the OData dialect of the endpoint a filter went to.
type filterDialect int

const (
	dialectContract filterDialect = iota // contract REST, OData v3
	dialectInquiry                       // GI OData, v4
)

func (d filterDialect) String() string {
	if d == dialectInquiry {
		return "generic-inquiry OData (OData v4)"
	}
	return "contract REST (OData v3)"
}

var (
	reStringLiteral  = regexp.MustCompile(`'(?:[^']|'')*'`)
	reContainsCall   = regexp.MustCompile(`(?i)\bcontains\s*\(`)
	reSubstringof    = regexp.MustCompile(`(?i)\bsubstringof\s*\(`)
	reTypedDate      = regexp.MustCompile(`(?i)\b(datetimeoffset|datetime|date)\s*'`)
	reBareDate       = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?\b`)
	reTypedGUID      = regexp.MustCompile(`(?i)\bguid\s*'`)
	reDoubleQuoted   = regexp.MustCompile(`"[^"]*"`)
	reSymbolOperator = regexp.MustCompile(`==|!=|&&|\|\||>=|<=|<>|[^=!<>]=[^=]|[<>]`)
	reInOperator     = regexp.MustCompile(`(?i)\s(in|like|between)\s*[('"]`)
	reUnknownProp    = regexp.MustCompile(`(?i)property named '([^']*)'`)
	reUnknownFunc    = regexp.MustCompile(`(?i)(?:unknown function|function with name) '([^']*)'`)
	reIdentifier     = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z_][A-Za-z0-9_]*)*`)
	// reCustomField is a custom-field reference, cf.String(f='View.Field'),
	// once its string literal is blanked: its "f=" is not an operator.
	reCustomField = regexp.MustCompile(`(?i)\bcf\s*\.\s*[A-Za-z]+\s*\(\s*f\s*=\s*''\s*\)`)
)

// odataWords are the keywords, functions and literal prefixes of both
// dialects: identifiers that are not field names.
var odataWords = map[string]bool{
	"and": true, "or": true, "not": true, "eq": true, "ne": true, "gt": true, "ge": true, "lt": true, "le": true,
	"true": true, "false": true, "null": true, "substringof": true, "contains": true, "startswith": true,
	"endswith": true, "tolower": true, "toupper": true, "trim": true, "length": true, "indexof": true,
	"datetimeoffset": true, "datetime": true, "date": true, "guid": true, "cf": true, "f": true, "year": true,
	"month": true, "day": true, "in": true, "like": true, "between": true, "add": true, "sub": true,
	"mul": true, "div": true, "mod": true, "concat": true, "substring": true, "time": true, "now": true,
}

// explainFilter builds the message for a filter Acumatica rejected. expr
// is the filter as sent, upstream what Acumatica said, fields the real
// field names of the entity or inquiry (may be empty when they could not
// be read), target names it ("entity Customer", "inquiry AR-OpenInvoices").
func explainFilter(d filterDialect, expr, upstream string, fields []string, target string) string {
	var b strings.Builder
	b.WriteString("Acumatica rejected the filterExpression, so the query never ran: no records were read, which says nothing about whether matching records exist.")
	if u := cleanDetail(upstream); u != "" {
		b.WriteString(" Acumatica said: " + sentence(u))
	}
	for _, h := range filterHints(d, expr, upstream, fields) {
		b.WriteString(" ")
		b.WriteString(h)
	}
	b.WriteString(" ")
	b.WriteString(dialectSummary(d))
	if len(fields) > 0 {
		shown := fields
		if len(shown) > 40 {
			shown = shown[:40]
		}
		fmt.Fprintf(&b, " Fields of %s: %s", target, strings.Join(shown, ", "))
		if len(fields) > len(shown) {
			fmt.Fprintf(&b, " and %d more (see the describe tool)", len(fields)-len(shown))
		}
		b.WriteString(".")
	}
	return b.String()
}

// dialectSummary states the dialect's syntax in one place.
func dialectSummary(d filterDialect) string {
	if d == dialectInquiry {
		return "This tool reads a generic inquiry over OData v4: compare with eq ne gt ge lt le, combine with and/or/not, " +
			"search text with contains(Field,'text'), startswith(Field,'text') or endswith(Field,'text') (not substringof), " +
			"write strings in single quotes ('O''Brien' for a quote), and dates bare: Date ge 2025-01-31 or LastModifiedOn gt 2025-01-31T10:00:00Z. Field names are the inquiry's column names."
	}
	return "This tool reads contract-based REST, which speaks OData v3: compare with eq ne gt ge lt le, combine with and/or/not, " +
		"search text with substringof('text', Field) (text first), startswith(Field,'text') or endswith(Field,'text') (not contains), " +
		"write strings in single quotes ('O''Brien' for a quote), and dates as datetimeoffset'2025-01-31T00:00:00+00:00'. " +
		"Linked entities are reached as MainContact/Email (they must also be in expand); detail lines cannot be filtered."
}

// filterHints lists what in expr looks wrong for dialect d.
func filterHints(d filterDialect, expr, upstream string, fields []string) []string {
	var hints []string
	add := func(format string, args ...any) { hints = append(hints, fmt.Sprintf(format, args...)) }
	outside := withoutLiterals(expr)

	if strings.ContainsAny(expr, "‘’“”") {
		add("The expression contains typographic quotes; use straight single quotes (').")
	}
	switch d {
	case dialectContract:
		if reContainsCall.MatchString(outside) {
			add("contains(…) is OData v4 and this endpoint speaks v3: write substringof('text', Field) instead — the text comes first.")
		}
		if reBareDate.MatchString(outside) && !reTypedDate.MatchString(outside) {
			add("A bare date is OData v4; here wrap it: datetimeoffset'2025-01-31T00:00:00+00:00' (or date'2025-01-31' on 25.200.001).")
		}
	case dialectInquiry:
		if reSubstringof.MatchString(outside) {
			add("substringof(…) is OData v3 and inquiries speak v4: write contains(Field, 'text') instead — the field comes first.")
		}
		if reTypedDate.MatchString(outside) {
			add("Typed date literals such as datetimeoffset'…' are OData v3; inquiries take dates bare: Date ge 2025-01-31.")
		}
		if reTypedGUID.MatchString(outside) {
			add("guid'…' is OData v3; inquiries take GUIDs bare.")
		}
	}
	if reDoubleQuoted.MatchString(reStringLiteral.ReplaceAllString(expr, "''")) {
		add("Strings are written in single quotes, not double quotes.")
	}
	if reSymbolOperator.MatchString(outside) {
		add("Operators are words: eq, ne, gt, ge, lt, le, and, or, not (not ==, !=, =, <, >, &&, ||).")
	}
	if reInOperator.MatchString(" " + outside) {
		add("OData has no in, like or between operator: combine comparisons with or/and, and search text with %s.", textFunction(d))
	}
	if strings.Count(expr, "'")%2 == 1 {
		add("A string is not closed: every string needs a closing quote, and a quote inside a string is doubled ('O''Brien').")
	}
	if m := reUnknownFunc.FindStringSubmatch(upstream); m != nil && !strings.EqualFold(m[1], "contains") && !strings.EqualFold(m[1], "substringof") {
		add("%q is not a function Acumatica knows here; use %s, startswith or endswith.", m[1], textFunction(d))
	}
	if strings.Contains(strings.ToLower(upstream), "incompatible types") || strings.Contains(strings.ToLower(upstream), "no function signature") {
		add("A value has the wrong type for its field: text is quoted ('C000001'), numbers and booleans are bare (100, true).")
	}
	hints = append(hints, fieldHints(expr, upstream, fields)...)
	return hints
}

// withoutLiterals blanks string literals (and mistaken double-quoted
// ones) and custom-field references, so only the expression's own syntax
// is inspected.
func withoutLiterals(expr string) string {
	s := reStringLiteral.ReplaceAllString(expr, "''")
	s = reDoubleQuoted.ReplaceAllString(s, `""`)
	return reCustomField.ReplaceAllString(s, "cf")
}

// sentence ends s with a full stop unless it already ends a sentence.
func sentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "…") {
		return s
	}
	return s + "."
}

func textFunction(d filterDialect) string {
	if d == dialectInquiry {
		return "contains(Field,'text')"
	}
	return "substringof('text', Field)"
}

// fieldHints names fields the expression uses that do not exist, with the
// closest real names.
func fieldHints(expr, upstream string, fields []string) []string {
	var unknown []string
	if m := reUnknownProp.FindStringSubmatch(upstream); m != nil && m[1] != "" {
		unknown = append(unknown, m[1])
	}
	if len(fields) > 0 {
		known := map[string]bool{}
		for _, f := range fields {
			known[f] = true
		}
		outside := withoutLiterals(expr)
		for _, id := range reIdentifier.FindAllString(outside, -1) {
			first, _, _ := strings.Cut(id, "/")
			if odataWords[strings.ToLower(first)] || known[first] || slices.Contains(unknown, first) || isNumberLike(first) {
				continue
			}
			unknown = append(unknown, first)
		}
	}
	var hints []string
	for _, u := range unknown {
		if len(hints) >= 4 {
			break
		}
		if s := closestFields(u, fields); len(s) > 0 {
			hints = append(hints, fmt.Sprintf("There is no field %q; did you mean %s? Field names are case-sensitive.", u, strings.Join(s, " or ")))
		} else {
			hints = append(hints, fmt.Sprintf("There is no field %q here.", u))
		}
	}
	return hints
}

func isNumberLike(s string) bool {
	return s != "" && unicode.IsDigit(rune(s[0]))
}

// closestFields returns up to three field names closest to name: an exact
// case-insensitive match alone, else names within a small edit distance
// or sharing a word.
func closestFields(name string, fields []string) []string {
	for _, f := range fields {
		if strings.EqualFold(f, name) {
			return []string{f}
		}
	}
	type scored struct {
		name string
		dist int
	}
	var cands []scored
	ln := strings.ToLower(name)
	for _, f := range fields {
		lf := strings.ToLower(f)
		dist := editDistance(ln, lf)
		if strings.Contains(lf, ln) || strings.Contains(ln, lf) || wordPrefixes(name, f) {
			dist = min(dist, 2)
		}
		if dist <= max(2, len(ln)/3) {
			cands = append(cands, scored{f, dist})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	var out []string
	for i := 0; i < len(cands) && i < 3; i++ {
		out = append(out, cands[i].name)
	}
	return out
}

// wordPrefixes reports whether every word of name starts a word of field:
// "CustName" and "CustomerName".
func wordPrefixes(name, field string) bool {
	nw, fw := connector.SplitIdentifier(name), connector.SplitIdentifier(field)
	if len(nw) == 0 {
		return false
	}
	for _, w := range nw {
		found := false
		for _, f := range fw {
			if strings.HasPrefix(strings.ToLower(f), strings.ToLower(w)) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// editDistance is the Levenshtein distance of two short strings, capped at
// 64 runes each so hostile input cannot cost much.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 {
		ra = ra[:64]
	}
	if len(rb) > 64 {
		rb = rb[:64]
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

var (
	// reFuncEqTrue is a string function compared with true, "f(…) eq
	// true", found in an expression whose string literals are blanked (so
	// the arguments hold no parenthesis of their own); group 1 is the
	// function call.
	reFuncEqTrue = regexp.MustCompile(`(?i)\b((?:substringof|startswith|endswith)\s*\([^()]*\))\s+eq\s+true\b`)
	// reTrueEqFunc is the comparison written the other way round; group 1
	// is the start of the function call.
	reTrueEqFunc = regexp.MustCompile(`(?i)\btrue\s+eq\s+((?:substringof|startswith|endswith)\s*\()`)
)

// dropEqTrue removes "eq true" from a string function compared with true
// in a contract-API filter: "substringof('x', F) eq true" becomes
// "substringof('x', F)". The two mean the same in OData v3, but
// Acumatica's contract API answers the comparison with no rows and no
// error, so a model's textbook filter would read as "no records" (seed
// 000: MCP4Acumatica's normalizeODataFilter). Text inside string
// literals is never touched; "eq false" is left as written.
func dropEqTrue(expr string) string {
	return keepGroup(reTrueEqFunc, keepGroup(reFuncEqTrue, expr))
}

// keepGroup replaces every match of re in expr by the match's group 1.
// re is matched with expr's string literals blanked, so a literal that
// reads like the pattern is left alone.
func keepGroup(re *regexp.Regexp, expr string) string {
	masked := reStringLiteral.ReplaceAllStringFunc(expr, func(lit string) string {
		return "'" + strings.Repeat("x", len(lit)-2) + "'"
	})
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(masked, -1) {
		b.WriteString(expr[last:m[0]])
		b.WriteString(expr[m[2]:m[3]])
		last = m[1]
	}
	b.WriteString(expr[last:])
	return b.String()
}
