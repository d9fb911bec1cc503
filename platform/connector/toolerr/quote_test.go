package toolerr

import (
	"strings"
	"testing"
)

func TestQuoteShowsEveryCharacter(t *testing.T) {
	for in, want := range map[string]string{
		`Zoë "Q"`:               `“Zoë "Q"”`,
		"a\x00b\tc\x7f":         "“a␀b␉c␡”",
		"\u202egnp.exe\u200f":   "“\uFFFDgnp.exe\uFFFD”",
		"ok\xffok":              "“ok\uFFFDok”",
		"\u0085":                "“\uFFFD”",
		"":                      "“”",
		strings.Repeat("é", 65): "“" + strings.Repeat("é", 64) + "…”",
		strings.Repeat("é", 64): "“" + strings.Repeat("é", 64) + "”",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%+q) = %s, want %s", in, got, want)
		}
	}
}
