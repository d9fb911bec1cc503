package web

import (
	"strings"
	"testing"
)

func TestSpansCutAtBackticks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []span
	}{
		{"Default `20`.", []span{{"Default ", false}, {"20", true}, {".", false}}},
		{"`a` and `b`", []span{{"a", true}, {" and ", false}, {"b", true}}},
		{"no code", []span{{"no code", false}}},
		{"one ` alone", []span{{"one ` alone", false}}},
		{"`a` then ` alone", []span{{"a", true}, {" then ` alone", false}}},
	} {
		got := spans(tc.in)
		if len(got) != len(tc.want) {
			t.Errorf("spans(%q) = %v, want %v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("spans(%q) = %v, want %v", tc.in, got, tc.want)
				break
			}
		}
	}
}

// FuzzSpans: cutting a description loses no character but the paired
// backticks, and no code span holds a backtick.
func FuzzSpans(f *testing.F) {
	for _, s := range []string{"", "`", "``", "a `b` c", "`x` ` y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var text strings.Builder
		for _, sp := range spans(s) {
			if sp.Text == "" {
				t.Fatalf("spans(%q) has an empty span", s)
			}
			if sp.Code && strings.Contains(sp.Text, "`") {
				t.Fatalf("spans(%q): code span %q holds a backtick", s, sp.Text)
			}
			text.WriteString(sp.Text)
		}
		if strings.ReplaceAll(text.String(), "`", "") != strings.ReplaceAll(s, "`", "") {
			t.Fatalf("spans(%q) lost text: %q", s, text.String())
		}
	})
}
