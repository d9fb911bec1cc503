package connector

import (
	"slices"
	"testing"
)

func TestSplitIdentifier(t *testing.T) {
	cases := map[string][]string{
		"CustomerName":  {"Customer", "Name"},
		"ARInvoice":     {"AR", "Invoice"},
		"OrderNbr2":     {"Order", "Nbr", "2"},
		"customer_id":   {"customer", "id"},
		"CustomerID":    {"Customer", "ID"},
		"SO301000":      {"SO", "301000"},
		"":              nil,
		"Ümlaut Straße": {"Ümlaut", "Straße"},
	}
	for in, want := range cases {
		if got := SplitIdentifier(in); !slices.Equal(got, want) {
			t.Errorf("SplitIdentifier(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSearchTerms(t *testing.T) {
	got := SearchTerms("CustomerName, customer's e-mail!!")
	want := []string{"customername", "customer", "name", "s", "e", "mail"}
	if !slices.Equal(got, want) {
		t.Errorf("SearchTerms = %q, want %q", got, want)
	}
	long := ""
	for i := range 40 {
		long += string(rune('a'+i%26)) + string(rune('a'+i/26)) + " "
	}
	if n := len(SearchTerms(long)); n != maxSearchTerms {
		t.Errorf("kept %d terms, want %d", n, maxSearchTerms)
	}
}
