package servicemcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/sites"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type stubERP struct{}

func (stubERP) Kind() string { return "stuberp" }
func (stubERP) Tools() []connector.Tool {
	return []connector.Tool{{
		Name: "noop", Description: "Nothing.", Input: schema.Object(), Output: schema.Object(), Effect: connector.Read,
		Handler: func(context.Context, *connector.Call) (any, error) { return map[string]any{}, nil },
	}}
}
func (stubERP) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) { return raw, nil }
func (stubERP) APICredentialFields() []connector.CredentialField {
	return []connector.CredentialField{{Name: "key", Secret: true}}
}
func (stubERP) APIAuthorizer(_ connector.Site, f map[string]secrets.Secret) (connector.Authorizer, error) {
	k := f["key"].Reveal()
	return connector.AuthorizerFunc(func(r *http.Request) error { r.Header.Set("Authorization", k); return nil }), nil
}
func (stubERP) VerifyAPICredential(context.Context, connector.Site, *http.Client) (string, error) {
	return "bot", nil
}

// manualInvalidations lets the test decide when invalidations arrive.
type manualInvalidations struct {
	mu      sync.Mutex
	healthy bool
	site    []func(string)
	reset   []func()
}

func (m *manualInvalidations) Healthy() bool                  { m.mu.Lock(); defer m.mu.Unlock(); return m.healthy }
func (m *manualInvalidations) OnSite(f func(string))          { m.site = append(m.site, f) }
func (m *manualInvalidations) OnReset(f func())               { m.reset = append(m.reset, f) }
func (m *manualInvalidations) OnMessage(string, func(string)) {}
func (m *manualInvalidations) fireSite(id string) {
	for _, f := range m.site {
		f(id)
	}
}
func (m *manualInvalidations) setHealthy(v bool) { m.mu.Lock(); m.healthy = v; m.mu.Unlock() }

func setup(t *testing.T) (*sites.Store, *connector.Registry, sites.Site, string) {
	t.Helper()
	_, store, reg, site, token := setupKeys(t, mustKey(t))
	return store, reg, site, token
}

// setupKeys is setup with the keyring spec, and returns the pool too.
func setupKeys(t *testing.T, spec string) (*pgxpool.Pool, *sites.Store, *connector.Registry, sites.Site, string) {
	t.Helper()
	keys, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	pool := pgtest.NewPool(t)
	store := sites.NewStore(pool, keys)
	reg := connector.NewRegistry()
	reg.MustRegister(stubERP{})
	ctx := context.Background()
	site, err := store.CreateSite(ctx, sites.NewSite{Slug: "acme", Kind: "stuberp", DisplayName: "Acme", BaseURL: "https://erp.acme.example"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutConnection(ctx, site.ID, sites.ConnectionAPIToken, "bot", map[string]secrets.Secret{"key": "k-1"}); err != nil {
		t.Fatal(err)
	}
	_, token, err := store.IssueServiceToken(ctx, site.ID, "t")
	if err != nil {
		t.Fatal(err)
	}
	return pool, store, reg, site, token.Reveal()
}

// issueOldFormat stores a token of the form issued before tokens carried
// a check value, as such a token is stored, and returns its id and value.
func issueOldFormat(t *testing.T, pool *pgxpool.Pool, siteID uuid.UUID) (uuid.UUID, string) {
	t.Helper()
	tok, err := secrets.NewToken(sites.ServiceTokenPrefix)
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.New()
	if _, err := pool.Exec(context.Background(), `INSERT INTO service_tokens (id, site_id, name, token_hash, prefix) VALUES ($1, $2, 'old', $3, $4)`,
		id, siteID, tok.Hash[:], tok.DisplayPrefix); err != nil {
		t.Fatal(err)
	}
	return id, tok.Value.Reveal()
}

func mustKey(t *testing.T) string {
	t.Helper()
	k, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func authOf(t *testing.T, r *resolved) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "https://erp.acme.example/", nil)
	if err := r.auth.Authorize(req); err != nil {
		t.Fatal(err)
	}
	return req.Header.Get("Authorization")
}

func TestResolverCachesUntilInvalidated(t *testing.T) {
	store, reg, site, token := setup(t)
	inv := &manualInvalidations{healthy: true}
	r := NewResolver(store, reg, inv, time.Hour)
	ctx := context.Background()

	first, err := r.Resolve(ctx, token, nil)
	if err != nil || authOf(t, first) != "k-1" {
		t.Fatalf("first resolve: %v", err)
	}
	// Change the credential without an invalidation reaching this replica:
	// the cached entry is still served, proving the cache is used.
	if _, err := store.PutConnection(ctx, site.ID, sites.ConnectionAPIToken, "bot", map[string]secrets.Secret{"key": "k-2"}); err != nil {
		t.Fatal(err)
	}
	cached, err := r.Resolve(ctx, token, nil)
	if err != nil || authOf(t, cached) != "k-1" {
		t.Fatalf("cached resolve: %v", err)
	}
	inv.fireSite(site.ID.String())
	fresh, err := r.Resolve(ctx, token, nil)
	if err != nil || authOf(t, fresh) != "k-2" {
		t.Fatalf("after invalidation: %v %v", err, fresh)
	}

	toks, _ := store.ListServiceTokens(ctx, site.ID)
	if err := store.RevokeServiceToken(ctx, site.ID, toks[0].ID); err != nil {
		t.Fatal(err)
	}
	inv.fireSite(site.ID.String())
	if _, err := r.Resolve(ctx, token, nil); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Fatalf("revoked token: %v", err)
	}
}

