package siteadmin_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// The owner's change is checked against the site as it was when their
// request loaded it; the operator may disable the site after that and
// before the change is written (while the ERP verifies an API credential,
// up to VerifyTimeout; while the owner page asks the ERP again whether the
// owner still administers it). The write itself refuses it then, and
// nothing changes.
func TestOwnerChangeWrittenAfterTheOperatorsDisableIsRefused(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	owner := siteadmin.ERPAdmin(identity)
	disabled := "disabled"
	operatorDisables := func(site sites.Site) {
		t.Helper()
		if _, err := f.svc.UpdateSite(ctx, siteadmin.Operator, site, siteadmin.SiteChange{Status: &disabled}); err != nil {
			t.Fatalf("the operator disables %s: %v", site.Slug, err)
		}
	}
	refusedAsDisabled := func(what string, err error) {
		t.Helper()
		var se *siteadmin.Error
		if !errors.As(err, &se) || se.Kind != siteadmin.Conflict || !errors.Is(err, sites.ErrOperatorDisabled) {
			t.Errorf("%s after the operator's disable: %v, want the operator's disable", what, err)
		}
	}

	t.Run("API credential verified while the operator disables", func(t *testing.T) {
		var site sites.Site
		// The ERP answers the verification only once the operator has
		// disabled the site: the owner's request loaded it active.
		erp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "token "+goodKey+":"+goodSecret {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			operatorDisables(site)
			_ = json.NewEncoder(w).Encode(map[string]string{"message": identity})
		}))
		t.Cleanup(erp.Close)
		var err error
		site, err = f.svc.CreateSite(ctx, siteadmin.Operator, siteadmin.NewSite{Slug: "slowerp", Kind: "testerp", DisplayName: "Slow ERP",
			BaseURL: erp.URL, Settings: json.RawMessage(`{"company":"slowerp"}`)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.PutAPIConnection(ctx, owner, site, map[string]string{"api_key": goodKey, "api_secret": goodSecret})
		refusedAsDisabled("the owner's API credential", err)
		if conns, _ := f.store.ListConnections(ctx, site.ID); len(conns) != 0 {
			t.Errorf("the owner's API credential was saved on the site the operator disabled: %+v", conns)
		}
		ev := f.events(t)
		if last := ev[len(ev)-1]; last.Action != siteadmin.ActionPutAPIConnection || last.Outcome != siteadmin.OutcomeRefused || last.Actor != identity {
			t.Errorf("last event %+v, want the owner's put_api_connection refused", last)
		}
	})

	t.Run("service token issued for the site as it was loaded", func(t *testing.T) {
		site := f.create(t, "tokens")
		if _, err := f.svc.PutAPIConnection(ctx, siteadmin.Operator, site, map[string]string{"api_key": goodKey, "api_secret": goodSecret}); err != nil {
			t.Fatal(err)
		}
		operatorDisables(site)
		// site is the owner's request's copy, loaded before the disable.
		_, value, err := f.svc.IssueServiceToken(ctx, owner, site, "agent", 30)
		refusedAsDisabled("the owner's service token", err)
		if value.IsSet() {
			t.Errorf("a service token was handed out")
		}
		if list, _ := f.store.ListServiceTokens(ctx, site.ID); len(list) != 0 {
			t.Errorf("the owner's service token was issued on the site the operator disabled: %+v", list)
		}
	})

	t.Run("client secret proven for the site as it was loaded", func(t *testing.T) {
		of, svc, site := oauthFixture(t)
		id, err := svc.ProposeOwnerChange(ctx, siteadmin.ERPAdmin("ann"), site, siteadmin.OwnerChangeRequest{ClientSecret: "second-secret-2"})
		if err != nil {
			t.Fatal(err)
		}
		disabled := "disabled"
		if _, err := svc.UpdateSite(ctx, siteadmin.Operator, site, siteadmin.SiteChange{Status: &disabled}); err != nil {
			t.Fatal(err)
		}
		// site is the callback's copy, loaded before the disable.
		_, err = svc.ApplyOwnerChange(ctx, siteadmin.ERPAdmin("ann"), site, id)
		refusedAsDisabled("the owner's proven client secret", err)
		if got := storedSecret(t, of, site); got != "first-secret-1" {
			t.Errorf("the owner's secret was saved on the site the operator disabled: %q", got)
		}
	})
}

// The same for the site's live settings the owner's page changes (the
// write settings): the page asks the ERP again before the change, with
// the site as its request loaded it, and the operator's disable may come
// meanwhile.
func TestOwnerSettingWrittenAfterTheOperatorsDisableIsRefused(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	svc, _ := f.withLiveSettings(t)
	site := f.create(t, "acme")
	disabled := "disabled"
	if _, err := svc.UpdateSite(ctx, siteadmin.Operator, site, siteadmin.SiteChange{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	// site is the owner's request's copy, loaded before the disable.
	_, err := svc.ChangeSetting(ctx, siteadmin.ERPAdmin(identity), &site, livesettings.ServiceWriteApprover, "approver@acme.example", false)
	var se *siteadmin.Error
	if !errors.As(err, &se) || se.Kind != siteadmin.Conflict || !errors.Is(err, sites.ErrOperatorDisabled) {
		t.Errorf("the owner's setting after the operator's disable: %v, want the operator's disable", err)
	}
	var n int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM live_settings WHERE site_id = $1`, site.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d settings of the site the operator disabled (%v), want none", n, err)
	}
	ev := f.events(t)
	if last := ev[len(ev)-1]; last.Action != siteadmin.ActionChangeSetting || last.Outcome != siteadmin.OutcomeRefused {
		t.Errorf("last event %+v, want change_setting refused", last)
	}
	// The operator's own change is theirs to make.
	if _, err := svc.ChangeSetting(ctx, siteadmin.Operator, &site, livesettings.ServiceWriteApprover, "approver@acme.example", false); err != nil {
		t.Errorf("the operator's setting on the site they disabled: %v", err)
	}
}
