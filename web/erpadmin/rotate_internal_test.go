package erpadmin

import (
	"context"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// RotateKeys re-seals the verifiers of proofs in progress, so that the old
// key can go right after: a person who began a sign-in at their ERP before
// the rotation finishes it with the new key alone. A proof whose verifier
// no configured key opens is left as it is and counted: its sign-in can
// finish once its key is put back.
func TestRotateKeysResealsProofsInProgress(t *testing.T) {
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
	storeWith := func(s string) *store { return &store{pool: pool, keys: ring(s), now: time.Now} }
	proofs := map[string]string{StatePrefix + "state-one": "verifier-one-0123456789", StatePrefix + "state-two": "verifier-two-0123456789"}
	for state, verifier := range proofs {
		if err := storeWith(spec["old"]).create(ctx, pending{State: state, Browser: "browser", Purpose: "register", Ref: "ref",
			Verifier: secrets.Secret(verifier), ExpiresAt: time.Now().Add(10 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := storeWith(spec["gone"]).create(ctx, pending{State: StatePrefix + "state-gone", Browser: "browser", Purpose: "register", Ref: "ref",
		Verifier: "verifier-gone", ExpiresAt: time.Now().Add(10 * time.Minute)}); err != nil {
		t.Fatal(err)
	}

	// Rows locked for a moment by a callback are waited for, not passed over.
	var n, left int
	err := pgtest.WhileLocked(t, pool, `SELECT 1 FROM erpadmin_proofs FOR UPDATE`, nil, func() error {
		var err error
		n, left, err = RotateKeys(ctx, pool, ring(spec["new"]+","+spec["old"]))
		return err
	})
	if err != nil || n != 2 || left != 1 {
		t.Fatalf("RotateKeys = %d, %d, %v; want 2 re-sealed and 1 unreadable", n, left, err)
	}
	var stale int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM erpadmin_proofs WHERE key_id NOT IN ('new', 'gone')`).Scan(&stale); err != nil || stale != 0 {
		t.Fatalf("%d proofs under the old key (%v)", stale, err)
	}
	onlyNew := storeWith(spec["new"])
	for state, verifier := range proofs {
		if p, err := onlyNew.claim(ctx, state); err != nil || p.Verifier.Reveal() != verifier {
			t.Errorf("%s with the new key alone: %v", state, err)
		}
	}
	if n, left, err := RotateKeys(ctx, pool, ring(spec["new"])); err != nil || n != 0 || left != 1 {
		t.Errorf("a second run = %d, %d, %v; want 0 and the 1 unreadable again", n, left, err)
	}
	// Left as it was: its own key still opens it.
	if p, err := storeWith(spec["gone"]).claim(ctx, StatePrefix+"state-gone"); err != nil || p.Verifier.Reveal() != "verifier-gone" {
		t.Errorf("the proof no configured key opens, with its own key: %v", err)
	}
}
