package frappe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFoldText(t *testing.T) {
	for in, want := range map[string]string{
		"Crème Brûlée Ltd":   "creme brulee ltd",
		"Zürich Partners AG": "zurich partners ag",
		"Łódź Straße":        "lodz strasse",
		"Ngā Tāonga":         "nga taonga",
		"Ærøskøbing Œuvre":   "aeroskobing oeuvre",
		"Şişli İnşaat":       "sisli insaat",
		"Nguyễn Đức":         "nguyen duc",
		"50% _off_":          "50% _off_",
		"Москва":             "москва",
	} {
		if got := foldText(in); got != want {
			t.Errorf("foldText(%q) = %q, want %q", in, got, want)
		}
	}
}

// accentSensitiveLike is PostgreSQL's ILIKE: case-insensitive, accents
// compared.
func accentSensitiveLike(pattern, value string) bool { return likeMatches(pattern, value) }

// accented puts accents on the accent-prone letters of s, and writes ß for
// "ss", as a name in the ERP may have them.
var accented = strings.NewReplacer("ss", "ß", "a", "ä", "c", "ç", "d", "đ", "e", "é", "g", "ğ", "i", "í", "k", "ķ", "l", "ł",
	"n", "ñ", "o", "ø", "r", "ř", "s", "š", "t", "ţ", "u", "ü", "w", "ŵ", "y", "ý", "z", "ž",
	"A", "Ä", "E", "É", "O", "Ö", "U", "Ü", "C", "Č", "S", "Š", "Z", "Ż")

func TestFoldedPatternFindsAccentedNames(t *testing.T) {
	for _, c := range []struct{ word, value string }{
		{"creme", "Crème Brûlée Ltd"},
		{"brulee", "Crème Brûlée Ltd"},
		{"zurich", "Zürich Partners AG"},
		{"Zürich", "Zurich Partners AG"},
		{"strasse", "Hauptstraße 5"},
		{"straße", "Hauptstrasse 5"},
		{"100%", "100% Pure Juice"},
		{"under_score", "Under_Score Labs"},
		{"lodz", "Łódź Trading"},
		{"aeroskobing", "Ærøskøbing Havn"},
	} {
		p := foldedPattern(c.word)
		if !accentSensitiveLike(p, c.value) {
			t.Errorf("pattern %q of %q misses %q", p, c.word, c.value)
		}
		if !strings.Contains(foldText(c.value), foldText(c.word)) {
			t.Errorf("%q does not fold to contain %q", c.value, c.word)
		}
	}
	if p := foldedPattern("ACC-SINV-2025"); patternLiterals(p) != 7 {
		t.Errorf("pattern %q keeps %d literals, want 7 (the dashes, v and the digits)", p, patternLiterals(p))
	}
	if w := mostSelective([]string{"berliner", "ACC-SINV-2025"}); w != "ACC-SINV-2025" {
		t.Errorf("most selective word %q", w)
	}
}

// FuzzFoldedPattern checks that the candidate pattern never misses, on an
// accent-sensitive LIKE, a value containing the word as typed or with
// accents on its accent-prone letters.
func FuzzFoldedPattern(f *testing.F) {
	f.Add("creme", "Maison ", " Ltd")
	f.Add("Straße", "", "")
	f.Add("100%_", "x", "y")
	f.Add("e\u0301", "caf", "")
	f.Add("Ærø", "", "skøbing")
	f.Fuzz(func(t *testing.T, word, prefix, suffix string) {
		if !utf8.ValidString(word) || !utf8.ValidString(prefix) || !utf8.ValidString(suffix) {
			return // arguments arrive as JSON, which is always valid UTF-8
		}
		if len(word) > 200 || len(prefix)+len(suffix) > 400 {
			return // a query is at most 200 characters
		}
		p := foldedPattern(word)
		if !strings.HasPrefix(p, "%") || !strings.HasSuffix(p, "%") {
			t.Fatalf("pattern %q is not a contains pattern", p)
		}
		if v := prefix + word + suffix; !accentSensitiveLike(p, v) {
			t.Fatalf("pattern %q of %q misses %q", p, word, v)
		}
		acc := accented.Replace(word)
		if !strings.Contains(foldText(acc), foldText(word)) {
			return // the accents changed more than accents (e.g. "ss" next to "s")
		}
		if v := prefix + acc + suffix; !accentSensitiveLike(p, v) {
			t.Fatalf("pattern %q of %q misses %q", p, word, v)
		}
	})
}
