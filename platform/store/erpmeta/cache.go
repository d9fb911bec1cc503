// Package erpmeta keeps what connectors learn about each site's ERP in
// Postgres, so every replica shares it: a metadata cache with TTLs and a
// schema-knowledge index searched with full-text ranking. It implements
// connector.SiteStorage; every query is bound to one site id.
package erpmeta

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/database"
)

// Store opens site-bound caches and indexes on one pool.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a store on pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

var _ connector.SiteStorage = (*Store)(nil)

// Cache returns the metadata cache of site.
func (s *Store) Cache(site uuid.UUID) connector.Cache { return &cache{pool: s.pool, site: site} }

// SchemaIndex returns the schema index of site.
func (s *Store) SchemaIndex(site uuid.UUID) connector.SchemaIndex {
	return &index{pool: s.pool, site: site}
}

// cache is one site's rows of site_cache.
type cache struct {
	pool *pgxpool.Pool
	site uuid.UUID
}

func (c *cache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	var value []byte
	err := c.pool.QueryRow(ctx,
		`SELECT value FROM site_cache WHERE site_id = $1 AND key = $2 AND expires_at > now()`,
		c.site, key).Scan(&value)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("erpmeta: read cache entry of site %s: %w", c.site, database.Classify(err))
	}
	return value, true, nil
}

func (c *cache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if key == "" {
		return fmt.Errorf("erpmeta: cache entry of site %s: empty key", c.site)
	}
	if ttl <= 0 {
		return fmt.Errorf("erpmeta: cache entry %q of site %s: ttl must be positive", key, c.site)
	}
	if value == nil {
		value = []byte{}
	}
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		// Expired rows of this site go when the site writes: no janitor is
		// needed, and a site that stops writing holds only a few rows.
		if _, err := tx.Exec(ctx, `DELETE FROM site_cache WHERE site_id = $1 AND expires_at <= now()`, c.site); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO site_cache (site_id, key, value, stored_at, expires_at)
			VALUES ($1, $2, $3, now(), now() + make_interval(secs => $4))
			ON CONFLICT (site_id, key) DO UPDATE
			SET value = excluded.value, stored_at = excluded.stored_at, expires_at = excluded.expires_at`,
			c.site, key, value, ttl.Seconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("erpmeta: write cache entry of site %s: %w", c.site, database.Classify(err))
	}
	return nil
}

func (c *cache) Clear(ctx context.Context) (int, error) {
	var live int
	err := c.pool.QueryRow(ctx, `
		WITH gone AS (DELETE FROM site_cache WHERE site_id = $1 RETURNING expires_at)
		SELECT count(*) FILTER (WHERE expires_at > now()) FROM gone`, c.site).Scan(&live)
	if err != nil {
		return 0, fmt.Errorf("erpmeta: clear cache of site %s: %w", c.site, database.Classify(err))
	}
	return live, nil
}
