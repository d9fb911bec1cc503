package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/ory/fosite"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestCleanUpRemovesWhatUnauthenticatedRequestsLeft: the janitor removes
// dynamic clients nobody uses, expired sign-in flows and expired client
// metadata documents, so that unauthenticated requests cannot grow the
// database for long (issue 14, item 6).
func TestCleanUpRemovesWhatUnauthenticatedRequestsLeft(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	store := storage.New(pool, keyring(t, keySpec(t, "k1")), storage.Options{})
	site := newSite(t, pool)
	now := time.Now()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	client := func(id string, created time.Time) {
		t.Helper()
		if err := store.CreateClient(ctx, storage.RegisteredClient{ID: id, RedirectURIs: []string{"http://127.0.0.1/cb"},
			GrantTypes: []string{"authorization_code"}, ResponseTypes: []string{"code"}, Scope: "erp:read",
			TokenEndpointAuthMethod: "none", CreatedAt: created}); err != nil {
			t.Fatal(err)
		}
	}
	client("never-used-old", now.Add(-48*time.Hour))
	client("never-used-new", now.Add(-time.Hour))
	client("used-recently", now.Add(-48*time.Hour))
	client("idle-long", now.Add(-60*24*time.Hour))
	// A token for a client marks it used.
	if err := store.CreateAccessTokenSession(ctx, "sig-used-recently", &fosite.Request{
		ID: "req-1", RequestedAt: now, Client: &fosite.DefaultClient{ID: "used-recently"},
		Session: &storage.Session{SiteID: site, Subject: "u@example.com"},
	}); err != nil {
		t.Fatal(err)
	}
	exec(`UPDATE oauth_clients SET last_used_at = now() - interval '31 days' WHERE id = 'idle-long'`)
	if err := store.SaveConsent(ctx, site, "u@example.com", "never-used-old", "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	for id, expires := range map[string]time.Time{
		"flow-expired-long-ago": now.Add(-10 * time.Minute),
		"flow-just-expired":     now.Add(-time.Minute),
		"flow-live":             now.Add(5 * time.Minute),
	} {
		exec(`INSERT INTO oauth_signin_flows (id_hash, browser_hash, stage, authorize_query, client_id, resource, expires_at)
			VALUES (sha256($1::bytea), sha256('b'::bytea), 'choose_site', '', 'c', 'r', $2)`, []byte(id), expires)
	}
	if err := store.CacheDocument(ctx, "https://app.example/expired.json", []byte(`{}`), -time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := store.CacheDocument(ctx, "https://app.example/live.json", []byte(`{}`), time.Hour); err != nil {
		t.Fatal(err)
	}

	got, err := store.CleanUp(ctx, storage.CleanupPolicy{
		TokensExpiredBefore:    now.Add(-24 * time.Hour),
		FlowsExpiredBefore:     now.Add(-5 * time.Minute),
		DocumentsExpiredBefore: now,
		ClientsNeverUsedSince:  now.Add(-24 * time.Hour),
		ClientsIdleSince:       now.Add(-30 * 24 * time.Hour),
		Batch:                  100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (storage.CleanupCounts{Flows: 1, Documents: 1, Clients: 2}); got != want {
		t.Errorf("CleanUp = %+v, want %+v", got, want)
	}
	rows := func(sql string) []string {
		t.Helper()
		r, err := pool.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for r.Next() {
			var s string
			if err := r.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	if ids := rows(`SELECT id FROM oauth_clients ORDER BY id`); len(ids) != 2 || ids[0] != "never-used-new" || ids[1] != "used-recently" {
		t.Errorf("clients left: %v", ids)
	}
	if n := rows(`SELECT client_id FROM oauth_consents`); len(n) != 0 {
		t.Errorf("consents of removed clients left: %v", n)
	}
	if n := rows(`SELECT stage FROM oauth_signin_flows`); len(n) != 2 {
		t.Errorf("%d flows left, want the live one and the one expired within the grace", len(n))
	}
	if urls := rows(`SELECT url FROM oauth_cimd_cache`); len(urls) != 1 || urls[0] != "https://app.example/live.json" {
		t.Errorf("documents left: %v", urls)
	}
}
