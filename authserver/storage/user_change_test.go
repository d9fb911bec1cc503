package storage_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/ory/fosite"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestStoreReportsChangedUsersAfterCommit: deleting a user's access
// tokens (revoking a grant or the user's grants) and replacing their ERP
// token are reported to OnUserChange, so the replica drops its cache at
// once; inside a transaction, only once it commits, and not at all when
// it rolls back.
func TestStoreReportsChangedUsersAfterCommit(t *testing.T) {
	ctx := context.Background()
	pool, err := database.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store := storage.New(pool, keyring(t, keySpec(t, "k1")), storage.Options{})
	site := newSite(t, pool)
	var changed []string
	store.OnUserChange(func(s uuid.UUID, user string) { changed = append(changed, s.String()+" "+user) })
	access := func(signature, requestID, user string) {
		t.Helper()
		sess := &storage.Session{SiteID: site, Subject: user}
		sess.SetExpiresAt(fosite.AccessToken, time.Now().Add(time.Hour))
		req := &fosite.Request{ID: requestID, RequestedAt: time.Now(), Client: &fosite.DefaultClient{ID: "c"}, Session: sess}
		if err := store.CreateAccessTokenSession(ctx, signature, req); err != nil {
			t.Fatal(err)
		}
	}
	want := func(step string, users ...string) {
		t.Helper()
		var w []string
		for _, u := range users {
			w = append(w, site.String()+" "+u)
		}
		if !slices.Equal(changed, w) {
			t.Errorf("%s: reported %q, want %q", step, changed, w)
		}
		changed = nil
	}

	access("sig-a", "grant-a", "alex")
	access("sig-b", "grant-b", "sam")
	want("issuing tokens")

	tx, err := store.BeginTX(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.RevokeAccessToken(tx, "grant-a"); err != nil {
		t.Fatal(err)
	}
	want("a grant revoked inside a transaction, before it commits")
	if err := store.Commit(tx); err != nil {
		t.Fatal(err)
	}
	want("the transaction committed", "alex")

	tx, err = store.BeginTX(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.RevokeAccessToken(tx, "grant-b"); err != nil {
		t.Fatal(err)
	}
	if err := store.Rollback(tx); err != nil {
		t.Fatal(err)
	}
	want("a transaction rolled back")

	if _, err := store.RevokeUserGrants(ctx, site, "sam"); err != nil {
		t.Fatal(err)
	}
	want("the user's grants revoked", "sam")
	if _, err := store.RevokeUserGrants(ctx, site, "nobody"); err != nil {
		t.Fatal(err)
	}
	want("revoking a user without grants")

	if err := store.PutUpstreamToken(ctx, storage.UpstreamToken{SiteID: site, ERPUser: "alex", Access: "a1", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	want("an ERP token stored", "alex")
}
