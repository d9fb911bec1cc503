package main

import (
	"context"
	"strings"
	"testing"
	"time"

	authstorage "github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// TestKeysRotateWithoutTheOldKeyReportsWhatItCannotOpen: `keys rotate`
// run with a keyring that lacks the key some rows are sealed under (k1
// left out by mistake, or dropped while a replica still sealed under it)
// leaves those rows as they are and says so, failing, as it does for
// people's ERP tokens: an owner's kept ERP token, an owner's change
// waiting for its proof, a sign-in from an MCP client, a proof of an
// administrator and a registration under way. Nothing of them is lost:
// once the operator puts k1 back, the next run re-seals them all and
// they open with k2 alone.
func TestKeysRotateWithoutTheOldKeyReportsWhatItCannotOpen(t *testing.T) {
	ctx := context.Background()
	db, pool, site, dbNow := acmeOnNewDatabase(t)
	k1, k2 := twoKeys(t)

	// Under k1, each as its own package seals it.
	const (
		ownerToken = "owner-erp-token-0123456789"
		newSecret  = "new-oauth-client-secret-0123456789"
		verifier   = "pkce-verifier-0123456789"
	)
	if err := pagesession.NewTokens(pool, keyringOf(t, k1)).Keep(ctx, site, "owner-cookie", "it.admin@demo.example", ownerToken, dbNow.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	change, err := sites.NewStore(pool, keyringOf(t, k1)).PutOwnerChange(ctx, sites.OwnerChange{SiteID: site, ERPUser: "it.admin@demo.example", ClientSecret: newSecret}, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := authstorage.New(pool, keyringOf(t, k1), authstorage.Options{}).CreateFlow(ctx, authstorage.NewFlow{ID: "flow", Browser: "browser",
		Stage: authstorage.StageERP, ClientID: "c", Resource: "r", SiteID: site, Verifier: verifier, TTL: 10 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	// A proof and a registration in progress, sealed with the binding
	// their packages give them (opened with it once k1 is back, below).
	proofAndRegistrationUnder(t, pool, keyringOf(t, k1))

	tables := []struct{ table, keyColumn string }{
		{"owner_session_tokens", "key_id"}, {"owner_changes", "secret_key_id"}, {"oauth_signin_flows", "key_id"},
		{"erpadmin_proofs", "key_id"}, {"pending_registrations", "key_id"},
	}
	count := func(table, column, key string) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE `+column+` = $1`, key).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var flowStage string
	if err := pool.QueryRow(ctx, `SELECT stage FROM oauth_signin_flows`).Scan(&flowStage); err != nil {
		t.Fatal(err)
	}

	// k1 left out.
	t.Setenv("DATABASE_URL", db)
	t.Setenv("ERPGATE_ENCRYPTION_KEYS", k2)
	out, err := captureStdout(t, func() error { return run(ctx, []string{"keys", "rotate"}) })
	if err == nil {
		t.Errorf("rotate without k1 succeeded (%q); want it to fail, saying what it could not open", out)
	} else {
		for _, secret := range []string{ownerToken, newSecret, verifier, k1, k2} {
			if strings.Contains(err.Error()+out, secret) {
				t.Errorf("rotate's report carries a secret: %v %s", err, out)
			}
		}
	}
	for _, x := range tables {
		if n := count(x.table, x.keyColumn, "k1"); n != 1 {
			t.Errorf("%s: %d rows under k1 after a rotation without k1, want the 1 it could not open left as it was", x.table, n)
		}
	}
	var stage string
	if err := pool.QueryRow(ctx, `SELECT stage FROM oauth_signin_flows`).Scan(&stage); err != nil || stage != flowStage {
		t.Errorf("the sign-in under way is at stage %q (%v) after a rotation without k1, want %q", stage, err, flowStage)
	}

	// k1 put back: everything is re-sealed and opens with k2 alone.
	t.Setenv("ERPGATE_ENCRYPTION_KEYS", k2+","+k1)
	if out, err := captureStdout(t, func() error { return run(ctx, []string{"keys", "rotate"}) }); err != nil {
		t.Fatalf("rotate with k1 back: %v\n%s", err, out)
	}
	for _, x := range tables {
		if n := count(x.table, x.keyColumn, "k2"); n != 1 {
			t.Errorf("%s: %d rows under k2 once k1 is back, want 1", x.table, n)
		}
	}
	onlyK2 := keyringOf(t, k2)
	if user, got, err := pagesession.NewTokens(pool, onlyK2).Get(ctx, site, "owner-cookie"); err != nil || user != "it.admin@demo.example" || got.Reveal() != ownerToken {
		t.Errorf("with only k2: the owner's ERP token: %q, %v", user, err)
	}
	if c, err := sites.NewStore(pool, onlyK2).GetOwnerChange(ctx, site, change); err != nil || c.ClientSecret.Reveal() != newSecret {
		t.Errorf("with only k2: the owner change: %v", err)
	}
	if f, err := authstorage.New(pool, onlyK2, authstorage.Options{}).PeekFlow(ctx, "flow", "browser", authstorage.StageERP); err != nil || f.Verifier.Reveal() != verifier {
		t.Errorf("with only k2: the sign-in: %v", err)
	}
}
