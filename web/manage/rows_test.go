package manage

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/livesettings"
)

// TestOwnerLowersRowsPerQuery: the owner's page has the site's own cap on
// the rows of one query (design.md: max records per query, capped per
// site), which protects the owner's ERP: empty while the site has the
// deployment's, saved lower it is the site's, a number above the
// deployment's is refused in a sentence and changes nothing, and saved
// empty it is the deployment's again. Each change is audited with the
// owner's ERP user.
func TestOwnerLowersRowsPerQuery(t *testing.T) {
	p := newPages(t)
	ctx := t.Context()
	const user = "it.admin@demo.example"
	inForce := func() (any, livesettings.Source) {
		v, src, _ := p.h.deps.Settings.Fresh(ctx).Effective(p.acme.ID, livesettings.MaxRecords)
		return v, src
	}

	status, body := p.get(t, "/sites/acme/manage", p.session(p.acme, user))
	if status != http.StatusOK || !strings.Contains(body, `id="max_records"`) || !strings.Contains(body, `placeholder="empty: the operator's, 1000"`) {
		t.Fatalf("HTTP %d: the owner's page has no empty rows-per-query box hinting the deployment's 1000:\n%s", status, body)
	}

	status, body = p.post(t, "/rows", url.Values{"max_records": {"5000"}}, user)
	if status != http.StatusBadRequest || !strings.Contains(body, "Max records per query cannot be above 1000, the number erpgate&#39;s operator set for every site") {
		t.Fatalf("HTTP %d after 5000, want 400 saying it cannot be above the deployment's: %s", status, body)
	}
	// The box keeps what was typed; the section still says what applies.
	if !strings.Contains(body, `value="5000"`) || !strings.Contains(body, "returns at most 1000 rows, the number erpgate's operator set for every site.") {
		t.Errorf("the refused page does not keep 5000 in the box while saying the operator's 1000 applies: %s", body)
	}
	if v, src := inForce(); v != 1000 || src != livesettings.SourceDefault {
		t.Errorf("after the refused 5000: %v (%s), want the deployment's 1000", v, src)
	}

	if status, body = p.post(t, "/rows", url.Values{"max_records": {" 50 "}}, user); status != http.StatusSeeOther {
		t.Fatalf("HTTP %d after 50, want the page again: %s", status, body)
	}
	if v, src := inForce(); v != 50 || src != livesettings.SourceSite {
		t.Errorf("after the owner's 50: %v (%s), want the site's 50", v, src)
	}
	status, body = p.get(t, "/sites/acme/manage", p.session(p.acme, user))
	if status != http.StatusOK || !strings.Contains(body, `name="max_records" type="text" inputmode="numeric" value="50"`) {
		t.Errorf("HTTP %d: the page does not show the site's own 50 in its box:\n%s", status, body)
	}

	if status, body = p.post(t, "/rows", url.Values{"max_records": {""}}, user); status != http.StatusSeeOther {
		t.Fatalf("HTTP %d after emptying the box, want the page again: %s", status, body)
	}
	if v, src := inForce(); v != 1000 || src != livesettings.SourceDefault {
		t.Errorf("after emptying the box: %v (%s), want the deployment's 1000", v, src)
	}

	events, err := p.h.deps.Store.ListEvents(ctx, p.acme.ID, time.Time{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) < 3 || events[0].Action != siteadmin.ActionChangeSetting || events[0].Details["setting"] != livesettings.MaxRecords ||
		events[0].Details["reset"] != true || events[1].Details["new"] != float64(50) || events[2].Outcome != siteadmin.OutcomeRefused {
		t.Errorf("the last events are %+v, want the refused 5000, the 50 and the reset, as the owner's", events)
	}
}
