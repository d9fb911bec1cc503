package siteadmin_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/livesettings"
)

// TestOnlyTheOperatorChangesADeploymentSetting: a deployment-wide setting
// (no site) applies to every site, so only the operator's actor changes
// it, denied by default: a site's owner, a registrant, a program or an
// actor of no kind is refused by either way in (text, JSON), for a
// setting a site's owner may change for their own site, and nothing is
// stored. The operator, with the admin token or in the console, may; the
// owner still changes their own site's.
func TestOnlyTheOperatorChangesADeploymentSetting(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	svc, _ := f.withLiveSettings(t)
	site := f.create(t, "acme")

	for _, actor := range []siteadmin.Actor{siteadmin.ERPAdmin("it.admin@demo.example"), siteadmin.Registrant("0195d1f4-0000-7000-8000-000000000000"),
		{Kind: "service", Name: "a program"}, {}} {
		var se *siteadmin.Error
		if _, err := svc.ChangeSetting(ctx, actor, nil, livesettings.MaxRecords, "50", false); !errors.As(err, &se) {
			t.Errorf("%+v changes the deployment's %s: %v, want a refusal", actor, livesettings.MaxRecords, err)
		}
		if _, err := svc.ChangeSettingJSON(ctx, actor, nil, livesettings.MaxRecords, json.RawMessage(`50`)); !errors.As(err, &se) {
			t.Errorf("%+v changes the deployment's %s as JSON: %v, want a refusal", actor, livesettings.MaxRecords, err)
		}
		if _, err := svc.ChangeSetting(ctx, actor, nil, livesettings.MaxRecords, "", true); !errors.As(err, &se) {
			t.Errorf("%+v resets the deployment's %s: %v, want a refusal", actor, livesettings.MaxRecords, err)
		}
	}
	var n int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM live_settings`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d settings stored after the attempts (%v), want none", n, err)
	}
	if _, err := svc.ChangeSetting(ctx, siteadmin.ERPAdmin("it.admin@demo.example"), &site, livesettings.MaxRecords, "50", false); err != nil {
		t.Errorf("the owner changes their own site's %s: %v", livesettings.MaxRecords, err)
	}
	if _, err := svc.ChangeSetting(ctx, siteadmin.OperatorSession("ref"), nil, livesettings.MaxRecords, "500", false); err != nil {
		t.Errorf("the operator in the console changes the deployment's %s: %v", livesettings.MaxRecords, err)
	}
	if _, err := svc.ChangeSettingJSON(ctx, siteadmin.Operator, nil, livesettings.MaxRecords, json.RawMessage(`400`)); err != nil {
		t.Errorf("the operator with the admin token changes the deployment's %s: %v", livesettings.MaxRecords, err)
	}
}
