package approve

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/erpgate/erpgate/platform/connector"
)

// Characters a browser does not draw as themselves: zero-width ones, the
// controls that reverse or isolate the direction of the text around them
// (U+202E would show "moc.elpmaxe" as "example.com"), and other format
// and control characters. A value the approver reads (from the model's
// arguments, or from the ERP, where another user may have named a record
// like another but for such a character) would read as another value, or
// as a value equal to another, than the one written.
//
// The page shows each where it is as [U+XXXX] and warns; what is written
// is the value itself.

// hiddenChar reports whether a browser would not show r as a character
// of its own: controls but for tab and newlines, format characters
// (zero-width, direction controls, soft hyphen, tags), line and
// paragraph separators, and the other default-ignorable characters
// (Hangul fillers, the combining grapheme joiner).
func hiddenChar(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point)
}

// shown returns s with each hidden character written as [U+XXXX], and
// whether there was one.
func shown(s string) (string, bool) {
	i := strings.IndexFunc(s, hiddenChar)
	if i < 0 {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if hiddenChar(r) {
			fmt.Fprintf(&b, "[%U]", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String(), true
}

// shower marks the hidden characters of the values a page shows, and
// remembers whether it met one.
type shower struct{ found bool }

func (s *shower) text(v string) string {
	out, found := shown(v)
	s.found = s.found || found
	return out
}

// tables returns copies of ts with every cell, column and title marked.
func (s *shower) tables(ts []connector.PreviewTable) []connector.PreviewTable {
	out := make([]connector.PreviewTable, len(ts))
	for i, t := range ts {
		c := connector.PreviewTable{Title: s.text(t.Title), Columns: make([]string, len(t.Columns)), Rows: make([][]string, len(t.Rows))}
		for j, col := range t.Columns {
			c.Columns[j] = s.text(col)
		}
		for j, row := range t.Rows {
			c.Rows[j] = make([]string, len(row))
			for k, cell := range row {
				c.Rows[j][k] = s.text(cell)
			}
		}
		out[i] = c
	}
	return out
}

// hiddenWarning is the page's warning when a value held hidden
// characters.
const hiddenWarning = "Some values above hold characters a browser does not show as themselves (invisible ones, or ones that change the direction of the text around them). " +
	"erpgate shows each where it is as [U+…]; the ERP gets them as they are. Reject the change unless you expect them."
