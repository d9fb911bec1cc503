package erptokens

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func keyring(t *testing.T, ids ...string) *secrets.Keyring {
	t.Helper()
	spec := ""
	for i, id := range ids {
		if i > 0 {
			spec += ","
		}
		key := make([]byte, 32)
		for j := range key {
			key[j] = byte(len(id) + j + i)
		}
		spec += id + ":" + base64.StdEncoding.EncodeToString(key)
	}
	k, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newSite(t *testing.T, pool *pgxpool.Pool) uuid.UUID {
	t.Helper()
	id := uuid.New()
	_, err := pool.Exec(context.Background(),
		`INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, $2, 'acumatica', $3, 'Test')`,
		id, "s"+id.String()[:8], "https://"+id.String()[:8]+".example")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// fakeERP issues tokens like Acumatica: each refresh token works once.
type fakeERP struct {
	mu       sync.Mutex
	seq      int
	live     map[string]bool // live refresh tokens
	grants   atomic.Int32    // password grants
	refreshs atomic.Int32    // refresh grants
	deadUses atomic.Int32    // refresh tokens presented after they died
	delay    time.Duration
}

func newFakeERP(delay time.Duration) *fakeERP { return &fakeERP{live: map[string]bool{}, delay: delay} }

func (f *fakeERP) issue() connector.UpstreamToken {
	f.seq++
	rt := fmt.Sprintf("refresh-%d", f.seq)
	f.live[rt] = true
	return connector.UpstreamToken{AccessToken: secrets.Secret(fmt.Sprintf("access-%d", f.seq)), RefreshToken: secrets.Secret(rt), ExpiresIn: time.Hour}
}

// renew is the connector's side: refresh when it can, sign in otherwise.
func (f *fakeERP) renew(ctx context.Context, current connector.StoredToken) (connector.UpstreamToken, error) {
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if current.Refresh.IsSet() {
		f.refreshs.Add(1)
		if !f.live[current.Refresh.Reveal()] {
			f.deadUses.Add(1)
			return connector.UpstreamToken{}, connector.ErrRefreshTokenDead
		}
		delete(f.live, current.Refresh.Reveal())
		return f.issue(), nil
	}
	f.grants.Add(1)
	return f.issue(), nil
}

func openPools(t *testing.T, n int) []*pgxpool.Pool {
	t.Helper()
	url := pgtest.NewDatabase(t)
	pools := make([]*pgxpool.Pool, n)
	for i := range pools {
		p, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		pools[i] = p
	}
	return pools
}

// Two replicas (two pools, two stores) and forty concurrent calls with no
// token yet: exactly one sign-in, and everyone gets its token.
func TestTwoReplicasRacingSignInOnce(t *testing.T) {
	pools := openPools(t, 2)
	site := newSite(t, pools[0])
	keys := keyring(t, "k1")
	stores := []*Store{New(pools[0], keys, Options{}), New(pools[1], keys, Options{})}
	erp := newFakeERP(20 * time.Millisecond)
	var wg sync.WaitGroup
	got := make([]secrets.Secret, 40)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := stores[i%2].Token(context.Background(), site, "api.service", erp.renew)
			if err != nil {
				t.Error(err)
			}
			got[i] = tok
		}()
	}
	wg.Wait()
	if n := erp.grants.Load() + erp.refreshs.Load(); n != 1 {
		t.Fatalf("renewals = %d, want 1", n)
	}
	for i, g := range got {
		if g != "access-1" {
			t.Errorf("call %d got %q", i, g.Reveal())
		}
	}
}

// With a stale stored token, concurrent calls on both replicas present its
// refresh token exactly once, so rotation never kills it under them.
func TestRacingRefreshPresentsEachRefreshTokenOnce(t *testing.T) {
	pools := openPools(t, 2)
	site := newSite(t, pools[0])
	keys := keyring(t, "k1")
	erp := newFakeERP(10 * time.Millisecond)
	ctx := context.Background()
	first := New(pools[0], keys, Options{})
	if _, err := first.Token(ctx, site, "api.service", erp.renew); err != nil {
		t.Fatal(err)
	}
	// Make the stored token stale, as an hour would.
	if _, err := pools[0].Exec(ctx, `UPDATE service_connection_tokens SET expires_at = now() + interval '10 seconds'`); err != nil {
		t.Fatal(err)
	}
	stores := []*Store{New(pools[0], keys, Options{}), New(pools[1], keys, Options{})}
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := stores[i%2].Token(ctx, site, "api.service", erp.renew)
			if err != nil || tok != "access-2" {
				t.Errorf("call %d: %q, %v", i, tok.Reveal(), err)
			}
		}()
	}
	wg.Wait()
	if r, d := erp.refreshs.Load(), erp.deadUses.Load(); r != 1 || d != 0 {
		t.Fatalf("refreshes = %d, dead refresh tokens presented = %d; want 1 and 0", r, d)
	}
	// The rotated refresh token was stored: the next renewal uses it.
	if _, err := pools[0].Exec(ctx, `UPDATE service_connection_tokens SET expires_at = now()`); err != nil {
		t.Fatal(err)
	}
	tok, err := New(pools[1], keys, Options{}).Token(ctx, site, "api.service", erp.renew)
	if err != nil || tok != "access-3" || erp.deadUses.Load() != 0 {
		t.Fatalf("after rotation: %q, %v, dead uses %d", tok.Reveal(), err, erp.deadUses.Load())
	}
}

