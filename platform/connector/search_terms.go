package connector

import (
	"strings"
	"unicode"
)

// maxSearchTerms bounds how many words of a query a SchemaIndex matches.
const maxSearchTerms = 16

// SearchTerms splits free text into the words a SchemaIndex matches: runs
// of letters and digits, lower-cased, with identifiers also split at their
// word boundaries ("CustomerName" gives "customername", "customer" and
// "name"). Duplicates are dropped; at most 16 words are kept. Every
// implementation of SchemaIndex matches these words, so a query means the
// same everywhere.
func SearchTerms(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		w = strings.ToLower(w)
		if w == "" || seen[w] || len(out) >= maxSearchTerms {
			return
		}
		seen[w] = true
		out = append(out, w)
	}
	for _, run := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		add(run)
		if parts := SplitIdentifier(run); len(parts) > 1 {
			for _, p := range parts {
				add(p)
			}
		}
	}
	return out
}

// SplitIdentifier splits an identifier at its word boundaries:
// "CustomerName" → [Customer Name], "ARInvoice" → [AR Invoice],
// "OrderNbr2" → [Order Nbr 2], "customer_id" → [customer id].
func SplitIdentifier(id string) []string {
	var words []string
	runes := []rune(id)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, string(runes[start:end]))
		}
		start = -1
	}
	for i, r := range runes {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := runes[i-1]
		boundary := false
		switch {
		case unicode.IsDigit(r) != unicode.IsDigit(prev):
			boundary = true
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			boundary = true
		case unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(runes) && unicode.IsLower(runes[i+1]):
			// "ARInvoice": the I starts a word.
			boundary = true
		}
		if boundary {
			flush(i)
			start = i
		}
	}
	flush(len(runes))
	return words
}
