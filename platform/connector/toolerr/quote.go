package toolerr

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxQuoted bounds the characters of a value Quote shows.
const maxQuoted = 64

// Quote names a value in a message, for a person (an operator reading the
// admin API's answer) or a model to read: between typographic quotes, as
// it reads, a quote mark or a letter of any script as itself. A character
// that would not show, or would change how the message shows, is a
// visible symbol instead: a C0 control its Control Picture (NUL ␀, TAB
// ␉), DEL ␡, any other invisible character (Invisible: a control, a
// zero-width or direction mark, a line separator) and a byte that is not
// UTF-8, U+FFFD. A value longer than 64 characters is cut
// with an ellipsis. Go's %q gave "a\"b\x01", escapes a person has to
// decode, and a message that said nothing plainly.
func Quote(v string) string {
	var b strings.Builder
	b.Grow(len(v) + 8)
	b.WriteString("“")
	n := 0
	for len(v) > 0 {
		r, size := utf8.DecodeRuneInString(v)
		v = v[size:]
		if n == maxQuoted {
			b.WriteString("…")
			break
		}
		n++
		switch {
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('␡')
		case Invisible(r):
			b.WriteRune(utf8.RuneError)
		default:
			// An invalid byte decodes as utf8.RuneError, written as itself.
			b.WriteRune(r)
		}
	}
	b.WriteString("”")
	return b.String()
}

// Invisible reports whether a reader would not see r as a character of
// its own: controls (tab and line ends included), format characters
// (zero-width spaces and joiners, direction marks and overrides, the soft
// hyphen, tags), line and paragraph separators, and the other
// default-ignorable characters (Hangul fillers, the combining grapheme
// joiner, the variation selectors, which no font draws: "Acme\uFE0F"
// reads as "Acme"). A value holding one reads as another value, or as one
// equal to another, than it is.
func Invisible(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point,
		unicode.Variation_Selector)
}
