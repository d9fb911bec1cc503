package erptokens

import (
	"context"
	"testing"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// specs returns fresh key entries by id, so one key can appear in several
// keyrings (the package's keyring helper derives keys from positions).
func specs(t *testing.T, ids ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, id := range ids {
		s, err := secrets.GenerateKeySpec(id)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = s
	}
	return out
}

func ring(t *testing.T, entries ...string) *secrets.Keyring {
	t.Helper()
	spec := ""
	for i, e := range entries {
		if i > 0 {
			spec += ","
		}
		spec += e
	}
	k, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestRotateKeysReseals stores tokens under "old", rotates with the keyring
// "new,old", and then serves them with "new" alone, without a new sign-in.
// A row nobody can open any more is deleted.
func TestRotateKeysReseals(t *testing.T) {
	pools := openPools(t, 1)
	pool := pools[0]
	ctx := context.Background()
	erp := newFakeERP(0)
	siteA, siteB := newSite(t, pool), newSite(t, pool)
	k := specs(t, "old", "new", "gone")
	old := New(pool, ring(t, k["old"]), Options{})
	if _, err := old.Token(ctx, siteA, "api.service", erp.renew); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Token(ctx, siteB, "api.service", erp.renew); err != nil {
		t.Fatal(err)
	}
	// A row sealed under a key the new keyring no longer has.
	if _, err := New(pool, ring(t, k["gone"]), Options{}).Token(ctx, newSite(t, pool), "api.service", erp.renew); err != nil {
		t.Fatal(err)
	}
	grants := erp.grants.Load()

	n, err := New(pool, ring(t, k["new"], k["old"]), Options{}).RotateKeys(ctx)
	if err != nil || n != 2 {
		t.Fatalf("RotateKeys = %d, %v; want 2 re-sealed", n, err)
	}
	var stale, rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE key_id <> 'new'), count(*) FROM service_connection_tokens`).Scan(&stale, &rows); err != nil {
		t.Fatal(err)
	}
	if stale != 0 || rows != 2 {
		t.Fatalf("after rotation: %d rows not under the new key, %d rows (want 0 and 2)", stale, rows)
	}
	fresh := New(pool, ring(t, k["new"]), Options{})
	if _, err := fresh.Token(ctx, siteA, "api.service", erp.renew); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Token(ctx, siteB, "api.service", erp.renew); err != nil {
		t.Fatal(err)
	}
	if erp.grants.Load() != grants {
		t.Errorf("re-sealed tokens were not readable with the new key alone: %d new sign-ins", erp.grants.Load()-grants)
	}
}

// TestRotateKeysWaitsForALockedToken: a token a request holds for a moment
// (Reject's UPDATE, a renewal's write) when the rotation reaches it is
// waited for and re-sealed, not passed over: passed over, it stayed under
// the old key, and once that key was dropped the connection had to sign in
// afresh.
func TestRotateKeysWaitsForALockedToken(t *testing.T) {
	pool := openPools(t, 1)[0]
	ctx := context.Background()
	erp := newFakeERP(0)
	site := newSite(t, pool)
	k := specs(t, "old", "new")
	if _, err := New(pool, ring(t, k["old"]), Options{}).Token(ctx, site, "api.service", erp.renew); err != nil {
		t.Fatal(err)
	}
	grants := erp.grants.Load()

	var n int
	err := pgtest.WhileLocked(t, pool, `SELECT 1 FROM service_connection_tokens FOR UPDATE`, nil, func() error {
		var err error
		n, err = New(pool, ring(t, k["new"], k["old"]), Options{}).RotateKeys(ctx)
		return err
	})
	if err != nil || n != 1 {
		t.Fatalf("RotateKeys = %d, %v; want 1 re-sealed", n, err)
	}
	if _, err := New(pool, ring(t, k["new"]), Options{}).Token(ctx, site, "api.service", erp.renew); err != nil {
		t.Fatal(err)
	}
	if erp.grants.Load() != grants {
		t.Errorf("the token locked during the rotation was not readable with the new key alone: %d new sign-ins", erp.grants.Load()-grants)
	}
}
