package storage_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ory/fosite"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestRefreshGraceFollowsTheDatabaseClock: a rotated refresh token keeps
// working for the grace period after its rotation, which the database
// stamps. A replica whose own clock is off by more than the grace must
// neither extend it (a token rotated longer ago than the grace still
// works) nor cut it short (a concurrent refresh is taken for reuse, which
// revokes the family).
func TestRefreshGraceFollowsTheDatabaseClock(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	const grace = 10 * time.Second
	site := newSite(t, pool)
	for _, tc := range []struct {
		name string
		skew time.Duration
		// rotatedAgo is how long before the database's now() the token
		// was rotated.
		rotatedAgo string
		wantReuse  bool
	}{
		{"replica clock behind, rotated after the grace", -30 * time.Second, "20 seconds", true},
		{"replica clock ahead, rotated just now", 30 * time.Second, "0 seconds", false},
		{"replica clock behind, rotated just now", -30 * time.Second, "0 seconds", false},
		{"replica clock ahead, rotated after the grace", 30 * time.Second, "20 seconds", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := storage.New(pool, keyring(t, keySpec(t, "k1")), storage.Options{RefreshGrace: grace})
			store.SetNow(func() time.Time { return time.Now().Add(tc.skew) })
			sess := &storage.Session{SiteID: site, Subject: "u@example.com"}
			sess.SetExpiresAt(fosite.RefreshToken, time.Now().Add(time.Hour))
			requestID := "grant-" + tc.name
			req := &fosite.Request{ID: requestID, RequestedAt: time.Now(), Client: &fosite.DefaultClient{ID: "c"}, Session: sess}
			signature := "sig-" + tc.name
			if err := store.CreateRefreshTokenSession(ctx, signature, "", req); err != nil {
				t.Fatal(err)
			}
			if err := store.RotateRefreshToken(ctx, requestID, signature); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, `UPDATE oauth_tokens SET used_at = now() - $2::interval
				WHERE kind = 'refresh' AND request_id = $1`, requestID, tc.rotatedAgo); err != nil {
				t.Fatal(err)
			}
			_, err := store.GetRefreshTokenSession(ctx, signature, &storage.Session{})
			if reuse := errors.Is(err, fosite.ErrInactiveToken); reuse != tc.wantReuse || (err != nil && !reuse) {
				t.Errorf("refresh token rotated %s ago (by the database), replica clock off by %s: %v, want reuse %v",
					tc.rotatedAgo, tc.skew, err, tc.wantReuse)
			}
		})
	}
}

// FuzzGetClient: any client id a request names (authorize, token,
// revoke: anyone's text) finds its client or is not found; the database
// is never asked with text it refuses.
func FuzzGetClient(f *testing.F) {
	for _, seed := range []string{"egc_abc", "", "a\x00b", "\xff", "https://app.example/c.json"} {
		f.Add(seed)
	}
	store := storage.New(pgtest.NewPool(f), keyring(f, keySpec(f, "k1")), storage.Options{})
	f.Fuzz(func(t *testing.T, id string) {
		if strings.HasPrefix(id, "https://") || strings.HasPrefix(id, "http://") {
			return // URL client ids are resolved by their document (no resolver here)
		}
		if _, err := store.GetClient(context.Background(), id); err != nil && !errors.Is(err, fosite.ErrNotFound) {
			t.Fatalf("GetClient(%q): %v", id, err)
		}
	})
}

