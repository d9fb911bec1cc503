package storage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

func keyring(t testing.TB, spec string) *secrets.Keyring {
	t.Helper()
	k, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func keySpec(t testing.TB, id string) string {
	t.Helper()
	s, err := secrets.GenerateKeySpec(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newSite inserts a site row and returns its id.
func newSite(t *testing.T, pool *pgxpool.Pool) uuid.UUID {
	t.Helper()
	id := uuid.New()
	if _, err := pool.Exec(context.Background(), `INSERT INTO sites (id, slug, kind, base_url, display_name)
		VALUES ($1, $2, 'frappe', $3, 'Test')`, id, "s"+id.String()[:8], "https://"+id.String()[:8]+".example"); err != nil {
		t.Fatal(err)
	}
	return id
}

// Two stores on two pools stand for two replicas: concurrent refreshes of
// one stale token run the refresh function exactly once; the others see
// its result.
func TestRefreshUpstreamTokenRunsOnceAcrossStores(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	keys := keyring(t, keySpec(t, "k1"))
	var stores []*storage.Store
	var first *pgxpool.Pool
	for range 2 {
		pool, err := database.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		if first == nil {
			first = pool
		}
		stores = append(stores, storage.New(pool, keys, storage.Options{}))
	}
	site := newSite(t, first)
	if err := stores[0].PutUpstreamToken(ctx, storage.UpstreamToken{SiteID: site, ERPUser: "u@x", Access: "old-access",
		Refresh: "old-refresh", ExpiresAt: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	var refreshes atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := stores[i%2].RefreshUpstreamToken(ctx, site, "u@x", func(_ context.Context, cur storage.UpstreamToken) (storage.RefreshOutcome, error) {
				if time.Until(cur.ExpiresAt) > 0 {
					return storage.RefreshOutcome{}, nil
				}
				refreshes.Add(1)
				next := cur
				next.Access, next.Refresh, next.ExpiresAt = "new-access", "new-refresh", time.Now().Add(time.Hour)
				return storage.RefreshOutcome{Replace: &next}, nil
			})
			if err != nil || got.Access.Reveal() != "new-access" {
				t.Errorf("refresh: %v, access %q", err, got.Access.Reveal())
			}
		}()
	}
	wg.Wait()
	if n := refreshes.Load(); n != 1 {
		t.Errorf("refresh ran %d times, want 1", n)
	}
}

// A dead refresh token, or an access gate that refuses the user on
// refresh, deletes the ERP token and the user's grants on the site, and
// only theirs, and records why.
func TestEndedRefreshRevokesTheUsersGrants(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	st := storage.New(pool, keyring(t, keySpec(t, "k1")), storage.Options{})
	for _, tc := range []struct {
		name    string
		outcome storage.RefreshOutcome
		err     error
		reason  string
	}{
		{"dead refresh token", storage.RefreshOutcome{Dead: true}, storage.ErrUpstreamTokenDead, "upstream_refresh_token_dead"},
		{"access withdrawn", storage.RefreshOutcome{AccessWithdrawn: true}, storage.ErrUpstreamAccessWithdrawn, "access_denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := newSite(t, pool)
			for _, user := range []string{"dead@x", "alive@x"} {
				if err := st.PutUpstreamToken(ctx, storage.UpstreamToken{SiteID: site, ERPUser: user, Access: "a", Refresh: "r", ExpiresAt: time.Now()}); err != nil {
					t.Fatal(err)
				}
				if _, err := pool.Exec(ctx, `INSERT INTO oauth_tokens (kind, signature_hash, request_id, client_id, site_id, subject, requested_at, session)
					VALUES ('access', sha256(convert_to($1, 'UTF8')), $1, 'c', $2, $3, now(), '{}')`, "sig-"+user+site.String(), site, user); err != nil {
					t.Fatal(err)
				}
			}
			_, err := st.RefreshUpstreamToken(ctx, site, "dead@x", func(context.Context, storage.UpstreamToken) (storage.RefreshOutcome, error) {
				return tc.outcome, nil
			})
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if _, err := st.UpstreamToken(ctx, site, "dead@x"); !errors.Is(err, storage.ErrNoUpstreamToken) {
				t.Errorf("dead user's ERP token: %v", err)
			}
			if _, err := st.UpstreamToken(ctx, site, "alive@x"); err != nil {
				t.Errorf("other user's ERP token: %v", err)
			}
			var dead, alive int
			_ = pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE subject = 'dead@x'), count(*) FILTER (WHERE subject = 'alive@x')
				FROM oauth_tokens WHERE site_id = $1`, site).Scan(&dead, &alive)
			if dead != 0 || alive != 1 {
				t.Errorf("tokens left: dead user %d, other user %d", dead, alive)
			}
			events, err := st.AuthEvents(ctx, site, 10)
			if err != nil || len(events) != 1 || events[0].Kind != storage.EventGrantsRevoked || events[0].ERPUser != "dead@x" || events[0].Reason != tc.reason {
				t.Errorf("events = %+v, %v", events, err)
			}
		})
	}
}

// The time of the last access-gate check is kept with the token and
// replaced by a refresh.
func TestUpstreamTokenKeepsTheGateCheck(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	st := storage.New(pool, keyring(t, keySpec(t, "k1")), storage.Options{})
	site := newSite(t, pool)
	if err := st.PutUpstreamToken(ctx, storage.UpstreamToken{SiteID: site, ERPUser: "u@x", Access: "a", ExpiresAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if got, err := st.UpstreamToken(ctx, site, "u@x"); err != nil || !got.GateCheckedAt.IsZero() {
		t.Fatalf("never checked: %v, %v", got.GateCheckedAt, err)
	}
	checked := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
	_, err := st.RefreshUpstreamToken(ctx, site, "u@x", func(_ context.Context, cur storage.UpstreamToken) (storage.RefreshOutcome, error) {
		next := cur
		next.GateCheckedAt = checked
		return storage.RefreshOutcome{Replace: &next}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.UpstreamToken(ctx, site, "u@x"); err != nil || !got.GateCheckedAt.Equal(checked) {
		t.Errorf("after refresh: %v, %v", got.GateCheckedAt, err)
	}
}

// Rotation re-seals ERP tokens and the signing key under the new primary
// key; values are unchanged and the old key can then be dropped.
func TestRotateKeys(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	oldSpec, newSpec := keySpec(t, "k1"), keySpec(t, "k2")
	before := storage.New(pool, keyring(t, oldSpec), storage.Options{})
	site := newSite(t, pool)
	if err := before.PutUpstreamToken(ctx, storage.UpstreamToken{SiteID: site, ERPUser: "u@x", Access: "acc", Refresh: "ref", ExpiresAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	signing, err := before.TokenHMACKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := storage.New(pool, keyring(t, newSpec+","+oldSpec), storage.Options{}).RotateKeys(ctx)
	if err != nil || n != 2 {
		t.Fatalf("rotated %d, %v", n, err)
	}
	after := storage.New(pool, keyring(t, newSpec), storage.Options{})
	tok, err := after.UpstreamToken(ctx, site, "u@x")
	if err != nil || tok.Access.Reveal() != "acc" || tok.Refresh.Reveal() != "ref" {
		t.Errorf("after rotation: %v %q %q", err, tok.Access.Reveal(), tok.Refresh.Reveal())
	}
	key, err := after.TokenHMACKey(ctx)
	if err != nil || string(key) != string(signing) {
		t.Errorf("signing key changed or unreadable: %v", err)
	}
}

// TestAnERPRefreshHoldsNoDatabaseConnection: while a site's ERP takes its
// time over its users' token refreshes (here, more refreshes than the
// pool has connections, all waiting on the ERP at once), the database
// still serves everyone else. Before, each refresh held a connection and a
// row lock for its whole round trip to the ERP, so one tenant whose ERP
// was slow, or made slow by its owner, could take the pool every tenant
// shares.
func TestAnERPRefreshHoldsNoDatabaseConnection(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPoolOf(t, 4)
	st := storage.New(pool, keyring(t, keySpec(t, "k1")), storage.Options{})
	slow, other := newSite(t, pool), newSite(t, pool)
	const users = 8
	for i := range users {
		if err := st.PutUpstreamToken(ctx, storage.UpstreamToken{SiteID: slow, ERPUser: fmt.Sprint("u", i), Access: "old",
			Refresh: "old-refresh", ExpiresAt: time.Now().Add(-time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutUpstreamToken(ctx, storage.UpstreamToken{SiteID: other, ERPUser: "b", Access: "b-access",
		ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	atERP, answer := make(chan struct{}, users), make(chan struct{})
	var wg sync.WaitGroup
	release := sync.OnceFunc(func() { close(answer) })
	t.Cleanup(func() { release(); wg.Wait() }) // before the pool closes
	for i := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := st.RefreshUpstreamToken(ctx, slow, fmt.Sprint("u", i), func(ctx context.Context, cur storage.UpstreamToken) (storage.RefreshOutcome, error) {
				atERP <- struct{}{}
				<-answer // the slow ERP
				next := cur
				next.Access, next.ExpiresAt = "new", time.Now().Add(time.Hour)
				return storage.RefreshOutcome{Replace: &next}, nil
			})
			if err != nil || got.Access.Reveal() != "new" {
				t.Errorf("refresh of u%d: %v, access %q", i, err, got.Access.Reveal())
			}
		}()
	}
	// Every refresh is at the ERP at once; before, only as many as the
	// pool had connections got there, and the rest waited for one.
	for range users {
		select {
		case <-atERP:
		case <-time.After(10 * time.Second): // turns a hang into a failure
			t.Fatalf("fewer than %d refreshes reached the ERP: they wait for a database connection", users)
		}
	}
	octx, cancel := context.WithTimeout(ctx, 10*time.Second) // turns a hang into a failure
	got, err := st.UpstreamToken(octx, other, "b")
	cancel()
	if err != nil || got.Access.Reveal() != "b-access" {
		t.Errorf("another site's token while the slow site's refreshes wait on its ERP: %v", err)
	}
	release()
	wg.Wait()
}

// TestARefreshOvertakenByASignInStoresNothing: a person signs in again
// while a refresh of their old token waits on the ERP; the sign-in's token
// stays, and the refresh says it was overtaken.
func TestARefreshOvertakenByASignInStoresNothing(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	st := storage.New(pool, keyring(t, keySpec(t, "k1")), storage.Options{})
	site := newSite(t, pool)
	old := storage.UpstreamToken{SiteID: site, ERPUser: "u@x", Access: "old", Refresh: "old-refresh", ExpiresAt: time.Now().Add(-time.Minute)}
	if err := st.PutUpstreamToken(ctx, old); err != nil {
		t.Fatal(err)
	}
	_, err := st.RefreshUpstreamToken(ctx, site, "u@x", func(ctx context.Context, cur storage.UpstreamToken) (storage.RefreshOutcome, error) {
		signedIn := old
		signedIn.Access, signedIn.ExpiresAt = "signed-in", time.Now().Add(time.Hour)
		if err := st.PutUpstreamToken(ctx, signedIn); err != nil {
			t.Fatal(err)
		}
		next := cur
		next.Access, next.ExpiresAt = "refreshed", time.Now().Add(time.Hour)
		return storage.RefreshOutcome{Replace: &next}, nil
	})
	if !errors.Is(err, storage.ErrRefreshOvertaken) {
		t.Errorf("refresh overtaken by a sign-in: %v", err)
	}
	if got, err := st.UpstreamToken(ctx, site, "u@x"); err != nil || got.Access.Reveal() != "signed-in" {
		t.Errorf("stored token %q (%v), want the sign-in's", got.Access.Reveal(), err)
	}
	// The lease went with it: the next refresh does not wait for it to
	// run out (two minutes without a deadline).
	nctx, cancel := context.WithTimeout(ctx, 10*time.Second) // turns a wait into a failure
	defer cancel()
	if _, err := st.RefreshUpstreamToken(nctx, site, "u@x", func(ctx context.Context, cur storage.UpstreamToken) (storage.RefreshOutcome, error) {
		return storage.RefreshOutcome{}, nil
	}); err != nil {
		t.Errorf("the next refresh: %v", err)
	}
}

// TestRotateKeysGoesPastAnUnreadableToken: one person's ERP token sealed
// under a key the rotation is not given must not stop it. Before, the
// first such token ended the run, leaving every later token and the
// token-signing key under the old key, to become unreadable once it is
// dropped. The unreadable token is left as it is and counted.
func TestRotateKeysGoesPastAnUnreadableToken(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	lostSpec, oldSpec, newSpec := keySpec(t, "k0"), keySpec(t, "k1"), keySpec(t, "k2")
	site := newSite(t, pool)
	// "a@x" sorts before "b@x", so the unreadable token comes first.
	if err := storage.New(pool, keyring(t, lostSpec), storage.Options{}).PutUpstreamToken(ctx,
		storage.UpstreamToken{SiteID: site, ERPUser: "a@x", Access: "lost", ExpiresAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	before := storage.New(pool, keyring(t, oldSpec), storage.Options{})
	if err := before.PutUpstreamToken(ctx, storage.UpstreamToken{SiteID: site, ERPUser: "b@x", Access: "acc", ExpiresAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	signing, err := before.TokenHMACKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := storage.New(pool, keyring(t, newSpec+","+oldSpec), storage.Options{}).RotateKeys(ctx)
	if !errors.Is(err, storage.ErrUnreadableTokens) || n != 2 {
		t.Fatalf("rotated %d, %v; want 2 and ErrUnreadableTokens", n, err)
	}
	if strings.Contains(err.Error(), "a@x") || !strings.Contains(err.Error(), "1 ") {
		t.Errorf("the error names a person or not the count: %v", err)
	}
	after := storage.New(pool, keyring(t, newSpec), storage.Options{})
	if tok, err := after.UpstreamToken(ctx, site, "b@x"); err != nil || tok.Access.Reveal() != "acc" {
		t.Errorf("the token after the unreadable one: %v %q", err, tok.Access.Reveal())
	}
	if key, err := after.TokenHMACKey(ctx); err != nil || string(key) != string(signing) {
		t.Errorf("signing key not re-sealed: %v", err)
	}
	if _, err := after.UpstreamToken(ctx, site, "a@x"); !errors.Is(err, secrets.ErrUnknownKey) {
		t.Errorf("the unreadable token: %v; want it left as it was", err)
	}
}
