package redact

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestWords(t *testing.T) {
	for name, want := range map[string]string{
		"BankAcctNbr":               "bank acct nbr",
		"TaxRegistrationID":         "tax registration id",
		"TaxExemptionNbr":           "tax exemption nbr",
		"SSN":                       "ssn",
		"SSNLast4":                  "ssn last 4",
		"bank_party_account_number": "bank party account number",
		"DOBSON_NOTES":              "dobson notes",
		"adobe_id":                  "adobe id",
		"MainContact/Email":         "main contact email",
		"Tax Id":                    "tax id",
		"address_line1":             "address line 1",
		"F1099Box":                  "f 1099 box",
		"IRDNumber":                 "ird number",
		"Größe_Kontonummer":         "größe kontonummer",
		"":                          "",
		"__":                        "",
	} {
		if got := strings.Join(Words(name), " "); got != want {
			t.Errorf("Words(%q) = %q, want %q", name, got, want)
		}
	}
}

// FuzzWords: the words of a name are lower case, non-empty, made of its
// letters and digits only, and in order; nothing of them is lost.
func FuzzWords(f *testing.F) {
	for _, s := range []string{"BankAcctNbr", "SSNLast4", "tax_id", "ÀÉÎõü", "a1B2c3", "ǅungla"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if !utf8.ValidString(name) {
			return
		}
		words := Words(name)
		var kept []rune
		for _, c := range name {
			if unicode.IsLetter(c) || unicode.IsDigit(c) {
				kept = append(kept, c)
			}
		}
		joined := strings.Join(words, "")
		if joined != strings.ToLower(string(kept)) {
			t.Fatalf("Words(%q) = %q: lost or changed characters", name, words)
		}
		if slices.Contains(words, "") {
			t.Fatalf("Words(%q) = %q has an empty word", name, words)
		}
	})
}
