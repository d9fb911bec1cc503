package siteadmin_test

import (
	"testing"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
)

// TestSentenceCapitalisesByCharacter: a refusal's sentence starts with a
// capital letter, however many bytes the first character takes, and a
// quotation mark that opens it stays one. Before, the first byte alone was
// capitalised: "“egs_1…” is a service token's value" came out with a
// broken character (U+FFFD) in place of the mark.
func TestSentenceCapitalisesByCharacter(t *testing.T) {
	for _, c := range []struct{ message, want string }{
		{"“egs_1a2b…” is a service token's value, not its id", "“egs_1a2b…” is a service token's value, not its id."},
		{"élan is not a tenant", "Élan is not a tenant."},
		{"the site is disabled", "The site is disabled."},
	} {
		e := &siteadmin.Error{Kind: siteadmin.Invalid, Message: c.message}
		if got := e.Sentence(nil); got != c.want {
			t.Errorf("Sentence of %q: %q, want %q", c.message, got, c.want)
		}
		people := &siteadmin.Error{Kind: siteadmin.Invalid, Message: "for operators", ForPeople: c.message}
		if got := people.PeopleSentence(nil); got != c.want {
			t.Errorf("PeopleSentence of %q: %q, want %q", c.message, got, c.want)
		}
	}
}
