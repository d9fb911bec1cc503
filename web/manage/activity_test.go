package manage

import (
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// activityRow is one row of the owner page's recent activity: who, what,
// outcome.
var activityRow = regexp.MustCompile(`<tr><td class="nowrap">[^<]*</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>`)

// TestOwnerActivityTellsOldRefusalsPlainly: refusals recorded before
// events kept a sentence for people (migration 00037) have only their
// action and reason, in the admin API's words; the owner's recent activity
// tells them by what they were and the kind of refusal their reason
// names, never in the reason's words and never as a bare "refused". Before,
// each said only "refused".
func TestOwnerActivityTellsOldRefusalsPlainly(t *testing.T) {
	p := newPages(t)
	ctx := t.Context()
	owner := "it.admin@acme.example"
	// Reasons as siteadmin recorded them then.
	old := []struct{ action, reason, want string }{
		{siteadmin.ActionIssueServiceToken, "conflict: site “acme” has no api_token connection; add one before issuing service tokens",
			"refused: The site had no fixed API credential, which service tokens act with; nothing was issued."},
		{siteadmin.ActionUpdateSite, "invalid_request: settings: invalid Acumatica settings: endpoint_version “latest” is not a version",
			"refused: What was entered was not accepted; nothing was changed."},
		{siteadmin.ActionPutAPIConnection, "credential_rejected: Frappe accepted the request but as Guest; check the API key and secret; nothing was saved",
			"refused: The ERP did not accept the credential; nothing was saved."},
		{siteadmin.ActionRotateOAuthSecret, "upstream_unreachable: could not verify: the ERP at http://127.0.0.1:8001 could not be reached; nothing was saved",
			"refused: The ERP could not be reached; nothing was changed."},
		{siteadmin.ActionOwnerSignIn, "credential_rejected: bob@acme.example is not an administrator of the ERP: roles Accounts User",
			"refused: The sign-in at the ERP did not prove an administrator of the ERP."},
		{siteadmin.ActionRevokePerson, "not_found: ERP user “bob@acme.example” has not connected to site “acme”",
			"refused: That person had no access through erpgate to revoke."},
		{siteadmin.ActionDeleteSite, "conflict: your erpgate operator disabled this site, so it cannot be deleted until they enable it again; nothing was deleted",
			"refused: It conflicted with the site's state at the time; nothing was changed."},
	}
	for _, e := range old {
		if err := p.h.deps.Store.RecordEvent(ctx, sites.Event{SiteID: p.acme.ID, SiteSlug: p.acme.Slug, ActorKind: string(siteadmin.ActorERPAdmin),
			Actor: owner, Action: e.action, Outcome: siteadmin.OutcomeRefused, Reason: e.reason}); err != nil {
			t.Fatal(err)
		}
	}
	_, body := p.get(t, "/sites/acme/manage", p.session(p.acme, owner))
	var outcomes []string
	for _, m := range activityRow.FindAllStringSubmatch(body, -1) {
		outcomes = append(outcomes, html.UnescapeString(m[3]))
	}
	for _, e := range old {
		if !slices.Contains(outcomes, e.want) {
			t.Errorf("%s refused for %q: no row says %q; the rows say %q", e.action, e.reason, e.want, outcomes)
		}
	}
	for _, o := range outcomes {
		for _, words := range []string{"api_token", "settings:", "endpoint_version", "credential_rejected", "“"} {
			if strings.Contains(o, words) {
				t.Errorf("a row says %q, with the reason's %q", o, words)
			}
		}
	}
}

// TestOwnerActivityTellsTheOperatorsRefusalsPlainly: the operator's
// refused admin API calls on a site show in its owner's recent activity,
// in sentences for people, not in the admin API's words (connection types,
// JSON field names, sites by their quoted slug). Before, the rows said
// "Site “acme” has no api_token connection.", "Status “paused” is not
// valid; use “active” or “disabled”.", "Shared_callback can only be
// turned off: …", "Missing required field: credentials.", "Unknown
// credential field: “colour” (this kind of site expects: api_key,
// api_secret).", "Site “acme” has no OAuth client yet; …", "Site “acme”
// has no service token “…”.", "Settings must
// be a JSON object." and "Site “acme” has connections … before changing
// base_url, then add them again.".
func TestOwnerActivityTellsTheOperatorsRefusalsPlainly(t *testing.T) {
	p := newPages(t)
	ctx := t.Context()
	admin, op, site := p.h.deps.Admin, siteadmin.Operator, p.acme
	refusals := []struct {
		what string
		call func() error
	}{
		{"remove an API credential the site lacks", func() error {
			return admin.DeleteConnection(ctx, op, site, sites.ConnectionAPIToken)
		}},
		{"an unknown status", func() error {
			status := "paused"
			_, err := admin.UpdateSite(ctx, op, site, siteadmin.SiteChange{Status: &status})
			return err
		}},
		{"back to the shared redirect URI", func() error {
			shared := true
			_, err := admin.UpdateSite(ctx, op, site, siteadmin.SiteChange{SharedCallback: &shared})
			return err
		}},
		{"no credential", func() error {
			_, err := admin.PutAPIConnection(ctx, op, site, nil)
			return err
		}},
		{"an unknown credential field", func() error {
			_, err := admin.PutAPIConnection(ctx, op, site, map[string]string{"api_key": "k", "api_secret": "s", "colour": "blue"})
			return err
		}},
		{"a new secret for an OAuth client the site lacks", func() error {
			_, err := admin.RotateOAuthClientSecret(ctx, op, site, "new-secret")
			return err
		}},
		{"an unknown token", func() error {
			id := uuid.New()
			return admin.RevokeServiceToken(ctx, op, site, id, id.String())
		}},
		{"settings that are not an object", func() error {
			_, err := admin.UpdateSite(ctx, op, site, siteadmin.SiteChange{Settings: json.RawMessage(`["x"]`)})
			return err
		}},
		{"a new address with a verified connection", func() error {
			if _, err := p.h.deps.Store.PutVerifiedConnection(ctx, site.ID, site.BaseURL, sites.ConnectionAPIToken, "api@acme.example",
				map[string]secrets.Secret{"api_key": "k", "api_secret": "s"}); err != nil {
				t.Fatal(err)
			}
			moved := "http://127.0.0.1:8009"
			_, err := admin.UpdateSite(ctx, op, site, siteadmin.SiteChange{BaseURL: &moved})
			return err
		}},
	}
	for _, r := range refusals {
		var e *siteadmin.Error
		if err := r.call(); !errors.As(err, &e) || e.Kind == siteadmin.Internal {
			t.Fatalf("%s: %v, want a refusal", r.what, err)
		}
	}
	_, body := p.get(t, "/sites/acme/manage", p.session(site, "it.admin@acme.example"))
	var refused []string
	for _, m := range activityRow.FindAllStringSubmatch(body, -1) {
		if o := html.UnescapeString(m[3]); strings.HasPrefix(o, "refused") {
			refused = append(refused, o)
		}
	}
	if len(refused) != len(refusals) {
		t.Fatalf("%d refused rows, want %d: %q", len(refused), len(refusals), refused)
	}
	for _, o := range refused {
		if o == "refused" {
			t.Errorf("a refusal without a sentence")
		}
		for _, words := range []string{"api_token", "api_key", "base_url", "shared_callback", "credentials.", "expects",
			"site “", "json", "“active”"} {
			if strings.Contains(strings.ToLower(o), words) {
				t.Errorf("a row says %q, with the admin API's %q", o, words)
			}
		}
	}
}

// TestTenantMoveLeavesTheOldTenantsActivityBehind: after a site moves to
// another tenant, its owner is an administrator of another company. The
// owner's page shows neither what the old tenant's administrators did
// (their ERP user ids, the tokens they issued) nor the old tenant's
// service tokens, which the move revoked: the operator's console keeps
// them. Before, the new owner's recent activity named admin@Company and
// the token list named the old company's bot.
func TestTenantMoveLeavesTheOldTenantsActivityBehind(t *testing.T) {
	p := newPages(t)
	ctx := t.Context()
	store, admin := p.h.deps.Store, p.h.deps.Admin
	site := p.acumaticaSite(t)
	if _, err := store.PutConnection(ctx, site.ID, sites.ConnectionAPIToken, "bot@Company",
		map[string]secrets.Secret{"client_id": "bot@Company", "client_secret": "s", "username": "bot", "password": "p"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.IssueServiceToken(ctx, site.ID, "Old company's invoicing bot"); err != nil {
		t.Fatal(err)
	}
	admin.Record(ctx, siteadmin.ERPAdmin("admin@Company"), site.ID, site.Slug, siteadmin.ActionIssueServiceToken, nil, nil)
	if err := store.DeleteConnection(ctx, site.ID, sites.ConnectionAPIToken); err != nil {
		t.Fatal(err)
	}
	admin.Record(ctx, siteadmin.Operator, site.ID, site.Slug, siteadmin.ActionDeleteConnection, nil, nil)

	id, err := admin.ProposeOwnerChange(ctx, siteadmin.ERPAdmin("admin@Company"), site,
		siteadmin.OwnerChangeRequest{Settings: json.RawMessage(`{"tenant":"OtherCompany"}`)})
	if err != nil {
		t.Fatal(err)
	}
	rec := p.proveChange(site, id, "admin@OtherCompany")
	if rec.Code != http.StatusSeeOther || len(rec.Result().Cookies()) != 1 {
		t.Fatalf("HTTP %d, cookies %v: %s", rec.Code, rec.Result().Cookies(), rec.Body)
	}
	_, body := p.get(t, "/sites/acu/manage", rec.Result().Cookies()[0])
	var who []string
	for _, m := range activityRow.FindAllStringSubmatch(body, -1) {
		who = append(who, html.UnescapeString(m[1]))
	}
	if !slices.Contains(who, "admin@OtherCompany") {
		t.Errorf("the move itself is missing from the new owner's activity: %q", who)
	}
	if slices.Contains(who, "admin@Company") || slices.Contains(who, "erpgate operator") {
		t.Errorf("the new tenant's owner sees what was done at the old tenant: activity by %q", who)
	}
	if strings.Contains(html.UnescapeString(body), "Old company") {
		t.Errorf("the new tenant's owner page lists the old tenant's service token")
	}
}
