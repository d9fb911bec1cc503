package invalidate

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// UserPrefix starts the payload "user:<site id>:<subject>" that triggers
// (migration 00019) send when a user's grants or ERP token on a site
// change: an access token deleted (revoked grant, revoked refresh family,
// rotation, sign-in ended) or the user's ERP token replaced or deleted.
const UserPrefix = "user:"

// Tags say which changes make a cached value stale: any change of Site,
// and, when Subject is set, any change of that user on that site.
type Tags struct {
	Site    string
	Subject string
}

// Source is what a Cache needs from a Listener.
type Source interface {
	Healthy() bool
	OnSite(func(siteID string))
	OnReset(func())
	OnMessage(prefix string, fn func(rest string))
}

// Cache holds values read from Postgres on one replica, for at most its
// TTL, and drops them as soon as any replica changes what they were read
// from (a NOTIFY of their site or user). While the listener is
// disconnected it neither serves nor stores anything, since changes may be
// missed. A lookup during which any invalidation arrived is returned to its
// callers but not stored: it may have read a row just before a change
// whose notification then found nothing to drop. Its callers are only
// those that began before that invalidation: a Get that begins after one
// never shares a lookup begun before it, and while the listener is down,
// when no invalidation can tell it of a change made elsewhere, no Get
// shares a lookup.
type Cache[V any] struct {
	src Source
	ttl time.Duration
	now func() time.Time

	group   singleflight.Group
	mu      sync.Mutex
	entries map[string]cacheEntry[V]
	// drops counts invalidations: a Get loads in the generation it read,
	// shares loads only within it, and stores only if it is still current.
	drops uint64
	// stored counts insertions; every 1024th sweeps out expired values.
	stored uint64
	// alone numbers the loads of Gets made while the listener is down,
	// which share no load (start).
	alone atomic.Uint64

	// dropOn, once RefreshAhead set it, turns refreshing ahead on and says
	// which reload errors remove a value at once; refreshing holds the
	// keys being reloaded in the background.
	dropOn     func(error) bool
	refreshing map[string]bool

	// onJoin, when set (tests), runs once a Get that found no value has
	// begun its load or joined one.
	onJoin func()
}

type cacheEntry[V any] struct {
	v    V
	tags Tags
	// refreshAt is half-way to the TTL: a value used after it is reloaded
	// in the background (RefreshAhead).
	refreshAt, expires time.Time
}

// NewCache returns a cache fed by src; a nil src or a ttl of zero turns
// caching off (every Get loads).
func NewCache[V any](src Source, ttl time.Duration) *Cache[V] {
	c := &Cache[V]{src: src, ttl: ttl, now: time.Now, entries: map[string]cacheEntry[V]{}}
	if src != nil {
		src.OnSite(c.DropSite)
		src.OnMessage(UserPrefix, func(rest string) {
			site, subject, ok := strings.Cut(rest, ":")
			if !ok {
				return
			}
			c.DropUser(site, subject)
		})
		src.OnReset(func() { c.drop(func(Tags) bool { return true }) })
	}
	return c
}

// RefreshAhead makes the cache reload in the background a value used after
// half its TTL, so that a key in steady use never makes a caller wait for
// its load. A reload failing with an error for which drop reports true
// (the token was revoked) removes the value at once; any other error
// keeps it until it expires. Call it before the first Get.
func (c *Cache[V]) RefreshAhead(drop func(error) bool) {
	c.dropOn = drop
	c.refreshing = map[string]bool{}
}

// SetClock replaces the cache's clock (tests). Call it before the first
// Get.
func (c *Cache[V]) SetClock(now func() time.Time) { c.now = now }

// Load reads what Get caches: the value, its tags, and until when it may
// be used at most (zero: for the TTL).
type Load[V any] func(ctx context.Context) (v V, tags Tags, until time.Time, err error)

