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
// ␉), DEL ␡, any other control, direction mark or line separator, and a
// byte that is not UTF-8, U+FFFD. A value longer than 64 characters is cut
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
		case unicode.IsControl(r), hidden(r):
			b.WriteRune(utf8.RuneError)
		default:
			// An invalid byte decodes as utf8.RuneError, written as itself.
			b.WriteRune(r)
		}
	}
	b.WriteString("”")
	return b.String()
}

// hidden reports whether r changes the direction or the lines of the text
// around it without showing: the marks and overrides of the bidirectional
// algorithm, and the line and paragraph separators.
func hidden(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