func TestResolverBypassesCacheWhenUnhealthy(t *testing.T) {
	store, reg, site, token := setup(t)
	inv := &manualInvalidations{healthy: false}
	r := NewResolver(store, reg, inv, time.Hour)
	ctx := context.Background()
	if _, err := r.Resolve(ctx, token, nil); err != nil {
		t.Fatal(err)
	}
	toks, _ := store.ListServiceTokens(ctx, site.ID)
	if err := store.RevokeServiceToken(ctx, site.ID, toks[0].ID); err != nil {
		t.Fatal(err)
	}
	// No invalidation arrives, but the listener is down: nothing is cached.
	if _, err := r.Resolve(ctx, token, nil); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Fatalf("revoked token served while invalidations were down: %v", err)
	}
}

// TestResolverDoesNotCacheALookupOvertakenByARevocation: a lookup reads the
// token as valid, the token is revoked and the invalidation arrives before
// the lookup's result is cached (there was nothing to drop yet). The
// result must not be cached: the next call looks again and is refused.
func TestResolverDoesNotCacheALookupOvertakenByARevocation(t *testing.T) {
	store, reg, site, token := setup(t)
	inv := &manualInvalidations{healthy: true}
	r := NewResolver(store, reg, inv, time.Hour)
	ctx := context.Background()
	r.afterLookup = func() {
		r.afterLookup = nil // once
		toks, _ := store.ListServiceTokens(ctx, site.ID)
		if err := store.RevokeServiceToken(ctx, site.ID, toks[0].ID); err != nil {
			t.Error(err)
		}
		inv.fireSite(site.ID.String())
	}
	// The call that began before the revocation is served: it read the
	// token while it was valid.
	if _, err := r.Resolve(ctx, token, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve(ctx, token, nil); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Fatalf("after the revocation: %v, want ErrTokenInvalid (a stale lookup was cached)", err)
	}
}

// fakeClock is a settable clock for the resolver.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// resolvedOnAClock returns a caching resolver with a one-minute TTL on a
// fake clock, its token already resolved (and cached) once, with key k-1.
func resolvedOnAClock(t *testing.T) (*Resolver, *fakeClock, *sites.Store, sites.Site, string) {
	t.Helper()
	store, reg, site, token := setup(t)
	r := NewResolver(store, reg, &manualInvalidations{healthy: true}, time.Minute)
	clock := &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	r.setClock(clock.now)
	if e, err := r.Resolve(context.Background(), token, nil); err != nil || authOf(t, e) != "k-1" {
		t.Fatalf("first resolve: %v", err)
	}
	return r, clock, store, site, token
}

