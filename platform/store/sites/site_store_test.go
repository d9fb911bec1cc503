package sites_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/store/sites"
)

func TestSiteCRUD(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()

	created := mustCreate(t, s, "acme")
	if created.ID == uuid.Nil || created.Status != sites.StatusActive || created.CreatedAt.IsZero() {
		t.Fatalf("created = %+v", created)
	}
	if string(created.Settings) != `{"company": "Acme"}` {
		t.Errorf("settings = %s", created.Settings)
	}
	cs, err := created.Connector()
	if err != nil || cs.BaseURL.String() != "https://acme.example.com" || cs.ID != created.ID {
		t.Fatalf("Connector() = %+v, %v", cs, err)
	}

	byID, err := s.GetSite(ctx, created.ID)
	if err != nil || byID.Slug != "acme" {
		t.Fatalf("GetSite = %+v, %v", byID, err)
	}
	bySlug, err := s.GetSiteBySlug(ctx, "acme")
	if err != nil || bySlug.ID != created.ID {
		t.Fatalf("GetSiteBySlug = %+v, %v", bySlug, err)
	}
	mustCreate(t, s, "beta")
	list, err := s.ListSites(ctx)
	if err != nil || len(list) != 2 || list[0].Slug != "acme" || list[1].Slug != "beta" {
		t.Fatalf("ListSites = %+v, %v", list, err)
	}

	name, disabled := "Acme Ltd", sites.StatusDisabled
	noIdentity := ""
	updated, err := s.UpdateSite(ctx, created.ID, sites.SiteUpdate{DisplayName: &name, Status: &disabled,
		Settings: json.RawMessage(`{"company":"Acme NZ"}`), IdentityKey: &noIdentity})
	if err != nil {
		t.Fatal(err)
	}
	if updated.DisplayName != name || updated.Status != sites.StatusDisabled || updated.BaseURL != created.BaseURL ||
		string(updated.Settings) != `{"company": "Acme NZ"}` || updated.UpdatedAt.Before(created.UpdatedAt) {
		t.Fatalf("updated = %+v", updated)
	}
	unchanged, err := s.UpdateSite(ctx, created.ID, sites.SiteUpdate{})
	if err != nil || unchanged.DisplayName != name {
		t.Fatalf("empty update = %+v, %v", unchanged, err)
	}

	if err := s.DeleteSite(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSite(ctx, created.ID); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("GetSite after delete = %v, want ErrNotFound", err)
	}
	if err := s.DeleteSite(ctx, created.ID); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("second DeleteSite = %v, want ErrNotFound", err)
	}
	if _, err := s.UpdateSite(ctx, created.ID, sites.SiteUpdate{DisplayName: &name}); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("UpdateSite after delete = %v, want ErrNotFound", err)
	}
	if _, err := s.GetSiteBySlug(ctx, "nope"); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("GetSiteBySlug(nope) = %v, want ErrNotFound", err)
	}
}

func TestSiteConflicts(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	acme := mustCreate(t, s, "acme")

	_, err := s.CreateSite(ctx, sites.NewSite{Slug: "acme", Kind: "frappe", DisplayName: "x", BaseURL: "https://other.example.com"})
	if !errors.Is(err, sites.ErrSlugTaken) || !errors.Is(err, sites.ErrConflict) {
		t.Errorf("duplicate slug = %v, want ErrSlugTaken and ErrConflict", err)
	}
	_, err = s.CreateSite(ctx, sites.NewSite{Slug: "acme2", Kind: "frappe", DisplayName: "x", BaseURL: acme.BaseURL})
	if !errors.Is(err, sites.ErrBaseURLTaken) || !errors.Is(err, sites.ErrConflict) {
		t.Errorf("duplicate base URL = %v, want ErrBaseURLTaken and ErrConflict", err)
	}

	// One base URL may serve several sites with different identity keys
	// (Acumatica's tenants), but each key once.
	erp := "https://erp.example.com"
	for _, slug := range []string{"t1", "t2"} {
		if _, err := s.CreateSite(ctx, sites.NewSite{Slug: slug, Kind: "acumatica", DisplayName: slug, BaseURL: erp,
			Settings: json.RawMessage(`{"tenant":"` + slug + `"}`), IdentityKey: slug}); err != nil {
			t.Fatalf("tenant %s: %v", slug, err)
		}
	}
	_, err = s.CreateSite(ctx, sites.NewSite{Slug: "t1b", Kind: "acumatica", DisplayName: "x", BaseURL: erp,
		Settings: json.RawMessage(`{"tenant":"t1"}`), IdentityKey: "t1"})
	if !errors.Is(err, sites.ErrBaseURLTaken) {
		t.Errorf("same tenant twice = %v, want ErrBaseURLTaken", err)
	}
	t2, err := s.GetSiteBySlug(ctx, "t2")
	if err != nil {
		t.Fatal(err)
	}
	t1 := "t1"
	if _, err := s.UpdateSite(ctx, t2.ID, sites.SiteUpdate{Settings: json.RawMessage(`{"tenant":"t1"}`), IdentityKey: &t1}); !errors.Is(err, sites.ErrBaseURLTaken) {
		t.Errorf("update into a taken tenant = %v, want ErrBaseURLTaken", err)
	}
	if _, err := s.UpdateSite(ctx, t2.ID, sites.SiteUpdate{Settings: json.RawMessage(`{"tenant":"t3"}`)}); !errors.Is(err, sites.ErrInvalid) {
		t.Errorf("new settings without their identity key = %v, want ErrInvalid", err)
	}
	// The same tenant under another virtual directory of the origin is
	// another instance.
	if _, err := s.CreateSite(ctx, sites.NewSite{Slug: "t1-erp2", Kind: "acumatica", DisplayName: "x", BaseURL: erp + "/ERP2",
		Settings: json.RawMessage(`{"tenant":"t1"}`), IdentityKey: "t1"}); err != nil {
		t.Errorf("same tenant under another directory: %v", err)
	}
	// IIS serves a directory in any case: /erp2 is the same instance.
	if _, err := s.CreateSite(ctx, sites.NewSite{Slug: "t1-erp2-lower", Kind: "acumatica", DisplayName: "x", BaseURL: erp + "/erp2",
		Settings: json.RawMessage(`{"tenant":"t1"}`), IdentityKey: "t1"}); !errors.Is(err, sites.ErrBaseURLTaken) {
		t.Errorf("same directory in another case = %v, want ErrBaseURLTaken", err)
	}
}

