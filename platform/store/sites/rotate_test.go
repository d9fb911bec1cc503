package sites_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

func TestRotateKeys(t *testing.T) {
	_, pool := newStore(t)
	ctx := t.Context()
	k1 := keySpec(t, "k1")
	k2 := keySpec(t, "k2")
	// Batches of 2 make 7 rows cross several batch boundaries.
	defer sites.SetRotateBatchSize(2)()

	// Everything is sealed under k1 first: 3 sites x 2 fields, plus an
	// oauth connection.
	old := sites.NewStore(pool, keyring(t, k1))
	var all []sites.Site
	for i := range 3 {
		site := mustCreate(t, old, fmt.Sprintf("site-%d", i))
		mustPutAPI(t, old, site, fmt.Sprintf("key-%d", i), fmt.Sprintf("secret-%d", i))
		all = append(all, site)
	}
	if _, err := old.PutConnection(ctx, all[0].ID, sites.ConnectionOAuth, "", map[string]secrets.Secret{"client_secret": "cs-0"}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `SELECT count(*) FROM credentials WHERE key_id = 'k1'`); n != 7 {
		t.Fatalf("rows under k1 = %d, want 7", n)
	}

	// Rotation with k2 primary and k1 still known.
	rotating := sites.NewStore(pool, keyring(t, k2+","+k1))
	n, err := rotating.RotateKeys(ctx)
	if err != nil || n != 7 {
		t.Fatalf("RotateKeys = %d, %v; want 7", n, err)
	}
	if n := count(t, pool, `SELECT count(*) FROM credentials WHERE key_id <> 'k2'`); n != 0 {
		t.Fatalf("%d rows not under k2 after rotation", n)
	}
	if n, err := rotating.RotateKeys(ctx); err != nil || n != 0 {
		t.Fatalf("second RotateKeys = %d, %v; want 0", n, err)
	}

	// k1 can now be dropped: k2 alone opens everything, values intact.
	onlyK2 := sites.NewStore(pool, keyring(t, k2))
	for i, site := range all {
		_, fields, err := onlyK2.GetConnection(ctx, site.ID, sites.ConnectionAPIToken)
		if err != nil || fields["api_key"].Reveal() != fmt.Sprintf("key-%d", i) || fields["api_secret"].Reveal() != fmt.Sprintf("secret-%d", i) {
			t.Fatalf("site %d after rotation: %v", i, err)
		}
	}
	if _, fields, err := onlyK2.GetConnection(ctx, all[0].ID, sites.ConnectionOAuth); err != nil || fields["client_secret"].Reveal() != "cs-0" {
		t.Fatalf("oauth connection after rotation: %v", err)
	}
	// And the old keyring alone no longer can.
	if _, _, err := old.GetConnection(ctx, all[0].ID, sites.ConnectionAPIToken); !errors.Is(err, sites.ErrCredentialUnreadable) {
		t.Errorf("k1-only keyring after rotation = %v, want ErrCredentialUnreadable", err)
	}
}

func TestRotateKeysStopsOnUnknownKey(t *testing.T) {
	s, pool := newStore(t)
	site := mustCreate(t, s, "acme")
	mustPutAPI(t, s, site, "key", "secret")
	// A keyring that lacks k1 cannot re-seal rows sealed with it.
	other := sites.NewStore(pool, keyring(t, keySpec(t, "k9")))
	n, err := other.RotateKeys(t.Context())
	if n != 0 || !errors.Is(err, sites.ErrCredentialUnreadable) || !errors.Is(err, secrets.ErrUnknownKey) {
		t.Fatalf("RotateKeys = %d, %v; want 0 and ErrCredentialUnreadable", n, err)
	}
	if c := count(t, pool, `SELECT count(*) FROM credentials WHERE key_id = 'k1'`); c != 2 {
		t.Errorf("rows under k1 = %d, want 2 untouched", c)
	}
}

// RotateOwnerChangeKeys re-seals the secrets of owner changes waiting for
// their proof, so that the old key can go right after: each change then
// opens with the new key alone, secret intact. A change without a secret is
// left alone, and one whose secret no configured key opens is left as it
// is and counted: it can be applied again once its key is put back.
func TestRotateOwnerChangeKeys(t *testing.T) {
	_, pool := newStore(t)
	ctx := t.Context()
	k1, k2, gone := keySpec(t, "k1"), keySpec(t, "k2"), keySpec(t, "gone")
	old := sites.NewStore(pool, keyring(t, k1))
	a, b := mustCreate(t, old, "acme"), mustCreate(t, old, "globex")
	put := func(s *sites.Store, c sites.OwnerChange) uuid.UUID {
		t.Helper()
		id, err := s.PutOwnerChange(ctx, c, 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	secretA := put(old, sites.OwnerChange{SiteID: a.ID, ERPUser: "owner", ClientSecret: "secret-a"})
	secretB := put(old, sites.OwnerChange{SiteID: b.ID, ERPUser: "owner", ClientSecret: "secret-b"})
	settingsOnly := put(old, sites.OwnerChange{SiteID: a.ID, ERPUser: "owner", Settings: json.RawMessage(`{"company":"Acme"}`)})
	unreadable := put(sites.NewStore(pool, keyring(t, gone)), sites.OwnerChange{SiteID: a.ID, ERPUser: "owner", ClientSecret: "secret-gone"})

	// Rows locked for a moment by a request are waited for, not passed over.
	rotating := sites.NewStore(pool, keyring(t, k2+","+k1))
	var n, left int
	err := pgtest.WhileLocked(t, pool, `SELECT 1 FROM owner_changes FOR UPDATE`, nil, func() error {
		var err error
		n, left, err = rotating.RotateOwnerChangeKeys(ctx)
		return err
	})
	if err != nil || n != 2 || left != 1 {
		t.Fatalf("RotateOwnerChangeKeys = %d, %d, %v; want 2 re-sealed and 1 unreadable", n, left, err)
	}
	if c := count(t, pool, `SELECT count(*) FROM owner_changes WHERE secret_key_id NOT IN ('k2', 'gone')`); c != 0 {
		t.Fatalf("%d owner changes under k1 after rotation", c)
	}
	onlyK2 := sites.NewStore(pool, keyring(t, k2))
	for id, want := range map[uuid.UUID]struct {
		site   uuid.UUID
		secret string
	}{secretA: {a.ID, "secret-a"}, secretB: {b.ID, "secret-b"}, settingsOnly: {a.ID, ""}} {
		c, err := onlyK2.GetOwnerChange(ctx, want.site, id)
		if err != nil || c.ClientSecret.Reveal() != want.secret {
			t.Errorf("change %s with k2 alone: %v (secret as kept: %v)", id, err, c.ClientSecret.Reveal() == want.secret)
		}
	}
	// Left as it was: its own key still opens it.
	if c, err := sites.NewStore(pool, keyring(t, gone)).GetOwnerChange(ctx, a.ID, unreadable); err != nil || c.ClientSecret.Reveal() != "secret-gone" {
		t.Errorf("the change no configured key opens, with its own key: %v", err)
	}
	if n, left, err := rotating.RotateOwnerChangeKeys(ctx); err != nil || n != 0 || left != 1 {
		t.Errorf("second RotateOwnerChangeKeys = %d, %d, %v; want 0 and the 1 unreadable again", n, left, err)
	}
}