// Get returns the value stored under key, or loads it. Concurrent Gets of
// one key share one load while the listener is up, unless an
// invalidation came between their starts: a Get begun after DropUser,
// DropSite or a reset returned never gets the value of a load (or
// background reload) begun before. Errors are not cached; a caller whose
// ctx ends gets its error at once.
func (c *Cache[V]) Get(ctx context.Context, key string, load Load[V]) (V, error) {
	caching := c.caching()
	var gen uint64
	if !caching {
		c.mu.Lock()
		gen = c.drops
		c.mu.Unlock()
	} else {
		now := c.now()
		c.mu.Lock()
		gen = c.drops
		e, ok := c.entries[key]
		fresh := ok && now.Before(e.expires)
		refresh := fresh && c.dropOn != nil && !now.Before(e.refreshAt) && !c.refreshing[key]
		if refresh {
			c.refreshing[key] = true
		}
		c.mu.Unlock()
		if refresh {
			go c.refresh(ctx, key, gen, load)
		}
		if fresh {
			return e.v, nil
		}
	}
	ch := c.start(ctx, key, gen, load, caching)
	if c.onJoin != nil {
		c.onJoin()
	}
	var zero V
	select {
	case <-ctx.Done():
		return zero, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return zero, r.Err
		}
		return r.Val.(V), nil
	}
}

// refresh reloads key in the background (RefreshAhead), in generation gen.
func (c *Cache[V]) refresh(ctx context.Context, key string, gen uint64, load Load[V]) {
	r := <-c.start(ctx, key, gen, load, true)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.refreshing, key)
	if r.Err != nil && c.dropOn(r.Err) {
		c.drops++
		delete(c.entries, key)
	}
}

// start begins the load of key in generation gen (drops as the caller
// read it), or joins the one of that generation under way. One caller
// giving up must not fail the others sharing the load: it runs detached
// from any caller, within loadTimeout.
func (c *Cache[V]) start(ctx context.Context, key string, gen uint64, load Load[V], caching bool) <-chan singleflight.Result {
	// The flight's name is key, a NUL and gen in decimal (and, when not
	// caching, a slash and a number of its own): the last NUL separates
	// them, so no two (key, gen) share one. The string(bytes)
	// in the concatenation is not copied first (one allocation).
	var n [41]byte
	name := strconv.AppendUint(n[:0], gen, 10)
	if !caching {
		// No listener, or it is down: nothing separates a Get from a
		// load begun before a change made elsewhere, so each Get loads
		// for itself ("<gen>/<n>", still NUL-free).
		name = strconv.AppendUint(append(name, '/'), c.alone.Add(1), 10)
	}
	flight := key + "\x00" + string(name)
	return c.group.DoChan(flight, func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		v, tags, until, err := load(lctx)
		if err != nil {
			return nil, err
		}
		now := c.now()
		expires := now.Add(c.ttl)
		if !until.IsZero() && until.Before(expires) {
			expires = until
		}
		if caching && c.caching() {
			c.mu.Lock()
			if c.drops == gen {
				c.entries[key] = cacheEntry[V]{v: v, tags: tags, refreshAt: now.Add(c.ttl / 2), expires: expires}
				c.stored++
				if c.stored%1024 == 0 {
					c.sweepLocked()
				}
			}
			c.mu.Unlock()
		}
		return v, nil
	})
}

// loadTimeout bounds one shared load.
const loadTimeout = 10 * time.Second

// DropUser drops the values tagged with the user on the site. The replica
// that changes a user calls it before going on, so the change applies at
// once here; the others learn of it from the notification.
func (c *Cache[V]) DropUser(site, subject string) {
	c.drop(func(t Tags) bool { return t.Site == site && t.Subject == subject })
}

// DropSite drops the values tagged with the site.
func (c *Cache[V]) DropSite(site string) { c.drop(func(t Tags) bool { return t.Site == site }) }

func (c *Cache[V]) drop(match func(Tags) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drops++
	for k, e := range c.entries {
		if match(e.tags) {
			delete(c.entries, k)
		}
	}
}

func (c *Cache[V]) sweepLocked() {
	now := c.now()
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
}

// Len is how many values are stored (tests).
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func (c *Cache[V]) caching() bool { return c.src != nil && c.ttl > 0 && c.src.Healthy() }
