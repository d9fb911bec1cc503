package frappe

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestNormalizeName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Acme Widgets Inc", "acme widgets"},
		{"ACME WIDGETS, LLC.", "acme widgets"},
		{"Aroha Café Limited", "aroha cafe"},
		{"O'Brien & Sons Ltd", "obrien and sons"},
		{"Sydney Harbour Traders Pty Ltd", "sydney harbour traders"},
		{"Müller Maschinenbau GmbH", "muller maschinenbau"},
		{"The Warehouse", "warehouse"},
		{"Limited", "limited"},
		{"Ngā Tāonga Design Ltd", "nga taonga design"},
		{"Under_Score Labs LLC", "under score labs"},
	} {
		if got := normalizeName(tc.in); got != tc.want {
			t.Errorf("normalizeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := searchTokens("the O'Brien & Sons Ltd of Auckland", 3); strings.Join(got, " ") != "auckland obrien sons" {
		t.Errorf("searchTokens = %v", got)
	}
}

func FuzzNormalizeName(f *testing.F) {
	for _, s := range []string{"Acme Widgets Inc", "O'Brien & Sons Ltd", "Ngā Tāonga", "100% Pure", "", "  ltd  ", "ÀÉÎÕÜ ß æ œ", "a_b%c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // arguments arrive as JSON text, always valid UTF-8
		}
		n := normalizeName(s)
		if normalizeName(n) != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, normalizeName(n))
		}
		if n != strings.TrimSpace(n) || strings.Contains(n, "  ") {
			t.Fatalf("untidy spacing: %q", n)
		}
		for _, r := range n {
			if r != ' ' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				t.Fatalf("punctuation left in %q", n)
			}
			if unicode.ToLower(r) != r {
				t.Fatalf("upper case left in %q", n)
			}
		}
		// Case never changes the key, and a name keeps at least one word.
		if normalizeName(strings.ToUpper(s)) != normalizeName(strings.ToLower(s)) && strings.ToLower(strings.ToUpper(s)) == strings.ToLower(s) {
			t.Fatalf("case changes the key of %q", s)
		}
		if strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 && n == "" {
			t.Fatalf("%q normalised to nothing", s)
		}
		if compactKey(s) != strings.ReplaceAll(n, " ", "") {
			t.Fatalf("compactKey disagrees with normalizeName for %q", s)
		}
		for _, tok := range searchTokens(s, partyTokenBound) {
			if strings.ContainsAny(tok, "%_") || len([]rune(tok)) < 2 {
				t.Fatalf("search token %q", tok)
			}
		}
	})
}