// eventually polls check until it reports true, for at most ten seconds.
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !check(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

// TestResolverRefreshesAheadWithoutMakingACallWait: an entry used after
// half its TTL is still served, and looked up again in the background, so
// that a change no invalidation announced is picked up without any call
// waiting for the lookup.
func TestResolverRefreshesAheadWithoutMakingACallWait(t *testing.T) {
	r, clock, store, site, token := resolvedOnAClock(t)
	ctx := context.Background()
	// A change that no invalidation announces (as if its NOTIFY was lost).
	if _, err := store.PutConnection(ctx, site.ID, sites.ConnectionAPIToken, "bot", map[string]secrets.Secret{"key": "k-2"}); err != nil {
		t.Fatal(err)
	}
	clock.advance(29 * time.Second)
	if e, err := r.Resolve(ctx, token, nil); err != nil || authOf(t, e) != "k-1" {
		t.Fatalf("before half the TTL: %v; want the cached k-1", err)
	}
	clock.advance(2 * time.Second)
	// Past half the TTL: this call gets the cached entry at once (k-1: it
	// did not wait for the lookup), and the lookup runs behind it.
	if e, err := r.Resolve(ctx, token, nil); err != nil || authOf(t, e) != "k-1" {
		t.Fatalf("past half the TTL: %v; want the cached k-1 at once", err)
	}
	eventually(t, "the refreshed credential", func() bool {
		e, err := r.Resolve(ctx, token, nil)
		return err == nil && authOf(t, e) == "k-2"
	})
}

// TestResolverDropsARefreshedTokenThatWasRevoked: a background lookup that
// finds the token revoked drops its entry at once.
func TestResolverDropsARefreshedTokenThatWasRevoked(t *testing.T) {
	r, clock, store, site, token := resolvedOnAClock(t)
	ctx := context.Background()
	toks, _ := store.ListServiceTokens(ctx, site.ID)
	if err := store.RevokeServiceToken(ctx, site.ID, toks[0].ID); err != nil {
		t.Fatal(err)
	}
	clock.advance(31 * time.Second)
	eventually(t, "the revocation found by the background lookup", func() bool {
		_, err := r.Resolve(ctx, token, nil)
		return errors.Is(err, sites.ErrTokenInvalid)
	})
}

func (stubERP) SiteRules() connector.SiteRules { return connector.SiteRules{} }

// TestResolverLookupOutlivesTheCallerThatStartedIt: concurrent first calls
// with one token share one lookup. The caller that started it giving up
// (its client went away) gets its own error, and the others still get the
// token resolved: before, the shared lookup ran on the first caller's
// context and failed every caller sharing it.
func TestResolverLookupOutlivesTheCallerThatStartedIt(t *testing.T) {
	store, reg, _, token := setup(t)
	r := NewResolver(store, reg, &manualInvalidations{healthy: true}, time.Hour)
	started, release := make(chan struct{}), make(chan struct{})
	r.beforeLookup = func() {
		r.beforeLookup = nil // once
		close(started)
		<-release
	}
	first, cancel := context.WithCancel(t.Context())
	firstErr := make(chan error, 1)
	go func() {
		_, err := r.Resolve(first, token, nil)
		firstErr <- err
	}()
	<-started
	second := make(chan error, 1)
	go func() {
		e, err := r.Resolve(t.Context(), token, nil)
		if err == nil && authOf(t, e) != "k-1" {
			err = errors.New("resolved to another credential")
		}
		second <- err
	}()
	// Give the second caller time to join the lookup (were it late, it
	// would find the token cached and the test would pass for nothing; it
	// cannot fail for that reason).
	time.Sleep(50 * time.Millisecond)
	cancel()
	close(release)
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that gave up got %v", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("the caller sharing the lookup: %v", err)
	}
}

