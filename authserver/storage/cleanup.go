package storage

import (
	"context"
	"fmt"
	"time"
)

// CleanupPolicy says what one janitor pass removes.
type CleanupPolicy struct {
	// TokensExpiredBefore: codes and tokens that expired before it.
	TokensExpiredBefore time.Time
	// FlowsExpiredBefore: sign-in flows that expired before it.
	FlowsExpiredBefore time.Time
	// DocumentsExpiredBefore: cached client metadata documents that
	// expired before it.
	DocumentsExpiredBefore time.Time
	// ClientsNeverUsedSince: dynamically registered clients registered
	// before it that never received a token.
	ClientsNeverUsedSince time.Time
	// ClientsIdleSince: clients whose last token is older than it.
	ClientsIdleSince time.Time
	// Batch bounds the rows each kind loses in one pass.
	Batch int
}

// CleanupCounts says how many rows of each kind a pass removed.
type CleanupCounts struct {
	Tokens, Flows, Documents, Clients int64
}

// Full reports whether some kind lost a whole batch, so another pass may
// find more.
func (c CleanupCounts) Full(batch int) bool {
	b := int64(batch)
	return c.Tokens >= b || c.Flows >= b || c.Documents >= b || c.Clients >= b
}

// CleanUp removes, in bounded batches, what is no longer of use: expired
// codes and tokens, expired sign-in flows, expired client metadata
// documents, and registered clients nobody uses (with their consents and
// tokens). Any number of replicas may run it at once. It is deliberately
// not site-scoped: it removes only what has expired for every site.
func (s *Store) CleanUp(ctx context.Context, p CleanupPolicy) (CleanupCounts, error) {
	var c CleanupCounts
	var err error
	if c.Tokens, err = s.DeleteExpired(ctx, p.TokensExpiredBefore, p.Batch); err != nil {
		return c, err
	}
	tag, err := s.pool.Exec(ctx, `
		DELETE FROM oauth_signin_flows WHERE ctid IN (
			SELECT ctid FROM oauth_signin_flows WHERE expires_at < $1 LIMIT $2)`, p.FlowsExpiredBefore, p.Batch)
	if err != nil {
		return c, fmt.Errorf("storage: delete expired sign-in flows: %w", notFound(err))
	}
	c.Flows = tag.RowsAffected()
	tag, err = s.pool.Exec(ctx, `
		DELETE FROM oauth_cimd_cache WHERE ctid IN (
			SELECT ctid FROM oauth_cimd_cache WHERE expires_at < $1 LIMIT $2)`, p.DocumentsExpiredBefore, p.Batch)
	if err != nil {
		return c, fmt.Errorf("storage: delete expired client metadata documents: %w", notFound(err))
	}
	c.Documents = tag.RowsAffected()
	err = s.pool.QueryRow(ctx, `
		WITH gone AS (
			DELETE FROM oauth_clients WHERE id IN (
				SELECT id FROM oauth_clients
				WHERE (last_used_at IS NULL AND created_at < $1) OR last_used_at < $2
				LIMIT $3)
			RETURNING id),
		consents AS (DELETE FROM oauth_consents WHERE client_id IN (SELECT id FROM gone)),
		tokens AS (DELETE FROM oauth_tokens WHERE client_id IN (SELECT id FROM gone))
		SELECT count(*) FROM gone`, p.ClientsNeverUsedSince, p.ClientsIdleSince, p.Batch).Scan(&c.Clients)
	if err != nil {
		return c, fmt.Errorf("storage: delete unused clients: %w", notFound(err))
	}
	return c, nil
}

// markClientUsed notes that a registered client received a token, at most
// once an hour per client (a URL client id has no row and is unaffected).
func (s *Store) markClientUsed(ctx context.Context, clientID string) error {
	if _, err := s.db(ctx).Exec(ctx, `
		UPDATE oauth_clients SET last_used_at = now()
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 hour')`, clientID); err != nil {
		return fmt.Errorf("storage: note client use: %w", notFound(err))
	}
	return nil
}
