package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// CachedDocument returns a cached Client ID Metadata Document that has not
// expired, and whether there was one.
func (s *Store) CachedDocument(ctx context.Context, url string) (json.RawMessage, bool, error) {
	var doc json.RawMessage
	err := s.pool.QueryRow(ctx, `SELECT document FROM oauth_cimd_cache WHERE url = $1 AND expires_at > now()`, url).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("storage: read cached client metadata: %w", notFound(err))
	}
	return doc, true, nil
}

// CacheDocument keeps a document fetched just now for ttl. Both times are
// the database's, by whose clock CachedDocument decides expiry.
func (s *Store) CacheDocument(ctx context.Context, url string, doc json.RawMessage, ttl time.Duration) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO oauth_cimd_cache (url, document, fetched_at, expires_at) VALUES ($1, $2, now(), now() + $3::interval)
		ON CONFLICT (url) DO UPDATE SET document = excluded.document, fetched_at = excluded.fetched_at,
			expires_at = excluded.expires_at`, url, doc, ttl)
	if err != nil {
		return fmt.Errorf("storage: cache client metadata: %w", notFound(err))
	}
	return nil
}