// TestResolverLetsAKnownTokenPastItsSourceBound: the bound on invalid
// tokens is per source, and bots of many tenants may share one (a NAT, an
// AI platform's egress, a proxy not listed as trusted). Someone at that
// address who spends the bound with made-up tokens must not lock out a
// bot whose token this replica has already found valid, when its entry is
// gone: after any change of its site (here announced by an invalidation),
// at the end of the TTL, or while invalidations are down and nothing is
// cached. A token revoked since is refused as invalid once, then bounded
// like any other; a token never seen stays bounded.
//
// The tokens here are of the form issued before tokens carried a check
// value, which only this replica's memory tells from made-up ones.
func TestResolverLetsAKnownTokenPastItsSourceBound(t *testing.T) {
	pool, store, reg, site, _ := setupKeys(t, mustKey(t))
	tokenID, token := issueOldFormat(t, pool, site.ID)
	inv := &manualInvalidations{healthy: true}
	r := NewResolver(store, reg, inv, time.Hour)
	ctx := context.Background()
	lookups := sourcelimit.NewLookups(sourcelimit.Limit{Burst: 1, Every: time.Hour}, nil)
	req := httptest.NewRequest(http.MethodPost, "/service/mcp", nil)
	req.RemoteAddr = "203.0.113.7:40000"
	var refused *sourcelimit.LookupsRefused

	if _, err := r.Resolve(ctx, token, lookups.For(req)); err != nil {
		t.Fatalf("the bot's first call: %v", err)
	}
	// Another client at the same address spends the bound.
	if _, err := r.Resolve(ctx, "egs_madeup1", lookups.For(req)); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Fatalf("a made-up token: %v, want ErrTokenInvalid", err)
	}
	if _, err := r.Resolve(ctx, "egs_madeup2", lookups.For(req)); !errors.As(err, &refused) {
		t.Fatalf("a made-up token past the bound: %v, want the source refused", err)
	}

	inv.fireSite(site.ID.String()) // any change of the site drops its entries
	if _, err := r.Resolve(ctx, token, lookups.For(req)); err != nil {
		t.Fatalf("the bot's token, found valid before, after its site changed: %v (locked out by another client's made-up tokens)", err)
	}
	inv.setHealthy(false) // nothing is cached: every call looks up
	for i := range 3 {
		if _, err := r.Resolve(ctx, token, lookups.For(req)); err != nil {
			t.Fatalf("call %d while invalidations are down: %v", i, err)
		}
	}
	inv.setHealthy(true)

	_, other := issueOldFormat(t, pool, site.ID)
	if _, err := r.Resolve(ctx, other, lookups.For(req)); !errors.As(err, &refused) {
		t.Fatalf("a token this replica never found valid, from a spent source: %v, want the source refused", err)
	}

	if err := store.RevokeServiceToken(ctx, site.ID, tokenID); err != nil {
		t.Fatal(err)
	}
	inv.fireSite(site.ID.String())
	if _, err := r.Resolve(ctx, token, lookups.For(req)); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Fatalf("the revoked token: %v, want ErrTokenInvalid", err)
	}
	if _, err := r.Resolve(ctx, token, lookups.For(req)); !errors.As(err, &refused) {
		t.Fatalf("the revoked token again, from a spent source: %v, want the source refused", err)
	}
}

// TestResolverRefusesATokenThatExpiresWhileCached: someone holding a
// token (a leaked one, or a bot's whose owner chose 30 days) keeps calling
// as it runs out. The entry cached five seconds before the expiry is well
// inside its TTL and not yet due for a refresh, so without a check of the
// expiry on every call it would be served for up to 30 s more. The call
// after the expiry is refused, as are the ones after it, also when the
// lookup itself still finds the token (the database's clock a little
// behind this replica's) and while nothing is cached.
func TestResolverRefusesATokenThatExpiresWhileCached(t *testing.T) {
	store, reg, site, _ := setup(t)
	ctx := context.Background()
	st, value, err := store.IssueServiceTokenWithLifetime(ctx, site.ID, "thirty days", 30)
	if err != nil || st.ExpiresAt == nil {
		t.Fatalf("issue = %+v, %v", st, err)
	}
	token := value.Reveal()
	inv := &manualInvalidations{healthy: true}
	r := NewResolver(store, reg, inv, 30*time.Second)
	clock := &fakeClock{t: st.ExpiresAt.Add(-5 * time.Second)}
	r.setClock(clock.now)

	if _, err := r.Resolve(ctx, token, nil); err != nil {
		t.Fatalf("five seconds before the expiry: %v", err)
	}
	clock.advance(5 * time.Second) // the expiry itself
	if _, err := r.Resolve(ctx, token, nil); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Fatalf("at the expiry, the entry cached 5 s before: %v, want ErrTokenInvalid", err)
	}
	clock.advance(time.Second)
	if _, err := r.Resolve(ctx, token, nil); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Fatalf("a second after the expiry: %v, want ErrTokenInvalid", err)
	}
	inv.setHealthy(false) // nothing cached: every call looks the token up
	if _, err := r.Resolve(ctx, token, nil); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Fatalf("looked up after the expiry: %v, want ErrTokenInvalid", err)
	}
}

