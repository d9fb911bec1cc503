package register

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// RotateKeys re-seals the client secrets of open registrations, so that
// the old key can go right after: a registration begun before the rotation
// goes on with the new key alone. One whose secret no configured key opens
// is left as it is and counted: it goes on once its key is put back.
func TestRotateKeysResealsOpenRegistrations(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	spec := map[string]string{}
	for _, id := range []string{"old", "new", "gone"} {
		s, err := secrets.GenerateKeySpec(id)
		if err != nil {
			t.Fatal(err)
		}
		spec[id] = s
	}
	ring := func(s string) *secrets.Keyring {
		k, err := secrets.ParseKeyring(s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	storeWith := func(s string) *store { return &store{pool: pool, keys: ring(s)} }
	open := func(st *store, secret string) uuid.UUID {
		t.Helper()
		id, err := st.reserve(ctx, pendingReg{Kind: "frappe", DisplayName: "Acme", BaseURL: "https://acme.example",
			Settings: json.RawMessage(`{}`)}, 30*time.Minute, bounds{all: 10, perNetwork: 10, network: "net"})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.claim(ctx, id, "browser"); err != nil {
			t.Fatal(err)
		}
		if secret != "" {
			if _, err := st.setClient(ctx, id, "client-"+secret, secrets.Secret(secret)); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	withSecret := map[uuid.UUID]string{}
	for _, secret := range []string{"secret-one-0123456789", "secret-two-0123456789"} {
		withSecret[open(storeWith(spec["old"]), secret)] = secret
	}
	noClient := open(storeWith(spec["old"]), "")
	unreadable := open(storeWith(spec["gone"]), "secret-gone")

	// Rows locked for a moment by a step are waited for, not passed over.
	var n, left int
	err := pgtest.WhileLocked(t, pool, `SELECT 1 FROM pending_registrations FOR UPDATE`, nil, func() error {
		var err error
		n, left, err = RotateKeys(ctx, pool, ring(spec["new"]+","+spec["old"]))
		return err
	})
	if err != nil || n != 2 || left != 1 {
		t.Fatalf("RotateKeys = %d, %d, %v; want 2 re-sealed and 1 unreadable", n, left, err)
	}
	var stale int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pending_registrations WHERE key_id NOT IN ('new', 'gone') AND secret_ciphertext IS NOT NULL`).Scan(&stale); err != nil || stale != 0 {
		t.Fatalf("%d registrations under the old key (%v)", stale, err)
	}
	onlyNew := storeWith(spec["new"])
	for id, secret := range withSecret {
		if p, err := onlyNew.get(ctx, id, "browser"); err != nil || p.Secret.Reveal() != secret {
			t.Errorf("registration %s with the new key alone: %v", id, err)
		}
	}
	if _, err := onlyNew.get(ctx, noClient, "browser"); err != nil {
		t.Errorf("the registration without a client: %v", err)
	}
	if n, left, err := RotateKeys(ctx, pool, ring(spec["new"])); err != nil || n != 0 || left != 1 {
		t.Errorf("a second run = %d, %d, %v; want 0 and the 1 unreadable again", n, left, err)
	}
	// Left as it was: its own key still opens it.
	if p, err := storeWith(spec["gone"]).get(ctx, unreadable, "browser"); err != nil || p.Secret.Reveal() != "secret-gone" {
		t.Errorf("the registration no configured key opens, with its own key: %v", err)
	}
}
