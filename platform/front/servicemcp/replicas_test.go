package servicemcp

import (
	"context"
	"errors"
	neturl "net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/invalidate"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// replica is one gateway's share of the service path: its own pool, its
// own invalidation listener (a real LISTEN connection) and its own
// resolver, on the database every replica shares.
type replica struct {
	store    *sites.Store
	pool     *pgxpool.Pool
	listener *invalidate.Listener
	resolver *Resolver
}

// twoReplicas starts two replicas on one migrated database, as
// cmd/erpgate wires them (the store tells its own resolver of its
// changes; the listener tells it of everyone's), and returns them with
// the site acme (API key k-1) and a service token of it.
func twoReplicas(t *testing.T) (a, b *replica, site sites.Site, token string) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	keys, err := secrets.ParseKeyring(mustKey(t))
	if err != nil {
		t.Fatal(err)
	}
	reg := connector.NewRegistry()
	reg.MustRegister(stubERP{})
	start := func() *replica {
		// The pools name themselves, so that a test can tell the
		// listeners' connections from theirs.
		pool, err := database.Open(context.Background(), withParam(url, "application_name", poolName))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		r := &replica{store: sites.NewStore(pool, keys), pool: pool, listener: invalidate.NewListener(url, nil)}
		r.resolver = NewResolver(r.store, reg, r.listener, 30*time.Second)
		r.store.OnChange(r.resolver.Forget)
		go r.listener.Run(t.Context())
		eventually(t, "the listener", r.listener.Healthy)
		return r
	}
	a, b = start(), start()
	ctx := context.Background()
	site, err = a.store.CreateSite(ctx, sites.NewSite{Slug: "acme", Kind: "stuberp", DisplayName: "Acme", BaseURL: "https://erp.acme.example"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.PutConnection(ctx, site.ID, sites.ConnectionAPIToken, "bot", map[string]secrets.Secret{"key": "k-1"}); err != nil {
		t.Fatal(err)
	}
	_, tok, err := a.store.IssueServiceToken(ctx, site.ID, "bot")
	if err != nil {
		t.Fatal(err)
	}
	return a, b, site, tok.Reveal()
}

// siteChanges are the changes after which a cached service token must
// stop working as it was: refused (want an error), or served with the new
// API key (want "").
var siteChanges = []struct {
	name   string
	change func(ctx context.Context, s *sites.Store, site uuid.UUID) error
	// refused is the error the token must get afterwards, or nil when it
	// must be served with key k-2.
	refused error
}{
	{"token revoked", func(ctx context.Context, s *sites.Store, site uuid.UUID) error {
		toks, err := s.ListServiceTokens(ctx, site)
		if err != nil {
			return err
		}
		return s.RevokeServiceToken(ctx, site, toks[0].ID)
	}, sites.ErrTokenInvalid},
	{"site disabled", func(ctx context.Context, s *sites.Store, site uuid.UUID) error {
		disabled := sites.StatusDisabled
		_, err := s.UpdateSite(ctx, site, sites.SiteUpdate{Status: &disabled})
		return err
	}, sites.ErrSiteDisabled},
	{"API credential deleted", func(ctx context.Context, s *sites.Store, site uuid.UUID) error {
		return s.DeleteConnection(ctx, site, sites.ConnectionAPIToken)
	}, errNoCredential},
	{"API credential replaced", func(ctx context.Context, s *sites.Store, site uuid.UUID) error {
		_, err := s.PutConnection(ctx, site, sites.ConnectionAPIToken, "bot", map[string]secrets.Secret{"key": "k-2"})
		return err
	}, nil},
	{"site deleted", func(ctx context.Context, s *sites.Store, site uuid.UUID) error {
		return s.DeleteSite(ctx, site)
	}, sites.ErrTokenInvalid},
}

// stale reports why the resolver's answer for token still reflects the
// site as it was before change, or "" once it reflects the change.
func stale(t *testing.T, r *Resolver, token string, refused error) string {
	t.Helper()
	e, err := r.Resolve(context.Background(), token, nil)
	switch {
	case refused != nil && errors.Is(err, refused):
		return ""
	case refused != nil && err == nil:
		return "the token is still served"
	case refused == nil && err == nil && authOf(t, e) == "k-2":
		return ""
	case refused == nil && err == nil:
		return "the token is served with the replaced API key"
	default:
		return "unexpected error: " + err.Error()
	}
}

// TestEveryChangeReachesTheOtherReplica: a bot's token is resolved (and
// cached, for 30 s) on two replicas. Each change that ends or alters what
// the token may do, made through replica A, applies on A at once and on B
// as soon as the notification arrives: well within the cache's 30 s.
func TestEveryChangeReachesTheOtherReplica(t *testing.T) {
	for _, c := range siteChanges {
		t.Run(c.name, func(t *testing.T) {
			a, b, site, token := twoReplicas(t)
			ctx := context.Background()
			for _, r := range []*replica{a, b} {
				if e, err := r.resolver.Resolve(ctx, token, nil); err != nil || authOf(t, e) != "k-1" {
					t.Fatalf("before the change: %v", err)
				}
			}
			if err := c.change(ctx, a.store, site.ID); err != nil {
				t.Fatal(err)
			}
			if why := stale(t, a.resolver, token, c.refused); why != "" {
				t.Fatalf("on the replica that made the change: %s", why)
			}
			waitUntil(t, 10*time.Second, "replica B", func() string { return stale(t, b.resolver, token, c.refused) })
		})
	}
}

// TestAChangeWhileTheListenerReconnectsIsNotMissed: replica B's listening
// connection is killed (pg_terminate_backend), and the change is made
// while B may still be reconnecting, when its notification has no
// listener on B to reach. B must not serve what it cached before.
func TestAChangeWhileTheListenerReconnectsIsNotMissed(t *testing.T) {
	for _, c := range siteChanges {
		t.Run(c.name, func(t *testing.T) {
			a, b, site, token := twoReplicas(t)
			ctx := context.Background()
			for _, r := range []*replica{a, b} {
				if _, err := r.resolver.Resolve(ctx, token, nil); err != nil {
					t.Fatalf("before the change: %v", err)
				}
			}
			// Both replicas' listening connections (nothing tells them apart).
			var killed int
			if err := a.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND application_name <> $1 AND backend_type = 'client backend'`, poolName).Scan(&killed); err != nil {
				t.Fatal(err)
			}
			if killed != 2 {
				t.Fatalf("killed %d listening connections, want both replicas'", killed)
			}
			if err := c.change(ctx, a.store, site.ID); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, 10*time.Second, "replica B", func() string { return stale(t, b.resolver, token, c.refused) })
			eventually(t, "B's listener to reconnect", b.listener.Healthy)
			if why := stale(t, b.resolver, token, c.refused); why != "" {
				t.Fatalf("replica B after its listener reconnected: %s", why)
			}
		})
	}
}

// poolName is the application_name of the replicas' pools.
const poolName = "erpgate-test-pool"

// withParam returns the database URL u with the query parameter k=v.
func withParam(u, k, v string) string {
	p, err := neturl.Parse(u)
	if err != nil {
		panic(err)
	}
	q := p.Query()
	q.Set(k, v)
	p.RawQuery = q.Encode()
	return p.String()
}

// waitUntil polls check until it returns "", for at most d, and fails
// with its last answer.
func waitUntil(t *testing.T, d time.Duration, what string, check func() string) {
	t.Helper()
	last := check()
	for deadline := time.Now().Add(d); last != ""; last = check() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s, still after %v", what, last, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestALookupOvertakenByARevocationElsewhereIsNotCached: replica B reads
// the token as valid; before it caches what it read, the token is revoked
// through replica A and A's notification reaches B (finding nothing to
// drop yet). The call that began before the revocation is served; the
// next one on B is refused, not served from a cache filled after the
// revocation had arrived.
func TestALookupOvertakenByARevocationElsewhereIsNotCached(t *testing.T) {
	a, b, site, token := twoReplicas(t)
	ctx := context.Background()
	arrived := make(chan string, 16)
	b.listener.OnSite(func(id string) { arrived <- id })
	b.resolver.afterLookup = func() {
		b.resolver.afterLookup = nil // once
		toks, err := a.store.ListServiceTokens(ctx, site.ID)
		if err != nil {
			t.Error(err)
			return
		}
		if err := a.store.RevokeServiceToken(ctx, site.ID, toks[0].ID); err != nil {
			t.Error(err)
			return
		}
		for id := range arrived {
			if id == site.ID.String() {
				return
			}
		}
	}
	if _, err := b.resolver.Resolve(ctx, token, nil); err != nil {
		t.Fatalf("the call that began before the revocation: %v", err)
	}
	if _, err := b.resolver.Resolve(ctx, token, nil); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Fatalf("the call after it on B: %v, want ErrTokenInvalid (a lookup overtaken by the revocation was cached)", err)
	}
}

// TestATokenChangedByHandReachesEveryReplica: an operator changes a
// token's row by hand (migration 00005: any change to a site's tokens,
// through erpgate or by hand, notifies every replica): ends it now by its
// expiry, or moves it to another site. Both replicas cached it (for
// 30 s); neither made the change, so only the notification can tell
// them.
func TestATokenChangedByHandReachesEveryReplica(t *testing.T) {
	for _, c := range []struct {
		name string
		sql  string
		// check reports what is still stale, "" once the change applies.
		check func(t *testing.T, r *Resolver, token string, globex sites.Site) string
	}{
		{"expired now", `UPDATE service_tokens SET expires_at = now()`, func(t *testing.T, r *Resolver, token string, _ sites.Site) string {
			return stale(t, r, token, sites.ErrTokenInvalid)
		}},
		{"moved to another site", `UPDATE service_tokens SET site_id = $1`, func(t *testing.T, r *Resolver, token string, globex sites.Site) string {
			e, err := r.Resolve(context.Background(), token, nil)
			switch {
			case err != nil:
				return "unexpected error: " + err.Error()
			case e.site.ID != globex.ID || authOf(t, e) != "k-2":
				return "the token still runs as " + e.site.Slug + " with its credential"
			}
			return ""
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b, _, token := twoReplicas(t)
			ctx := context.Background()
			globex, err := a.store.CreateSite(ctx, sites.NewSite{Slug: "globex", Kind: "stuberp", DisplayName: "Globex", BaseURL: "https://erp.globex.example"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.store.PutConnection(ctx, globex.ID, sites.ConnectionAPIToken, "bot", map[string]secrets.Secret{"key": "k-2"}); err != nil {
				t.Fatal(err)
			}
			for _, r := range []*replica{a, b} {
				if e, err := r.resolver.Resolve(ctx, token, nil); err != nil || authOf(t, e) != "k-1" {
					t.Fatalf("before the change: %v", err)
				}
			}
			args := []any{}
			if c.name == "moved to another site" {
				args = append(args, globex.ID)
			}
			if _, err := a.pool.Exec(ctx, c.sql, args...); err != nil {
				t.Fatal(err)
			}
			for name, r := range map[string]*replica{"A": a, "B": b} {
				waitUntil(t, 10*time.Second, "replica "+name, func() string { return c.check(t, r.resolver, token, globex) })
			}
		})
	}
}
