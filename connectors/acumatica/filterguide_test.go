package acumatica

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFilterHints(t *testing.T) {
	fields := []string{"CustomerID", "CustomerName", "Status", "Date", "Balance"}
	cases := []struct {
		name     string
		d        filterDialect
		expr     string
		upstream string
		want     []string
		not      []string
	}{
		{"v4 contains on contract", dialectContract, "contains(CustomerName,'acme')", "Unknown function 'contains'.",
			[]string{"substringof('text', Field) instead"}, []string{"is not a function"}},
		{"v3 substringof on inquiry", dialectInquiry, "substringof('acme', CustomerName)", "An unknown function with name 'substringof' was found.",
			[]string{"contains(Field, 'text') instead"}, nil},
		{"v3 date on inquiry", dialectInquiry, "Date ge datetimeoffset'2026-01-01T00:00:00+00:00'", "",
			[]string{"dates bare"}, nil},
		{"bare date on contract", dialectContract, "Date ge 2026-01-01", "",
			[]string{"datetimeoffset'2025-01-31T00:00:00+00:00'"}, nil},
		{"a date inside a string is not a bare date", dialectContract, "Status eq '2026-01-01'", "",
			nil, []string{"A bare date"}},
		{"typed date on contract is fine", dialectContract, "Date ge datetimeoffset'2026-01-01T00:00:00+00:00'", "",
			nil, []string{"bare date", "Typed date"}},
		{"double quotes and symbols", dialectContract, `Status == "Open" && Balance > 0`, "",
			[]string{"single quotes", "Operators are words"}, []string{`no field "Open"`}},
		{"single equals", dialectContract, "Status = 'Open'", "", []string{"Operators are words"}, nil},
		{"custom field is not an operator", dialectContract, "cf.String(f='ItemSettings.UsrX') eq 'A'", "",
			nil, []string{"Operators are words"}},
		{"unclosed string", dialectContract, "CustomerName eq 'O'Brien'", "", []string{"doubled"}, nil},
		{"in operator", dialectInquiry, "Status in ('Open','Hold')", "", []string{"no in, like or between", "contains(Field,'text')"}, nil},
		{"wrong case", dialectContract, "status eq 'Open'", "Could not find a property named 'status' on type 'Default.Customer'.",
			[]string{`no field "status"; did you mean Status?`}, nil},
		{"near miss", dialectInquiry, "Ballance gt 0", "", []string{"did you mean Balance"}, nil},
		{"unknown function", dialectContract, "tolower2(Status) eq 'x'", "Unknown function 'tolower2'.", []string{`"tolower2" is not a function`}, nil},
		{"types", dialectContract, "Balance eq '5'", "A binary operator with incompatible types was detected.", []string{"wrong type"}, nil},
		{"typographic quotes", dialectContract, "Status eq ‘Open’", "", []string{"typographic quotes"}, nil},
	}
	for _, tc := range cases {
		msg := explainFilter(tc.d, tc.expr, tc.upstream, fields, "entity Customer")
		for _, w := range append(tc.want, "never ran", "says nothing about whether matching records exist") {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: lacks %q:\n%s", tc.name, w, msg)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(msg, n) {
				t.Errorf("%s: should not say %q:\n%s", tc.name, n, msg)
			}
		}
	}
	// Each dialect states its own syntax, and the real field names.
	if m := explainFilter(dialectInquiry, "x", "", fields, "inquiry Q"); !strings.Contains(m, "OData v4") || !strings.Contains(m, "Fields of inquiry Q: CustomerID") {
		t.Errorf("inquiry summary: %s", m)
	}
	if m := explainFilter(dialectContract, "x", "", nil, "entity E"); !strings.Contains(m, "OData v3") || strings.Contains(m, "Fields of") {
		t.Errorf("contract summary: %s", m)
	}
}

func TestClosestFields(t *testing.T) {
	fields := []string{"CustomerID", "CustomerName", "CustomerClass", "Status"}
	if got := closestFields("customername", fields); len(got) != 1 || got[0] != "CustomerName" {
		t.Errorf("case-insensitive = %v", got)
	}
	if got := closestFields("CustName", fields); len(got) == 0 {
		t.Errorf("near miss = %v", got)
	}
	if got := closestFields("Zebra", fields); len(got) != 0 {
		t.Errorf("no match = %v", got)
	}
}

