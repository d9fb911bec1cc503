package servicemcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/invalidate"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// errNoCredential means the token's site has no API credential any more.
var errNoCredential = errors.New("servicemcp: the site has no API credential")

// errTokenGone is the refusal of an issued token this replica found
// unknown, revoked or expired before: ErrTokenInvalid, without a lookup.
var errTokenGone = fmt.Errorf("servicemcp: service token found unusable before: %w", sites.ErrTokenInvalid)

// resolved is everything a service call needs, derived from one token.
type resolved struct {
	tokenID uuid.UUID
	site    connector.Site
	auth    connector.Authorizer
	// expiresAt is when the token stops working (zero: never). Every
	// call checks it, cached or not: an entry outlives no expiry.
	expiresAt time.Time
}

// expiredError is the refusal of an expired token: ErrTokenInvalid, as for
// a revoked one.
func (e *resolved) expiredError() error {
	return fmt.Errorf("servicemcp: service token %s expired at %s: %w", e.tokenID, e.expiresAt.UTC().Format(time.RFC3339), sites.ErrTokenInvalid)
}

// expired reports whether the token has expired at now.
func (e *resolved) expired(now time.Time) bool {
	return !e.expiresAt.IsZero() && !now.Before(e.expiresAt)
}

// Resolver turns a presented service token into a site and an authorizer.
// With an invalidation source it caches results (token lookup and
// credential decryption are the per-call cost) in an invalidate.Cache: for
// at most TTL, dropped as soon as the token's site changes on any replica,
// bypassed whenever invalidations might be missed, and looked up again in
// the background when used after half its TTL, so a token in steady use
// never makes a call wait for the lookup. Concurrent first calls with one
// token share one lookup (while invalidations arrive), which outlives a
// caller that gives up.
type Resolver struct {
	store    *sites.Store
	registry *connector.Registry
	cache    *invalidate.Cache[*resolved]

	// known holds the hashes of the tokens without a check value (issued
	// before tokens carried one) this replica found valid, so that a
	// source's bound on invalid tokens never locks out such a token
	// already shown to be valid (see Resolve). Only a valid token enters
	// it, so it grows with the tokens in use, not with an attack.
	known sourcelimit.TokenSet
	// gone holds the hashes of issued tokens (their check value verified)
	// found unknown, revoked or expired, which can never work again: they
	// are refused without a lookup. bounded holds those found of a
	// disabled site or of one without a credential, which may work again:
	// they are looked up within their source's bound until they do. Only
	// tokens erpgate issued enter either, so neither grows with an attack.
	gone, bounded sourcelimit.TokenSet

	// now is the resolver's clock, shared with its cache (tests replace
	// it with setClock).
	now func() time.Time

	// beforeLookup and afterLookup, when set (tests), run before the
	// lookup and between the lookup and caching.
	beforeLookup, afterLookup func()
}

// NewResolver returns a resolver; src may be nil to disable caching.
func NewResolver(store *sites.Store, registry *connector.Registry, src invalidate.Source, ttl time.Duration) *Resolver {
	r := &Resolver{store: store, registry: registry, now: time.Now}
	r.cache = invalidate.NewCache[*resolved](src, ttl)
	// A background lookup that finds the token gone drops its entry at
	// once; a transient failure keeps it until it expires.
	r.cache.RefreshAhead(func(err error) bool {
		return errors.Is(err, sites.ErrTokenInvalid) || errors.Is(err, sites.ErrSiteDisabled) || errors.Is(err, errNoCredential)
	})
	return r
}

// setClock replaces the clock of the resolver and its cache (tests). Call
// it before the first Resolve.
func (r *Resolver) setClock(now func() time.Time) {
	r.now = now
	r.cache.SetClock(now)
}

// Forget drops the cached entries of a site. The replica that changes a
// site calls it (through sites.Store.OnChange) before acknowledging the
// change, so the change applies at once here; other replicas learn of it
// through the invalidation source.
func (r *Resolver) Forget(siteID uuid.UUID) { r.cache.DropSite(siteID.String()) }

