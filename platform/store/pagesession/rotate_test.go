package pagesession

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// RotateKeys re-seals every kept owner token not under the primary key, so
// that the old key can go: each then opens with the new key alone, for its
// own session and site only. A token no configured key opens is left as
// it is and counted (it opens again once its key is back); one already
// under the new key is left.
func TestRotateKeysResealsOwnerTokens(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	spec := keySpecs(t, "old", "new", "gone")
	site, other := uuid.New(), uuid.New()
	for _, id := range []uuid.UUID{site, other} {
		if _, err := pool.Exec(ctx, `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, $2, 'frappe', $3, 'Site')`,
			id, "s"+id.String()[:8], "https://"+id.String()[:8]+".example"); err != nil {
			t.Fatal(err)
		}
	}
	var dbNow time.Time
	if err := pool.QueryRow(ctx, `SELECT now()`).Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	expires := dbNow.Add(30 * time.Minute)
	old := NewTokens(pool, keyringOf(t, spec["old"]))
	kept := map[string]struct {
		site  uuid.UUID
		token string
	}{
		"cookie-a": {site, "token-a-0123456789"},
		"cookie-b": {other, "token-b-0123456789"},
	}
	for cookie, k := range kept {
		if err := old.Keep(ctx, k.site, cookie, "it.admin@demo.example", secrets.Secret(k.token), expires); err != nil {
			t.Fatal(err)
		}
	}
	if err := NewTokens(pool, keyringOf(t, spec["gone"])).Keep(ctx, site, "cookie-gone", "u", "token-gone", expires); err != nil {
		t.Fatal(err)
	}
	if err := NewTokens(pool, keyringOf(t, spec["new"])).Keep(ctx, site, "cookie-new", "u", "token-new", expires); err != nil {
		t.Fatal(err)
	}
	var before []byte
	if err := pool.QueryRow(ctx, `SELECT token FROM owner_session_tokens WHERE session_hash = $1`, sessionHash("cookie-new")).Scan(&before); err != nil {
		t.Fatal(err)
	}

	n, unreadable, err := NewTokens(pool, keyringOf(t, spec["new"], spec["old"])).RotateKeys(ctx)
	if err != nil || n != 2 || unreadable != 1 {
		t.Fatalf("RotateKeys = %d, %d, %v; want 2 re-sealed and 1 unreadable", n, unreadable, err)
	}
	var stale, rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE key_id NOT IN ('new', 'gone')), count(*) FROM owner_session_tokens`).Scan(&stale, &rows); err != nil {
		t.Fatal(err)
	}
	if stale != 0 || rows != 4 {
		t.Fatalf("after rotation: %d rows under the old key, %d rows (want 0 and 4)", stale, rows)
	}
	var after []byte
	if err := pool.QueryRow(ctx, `SELECT token FROM owner_session_tokens WHERE session_hash = $1`, sessionHash("cookie-new")).Scan(&after); err != nil || string(after) != string(before) {
		t.Errorf("a token already under the new key was sealed again (%v)", err)
	}
	onlyNew := NewTokens(pool, keyringOf(t, spec["new"]))
	for cookie, k := range kept {
		if user, got, err := onlyNew.Get(ctx, k.site, cookie); err != nil || user != "it.admin@demo.example" || got.Reveal() != k.token {
			t.Errorf("%s with the new key alone: %q, %v", cookie, user, err)
		}
	}
	// Re-sealed with the same binding: still not another site's.
	if _, _, err := onlyNew.Get(ctx, other, "cookie-a"); !errors.Is(err, ErrNoToken) {
		t.Errorf("cookie-a on another site: %v, want ErrNoToken", err)
	}
	if _, _, err := onlyNew.Get(ctx, site, "cookie-gone"); !errors.Is(err, ErrNoToken) {
		t.Errorf("the unreadable token: %v, want ErrNoToken", err)
	}
	// Left as it was: its own key still opens it.
	if _, got, err := NewTokens(pool, keyringOf(t, spec["gone"])).Get(ctx, site, "cookie-gone"); err != nil || got.Reveal() != "token-gone" {
		t.Errorf("the unreadable token with its own key: %v", err)
	}
	if n, unreadable, err := onlyNew.RotateKeys(ctx); err != nil || n != 0 || unreadable != 1 {
		t.Errorf("a second run = %d, %d, %v; want nothing re-sealed and the 1 unreadable again", n, unreadable, err)
	}
}

// A token locked for a moment by a replica's request when the rotation
// reaches it is waited for, not passed over and left under the old key.
func TestRotateKeysWaitsForALockedToken(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	spec := keySpecs(t, "old", "new")
	oldRing, rotating := keyringOf(t, spec["old"]), keyringOf(t, spec["new"], spec["old"])
	site := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, 'acme', 'frappe', 'https://acme.example', 'Site')`, site); err != nil {
		t.Fatal(err)
	}
	if err := NewTokens(pool, oldRing).Keep(ctx, site, "cookie", "u", "token", time.Now().Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	var n int
	err := pgtest.WhileLocked(t, pool, `SELECT 1 FROM owner_session_tokens FOR UPDATE`, nil, func() error {
		var err error
		n, _, err = NewTokens(pool, rotating).RotateKeys(ctx)
		return err
	})
	var stale int
	if qerr := pool.QueryRow(ctx, `SELECT count(*) FROM owner_session_tokens WHERE key_id <> 'new'`).Scan(&stale); qerr != nil {
		t.Fatal(qerr)
	}
	if err != nil || n != 1 || stale != 0 {
		t.Errorf("RotateKeys = %d, %v, %d tokens left under the old key; want 1 re-sealed and none left", n, err, stale)
	}
}

// keySpecs is a new key for each of ids, by id.
func keySpecs(t *testing.T, ids ...string) map[string]string {
	t.Helper()
	spec := map[string]string{}
	for _, id := range ids {
		s, err := secrets.GenerateKeySpec(id)
		if err != nil {
			t.Fatal(err)
		}
		spec[id] = s
	}
	return spec
}

// keyringOf is the keyring of the keys in specs, the first the primary.
func keyringOf(t *testing.T, specs ...string) *secrets.Keyring {
	t.Helper()
	k, err := secrets.ParseKeyring(strings.Join(specs, ","))
	if err != nil {
		t.Fatal(err)
	}
	return k
}
