package main

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// TestSyncSiteIdentities: a site whose stored identity key is not what its
// connector computes (written under older rules) gets the connector's key
// at start; one whose key another site holds is left alone and named in
// the log.
func TestSyncSiteIdentities(t *testing.T) {
	ctx := t.Context()
	pool := pgtest.NewPool(t)
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	store := sites.NewStore(pool, keys)
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	// Rows as an older erpgate may have left them: keys that do not follow
	// the settings.
	if _, err := pool.Exec(ctx, `
INSERT INTO sites (id, slug, kind, base_url, display_name, settings, identity_key) VALUES
 ('0b7f1c3e-1515-4a5b-8c9d-000000000001', 'stale', 'acumatica', 'https://acu.test', 'A', '{"tenant":"North"}', ''),
 ('0b7f1c3e-1515-4a5b-8c9d-000000000002', 'holder', 'acumatica', 'https://acu.test', 'B', '{"tenant":"South"}', 'South-old'),
 ('0b7f1c3e-1515-4a5b-8c9d-000000000003', 'clash', 'acumatica', 'https://acu.test', 'C', '{"tenant":"South"}', 'other'),
 ('0b7f1c3e-1515-4a5b-8c9d-000000000004', 'frappe', 'frappe', 'https://frappe.test', 'F', '{}', 'x')`); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.InfoLevel)
	if err := syncSiteIdentities(ctx, store, reg, zap.New(core)); err != nil {
		t.Fatal(err)
	}
	// Sites are taken by slug: clash gets South first, so holder, which
	// has the same tenant, cannot have it and keeps its key.
	want := map[string]string{"stale": "North", "clash": "South", "holder": "South-old", "frappe": ""}
	for slug, key := range want {
		site, err := store.GetSiteBySlug(ctx, slug)
		if err != nil || site.IdentityKey != key {
			t.Errorf("%s: identity key %q (%v), want %q", slug, site.IdentityKey, err, key)
		}
	}
	refused := logs.FilterMessageSnippet("site identity not updated").All()
	if len(refused) != 1 || refused[0].ContextMap()["site"] != "holder" {
		t.Errorf("collisions logged: %v, want one naming holder", refused)
	}
}