// TestSiteIdentityIsTheConnectors: the rule is the identity key the
// connector computed, not a setting the platform knows by name. Two sites
// at one base URL whose settings both say "tenant":"shared" are distinct
// when their connector tells them apart by something else (a database
// name), and one key is taken once whatever the settings say.
func TestSiteIdentityIsTheConnectors(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	erp := "https://db.example.com"
	for _, db := range []string{"sales", "stock"} {
		site, err := s.CreateSite(ctx, sites.NewSite{Slug: db, Kind: "dberp", DisplayName: db, BaseURL: erp,
			Settings: json.RawMessage(`{"tenant":"shared","database":"` + db + `"}`), IdentityKey: db})
		if err != nil {
			t.Fatalf("database %s: %v", db, err)
		}
		if site.IdentityKey != db {
			t.Errorf("identity key %q, want %q", site.IdentityKey, db)
		}
	}
	_, err := s.CreateSite(ctx, sites.NewSite{Slug: "sales2", Kind: "dberp", DisplayName: "x", BaseURL: erp,
		Settings: json.RawMessage(`{"database":"sales"}`), IdentityKey: "sales"})
	if !errors.Is(err, sites.ErrBaseURLTaken) {
		t.Errorf("same database twice = %v, want ErrBaseURLTaken", err)
	}
	got, err := s.GetSiteBySlug(ctx, "stock")
	if err != nil || got.IdentityKey != "stock" {
		t.Errorf("read back: %+v, %v", got, err)
	}
}