// TestResolverWithInvalidationsDownServesNoLookupBegunBeforeARevocation:
// the listener is down, so this replica hears of no revocation made on
// another one. A bot's call reads its token as valid, slowly (a loaded
// database, as often comes with a lost listener); the token is revoked
// meanwhile; a call made after the revocation must look the token up
// itself and be refused, not share the slow lookup begun before and run
// on what it read.
func TestResolverWithInvalidationsDownServesNoLookupBegunBeforeARevocation(t *testing.T) {
	store, reg, site, token := setup(t)
	r := NewResolver(store, reg, &manualInvalidations{healthy: false}, time.Hour)
	ctx := context.Background()
	var mu sync.Mutex
	lookups := 0
	second := make(chan struct{})
	r.beforeLookup = func() {
		mu.Lock()
		defer mu.Unlock()
		if lookups++; lookups == 2 {
			close(second)
		}
	}
	inFirst, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	r.afterLookup = func() {
		first := false
		once.Do(func() { first = true })
		if first {
			close(inFirst)
			<-release
		}
	}
	firstErr := make(chan error, 1)
	go func() { _, err := r.Resolve(ctx, token, nil); firstErr <- err }()
	<-inFirst
	toks, _ := store.ListServiceTokens(ctx, site.ID)
	if err := store.RevokeServiceToken(ctx, site.ID, toks[0].ID); err != nil {
		t.Fatal(err)
	}
	afterErr := make(chan error, 1)
	go func() { _, err := r.Resolve(ctx, token, nil); afterErr <- err }()
	// Released once the later call has begun a lookup of its own; had it
	// joined the first one instead, it would be waiting for it (after
	// this pause, which can only make the test pass when it should not,
	// never fail when it should pass).
	select {
	case <-second:
	case <-time.After(500 * time.Millisecond):
	}
	close(release)
	if err := <-afterErr; !errors.Is(err, sites.ErrTokenInvalid) {
		t.Errorf("the call made after the revocation: %v, want ErrTokenInvalid", err)
	}
	if err := <-firstErr; err != nil {
		t.Errorf("the call that began before the revocation: %v", err)
	}
}

// spentSource returns a source bound of one lookup and a request from
// 203.0.113.7, whose bound made-up tokens have just spent: one was
// looked up and found invalid, the next refused.
func spentSource(t *testing.T, r *Resolver) (*sourcelimit.Lookups, *http.Request) {
	t.Helper()
	lookups := sourcelimit.NewLookups(sourcelimit.Limit{Burst: 1, Every: time.Hour}, nil)
	req := httptest.NewRequest(http.MethodPost, "/service/mcp", nil)
	req.RemoteAddr = "203.0.113.7:40000"
	ctx := context.Background()
	if _, err := r.Resolve(ctx, "egs_madeup1", lookups.For(req)); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Fatalf("a made-up token: %v, want ErrTokenInvalid", err)
	}
	var refused *sourcelimit.LookupsRefused
	if _, err := r.Resolve(ctx, "egs_madeup2", lookups.For(req)); !errors.As(err, &refused) {
		t.Fatalf("a made-up token past the bound: %v, want the source refused", err)
	}
	return lookups, req
}

// TestResolverLetsAnIssuedTokenPastASpentSourceOnAFreshReplica: a bot
// shares its address (a NAT, a cloud egress) with someone who sends
// made-up service tokens. On a replica the bot has not reached yet (just
// started, or just deployed), its token is new; before, it was refused
// with 429 like the made-up ones for as long as they kept coming, though
// erpgate issued it. A token erpgate issued carries a check value only
// erpgate can make, so it is looked up however spent its source is; a
// made-up token of the same shape is bounded as before.
func TestResolverLetsAnIssuedTokenPastASpentSourceOnAFreshReplica(t *testing.T) {
	store, reg, _, token := setup(t)
	r := NewResolver(store, reg, &manualInvalidations{healthy: true}, time.Hour)
	ctx := context.Background()
	lookups, req := spentSource(t, r)

	if _, err := r.Resolve(ctx, token, lookups.For(req)); err != nil {
		t.Fatalf("the bot's token, new to this replica, from a source spent by made-up tokens: %v", err)
	}

	// Made-up tokens shaped like an issued one (its length, another check
	// value; another random part) are still refused without a lookup.
	var refused *sourcelimit.LookupsRefused
	forged := token[:len(token)-2] + flipLast(token[len(token)-2:])
	if _, err := r.Resolve(ctx, forged, lookups.For(req)); !errors.As(err, &refused) {
		t.Fatalf("the bot's token with another check value: %v, want the source refused", err)
	}
	forged = token[:4] + flipLast(token[4:5]) + token[5:]
	if _, err := r.Resolve(ctx, forged, lookups.For(req)); !errors.As(err, &refused) {
		t.Fatalf("the bot's token with another random part: %v, want the source refused", err)
	}
}

// flipLast changes the last character of a base64url text to another one.
func flipLast(s string) string {
	last := s[len(s)-1]
	next := byte('A')
	if last == 'A' {
		next = 'B'
	}
	return s[:len(s)-1] + string(next)
}

// countLookups counts r's database lookups.
func countLookups(r *Resolver) *atomic.Int32 {
	var n atomic.Int32
	r.beforeLookup = func() { n.Add(1) }
	return &n
}

