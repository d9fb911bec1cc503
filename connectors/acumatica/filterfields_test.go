package acumatica

import (
	"slices"
	"strings"
	"testing"
)

func TestODataFieldNames(t *testing.T) {
	for expr, want := range map[string][]string{
		"TaxRegistrationID gt 'M'":                                              {"TaxRegistrationID"},
		"substringof('Acme', CustomerName) and Status eq 'Active'":              {"CustomerName", "Status"},
		"contains(CustomerName,'o''Brien') or Balance ge 100.5":                 {"CustomerName", "Balance"},
		"Date ge datetimeoffset'2026-01-31T00:00:00+00:00'":                     {"Date"},
		"Date ge 2026-01-31 and NoteID eq 3f2504e0-4f89-11d3-9a0c-0305e82c3301": {"Date", "NoteID"},
		"MainContact/Email eq 'a@b.c'":                                          {"MainContact/Email"},
		"cf.String(f='Document.UsrSSN') eq '1'":                                 {"Document.UsrSSN"},
		"cf . String ( f = 'Document.UsrTaxNo' ) eq '1'":                        {"Document.UsrTaxNo"},
		"not (BankAcctNbr eq null) and IsActive eq true":                        {"BankAcctNbr", "IsActive"},
		"DueDate desc,ReferenceNbr":                                             {"DueDate", "ReferenceNbr"},
		"tolower(Description) eq 'text with TaxID inside'":                      {"Description"},
		"": nil,
	} {
		got, err := odataFieldNames(expr)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("odataFieldNames(%q) = %q, %v; want %q", expr, got, err, want)
		}
	}
	if _, err := odataFieldNames("CustomerName eq 'unterminated"); err == nil || !strings.Contains(err.Error(), "never closed") {
		t.Errorf("an unterminated quote gave %v", err)
	}
}

// FuzzODataFieldNames: the extractor never panics, and every name it
// reports is written in the expression outside a quoted literal, unless it
// is a custom field's name.
func FuzzODataFieldNames(f *testing.F) {
	for _, s := range []string{"TaxID gt 'M'", "cf.String(f='A.B') eq ''", "contains(X,'y''z')", "Date ge datetimeoffset'2026'", "a/b/ eq 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		names, err := odataFieldNames(expr)
		if err != nil {
			return
		}
		for _, n := range names {
			if n == "" {
				t.Fatalf("odataFieldNames(%q) reported an empty name", expr)
			}
			if !strings.Contains(strings.ReplaceAll(expr, "''", "'"), n) {
				t.Fatalf("odataFieldNames(%q) reported %q, which is not in it", expr, n)
			}
		}
	})
}