func TestCreateSiteRefusesInvalidInput(t *testing.T) {
	s, _ := newStore(t)
	good := sites.NewSite{Slug: "acme", Kind: "frappe", DisplayName: "Acme", BaseURL: "https://acme.example.com"}
	cases := map[string]func(n *sites.NewSite){
		"slug":          func(n *sites.NewSite) { n.Slug = "Acme!" },
		"kind":          func(n *sites.NewSite) { n.Kind = "" },
		"display name":  func(n *sites.NewSite) { n.DisplayName = "  " },
		"not an origin": func(n *sites.NewSite) { n.BaseURL = "https://acme.example.com/app/" },
		"dot segment":   func(n *sites.NewSite) { n.BaseURL = "https://acme.example.com/app/../x" },
		"query":         func(n *sites.NewSite) { n.BaseURL = "https://acme.example.com?x=1" },
		"settings":      func(n *sites.NewSite) { n.Settings = json.RawMessage(`[1]`) },
	}
	for name, mutate := range cases {
		in := good
		mutate(&in)
		if _, err := s.CreateSite(t.Context(), in); !errors.Is(err, sites.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	bad := sites.Status("paused")
	if _, err := s.UpdateSite(t.Context(), uuid.New(), sites.SiteUpdate{Status: &bad}); !errors.Is(err, sites.ErrInvalid) {
		t.Errorf("bad status: err = %v, want ErrInvalid", err)
	}
}

func TestDeleteSiteCascades(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	acme := mustCreate(t, s, "acme")
	other := mustCreate(t, s, "other")
	for _, site := range []sites.Site{acme, other} {
		mustPutAPI(t, s, site, "key", "secret")
		if _, _, err := s.IssueServiceToken(ctx, site.ID, "bot"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `INSERT INTO usage_events (occurred_at, site_id, site_slug, auth_type, request_id, method, outcome, duration_ms)
		VALUES (now(), $1, 'acme', 'service_token', 'r1', 'tools/list', 'success', 3)`, acme.ID); err != nil {
		t.Fatal(err)
	}

	if err := s.DeleteSite(ctx, acme.ID); err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]int{"connections": 1, "credentials": 2, "service_tokens": 1} {
		if n := count(t, pool, `SELECT count(*) FROM `+table); n != want {
			t.Errorf("%s rows after delete = %d, want %d (the other site's)", table, n, want)
		}
	}
	// Usage events outlive their site with its id and slug (migration
	// 00011): nothing refers to the site any more, nothing is cleared.
	if n := count(t, pool, `SELECT count(*) FROM usage_events WHERE site_id = $1 AND site_slug = 'acme'`, acme.ID); n != 1 {
		t.Errorf("usage events kept with the deleted site's id and slug: %d, want 1", n)
	}
}

// A site records who disabled it. Its owner pauses and resumes it; a site
// the operator disabled (even one the owner had paused) its owner can
// neither enable, disable again, change nor delete, until the operator
// enables it.
func TestOperatorDisableBindsTheOwner(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	site := mustCreate(t, s, "acme")
	set := func(status sites.Status, by sites.Party) (sites.Site, error) {
		return s.UpdateSite(ctx, site.ID, sites.SiteUpdate{Status: &status, By: by})
	}
	if got, err := set(sites.StatusDisabled, sites.ByOwner); err != nil || got.Status != sites.StatusDisabled || got.DisabledBy != sites.ByOwner {
		t.Fatalf("the owner pauses: %+v, %v", got, err)
	}
	if got, err := set(sites.StatusDisabled, sites.ByOperator); err != nil || got.DisabledBy != sites.ByOperator {
		t.Fatalf("the operator disables a paused site: %+v, %v", got, err)
	}
	name, active, disabled := "Renamed", sites.StatusActive, sites.StatusDisabled
	for what, upd := range map[string]sites.SiteUpdate{
		"enable":  {Status: &active, By: sites.ByOwner},
		"disable": {Status: &disabled, By: sites.ByOwner},
		"rename":  {DisplayName: &name, By: sites.ByOwner},
	} {
		if _, err := s.UpdateSite(ctx, site.ID, upd); !errors.Is(err, sites.ErrOperatorDisabled) {
			t.Errorf("the owner's %s: %v, want ErrOperatorDisabled", what, err)
		}
	}
	if err := s.DeleteSiteByOwner(ctx, site.ID); !errors.Is(err, sites.ErrOperatorDisabled) {
		t.Errorf("the owner's delete: %v, want ErrOperatorDisabled", err)
	}
	if got, err := s.GetSite(ctx, site.ID); err != nil || got.Status != sites.StatusDisabled || got.DisabledBy != sites.ByOperator || got.DisplayName == name {
		t.Fatalf("after the owner's attempts: %+v, %v", got, err)
	}
	if got, err := set(sites.StatusActive, sites.ByOperator); err != nil || got.Status != sites.StatusActive || got.DisabledBy != "" {
		t.Fatalf("the operator enables: %+v, %v", got, err)
	}
	if got, err := set(sites.StatusDisabled, sites.ByOwner); err != nil || got.DisabledBy != sites.ByOwner {
		t.Fatalf("the owner pauses again: %+v, %v", got, err)
	}
	if got, err := set(sites.StatusActive, sites.ByOwner); err != nil || got.Status != sites.StatusActive || got.DisabledBy != "" {
		t.Fatalf("the owner resumes: %+v, %v", got, err)
	}
	if err := s.DeleteSiteByOwner(ctx, site.ID); err != nil {
		t.Fatalf("the owner deletes an active site: %v", err)
	}
	if err := s.DeleteSiteByOwner(ctx, site.ID); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("the owner deletes it again: %v, want ErrNotFound", err)
	}
}

// FuzzGetSiteBySlug: any slug (a URL path segment, a form field) finds
// its site or is not found; it never reaches PostgreSQL as text it
// refuses.
func FuzzGetSiteBySlug(f *testing.F) {
	for _, seed := range []string{"acme", "ACME", "acme-2", "", "a\x00", "é", strings.Repeat("a", 200)} {
		f.Add(seed)
	}
	s, _ := newStore(f)
	mustCreate(f, s, "acme")
	f.Fuzz(func(t *testing.T, slug string) {
		site, err := s.GetSiteBySlug(context.Background(), slug)
		switch {
		case err == nil:
			if site.Slug != slug {
				t.Fatalf("GetSiteBySlug(%q) found %q", slug, site.Slug)
			}
		case !errors.Is(err, sites.ErrNotFound):
			t.Fatalf("GetSiteBySlug(%q): %v", slug, err)
		}
	})
}
