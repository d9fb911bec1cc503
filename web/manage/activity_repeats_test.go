package manage

import (
	"html"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// TestOwnerActivityCountsAnonymousSignInRefusals: owner sign-ins that the
// ERP did not complete (no one identified) are counted in one row of the
// site a minute; the owner's recent activity says how many, not one
// "refused" that hides the rest.
func TestOwnerActivityCountsAnonymousSignInRefusals(t *testing.T) {
	p := newPages(t)
	ctx := t.Context()
	for range 3 {
		if err := p.h.deps.Store.RecordRefusalSummary(ctx, sites.Event{SiteID: p.acme.ID, SiteSlug: p.acme.Slug,
			ActorKind: string(siteadmin.ActorERPAdmin), Actor: "unknown ERP user", Action: siteadmin.ActionOwnerSignIn,
			Reason:   "credential_rejected: the sign-in at the ERP did not complete: cancelled at the ERP",
			Sentence: "The sign-in at the ERP did not complete: cancelled at the ERP."}, "cancelled at the ERP"); err != nil {
			t.Fatal(err)
		}
	}
	_, body := p.get(t, "/sites/acme/manage", p.session(p.acme, "it.admin@acme.example"))
	var rows []string
	for _, m := range activityRow.FindAllStringSubmatch(body, -1) {
		rows = append(rows, html.UnescapeString(m[3]))
	}
	want := "refused, 3 times in this minute: The sign-in at the ERP did not complete: cancelled at the ERP."
	found := 0
	for _, r := range rows {
		if strings.Contains(r, "cancelled at the ERP") {
			found++
			if r != want {
				t.Errorf("the row says %q, want %q", r, want)
			}
		}
	}
	if found != 1 {
		t.Errorf("%d rows of the refused sign-ins, want 1: %q", found, rows)
	}
}
