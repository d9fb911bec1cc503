package siteadmin_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/livesettings"
)

// TestOwnerCannotSetTheSiteCallCeilings: a site's call ceilings protect
// its ERP's licence throttle for erpgate's operator (seed 000: a small
// tier's Acumatica throttles at some 6 calls at once); the site's owner,
// who could raise them for their own callers, may not set them by either
// way in (text as the pages send it, JSON), and nothing is stored. The
// operator may.
func TestOwnerCannotSetTheSiteCallCeilings(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	svc, live := f.withLiveSettings(t)
	site := f.create(t, "acme")
	owner := siteadmin.ERPAdmin(identity)

	for _, name := range []string{livesettings.SiteConcurrency, livesettings.SitePerMinute} {
		for how, change := range map[string]func() error{
			"as text": func() error { _, err := svc.ChangeSetting(ctx, owner, &site, name, "500", false); return err },
			"as JSON": func() error {
				_, err := svc.ChangeSettingJSON(ctx, owner, &site, name, json.RawMessage(`500`))
				return err
			},
			"reset": func() error { _, err := svc.ChangeSetting(ctx, owner, &site, name, "", true); return err },
		} {
			err := change()
			var se *siteadmin.Error
			if !errors.As(err, &se) || !strings.Contains(se.Message, "only erpgate's operator") || !strings.Contains(se.PeopleSentence(nil), "Only erpgate's operator") {
				t.Errorf("the owner sets %s %s: %v, want a refusal saying only the operator sets it", name, how, err)
			}
		}
	}
	var n int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM live_settings WHERE site_id = $1`, site.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d settings stored for the site after the owner's attempts (%v), want none", n, err)
	}
	ev := f.events(t)
	if last := ev[len(ev)-1]; last.Action != siteadmin.ActionChangeSetting || last.Outcome != siteadmin.OutcomeRefused {
		t.Errorf("last event %+v, want change_setting refused", last)
	}

	// The operator sets them for the site.
	if _, err := svc.ChangeSetting(ctx, siteadmin.Operator, &site, livesettings.SiteConcurrency, "6", false); err != nil {
		t.Fatalf("the operator sets the site's concurrency ceiling: %v", err)
	}
	if _, err := svc.ChangeSettingJSON(ctx, siteadmin.Operator, &site, livesettings.SitePerMinute, json.RawMessage(`50`)); err != nil {
		t.Fatalf("the operator sets the site's per-minute ceiling: %v", err)
	}
	conc, src, _ := live.Current().Effective(site.ID, livesettings.SiteConcurrency)
	perMinute, _, _ := live.Current().Effective(site.ID, livesettings.SitePerMinute)
	if conc != 6 || perMinute != 50 || src != livesettings.SourceSite {
		t.Errorf("the site's ceilings after the operator's change: %v and %v (%s), want 6 and 50 of the site", conc, perMinute, src)
	}
	// And the owner cannot reset the operator's either.
	if _, err := svc.ChangeSetting(ctx, owner, &site, livesettings.SiteConcurrency, "", true); err == nil {
		t.Error("the owner reset the operator's ceiling")
	}
	if conc, _, _ := live.Current().Effective(site.ID, livesettings.SiteConcurrency); conc != 6 {
		t.Errorf("the site's concurrency ceiling after the owner's reset: %v, want 6", conc)
	}
}

// TestOnlyTheOperatorSetsTheSiteCallCeilings: the operator-only check
// refused only the site's owner; any other actor that is not the
// operator (a registrant, a kind of actor added later) set a site's call
// ceilings. Only the operator's actor may: every other is refused and
// nothing is stored.
func TestOnlyTheOperatorSetsTheSiteCallCeilings(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	svc, _ := f.withLiveSettings(t)
	site := f.create(t, "acme")

	for _, actor := range []siteadmin.Actor{siteadmin.Registrant("0195d1f4-0000-7000-8000-000000000000"), {Kind: "service", Name: "a program"}, {}} {
		for _, name := range []string{livesettings.SiteConcurrency, livesettings.SitePerMinute} {
			_, err := svc.ChangeSetting(ctx, actor, &site, name, "500", false)
			var se *siteadmin.Error
			if !errors.As(err, &se) || !strings.Contains(se.Message, "only erpgate's operator") {
				t.Errorf("%+v sets %s for the site: %v, want a refusal saying only the operator sets it", actor, name, err)
			}
			if _, err := svc.ChangeSettingJSON(ctx, actor, nil, name, json.RawMessage(`500`)); err == nil {
				t.Errorf("%+v sets the deployment's %s", actor, name)
			}
		}
	}
	var n int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM live_settings`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d settings stored after the attempts (%v), want none", n, err)
	}
	if _, err := svc.ChangeSetting(ctx, siteadmin.OperatorSession("ref"), &site, livesettings.SiteConcurrency, "6", false); err != nil {
		t.Errorf("the operator in the console sets the site's concurrency ceiling: %v", err)
	}
}