// Resolve returns the site and authorizer for token. Errors are those of
// sites.Store.ResolveServiceToken, errNoCredential, admit's refusal, or
// infrastructure errors. A token that is not cached is looked up only if
// admit (nil: always) lets its source make one more lookup; the lookup is
// charged to the source only when the token is unknown, revoked or
// expired.
//
// A token erpgate issued (its check value verifies under a key of the
// ring, sites.Store.IssuedServiceToken) is looked up without asking admit
// and never charged: sources are shared (a NAT, an AI platform's egress),
// and whoever else sends made-up tokens from there must not lock out a
// bot, on a replica it has not reached yet (just started or deployed) any
// more than on one where its entry is merely gone (its site changed, its
// TTL ran out, invalidations are down). Only erpgate can make such a
// token, so this costs a lookup per token it issued. One found unknown,
// revoked or expired is remembered and refused from then on without a
// lookup (a leaked revoked token replayed costs the database nothing);
// one found of a disabled site or of a site without a credential is
// bounded like any other until it works again.
//
// A token without a check value (issued before tokens carried one) this
// replica has found valid before is likewise looked up even when admit
// refuses its source; once it fails it is forgotten, and bounded again.
//
// A token that expires is refused from its expiry on, by this replica's
// clock, even while its entry is cached: the entry carries the expiry, is
// stored no longer than until it, and is checked on every call.
func (r *Resolver) Resolve(ctx context.Context, token string, admit sourcelimit.Admit) (*resolved, error) {
	key := secrets.HashToken(token)
	e, err := r.cache.Get(ctx, string(key[:]), func(ctx context.Context) (*resolved, invalidate.Tags, time.Time, error) {
		issued := r.store.IssuedServiceToken(token)
		if issued && r.gone.Has(key) {
			return nil, invalidate.Tags{}, time.Time{}, errTokenGone
		}
		charge := func() {}
		if admit != nil && (!issued || r.bounded.Has(key)) {
			var err error
			if charge, err = admit(); err != nil {
				if issued || !r.known.Has(key) {
					return nil, invalidate.Tags{}, time.Time{}, err
				}
				charge = func() {}
			}
		}
		e, err := r.load(ctx, token)
		if err == nil && e.expired(r.now()) {
			// The database still found it valid (its clock a little
			// behind this replica's).
			err = e.expiredError()
		}
		if err != nil && !database.IsUnavailable(err) {
			// A token that cannot be served (unknown, revoked, expired, of a
			// disabled site or of one without a credential) is never
			// cached: each request with it is a lookup, charged alike
			// unless erpgate issued it and it was not yet bounded.
			r.known.Remove(key)
			if issued {
				if errors.Is(err, sites.ErrTokenInvalid) {
					r.gone.Add(key)
					r.bounded.Remove(key)
				} else {
					r.bounded.Add(key)
				}
			}
			charge()
		}
		if err != nil {
			return nil, invalidate.Tags{}, time.Time{}, err
		}
		if issued {
			r.bounded.Remove(key)
		} else {
			r.known.Add(key)
		}
		return e, invalidate.Tags{Site: e.site.ID.String()}, e.expiresAt, nil
	})
	if err != nil {
		return nil, err
	}
	if e.expired(r.now()) {
		// Cached before the expiry, used after it. The entry goes at its
		// expiry anyway; the token is no longer one found valid, and an
		// issued one will never work again.
		r.known.Remove(key)
		if r.store.IssuedServiceToken(token) {
			r.gone.Add(key)
		}
		return nil, e.expiredError()
	}
	return e, nil
}

func (r *Resolver) load(ctx context.Context, token string) (*resolved, error) {
	if r.beforeLookup != nil {
		r.beforeLookup()
	}
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
	if r.afterLookup != nil {
		r.afterLookup()
	}
	e := &resolved{tokenID: tok.ID, site: csite, auth: auth}
	if tok.ExpiresAt != nil {
		e.expiresAt = *tok.ExpiresAt
	}
	return e, nil
}
