package siteadmin_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// A preflight started in the background (as the registration flow starts
// it) is stored as the site's last, audited, and goes with its site.
func TestStartPreflightStoresTheResult(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	site := f.create(t, "acme")
	if _, err := f.svc.LastPreflight(ctx, site); kindOf(err) != siteadmin.NotFound {
		t.Fatalf("before any run: %v, want NotFound", err)
	}
	if _, err := f.svc.PutAPIConnection(ctx, siteadmin.Operator, site, map[string]string{"api_key": goodKey, "api_secret": goodSecret}); err != nil {
		t.Fatal(err)
	}
	f.svc.StartPreflight(ctx, siteadmin.Operator, site)
	// The result is stored, then the run audited: wait for both.
	audited := func() bool {
		for _, e := range f.events(t) {
			if e.Action == siteadmin.ActionRunPreflight && e.Outcome == siteadmin.OutcomeSuccess && e.Details["passed"] == true && e.SiteID == site.ID {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(30 * time.Second); !audited() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if !audited() {
		t.Fatalf("no run_preflight event: %+v", f.events(t))
	}
	p, err := f.svc.LastPreflight(ctx, site)
	if err != nil {
		t.Fatalf("no preflight stored: %v", err)
	}
	got := map[string]connector.PreflightCheck{}
	for _, c := range p.Checks {
		got[c.ID] = c
	}
	// The test ERP has no OAuth and no checks of its own.
	if len(got) != 3 || got["dns"].Status != connector.CheckPass || got["tls"].Status != connector.CheckPass ||
		got["api_credential"].Status != connector.CheckPass || !strings.Contains(got["api_credential"].Found, identity) || !p.Passed {
		t.Errorf("preflight %+v", p)
	}
	if err := f.svc.DeleteSite(ctx, siteadmin.Operator, site); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.GetPreflight(ctx, site.ID); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("a deleted site's preflight: %v, want ErrNotFound", err)
	}
}

// The credential check says when the ERP now names another identity than
// the one saved; with the ERP gone, reachability fails with a fix and the
// credential check is skipped, not failed a second time.
func TestPreflightChangedIdentityAndUnreachableERP(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	site := f.create(t, "acme")
	if _, err := f.svc.PutAPIConnection(ctx, siteadmin.Operator, site, map[string]string{"api_key": goodKey, "api_secret": goodSecret}); err != nil {
		t.Fatal(err)
	}
	// As if the credential had been saved for another user.
	if _, err := f.pool.Exec(ctx, `UPDATE connections SET verified_identity = 'someone-else' WHERE site_id = $1`, site.ID); err != nil {
		t.Fatal(err)
	}
	p, err := f.svc.RunPreflight(ctx, siteadmin.Operator, site)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Checks {
		if c.ID == "api_credential" && (c.Status != connector.CheckPass || !strings.Contains(c.Found, "(it was saved as someone-else)")) {
			t.Errorf("api_credential %+v", c)
		}
	}
	f.erp.Close() // the ERP goes away
	p, err = f.svc.RunPreflight(ctx, siteadmin.Operator, site)
	if err != nil {
		t.Fatal(err)
	}
	st := map[string]connector.PreflightCheck{}
	for _, c := range p.Checks {
		st[c.ID] = c
	}
	if p.Passed || st["tls"].Status != connector.CheckFail || st["tls"].Fix == "" || st["api_credential"].Status != connector.CheckSkip {
		t.Errorf("with the ERP gone: %+v", p.Checks)
	}
}
