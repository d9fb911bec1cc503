package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// TestAnERPCodeIsTakenByOneSignInOnly: the code an ERP sends back is
// taken by the first sign-in it comes back to; another sign-in given the
// same code is refused and stays where it was. Codes are remembered for a
// day, then swept as sign-ins start.
func TestAnERPCodeIsTakenByOneSignInOnly(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	store := storage.New(pool, keyring(t, keySpec(t, "k1")), storage.Options{})
	site := newSite(t, pool)
	start := func(id string) {
		t.Helper()
		if err := store.CreateFlow(ctx, storage.NewFlow{ID: id, Browser: "b-" + id, Stage: storage.StageERP,
			ClientID: "c", Resource: "r", SiteID: site, Verifier: "verifier", TTL: 10 * time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	back := func(id, code string) error {
		_, err := store.StepFlow(ctx, id, "b-"+id, storage.FlowStep{From: storage.StageERP, To: storage.StageConsent, ERPCode: code})
		return err
	}
	start("first")
	start("second")
	if err := back("first", "the-code"); err != nil {
		t.Fatal(err)
	}
	if err := back("second", "the-code"); !errors.Is(err, storage.ErrERPCodeReused) {
		t.Fatalf("the code again, at another sign-in: %v", err)
	}
	if err := back("second", "its-own-code"); err != nil {
		t.Fatalf("the other sign-in with a code of its own: %v", err)
	}

	if _, err := pool.Exec(ctx, `UPDATE oauth_erp_codes SET seen_at = now() - interval '25 hours'
		WHERE code_hash = sha256('the-code'::bytea)`); err != nil {
		t.Fatal(err)
	}
	start("third")
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM oauth_erp_codes`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 1 {
		t.Errorf("%d codes remembered after a sign-in started, want the recent one", left)
	}
}

// TestRotateFlowKeys: a sign-in under way when the old key is dropped right
// after the rotation still finishes: its PKCE verifier, or the ERP token it
// holds until consent, opens with the new key alone. One that no given key
// opens is left as it is and counted: it finishes once its key is put back.
func TestRotateFlowKeys(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	oldSpec, newSpec, lostSpec := keySpec(t, "k1"), keySpec(t, "k2"), keySpec(t, "k0")
	site := newSite(t, pool)
	start := func(st *storage.Store, id string) {
		t.Helper()
		if err := st.CreateFlow(ctx, storage.NewFlow{ID: id, Browser: "b-" + id, Stage: storage.StageERP,
			ClientID: "c", Resource: "r", SiteID: site, Verifier: secrets.Secret("verifier-" + id), TTL: 10 * time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	before := storage.New(pool, keyring(t, oldSpec), storage.Options{})
	start(before, "at-erp")
	start(before, "at-consent")
	if _, err := before.StepFlow(ctx, "at-consent", "b-at-consent", storage.FlowStep{From: storage.StageERP, To: storage.StageConsent, ERPCode: "code"}); err != nil {
		t.Fatal(err)
	}
	if err := before.HoldFlowToken(ctx, "at-consent", "u@x", "U", storage.PendingToken{Access: "erp-access", Refresh: "erp-refresh", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	start(storage.New(pool, keyring(t, lostSpec), storage.Options{}), "lost")

	rotating := storage.New(pool, keyring(t, newSpec+","+oldSpec), storage.Options{})
	n, left, err := rotating.RotateFlowKeys(ctx)
	if err != nil || n != 2 || left != 1 {
		t.Fatalf("RotateFlowKeys = %d, %d, %v; want 2 re-sealed and 1 unreadable", n, left, err)
	}
	after := storage.New(pool, keyring(t, newSpec), storage.Options{})
	if f, err := after.PeekFlow(ctx, "at-erp", "b-at-erp", storage.StageERP); err != nil || f.Verifier.Reveal() != "verifier-at-erp" {
		t.Errorf("the sign-in at the ERP, with the new key alone: %v", err)
	}
	if f, err := after.PeekFlow(ctx, "at-consent", "b-at-consent", storage.StageConsent); err != nil || f.Token == nil ||
		f.Token.Access.Reveal() != "erp-access" || f.Token.Refresh.Reveal() != "erp-refresh" {
		t.Errorf("the sign-in at consent, with the new key alone: %v", err)
	}
	// Left as it was, at the ERP: its own key still opens it.
	if f, err := storage.New(pool, keyring(t, lostSpec), storage.Options{}).PeekFlow(ctx, "lost", "b-lost", storage.StageERP); err != nil || f.Verifier.Reveal() != "verifier-lost" {
		t.Errorf("the sign-in no configured key opens, with its own key: %v", err)
	}
	if n, left, err := rotating.RotateFlowKeys(ctx); err != nil || n != 0 || left != 1 {
		t.Errorf("second RotateFlowKeys = %d, %d, %v; want 0 and the 1 unreadable again", n, left, err)
	}
}

// A sign-in locked for a moment by its own step (PeekFlow, StepFlow) when
// the rotation reaches it is waited for, not passed over and left under
// the old key.
func TestRotateFlowKeysWaitsForALockedFlow(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	oldSpec, newSpec := keySpec(t, "k1"), keySpec(t, "k2")
	if err := storage.New(pool, keyring(t, oldSpec), storage.Options{}).CreateFlow(ctx, storage.NewFlow{ID: "flow", Browser: "b",
		Stage: storage.StageERP, ClientID: "c", Resource: "r", SiteID: newSite(t, pool), Verifier: "verifier", TTL: 10 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	var n int
	err := pgtest.WhileLocked(t, pool, `SELECT 1 FROM oauth_signin_flows FOR UPDATE`, nil, func() error {
		var err error
		n, _, err = storage.New(pool, keyring(t, newSpec+","+oldSpec), storage.Options{}).RotateFlowKeys(ctx)
		return err
	})
	if f, perr := storage.New(pool, keyring(t, newSpec), storage.Options{}).PeekFlow(ctx, "flow", "b", storage.StageERP); err != nil || n != 1 || perr != nil || f.Verifier.Reveal() != "verifier" {
		t.Errorf("RotateFlowKeys = %d, %v; with the new key alone: %v; want 1 re-sealed and readable", n, err, perr)
	}
}
