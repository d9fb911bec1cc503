package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
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
