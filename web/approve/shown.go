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

// otherSpace reports whether r is a space other than the ordinary one
// (U+0020): a no-break, thin, wide or ideographic space, or the braille
// pattern blank (U+2800, a symbol that fonts draw as an empty cell). A
// browser draws it as a space, yet a value holding one is another value:
// a customer "Acme Corp" with a no-break space is not "Acme Corp".
func otherSpace(r rune) bool { return r != ' ' && unicode.Is(unicode.Zs, r) || r == '\u2800' }

// marked reports whether the page writes r as [U+XXXX].
func marked(r rune) bool { return hiddenChar(r) || otherSpace(r) }

// shown returns s with each hidden character and each space other than
// the ordinary one written as [U+XXXX], and whether there was a hidden
// character, and another space.
func shown(s string) (out string, hidden, spaces bool) {
	i := strings.IndexFunc(s, marked)
	if i < 0 {
		return s, false, false
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if !marked(r) {
			b.WriteRune(r)
			continue
		}
		if otherSpace(r) {
			spaces = true
		} else {
			hidden = true
		}
		fmt.Fprintf(&b, "[%U]", r)
	}
	return b.String(), hidden, spaces
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

// latinLookalikes are the letters of lookalikeScripts (but Latin) that
// a browser draws as a Latin letter is drawn: Cyrillic А В Е К М Н О Р С
// Т У Х Ѕ І Ј and their kin, Greek capitals, Armenian Օ Ս հ ո, Cherokee Ꭺ
// Ᏼ Ꮯ. A name written in them only reads as a Latin one ("АСМЕ" as
// "ACME") without mixing scripts.
var latinLookalikes = map[rune]bool{}

func init() {
	for _, r := range "" +
		// Cyrillic
		"\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0423\u0425\u0405\u0406\u0408\u051a\u051c\u04ae" +
		"\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0455\u0456\u0458\u0501\u051b\u051d\u04bb\u04cf\u04af" +
		// Greek
		"\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7\u03f9\u03bf\u03f2\u03bd" +
		// Armenian
		"\u0555\u0585\u054d\u057d\u0570\u0578\u0566" +
		// Cherokee
		"\u13aa\u13f4\u13df\u13a0\u13ac\u13c0\u13bb\u13ab\u13e6\u13de\u13b7\u13e2\u13da\u13a2\u13d9\u13d4\u13c3\u13a5" {
		latinLookalikes[r] = true
	}
}

// lookalikeOnly names the script of v's letters when all of them are of
// one lookalike script but Latin and each is drawn as a Latin letter
// (latinLookalikes): "АСМЕ", "С000001". Names with letters of their own
// (Иванов) or any Latin letter (mixedScripts) give "".
func lookalikeOnly(v string) string {
	script := ""
	for _, r := range v {
		if !unicode.IsLetter(r) {
			continue
		}
		if !latinLookalikes[r] {
			return ""
		}
		for _, sc := range lookalikeScripts[1:] {
			if unicode.Is(sc.table, r) {
				if script != "" && script != sc.name {
					return ""
				}
				script = sc.name
			}
		}
	}
	return script
}

// maxMixed bounds the values the mixed-scripts warning quotes, and those
// the look-alike letters warning quotes.
const maxMixed = 3

// shower marks the hidden characters of the values a page shows, and
// remembers whether it met one, and the values mixing lookalike scripts.
type shower struct {
	found bool
	// spaces is whether it met a space other than the ordinary one.
	spaces bool
	mixed  []string // "value (Latin and Cyrillic)"
	// lookalike are the values written only in letters drawn as Latin
	// ones: "value (Cyrillic)".
	lookalike []string
}

// sentence is v, a sentence that quotes values shown on their own too
// (a summary, a warning), with its hidden characters marked.
func (s *shower) sentence(v string) string {
	out, hidden, spaces := shown(v)
	s.found, s.spaces = s.found || hidden, s.spaces || spaces
	return out
}

// text is a value with its hidden characters marked; a value mixing
// lookalike scripts is remembered for the warning.
func (s *shower) text(v string) string {
	out, hidden, spaces := shown(v)
	s.found, s.spaces = s.found || hidden, s.spaces || spaces
	if scripts := mixedScripts(v); scripts != nil && len(s.mixed) < maxMixed {
		m := "“" + out + "” (" + strings.Join(scripts[:len(scripts)-1], ", ") + " and " + scripts[len(scripts)-1] + ")"
		if !slices.Contains(s.mixed, m) {
			s.mixed = append(s.mixed, m)
		}
	} else if script := lookalikeOnly(v); script != "" && len(s.lookalike) < maxMixed {
		m := "“" + out + "” (" + script + ")"
		if !slices.Contains(s.lookalike, m) {
			s.lookalike = append(s.lookalike, m)
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
	if s.spaces {
		w = append(w, spacesWarning)
	}
	if len(s.mixed) > 0 {
		w = append(w, "Some values mix letters of scripts that look alike, as a name made to pass for another one does: "+strings.Join(s.mixed, "; ")+
			". Check in the ERP that they are the records you expect.")
	}
	if len(s.lookalike) > 0 {
		w = append(w, "Some values are written only in letters of another script that look like Latin letters, as a name made to pass for a Latin one is: "+
			strings.Join(s.lookalike, "; ")+". Check in the ERP that they are the records you expect.")
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
// spacesWarning is the page's warning when a value held a space other
// than the ordinary one.
const spacesWarning = "Some values of this change hold spaces other than the ordinary one (a no-break or a wide space, for instance), which look like an ordinary space but make a different value. " +
	"erpgate shows each where it is as [U+…]; the ERP gets them as they are. Reject the change unless you expect them."

const hiddenWarning = "Some values of this change hold characters a browser does not show as themselves (invisible ones, or ones that change the direction of the text around them). " +
	"erpgate shows each where it is as [U+…]; the ERP gets them as they are. Reject the change unless you expect them."
