package toolerr

import (
	"strings"
	"testing"
)

func TestQuoteShowsEveryCharacter(t *testing.T) {
	for in, want := range map[string]string{
		`Zoë "Q"`:             `“Zoë "Q"”`,
		"a\x00b\tc\x7f":       "“a␀b␉c␡”",
		"\u202egnp.exe\u200f": "“\uFFFDgnp.exe\uFFFD”",
		"ok\xffok":            "“ok\uFFFDok”",
		"\u0085":              "“\uFFFD”",
		// Zero-width and other invisible characters: “C001\u200b” must
		// not read as “C001”.
		"C001\u200b":      "“C001\uFFFD”",
		"a\u00adb\ufeffc": "“a\uFFFDb\uFFFDc”",
		"\u2060x\u034f":   "“\uFFFDx\uFFFD”",
		"\u3164":          "“\uFFFD”",
		// Variation selectors draw nothing either.
		"C001\ufe0f\U000e0100\u180b": "“C001\uFFFD\uFFFD\uFFFD”",
		"":                           "“”",
		strings.Repeat("é", 65):      "“" + strings.Repeat("é", 64) + "…”",
		strings.Repeat("é", 64):      "“" + strings.Repeat("é", 64) + "”",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%+q) = %s, want %s", in, got, want)
		}
	}
}
