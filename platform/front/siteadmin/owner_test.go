package siteadmin_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// oauthFixture is the layer serving testoauth sites, with one site whose
// OAuth client is c1 / first-secret-1.
func oauthFixture(t *testing.T) (*fixture, *siteadmin.Service, sites.Site) {
	t.Helper()
	f := newFixture(t)
	reg := connector.NewRegistry()
	reg.MustRegister(testOAuthERP{})
	svc := siteadmin.New(siteadmin.Deps{Store: f.store, Registry: reg, HTTPClient: func(connector.Site, connector.Authorizer) *http.Client { return http.DefaultClient }})
	site, err := svc.CreateSite(t.Context(), siteadmin.Operator, siteadmin.NewSite{Slug: "signin", Kind: "testoauth", DisplayName: "Sign-in", BaseURL: f.erp.URL,
		Settings: json.RawMessage(`{"company":"acme"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PutOAuthConnection(t.Context(), siteadmin.Operator, site, map[string]string{"client_id": "c1", "client_secret": "first-secret-1"}); err != nil {
		t.Fatal(err)
	}
	return f, svc, site
}

func storedSecret(t *testing.T, f *fixture, site sites.Site) string {
	t.Helper()
	_, fields, err := f.store.GetConnection(t.Context(), site.ID, sites.ConnectionOAuth)
	if err != nil {
		t.Fatal(err)
	}
	return fields["client_secret"].Reveal()
}

// A new client secret proposed on the owner's page is kept sealed and
// unused until its proof; the proof signs in with it; applying saves it as
// the one who proved it, once.
func TestOwnerSecretChangeWaitsForItsProof(t *testing.T) {
	f, svc, site := oauthFixture(t)
	ctx := t.Context()
	for _, blank := range []string{"", "   "} {
		if _, err := svc.ProposeOwnerChange(ctx, siteadmin.ERPAdmin("ann"), site, siteadmin.OwnerChangeRequest{ClientSecret: blank}); kindOf(err) != siteadmin.Invalid {
			t.Errorf("blank secret %q: %v, want invalid", blank, err)
		}
	}
	id, err := svc.ProposeOwnerChange(ctx, siteadmin.ERPAdmin("ann"), site, siteadmin.OwnerChangeRequest{ClientSecret: " second-secret-2 "})
	if err != nil {
		t.Fatal(err)
	}
	if got := storedSecret(t, f, site); got != "first-secret-1" {
		t.Fatalf("a proposed secret was saved before its proof: %q", got)
	}
	var sealed []byte
	if err := f.pool.QueryRow(ctx, `SELECT secret FROM owner_changes WHERE id = $1`, id).Scan(&sealed); err != nil || bytes.Contains(sealed, []byte("second-secret-2")) {
		t.Fatalf("pending secret stored as %q (%v)", sealed, err)
	}
	csite, client, err := svc.OwnerChangeTarget(ctx, site, id)
	if err != nil || client.ID != "c1" || client.Secret.Reveal() != "second-secret-2" || csite.BaseURL.String() != site.BaseURL {
		t.Fatalf("proof target: %+v %q %v", csite, client.ID, err)
	}
	if _, err := svc.ApplyOwnerChange(ctx, siteadmin.ERPAdmin("bob"), site, id); err != nil {
		t.Fatal(err)
	}
	if got := storedSecret(t, f, site); got != "second-secret-2" {
		t.Fatalf("after the proof the secret is %q", got)
	}
	if _, err := svc.ApplyOwnerChange(ctx, siteadmin.ERPAdmin("bob"), site, id); kindOf(err) != siteadmin.NotFound {
		t.Errorf("applying a change twice: %v, want not found", err)
	}
	var rotations []string
	for _, e := range f.events(t) {
		if e.Action == siteadmin.ActionRotateOAuthSecret {
			rotations = append(rotations, e.Outcome+" "+e.ActorKind+" "+e.Actor)
		}
		if raw, _ := json.Marshal(e); strings.Contains(string(raw), "second-secret-2") {
			t.Errorf("event %s holds the secret", e.Action)
		}
	}
	if want := "refused erp_admin ann|refused erp_admin ann|success erp_admin bob"; strings.Join(rotations, "|") != want {
		t.Errorf("rotation events %q, want %q", strings.Join(rotations, "|"), want)
	}
}

// A move to another identity (tenant) needs a proof; a refused proof drops
// the change and records why, leaving the site as it was.
func TestOwnerSettingsChangeRefusedLeavesTheSite(t *testing.T) {
	f, svc, site := oauthFixture(t)
	ctx := t.Context()
	if needs, err := svc.NeedsProof(site, json.RawMessage(`{"company":"acme"}`)); needs || err != nil {
		t.Errorf("same identity: needs proof %v, %v", needs, err)
	}
	if needs, err := svc.NeedsProof(site, json.RawMessage(`{"company":"globex"}`)); !needs || err != nil {
		t.Errorf("another identity: needs proof %v, %v", needs, err)
	}
	if _, err := svc.NeedsProof(site, json.RawMessage(`{"colour":"red"}`)); kindOf(err) != siteadmin.Invalid {
		t.Errorf("bad settings: %v, want invalid", err)
	}
	id, err := svc.ProposeOwnerChange(ctx, siteadmin.ERPAdmin("ann"), site, siteadmin.OwnerChangeRequest{Settings: json.RawMessage(`{"company":"globex"}`)})
	if err != nil {
		t.Fatal(err)
	}
	csite, client, err := svc.OwnerChangeTarget(ctx, site, id)
	if err != nil || !strings.Contains(string(csite.Settings), "globex") || client.Secret.Reveal() != "first-secret-1" {
		t.Fatalf("proof target settings %s, secret kept %v: %v", csite.Settings, client.Secret.Reveal() == "first-secret-1", err)
	}
	svc.RefuseOwnerChange(ctx, siteadmin.ERPAdmin("ann"), site, id, siteadmin.Refused("ann is not an administrator of globex"))
	after, err := f.store.GetSite(ctx, site.ID)
	if err != nil || !strings.Contains(string(after.Settings), `"acme"`) {
		t.Fatalf("after a refused move: %s, %v", after.Settings, err)
	}
	if _, _, err := svc.OwnerChangeTarget(ctx, site, id); kindOf(err) != siteadmin.NotFound {
		t.Errorf("a refused change is still there: %v", err)
	}
	ev := f.events(t)
	last := ev[len(ev)-1]
	if last.Action != siteadmin.ActionUpdateSite || last.Outcome != siteadmin.OutcomeRefused || !strings.Contains(last.Reason, "not an administrator of globex") || last.Actor != "ann" {
		t.Errorf("last event %+v", last)
	}
}

// A pending change is its site's only, and expires.
func TestOwnerChangeIsScopedAndExpires(t *testing.T) {
	f, svc, site := oauthFixture(t)
	ctx := t.Context()
	other, err := svc.CreateSite(ctx, siteadmin.Operator, siteadmin.NewSite{Slug: "other", Kind: "testoauth", DisplayName: "Other", BaseURL: f.erp.URL,
		Settings: json.RawMessage(`{"company":"other"}`)})
	if err != nil {
		t.Fatal(err)
	}
	id, err := svc.ProposeOwnerChange(ctx, siteadmin.ERPAdmin("ann"), site, siteadmin.OwnerChangeRequest{ClientSecret: "second-secret-2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.OwnerChangeTarget(ctx, other, id); kindOf(err) != siteadmin.NotFound {
		t.Errorf("another site's change: %v, want not found", err)
	}
	if _, err := svc.ApplyOwnerChange(ctx, siteadmin.ERPAdmin("mallory"), other, id); kindOf(err) != siteadmin.NotFound {
		t.Errorf("applying another site's change: %v, want not found", err)
	}
	if _, err := svc.ProposeOwnerChange(ctx, siteadmin.ERPAdmin("ann"), other, siteadmin.OwnerChangeRequest{ClientSecret: "x"}); kindOf(err) != siteadmin.Conflict {
		t.Errorf("a secret for a site without an OAuth client: %v, want conflict", err)
	}
	expired, err := f.store.PutOwnerChange(ctx, sites.OwnerChange{SiteID: site.ID, ERPUser: "ann", ClientSecret: secrets.Secret("late")}, -time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.GetOwnerChange(ctx, site.ID, expired); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("an expired change: %v, want not found", err)
	}
	if _, err := svc.ApplyOwnerChange(ctx, siteadmin.ERPAdmin("ann"), site, expired); kindOf(err) != siteadmin.NotFound {
		t.Errorf("applying an expired change: %v, want not found", err)
	}
	if got := storedSecret(t, f, site); got != "first-secret-1" {
		t.Errorf("secret %q after refused applications", got)
	}
	// The sweep removes expired changes only.
	if n, err := f.store.SweepOwnerChanges(ctx); err != nil || n != 1 {
		t.Errorf("sweep removed %d (%v), want the expired one", n, err)
	}
	if _, _, err := svc.OwnerChangeTarget(ctx, site, id); err != nil {
		t.Errorf("the sweep removed a live change: %v", err)
	}
	// Deleting the site takes its pending changes with it.
	if err := svc.DeleteSite(ctx, siteadmin.Operator, site); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM owner_changes WHERE site_id = $1`, site.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d changes of a deleted site (%v)", n, err)
	}
}

// A new client secret proposed while the site was active, whose proof
// comes back after the operator disabled the site, is not saved: the
// owner may not change a site the operator disabled, whenever they began.
func TestOwnerSecretProvenAfterOperatorDisableIsRefused(t *testing.T) {
	f, svc, site := oauthFixture(t)
	ctx := t.Context()
	id, err := svc.ProposeOwnerChange(ctx, siteadmin.ERPAdmin("ann"), site, siteadmin.OwnerChangeRequest{ClientSecret: "second-secret-2"})
	if err != nil {
		t.Fatal(err)
	}
	disabled := "disabled"
	site, err = svc.UpdateSite(ctx, siteadmin.Operator, site, siteadmin.SiteChange{Status: &disabled})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.ApplyOwnerChange(ctx, siteadmin.ERPAdmin("ann"), site, id)
	var se *siteadmin.Error
	if !errors.As(err, &se) || se.Kind != siteadmin.Conflict ||
		se.Message != "your erpgate operator disabled this site, so its OAuth client secret cannot be changed until they enable it again; nothing was changed" {
		t.Errorf("the proof comes back after the operator's disable: %v", err)
	}
	if got := storedSecret(t, f, site); got != "first-secret-1" {
		t.Errorf("the secret proven after the operator's disable was saved: %q", got)
	}
	ev := f.events(t)
	if last := ev[len(ev)-1]; last.Action != siteadmin.ActionRotateOAuthSecret || last.Outcome != siteadmin.OutcomeRefused || last.Actor != "ann" {
		t.Errorf("last event %+v", last)
	}
	// Nor is a change proposed now kept for a proof at the ERP: a new
	// secret, or settings that move the site to another identity.
	for _, req := range []siteadmin.OwnerChangeRequest{{ClientSecret: "fourth-secret-4"}, {Settings: json.RawMessage(`{"company":"globex"}`)}} {
		if _, err := svc.ProposeOwnerChange(ctx, siteadmin.ERPAdmin("ann"), site, req); kindOf(err) != siteadmin.Conflict {
			t.Errorf("the owner proposes %+v on a site the operator disabled: %v", req, err)
		}
	}
	if n := count(t, f.pool, `SELECT count(*) FROM owner_changes`); n != 0 {
		t.Errorf("%d owner changes wait for a proof on a site the operator disabled", n)
	}
	// The operator's own rotation is theirs to make.
	if _, err := svc.RotateOAuthClientSecret(ctx, siteadmin.Operator, site, "third-secret-3"); err != nil {
		t.Errorf("the operator rotates the secret of the site they disabled: %v", err)
	}
}
