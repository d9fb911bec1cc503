package frappe

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// likeMatches evaluates a MariaDB LIKE pattern the way Frappe v15 sends it
// (no escape character is usable; matching is case-insensitive).
func likeMatches(pattern, value string) bool {
	var re strings.Builder
	re.WriteString(`(?is)^`)
	for _, r := range pattern {
		switch r {
		case '%':
			re.WriteString(`.*`)
		case '_':
			re.WriteString(`.`)
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString(`$`)
	return regexp.MustCompile(re.String()).MatchString(value)
}

func TestContainsPatternMatchesLiteralText(t *testing.T) {
	cases := []struct {
		text, value string
		pattern     bool // the ERP's LIKE matches
		literal     bool // the row is kept
	}{
		{"acme", "ACME Widgets Ltd", true, true},
		{"50%", "Discount 50% Ltd", true, true},
		{"50%", "Discount 50x Ltd", true, false},
		{"a_b", "a_b traders", true, true},
		{"a_b", "axb traders", true, false},
		{`back\slash`, `back\slash`, true, true},
	}
	for _, c := range cases {
		p := containsPattern(c.text)
		if got := likeMatches(p, c.value); got != c.pattern {
			t.Errorf("LIKE %q on %q = %v, want %v", p, c.value, got, c.pattern)
		}
		s := textSearch{text: c.text, fields: []string{"customer_name"}}
		if got := s.keep(map[string]any{"customer_name": c.value}); got != c.literal {
			t.Errorf("keep(%q, %q) = %v, want %v", c.text, c.value, got, c.literal)
		}
	}
}

func FuzzFilterBuilder(f *testing.F) {
	f.Add("Acme Ltd", "50%_off\\", int64(3))
	f.Add("", "", int64(0))
	f.Add("\"]}],[\"", "%%%", int64(-1))
	f.Fuzz(func(t *testing.T, field, text string, n int64) {
		if !utf8.ValidString(field) || !utf8.ValidString(text) {
			return // arguments arrive as JSON, which is always valid UTF-8
		}
		var fs filters
		fs.add(field, "=", text)
		fs.add("docstatus", "=", n)
		fs.add("name", "like", containsPattern(text))
		var back [][3]any
		if err := json.Unmarshal([]byte(fs.encode()), &back); err != nil {
			t.Fatalf("encode produced invalid JSON: %v", err)
		}
		if len(back) != 3 || back[0][0] != field || back[0][2] != text || back[2][1] != "like" {
			t.Fatalf("round trip changed the filters: %v", back)
		}
		if !strings.HasPrefix(back[2][2].(string), "%") {
			t.Fatalf("pattern %q is not a contains pattern", back[2][2])
		}
		// The pattern never misses a value that literally contains the text.
		if !likeMatches(containsPattern(text), "x"+text+"y") {
			t.Fatalf("pattern %q misses its own text", containsPattern(text))
		}
	})
}