// TestResolverRefusesAGoneIssuedTokenFromMemory: an issued token passes
// its source's bound, so without memory a leaked token, once revoked,
// could be replayed for a database lookup each time from any address.
// The lookup that finds it revoked is the last: later calls are refused
// as invalid without one. Neither is charged to the source: a made-up
// token from there is still looked up.
func TestResolverRefusesAGoneIssuedTokenFromMemory(t *testing.T) {
	store, reg, site, token := setup(t)
	inv := &manualInvalidations{healthy: true}
	r := NewResolver(store, reg, inv, time.Hour)
	lookupsMade := countLookups(r)
	ctx := context.Background()
	lookups := sourcelimit.NewLookups(sourcelimit.Limit{Burst: 1, Every: time.Hour}, nil)
	req := httptest.NewRequest(http.MethodPost, "/service/mcp", nil)
	req.RemoteAddr = "203.0.113.7:40000"

	if _, err := r.Resolve(ctx, token, lookups.For(req)); err != nil {
		t.Fatalf("the bot's first call: %v", err)
	}
	toks, _ := store.ListServiceTokens(ctx, site.ID)
	if err := store.RevokeServiceToken(ctx, site.ID, toks[0].ID); err != nil {
		t.Fatal(err)
	}
	inv.fireSite(site.ID.String())
	for i := range 3 {
		if _, err := r.Resolve(ctx, token, lookups.For(req)); !errors.Is(err, sites.ErrTokenInvalid) {
			t.Fatalf("the revoked token, call %d: %v, want ErrTokenInvalid", i, err)
		}
	}
	if n := lookupsMade.Load(); n != 2 {
		t.Errorf("the valid call and three with the revoked token made %d lookups, want 2", n)
	}
	if _, err := r.Resolve(ctx, "egs_madeup1", lookups.For(req)); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Errorf("a made-up token after the revoked one's refusals: %v, want it looked up (ErrTokenInvalid): the source was charged for an issued token", err)
	}
}

// TestResolverBoundsAnIssuedTokenOfADisabledSite: a site may be enabled
// again, so its tokens are not forgotten as gone; but anyone can own a
// site, issue tokens and disable it, and its tokens are never cached, so
// past their first lookup they are bounded per source like made-up ones
// until they work again.
func TestResolverBoundsAnIssuedTokenOfADisabledSite(t *testing.T) {
	store, reg, site, token := setup(t)
	r := NewResolver(store, reg, &manualInvalidations{healthy: true}, time.Hour)
	ctx := context.Background()
	disabled := sites.StatusDisabled
	if _, err := store.UpdateSite(ctx, site.ID, sites.SiteUpdate{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	lookups := sourcelimit.NewLookups(sourcelimit.Limit{Burst: 1, Every: time.Hour}, nil)
	req := httptest.NewRequest(http.MethodPost, "/service/mcp", nil)
	req.RemoteAddr = "203.0.113.7:40000"
	var refused *sourcelimit.LookupsRefused
	for i := range 2 {
		if _, err := r.Resolve(ctx, token, lookups.For(req)); !errors.Is(err, sites.ErrSiteDisabled) {
			t.Fatalf("call %d with a disabled site's token: %v, want ErrSiteDisabled", i, err)
		}
	}
	if _, err := r.Resolve(ctx, token, lookups.For(req)); !errors.As(err, &refused) {
		t.Fatalf("a disabled site's token past the bound: %v, want the source refused", err)
	}
}

// TestResolverLetsATokenTaggedUnderAnOlderKeyPastASpentSource: keys are
// rotated by putting a new one first in ERPGATE_ENCRYPTION_KEYS. A token
// issued before still carries the check value of the old key, now
// second, and is still told from a made-up one on a fresh replica.
func TestResolverLetsATokenTaggedUnderAnOlderKeyPastASpentSource(t *testing.T) {
	k1 := mustKey(t)
	pool, _, reg, _, token := setupKeys(t, k1)
	k2, err := secrets.GenerateKeySpec("k2")
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := secrets.ParseKeyring(k2 + "," + k1)
	if err != nil {
		t.Fatal(err)
	}
	r := NewResolver(sites.NewStore(pool, rotated), reg, &manualInvalidations{healthy: true}, time.Hour)
	lookups, req := spentSource(t, r)
	if _, err := r.Resolve(context.Background(), token, lookups.For(req)); err != nil {
		t.Fatalf("a token tagged under the key now second in the ring, from a spent source: %v", err)
	}
}
