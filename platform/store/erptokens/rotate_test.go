package erptokens

import (
	"context"
	"testing"

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