// FuzzFilterGuidance: whatever the filter, the upstream text and the field
// names, the guidance never panics, always says the query never ran, is
// valid UTF-8 and stays bounded.
func FuzzFilterGuidance(f *testing.F) {
	f.Add(0, "contains(CustomerName,'acme')", "Unknown function 'contains'.", "CustomerName,Status")
	f.Add(1, "substringof('a', X) and Date ge datetimeoffset'2026-01-01'", "Could not find a property named 'X' on type 'GenericInquiry.Q'.", "Y")
	f.Add(0, `a == "b" && c != 'd`, "Syntax error at position 3", "")
	f.Add(1, "cf.String(f='A.B') in ('x')", "", "A,B,C")
	f.Add(0, strings.Repeat("(", 500)+"’", strings.Repeat("x", 2000), strings.Repeat("F,", 300))
	f.Fuzz(func(t *testing.T, dialect int, expr, upstream, fieldList string) {
		d := dialectContract
		if dialect%2 != 0 {
			d = dialectInquiry
		}
		var fields []string
		if fieldList != "" {
			fields = strings.Split(fieldList, ",")
		}
		msg := explainFilter(d, expr, upstream, fields, "entity E")
		if !strings.Contains(msg, "never ran") {
			t.Fatalf("guidance without 'never ran': %q", msg)
		}
		if utf8.ValidString(expr) && utf8.ValidString(upstream) && utf8.ValidString(fieldList) && !utf8.ValidString(msg) {
			t.Fatalf("invalid UTF-8 from valid input: %q", msg)
		}
		if len(msg) > 20000+len(fieldList) {
			t.Fatalf("guidance of %d bytes", len(msg))
		}
	})
}

func TestDropEqTrue(t *testing.T) {
	for in, want := range map[string]string{
		"substringof('acme', CustomerName) eq true":                      "substringof('acme', CustomerName)",
		"startswith(CustomerID,'C0')   eq   true and Status eq 'Active'": "startswith(CustomerID,'C0') and Status eq 'Active'",
		"true eq endswith(CustomerName, 'LLC')":                          "endswith(CustomerName, 'LLC')",
		"substringof('a (b) eq true', Name) eq true":                     "substringof('a (b) eq true', Name)",
		"substringof('O''Brien', Name) eq true or Hold eq true":          "substringof('O''Brien', Name) or Hold eq true",
		// Left as written: a literal, eq false, a plain boolean field and
		// a nested call (Acumatica refuses tolower anyway).
		"Name eq 'substringof(x) eq true'":                "Name eq 'substringof(x) eq true'",
		"substringof('acme', CustomerName) eq false":      "substringof('acme', CustomerName) eq false",
		"IsActive eq true":                                "IsActive eq true",
		"substringof('a', tolower(CustomerName)) eq true": "substringof('a', tolower(CustomerName)) eq true",
		"substringof('acme', CustomerName) eq trueish":    "substringof('acme', CustomerName) eq trueish",
	} {
		if got := dropEqTrue(in); got != want {
			t.Errorf("dropEqTrue(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzDropEqTrue: whatever the filter, dropping "eq true" only removes
// bytes (the result is a subsequence of the filter, never longer), leaves
// every string literal as it was, and leaves a filter without "eq" alone.
func FuzzDropEqTrue(f *testing.F) {
	f.Add("substringof('acme', CustomerName) eq true")
	f.Add("true eq endswith(CustomerName, 'LLC') and Hold eq true")
	f.Add("substringof('a (b) eq true', Name) eq true")
	f.Add("substringof('O''Brien', Name) eq true or x eq 'y")
	f.Add("startswith(A,'é')\teq\nTRUE eq true")
	f.Fuzz(func(t *testing.T, expr string) {
		out := dropEqTrue(expr)
		if !strings.Contains(strings.ToLower(expr), "eq") && out != expr {
			t.Fatalf("dropEqTrue(%q) = %q without an eq", expr, out)
		}
		i := 0
		for j := 0; j < len(out); j++ {
			for i < len(expr) && expr[i] != out[j] {
				i++
			}
			if i == len(expr) {
				t.Fatalf("dropEqTrue(%q) = %q, which is not the filter with bytes removed", expr, out)
			}
			i++
		}
		if got, want := reStringLiteral.FindAllString(out, -1), reStringLiteral.FindAllString(expr, -1); !slices.Equal(got, want) {
			t.Fatalf("dropEqTrue(%q) = %q: literals %q, want %q", expr, out, got, want)
		}
	})
}
