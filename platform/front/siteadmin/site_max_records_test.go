package siteadmin_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/livesettings"
)

// TestOwnerLowersTheSiteMaxRecords: a site's own max_records only lowers
// the deployment's cap on the rows of one query, which protects the site's
// ERP, so its owner may set it (and reset it) like the site's other
// settings; neither the owner nor the operator may set it above the
// deployment's, which is refused in a sentence and stores nothing.
func TestOwnerLowersTheSiteMaxRecords(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	svc, live := f.withLiveSettings(t)
	site := f.create(t, "acme")
	owner := siteadmin.ERPAdmin(identity)
	inForce := func() (any, livesettings.Source) {
		v, src, _ := live.Current().Effective(site.ID, livesettings.MaxRecords)
		return v, src
	}

	if _, err := svc.ChangeSetting(ctx, owner, &site, livesettings.MaxRecords, "50", false); err != nil {
		t.Fatalf("the owner lowers the site's max_records to 50: %v", err)
	}
	if v, src := inForce(); v != 50 || src != livesettings.SourceSite {
		t.Errorf("the site's max_records after the owner's 50: %v (%s)", v, src)
	}
	if _, err := svc.ChangeSettingJSON(ctx, owner, &site, livesettings.MaxRecords, json.RawMessage(`20`)); err != nil {
		t.Fatalf("the owner lowers it to 20 as JSON: %v", err)
	}

	for who, actor := range map[string]siteadmin.Actor{"the owner": owner, "the operator": siteadmin.Operator} {
		for how, change := range map[string]func() error{
			"as text": func() error {
				_, err := svc.ChangeSetting(ctx, actor, &site, livesettings.MaxRecords, "1001", false)
				return err
			},
			"as JSON": func() error {
				_, err := svc.ChangeSettingJSON(ctx, actor, &site, livesettings.MaxRecords, json.RawMessage(`5000`))
				return err
			},
		} {
			err := change()
			var se *siteadmin.Error
			if !errors.As(err, &se) || se.Kind != siteadmin.Invalid || !strings.Contains(se.Message, "cannot be above the deployment's 1000") ||
				!strings.Contains(se.PeopleSentence(nil), "cannot be above 1000, the number erpgate's operator set for every site") {
				t.Errorf("%s raises the site's max_records above the deployment's %s: %v, want a refusal saying it cannot be above 1000", who, how, err)
			}
		}
	}
	if v, _ := inForce(); v != 20 {
		t.Errorf("the site's max_records after the refused raises: %v, want 20", v)
	}

	// The owner returns it to the deployment's.
	if _, err := svc.ChangeSetting(ctx, owner, &site, livesettings.MaxRecords, "", true); err != nil {
		t.Fatalf("the owner resets the site's max_records: %v", err)
	}
	if v, src := inForce(); v != 1000 || src != livesettings.SourceDefault {
		t.Errorf("the site's max_records after the owner's reset: %v (%s), want the deployment's 1000", v, src)
	}
}