// TestACodesChallengeOutlivesFositesDeleteUntilTheCodeIsRedeemed: fosite
// deletes a code's PKCE challenge before it compares the verifier, so the
// store keeps it (a wrong verifier must not spend the real client's code)
// and deletes it with the code's redemption instead, leaving no row
// behind.
func TestACodesChallengeOutlivesFositesDeleteUntilTheCodeIsRedeemed(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	store := storage.New(pool, keyring(t, keySpec(t, "k1")), storage.Options{})
	sess := &storage.Session{SiteID: newSite(t, pool), Subject: "u@example.com"}
	sess.SetExpiresAt(fosite.AuthorizeCode, time.Now().Add(time.Minute))
	req := &fosite.Request{ID: "grant-pkce", RequestedAt: time.Now(), Client: &fosite.DefaultClient{ID: "c"}, Session: sess}
	const signature = "code-signature"
	if err := store.CreateAuthorizeCodeSession(ctx, signature, req); err != nil {
		t.Fatal(err)
	}
	if err := store.CreatePKCERequestSession(ctx, signature, req); err != nil {
		t.Fatal(err)
	}
	if err := store.DeletePKCERequestSession(ctx, signature); err != nil {
		t.Fatal(err)
	}
	if _, err := store.GetPKCERequestSession(ctx, signature, &storage.Session{}); err != nil {
		t.Fatalf("challenge after fosite's delete, before redemption: %v", err)
	}
	if err := store.InvalidateAuthorizeCodeSession(ctx, signature); err != nil {
		t.Fatal(err)
	}
	if _, err := store.GetPKCERequestSession(ctx, signature, &storage.Session{}); !errors.Is(err, fosite.ErrNotFound) {
		t.Errorf("challenge after redemption: %v, want not found", err)
	}
	if err := store.InvalidateAuthorizeCodeSession(ctx, signature); !errors.Is(err, fosite.ErrInvalidatedAuthorizeCode) {
		t.Errorf("second redemption: %v, want ErrInvalidatedAuthorizeCode", err)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM oauth_tokens WHERE kind = 'pkce'`).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("pkce rows left: %d (%v)", rows, err)
	}
}

// TestSiblingsUsedAtOnceGiveOneBranch: two tokens issued from one refresh
// token within its grace (the real client's and a thief's) are used at the
// same moment, on two replicas: each reads its token as active before
// either rotates it. Only one may go on. Rotating the second, after the
// first has ended it, must fail (fosite then refuses the refresh), never
// start a second branch, and never deadlock.
func TestSiblingsUsedAtOnceGiveOneBranch(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	site := newSite(t, pool)
	store := storage.New(pool, keyring(t, keySpec(t, "k1")), storage.Options{RefreshGrace: time.Minute})
	sess := &storage.Session{SiteID: site, Subject: "u@example.com"}
	sess.SetExpiresAt(fosite.RefreshToken, time.Now().Add(time.Hour))
	req := &fosite.Request{ID: "grant-siblings", RequestedAt: time.Now(), Client: &fosite.DefaultClient{ID: "c"}, Session: sess}
	if err := store.CreateRefreshTokenSession(ctx, "r1", "", req); err != nil {
		t.Fatal(err)
	}
	if err := store.RotateRefreshToken(ctx, req.ID, "r1"); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []string{"r2-real", "r2-thief"} {
		if err := store.CreateRefreshTokenSession(ctx, sig, "", req); err != nil {
			t.Fatal(err)
		}
	}
	// Both refreshes read their token, in their own transactions, before
	// either rotates.
	txA, err := store.BeginTX(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Rollback(txA) }()
	txB, err := store.BeginTX(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Rollback(txB) }()
	for tx, sig := range map[context.Context]string{txA: "r2-real", txB: "r2-thief"} {
		if _, err := store.GetRefreshTokenSession(tx, sig, &storage.Session{}); err != nil {
			t.Fatalf("read %s: %v", sig, err)
		}
	}
	if err := store.RotateRefreshToken(txA, req.ID, "r2-real"); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() { second <- store.RotateRefreshToken(txB, req.ID, "r2-thief") }()
	if err := store.Commit(txA); err != nil {
		t.Fatal(err)
	}
	if err := <-second; !errors.Is(err, fosite.ErrInactiveToken) {
		t.Errorf("rotating the sibling ended while its refresh was under way: %v, want ErrInactiveToken", err)
	}
}
