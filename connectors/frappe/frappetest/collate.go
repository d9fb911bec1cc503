package frappetest

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file approximates MariaDB's default utf8mb4_unicode_ci collation:
// comparisons ignore case and common Latin accents, and "=" / "<" / ">"
// ignore trailing spaces (PAD SPACE), while LIKE does not.

var accentFold = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'ā': "a", 'ă': "a", 'ą': "a",
	'ç': "c", 'ć': "c", 'č': "c", 'ď': "d", 'đ': "d",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ē': "e", 'ė': "e", 'ę': "e", 'ě': "e",
	'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ī': "i", 'į': "i", 'ı': "i",
	'ñ': "n", 'ń': "n", 'ň': "n",
	'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o", 'ō': "o", 'ő': "o",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ū': "u", 'ů': "u", 'ű': "u", 'ų': "u",
	'ý': "y", 'ÿ': "y", 'ž': "z", 'ź': "z", 'ż': "z", 'š': "s", 'ś': "s", 'ř': "r", 'ł': "l",
	'ß': "ss", 'æ': "ae", 'œ': "oe",
}

// foldRune maps one rune to its collation weight string.
func foldRune(r rune) string {
	r = unicode.ToLower(r)
	if s, ok := accentFold[r]; ok {
		return s
	}
	return string(r)
}

// collationKey returns the weight string used for =, <, > and ORDER BY.
func collationKey(s string) string {
	s = strings.TrimRight(s, " ")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteRune(r)
			continue
		}
		b.WriteString(foldRune(r))
	}
	return b.String()
}

// collateCompare compares two strings under the collation.
func collateCompare(a, b string) int {
	return strings.Compare(collationKey(a), collationKey(b))
}

// likeMatch reports whether s matches a Frappe v15 REST "like" value.
//
// Frappe (frappe/model/db_query.py prepare_filter_condition) doubles every
// backslash of the value before handing it to MariaDB "because like uses
// backslash for escaping", so a client's backslash always matches a literal
// backslash and can NOT escape "%" or "_": both stay wildcards. Matching is
// case- and accent-insensitive and does not ignore trailing spaces. It is
// per character, as MariaDB's LIKE: "ß", which "=" equals to "ss", is one
// character that "_" matches and "ss" does not.
func likeMatch(s, pattern string) bool {
	return likeRunes(foldRunes(s), foldRunes(pattern), true)
}

// likeMatchAccents is likeMatch ignoring case only, as PostgreSQL's ILIKE
// compares: "%cafe%" does not match "Café".
func likeMatchAccents(s, pattern string) bool {
	return likeRunes([]rune(strings.ToLower(s)), []rune(strings.ToLower(pattern)), true)
}

// foldRunes folds each character of s to one rune: its folded letter, or
// for a letter that folds to two ("ß" to "ss") a rune of its own, so that
// LIKE compares it as one character.
func foldRunes(s string) []rune {
	var out []rune
	for _, r := range s {
		if r == '%' || r == '_' {
			out = append(out, r)
			continue
		}
		f := []rune(foldRune(r))
		if len(f) != 1 {
			f = []rune{expansionRune(f)}
		}
		out = append(out, f[0])
	}
	return out
}

// expansionRunes gives each multi-letter fold of accentFold a private-use
// rune of its own.
var expansionRunes = func() map[string]rune {
	m := map[string]rune{}
	for _, f := range accentFold {
		if _, ok := m[f]; !ok && utf8.RuneCountInString(f) > 1 {
			m[f] = rune(0xE000 + len(m))
		}
	}
	return m
}()

func expansionRune(f []rune) rune { return expansionRunes[string(f)] }

// likeRunes matches with '%' and '_' as wildcards; the caller's pattern has
// no escape character. wild controls whether wildcards are active.
func likeRunes(s, p []rune, wild bool) bool {
	// Iterative matcher with backtracking on the last '%'.
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && wild && p[pi] == '%':
			starP, starS = pi, si
			pi++
		case pi < len(p) && (wild && p[pi] == '_' || p[pi] == s[si]):
			si++
			pi++
		case starP >= 0:
			starS++
			si = starS
			pi = starP + 1
		default:
			return false
		}
	}
	for pi < len(p) && wild && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}
