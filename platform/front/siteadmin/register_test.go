package siteadmin_test

import (
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
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
