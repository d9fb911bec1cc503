package acumatica

import (
	"context"
	"time"
)

// What the connector caches per site (connector.Call.Cache, shared by
// every replica), and for how long. Only what Acumatica says about itself
// is cached — it is the same for every user of the site — never records.
const (
	cacheKeyEndpoints = "entity-root"
	ttlEndpoints      = time.Hour
	// ttlModel: an endpoint's OpenAPI document changes only when the
	// instance is upgraded or a customisation is published.
	ttlModel = 24 * time.Hour
	// ttlInquiries: inquiries are published and exposed more often.
	ttlInquiries = time.Hour
	// ttlIndex: the schema index is rebuilt from the two documents above.
	ttlIndex = 24 * time.Hour
)

// modelKey is the cache key of the configured endpoint's compact OpenAPI
// model.
func (c *client) modelKey() string { return "openapi/" + c.set.endpoint() }

// inquiriesKey is the cache key of the tenant's GI $metadata model.
func (c *client) inquiriesKey() string { return "gi-metadata/" + c.set.Tenant }

// cached reads a cache entry. Without a cache, or when the cache fails, it
// is a miss: the caller asks Acumatica.
func (c *client) cached(ctx context.Context, key string) ([]byte, bool) {
	if c.call.Cache == nil {
		return nil, false
	}
	v, ok, err := c.call.Cache.Get(ctx, key)
	if err != nil {
		return nil, false
	}
	return v, ok
}

// store writes a cache entry; a failure only costs a later refetch.
func (c *client) store(ctx context.Context, key string, value []byte, ttl time.Duration) {
	if c.call.Cache == nil {
		return
	}
	_ = c.call.Cache.Set(ctx, key, value, ttl)
}

// shared runs fetch once per site and key in this process, however many
// calls ask at once, so a cold cache costs one download of a large
// document, not one per concurrent call.
func (c *client) shared(key string, fetch func() ([]byte, error)) ([]byte, error) {
	v, err, _ := c.conn.fetches.Do(c.site.ID.String()+"\x00"+key, func() (any, error) { return fetch() })
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}
