package approve

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
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
// of its own (toolerr.Invisible, which error messages follow too), but
// for tab and line ends, which the page shows as space.
func hiddenChar(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	return toolerr.Invisible(r)
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

// lookalikeScripts are the scripts whose letters pass for one another's
// (о and o, Α and A, Տ and S): a value mixing them may be a name made to
// look like another.
var lookalikeScripts = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek},
	{"Armenian", unicode.Armenian}, {"Cherokee", unicode.Cherokee},
}

// mixedScripts names the lookalike scripts of the letters of v, in
// lookalikeScripts' order, when there are two or more.
func mixedScripts(v string) []string {
	var seen [8]bool
	n := 0
	for _, r := range v {
		if r < 0x80 && !unicode.IsLetter(r) {
			continue
		}
		for i, sc := range lookalikeScripts {
			if !seen[i] && unicode.Is(sc.table, r) {
				seen[i] = true
				n++
			}
		}
	}
	if n < 2 {
		return nil
	}
	var out []string
	for i, sc := range lookalikeScripts {
		if seen[i] {
			out = append(out, sc.name)
		}
	}
	return out
}

// maxMixed bounds the values the mixed-scripts warning quotes.
const maxMixed = 3

// shower marks the hidden characters of the values a page shows, and
// remembers whether it met one, and the values mixing lookalike scripts.
type shower struct {
	found bool
	mixed []string // "value (Latin and Cyrillic)"
}

// sentence is v, a sentence that quotes values shown on their own too
// (a summary, a warning), with its hidden characters marked.
func (s *shower) sentence(v string) string {
	out, found := shown(v)
	s.found = s.found || found
	return out
}

// text is a value with its hidden characters marked; a value mixing
// lookalike scripts is remembered for the warning.
func (s *shower) text(v string) string {
	out, found := shown(v)
	s.found = s.found || found
	if scripts := mixedScripts(v); scripts != nil && len(s.mixed) < maxMixed {
		m := "“" + out + "” (" + strings.Join(scripts[:len(scripts)-1], ", ") + " and " + scripts[len(scripts)-1] + ")"
		if !slices.Contains(s.mixed, m) {
			s.mixed = append(s.mixed, m)
		}
	}
	return out
}

// warnings are the page's warnings about what the shown values held.
func (s *shower) warnings() []string {
	var w []string
	if s.found {
		w = append(w, hiddenWarning)
	}
	if len(s.mixed) > 0 {
		w = append(w, "Some values mix letters of scripts that look alike, as a name made to pass for another one does: "+strings.Join(s.mixed, "; ")+
			". Check in the ERP that they are the records you expect.")
	}
	return w
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
