package siteadmin_test

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/netguard"
)

// CheckNewSite applies CreateSite's rules without a slug and stores
// nothing; it answers the same whether or not the address (with its
// identity) is taken, which CreateSite refuses.
func TestCheckNewSite(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	in := siteadmin.NewSite{Kind: "testerp", DisplayName: "  Acme  ", BaseURL: f.erp.URL + "/", Settings: json.RawMessage(`{"company":"acme"}`)}
	checked, err := f.svc.CheckNewSite(ctx, in)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if checked.BaseURL != f.erp.URL || checked.DisplayName != "Acme" || checked.IdentityKey != "acme" || checked.IdentityName != "company" {
		t.Errorf("checked %+v", checked)
	}
	if list, _ := f.store.ListSites(ctx); len(list) != 0 {
		t.Fatalf("a check stored %d sites", len(list))
	}
	f.create(t, "acme")
	if again, err := f.svc.CheckNewSite(ctx, in); err != nil || again.BaseURL != checked.BaseURL || again.IdentityKey != checked.IdentityKey {
		t.Errorf("the same address and company, once registered: %+v, %v", again, err)
	}
	bad := in
	bad.DisplayName, bad.Settings = "", json.RawMessage(`{"colour":"red"}`)
	_, err = f.svc.CheckNewSite(ctx, bad)
	var se *siteadmin.Error
	if !errors.As(err, &se) || se.Kind != siteadmin.Invalid || !strings.Contains(se.Message, "display_name") || strings.Contains(se.Message, "slug") {
		t.Errorf("bad input: %v", err)
	}
}

// Reachable asks the address for any HTTP answer, and says plainly when
// there is none.
func TestReachable(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	up, err := f.svc.CheckNewSite(ctx, siteadmin.NewSite{Kind: "testerp", DisplayName: "Up", BaseURL: f.erp.URL})
	if err != nil {
		t.Fatal(err)
	}
	// The test ERP answers 401 without a credential: that is an answer.
	if err := f.svc.Reachable(ctx, up); err != nil {
		t.Errorf("a server that answers: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	_ = ln.Close()
	down, err := f.svc.CheckNewSite(ctx, siteadmin.NewSite{Kind: "testerp", DisplayName: "Down", BaseURL: dead})
	if err != nil {
		t.Fatal(err)
	}
	err = f.svc.Reachable(ctx, down)
	var se *siteadmin.Error
	if !errors.As(err, &se) || se.Kind != siteadmin.Unreachable || se.Message != "the ERP at "+dead+" could not be reached" {
		t.Errorf("nothing listening: %v", err)
	}
}

// A password or token pasted into a base URL (user:password@host, a
// query) is refused, and neither the refusal's message, which the admin
// API answers and the audit event and log line keep, nor the event says
// it.
func TestBaseURLSecretsAreNotRepeated(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	const secret = "Hunter2Secret"
	for _, raw := range []string{
		"https://admin:" + secret + "@erp.example.com",
		"admin:" + secret + "@erp.example.com",
		"ftp://admin:" + secret + "@erp.example.com",
		"https://erp.example.com/?api_secret=" + secret,
		"https://erp.example.com/#" + secret,
	} {
		_, err := f.svc.CheckNewSite(ctx, siteadmin.NewSite{Kind: "testerp", DisplayName: "Acme", BaseURL: raw})
		if kindOf(err) != siteadmin.Invalid || strings.Contains(err.Error(), secret) {
			t.Errorf("CheckNewSite(%q): %v", raw, err)
		}
		_, err = f.svc.CreateSite(ctx, siteadmin.Operator, siteadmin.NewSite{Slug: "acme", Kind: "testerp", DisplayName: "Acme", BaseURL: raw})
		if kindOf(err) != siteadmin.Invalid || strings.Contains(err.Error(), secret) {
			t.Errorf("CreateSite(%q): %v", raw, err)
		}
	}
	for _, e := range f.events(t) {
		if details, _ := json.Marshal(e.Details); strings.Contains(e.Reason, secret) || strings.Contains(string(details), secret) {
			t.Errorf("event %s %s: reason %q, details %s", e.Action, e.Outcome, e.Reason, details)
		}
	}
}

// Anyone may start a registration, so what a refused address tells people
// must not map erpgate's own network: a host name that resolves, from
// where erpgate runs, to a non-public address (an internal service's
// name) is refused in the same words as one that does not resolve at
// all, naming neither the address nor its kind. The operator's message
// (the admin API, the audit event) still says what it resolves to. An
// address the person typed as such is named, as typed.
func TestCheckNewSiteDoesNotTellPeopleWhereNamesResolve(t *testing.T) {
	f := newFixture(t)
	reg := connector.NewRegistry()
	reg.MustRegister(testERP{})
	svc := siteadmin.New(siteadmin.Deps{Store: f.store, Registry: reg, ERPAddresses: netguard.NewPolicy(nil),
		HTTPClient: func(connector.Site, connector.Authorizer) *http.Client { return http.DefaultClient }})
	ctx := t.Context()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", "localhost")
	if err != nil || len(addrs) == 0 {
		t.Fatalf("localhost does not resolve here: %v", err)
	}
	refusal := func(base string) *siteadmin.Error {
		t.Helper()
		_, err := svc.CheckNewSite(ctx, siteadmin.NewSite{Kind: "testerp", DisplayName: "Acme", BaseURL: base, Settings: json.RawMessage(`{"company":"x"}`)})
		var se *siteadmin.Error
		if !errors.As(err, &se) || se.Kind != siteadmin.Invalid {
			t.Fatalf("%s: %v", base, err)
		}
		return se
	}
	internal := refusal("https://localhost")
	people := internal.PeopleSentence(nil)
	for _, a := range addrs {
		if strings.Contains(people, a.Unmap().String()) {
			t.Errorf("people are told what localhost resolves to (%s): %q", a.Unmap(), people)
		}
	}
	if !strings.Contains(internal.Message, "localhost resolves to") {
		t.Errorf("the operator is not told what localhost resolves to: %q", internal.Message)
	}
	if strings.Contains(people, "loopback") {
		t.Errorf("people are told the kind of address localhost resolves to: %q", people)
	}
	nowhere := refusal("https://nothing-here.invalid").PeopleSentence(nil)
	if got := strings.ReplaceAll(people, "localhost", "HOST"); got != strings.ReplaceAll(nowhere, "nothing-here.invalid", "HOST") {
		t.Errorf("a name resolving to a non-public address and one that does not resolve are told apart:\n%q\n%q", people, nowhere)
	}
	for _, want := range []string{"localhost", "public addresses", "the operator of this erpgate can allow its address"} {
		if !strings.Contains(people, want) {
			t.Errorf("people are not told %q: %q", want, people)
		}
	}
	if typed := refusal("https://10.0.0.8").PeopleSentence(nil); !strings.Contains(typed, "10.0.0.8") {
		t.Errorf("a typed address is not named: %q", typed)
	}
}
