package servicemcp

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/secrets"
	"github.com/erpgate/erpgate/platform/sites"
)

// errNoCredential means the token's site has no API credential any more.
var errNoCredential = errors.New("servicemcp: the site has no API credential")

// resolved is everything a service call needs, derived from one token.
type resolved struct {
	tokenID uuid.UUID
	site    connector.Site
	auth    connector.Authorizer
	// After refreshAt a call still gets the entry, and the lookup is
	// made again in the background; after expires the call waits for it.
	refreshAt, expires time.Time
}

// Invalidations is what the resolver needs from platform/invalidate.
type Invalidations interface {
	Healthy() bool
	OnSite(func(siteID string))
	OnReset(func())
}

// Resolver turns a presented service token into a site and an authorizer.
// With an Invalidations source it caches results (token lookup and
// credential decryption are the per-call cost) for at most TTL, drops a
// site's entries as soon as that site changes on any replica, and bypasses
// the cache whenever invalidations might be missed. An entry used after
// half its TTL is looked up again in the background, so a token in steady
// use never makes a call wait for the lookup.
type Resolver struct {
	store    *sites.Store
	registry *connector.Registry
	inv      Invalidations
	ttl      time.Duration

	group   singleflight.Group
	mu      sync.Mutex
	entries map[[32]byte]*resolved
	// drops counts invalidations (dropSite, dropAll). A lookup caches its
	// result only if none arrived while it ran: one that did may be for a
	// change the lookup read too early to see, and dropped nothing because
	// the result was not cached yet.
	drops uint64

	// refreshing holds the tokens being looked up again in the background.
	refreshing map[[32]byte]bool

	// afterLookup, when set (tests), runs between the lookup and caching.
	afterLookup func()
	// now is the clock (tests replace it).
	now func() time.Time
}

// NewResolver returns a resolver; inv may be nil to disable caching.
func NewResolver(store *sites.Store, registry *connector.Registry, inv Invalidations, ttl time.Duration) *Resolver {
	r := &Resolver{store: store, registry: registry, inv: inv, ttl: ttl,
		entries: map[[32]byte]*resolved{}, refreshing: map[[32]byte]bool{}, now: time.Now}
	if inv != nil {
		inv.OnSite(r.dropSite)
		inv.OnReset(r.dropAll)
	}
	return r
}

// Forget drops the cached entries of a site. The replica that changes a
// site calls it (through sites.Store.OnChange) before acknowledging the
// change, so the change applies at once here; other replicas learn of it
// through Invalidations.
func (r *Resolver) Forget(siteID uuid.UUID) { r.dropSite(siteID.String()) }

func (r *Resolver) dropSite(siteID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drops++
	for k, e := range r.entries {
		if e.site.ID.String() == siteID {
			delete(r.entries, k)
		}
	}
}

func (r *Resolver) dropAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drops++
	clear(r.entries)
}

func (r *Resolver) caching() bool { return r.inv != nil && r.ttl > 0 && r.inv.Healthy() }

// Resolve returns the site and authorizer for token. Errors are those of
// sites.Store.ResolveServiceToken, errNoCredential, or infrastructure errors.
func (r *Resolver) Resolve(ctx context.Context, token string) (*resolved, error) {
	key := secrets.HashToken(token)
	if r.caching() {
		now := r.now()
		r.mu.Lock()
		e := r.entries[key]
		refresh := e != nil && now.Before(e.expires) && !now.Before(e.refreshAt) && !r.refreshing[key]
		if refresh {
			r.refreshing[key] = true
		}
		r.mu.Unlock()
		if refresh {
			go r.refresh(token, key)
		}
		if e != nil && now.Before(e.expires) {
			return e, nil
		}
	}
	// Concurrent first calls with one token share one lookup.
	v, err, _ := r.group.Do(string(key[:]), func() (any, error) {
		return r.load(ctx, token, key)
	})
	if err != nil {
		return nil, err
	}
	return v.(*resolved), nil
}

// refresh looks token up again in the background (see Resolve). If the
// token turned out to be invalid, its entry goes at once.
func (r *Resolver) refresh(token string, key [32]byte) {
	defer func() {
		r.mu.Lock()
		delete(r.refreshing, key)
		r.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	_, err, _ := r.group.Do(string(key[:]), func() (any, error) {
		return r.load(ctx, token, key)
	})
	if errors.Is(err, sites.ErrTokenInvalid) || errors.Is(err, sites.ErrSiteDisabled) || errors.Is(err, errNoCredential) {
		r.mu.Lock()
		delete(r.entries, key)
		r.mu.Unlock()
	}
}

// refreshTimeout bounds a background lookup.
const refreshTimeout = 10 * time.Second

func (r *Resolver) load(ctx context.Context, token string, key [32]byte) (*resolved, error) {
	// Read healthiness and the invalidations so far before the lookup: an
	// invalidation that arrives during the lookup must not be overtaken by
	// a stale insert.
	cache := r.caching()
	r.mu.Lock()
	drops := r.drops
	r.mu.Unlock()
	tok, site, err := r.store.ResolveServiceToken(ctx, token)
	if err != nil {
		return nil, err
	}
	csite, err := site.Connector()
	if err != nil {
		return nil, err
	}
	conn, ok := r.registry.Get(site.Kind)
	if !ok {
		return nil, errors.New("servicemcp: no connector for kind " + site.Kind)
	}
	_, fields, err := r.store.GetConnection(ctx, site.ID, sites.ConnectionAPIToken)
	if errors.Is(err, sites.ErrNotFound) {
		return nil, errNoCredential
	}
	if err != nil {
		return nil, err
	}
	auth, err := conn.APIAuthorizer(csite, fields)
	if err != nil {
		return nil, err
	}
	now := r.now()
	e := &resolved{tokenID: tok.ID, site: csite, auth: auth, refreshAt: now.Add(r.ttl / 2), expires: now.Add(r.ttl)}
	if r.afterLookup != nil {
		r.afterLookup()
	}
	if cache && r.caching() {
		r.mu.Lock()
		if r.drops == drops {
			r.entries[key] = e
		}
		r.mu.Unlock()
	}
	return e, nil
}