func TestRejectRenewsOnlyTheRefusedToken(t *testing.T) {
	pools := openPools(t, 1)
	site := newSite(t, pools[0])
	keys := keyring(t, "k1")
	erp := newFakeERP(0)
	ctx := context.Background()
	s := New(pools[0], keys, Options{})
	tok, _ := s.Token(ctx, site, "api.service", erp.renew)
	// Rejecting a token that is no longer the stored one changes nothing.
	if err := s.Reject(ctx, site, "api.service", "access-0"); err != nil {
		t.Fatal(err)
	}
	if again, _ := New(pools[0], keys, Options{}).Token(ctx, site, "api.service", erp.renew); again != tok {
		t.Fatalf("an unrelated Reject renewed the token: %q", again.Reveal())
	}
	if err := s.Reject(ctx, site, "api.service", tok); err != nil {
		t.Fatal(err)
	}
	next, err := s.Token(ctx, site, "api.service", erp.renew)
	if err != nil || next == tok {
		t.Fatalf("after Reject: %q, %v", next.Reveal(), err)
	}
}

func TestRenewErrorsReachTheCallerAndStoreNothing(t *testing.T) {
	pools := openPools(t, 1)
	site := newSite(t, pools[0])
	s := New(pools[0], keyring(t, "k1"), Options{})
	refused := errors.New("invalid_grant")
	_, err := s.Token(context.Background(), site, "api.service", func(context.Context, connector.StoredToken) (connector.UpstreamToken, error) {
		return connector.UpstreamToken{}, refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("err = %v", err)
	}
	var n int
	_ = pools[0].QueryRow(context.Background(), `SELECT count(*) FROM service_connection_tokens`).Scan(&n)
	if n != 0 {
		t.Fatalf("a failed renewal stored %d rows", n)
	}
}

func TestTokensAreSealedAndSurviveARetiredKey(t *testing.T) {
	pools := openPools(t, 1)
	site := newSite(t, pools[0])
	erp := newFakeERP(0)
	ctx := context.Background()
	if _, err := New(pools[0], keyring(t, "old"), Options{}).Token(ctx, site, "api.service", erp.renew); err != nil {
		t.Fatal(err)
	}
	var access, refresh []byte
	if err := pools[0].QueryRow(ctx, `SELECT access_ciphertext, refresh_ciphertext FROM service_connection_tokens`).Scan(&access, &refresh); err != nil {
		t.Fatal(err)
	}
	if string(access) == "access-1" || string(refresh) == "refresh-1" {
		t.Fatal("tokens are stored in clear")
	}
	// A keyring without the old key cannot open the row: the store signs
	// in afresh instead of failing every call.
	tok, err := New(pools[0], keyring(t, "new"), Options{}).Token(ctx, site, "api.service", erp.renew)
	if err != nil || tok != "access-2" || erp.grants.Load() != 2 {
		t.Fatalf("with a retired key: %q, %v, grants %d", tok.Reveal(), err, erp.grants.Load())
	}
}

// TestARenewalHoldsNoDatabaseConnection: while many sites' service
// connections renew at once with ERPs that take their time (more than the
// pool has connections), the database still serves everyone else. Before,
// each renewal held an advisory lock, and so a pooled connection, for its
// whole round trip to the ERP: anyone who registers sites with slow ERPs
// and calls them at once could take the pool every tenant shares.
func TestARenewalHoldsNoDatabaseConnection(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPoolOf(t, 4)
	s := New(pool, keyring(t, "k1"), Options{})
	const sites = 8
	ids := make([]uuid.UUID, sites)
	for i := range ids {
		ids[i] = newSite(t, pool)
	}
	atERP, answer := make(chan struct{}, sites), make(chan struct{})
	var wg sync.WaitGroup
	release := sync.OnceFunc(func() { close(answer) })
	t.Cleanup(func() { release(); wg.Wait() }) // before the pool closes
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := s.Token(ctx, ids[i], "svc", func(ctx context.Context, _ connector.StoredToken) (connector.UpstreamToken, error) {
				atERP <- struct{}{}
				<-answer // the slow ERP
				return connector.UpstreamToken{AccessToken: secrets.Secret(fmt.Sprint("access-", i)), ExpiresIn: time.Hour}, nil
			})
			if err != nil || tok.Reveal() != fmt.Sprint("access-", i) {
				t.Errorf("site %d: %v, token %q", i, err, tok.Reveal())
			}
		}()
	}
	for range sites {
		select {
		case <-atERP:
		case <-time.After(10 * time.Second): // turns a hang into a failure
			t.Fatalf("fewer than %d renewals reached the ERP: they wait for a database connection", sites)
		}
	}
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second) // turns a hang into a failure
	var one int
	err := pool.QueryRow(qctx, `SELECT 1`).Scan(&one)
	cancel()
	if err != nil {
		t.Errorf("a query while the sites' renewals wait on their ERPs: %v", err)
	}
	release()
	wg.Wait()
}
