package siteadmin_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/netguard"
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

// TestConsoleSentenceKeepsTheOperatorsWords: the console, a page, says a
// refusal in the plain words it has for people, except where those ask
// the operator for what only they can do: the operator is told the
// setting (Message), never to ask themselves.
func TestConsoleSentenceKeepsTheOperatorsWords(t *testing.T) {
	f := newFixture(t)
	reg := connector.NewRegistry()
	reg.MustRegister(testERP{})
	svc := siteadmin.New(siteadmin.Deps{Store: f.store, Registry: reg, ERPAddresses: netguard.NewPolicy(nil),
		HTTPClient: func(connector.Site, connector.Authorizer) *http.Client { return http.DefaultClient }})
	_, err := svc.CreateSite(t.Context(), siteadmin.Operator, siteadmin.NewSite{
		Slug: "private", Kind: "testerp", DisplayName: "Private", BaseURL: "https://10.0.0.8", Settings: json.RawMessage(`{"company":"x"}`),
	})
	var ae *siteadmin.Error
	if !errors.As(err, &ae) {
		t.Fatalf("a private address: %v", err)
	}
	if got := ae.PeopleSentence(nil); !strings.Contains(got, "the operator of this erpgate can allow its address") {
		t.Errorf("the owner's pages are told %q", got)
	}
	if got := ae.ConsoleSentence(nil); !strings.Contains(got, "ERPGATE_ERP_PRIVATE_HOSTS") || strings.Contains(got, "operator") {
		t.Errorf("the console is told %q", got)
	}
	plain := &siteadmin.Error{Kind: siteadmin.Rejected, Message: "the ERP did not accept the credentials (HTTP 401); ask the operator", ForPeople: "the ERP did not accept this credential"}
	if got := plain.ConsoleSentence(nil); got != "The ERP did not accept this credential." {
		t.Errorf("the console is told %q", got)
	}
}
