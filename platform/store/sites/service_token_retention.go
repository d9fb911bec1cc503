package sites

import (
	"context"
	"fmt"
	"time"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// pruneTokensBatch is the most tokens one statement of PruneServiceTokens
// deletes, and maxPruneTokensBatches the most statements one run makes: a
// backlog (retention first turned on) is deleted over several runs of
// short statements, never by one that holds the table for long.
const (
	pruneTokensBatch      = 5000
	maxPruneTokensBatches = 40
)

// pruneTokensLock is the advisory lock of a pruning statement: one
// replica at a time.
const pruneTokensLock int64 = 0x6572706761746504 // "erpgate" 04

// pruneEndedTokens deletes up to $2 of the tokens that ended (were revoked
// or expired, whichever came first) before $1. It looks for them site by
// site in the index of ended tokens (service_tokens_site_ended_idx), where
// those that ended before $1 lie together, so that a run with nothing to
// delete costs a probe per site rather than a read of every token. The
// DELETE repeats the conditions, so that a row changed meanwhile (a token
// restored by hand) is checked again as it is now. A token revoked without
// a time and without an expiry (only by hand) has no known end and is
// kept.
const pruneEndedTokens = `DELETE FROM service_tokens WHERE id = ANY(ARRAY(
  SELECT t.id FROM sites s CROSS JOIN LATERAL (
    SELECT id FROM service_tokens
    WHERE site_id = s.id AND least(revoked_at, expires_at) < $1 AND NOT (` + liveToken + `) LIMIT $2) t
  LIMIT $2))
  AND least(revoked_at, expires_at) < $1 AND NOT (` + liveToken + `)`

// PruneServiceTokens deletes the service tokens of every site that ended
// (were revoked or expired, whichever came first) before endedBefore: the
// retention of ended tokens. Nothing refers to a token's row (usage events
// and the audit name it by its id, as text), a deleted token is refused
// on /service/mcp as a revoked one is, and every replica forgets it at
// once (the table's trigger announces the change of its site). Active
// tokens are never deleted, however old.
//
// Like activity's pruning, it deletes at most pruneTokensBatch tokens per
// statement and maxPruneTokensBatches statements per run, and returns how
// many it deleted; when another replica is pruning, a statement deletes
// nothing and the run ends.
func (s *Store) PruneServiceTokens(ctx context.Context, endedBefore time.Time) (int64, error) {
	n, err := database.PruneInBatches(ctx, s.pool, pruneTokensLock, pruneEndedTokens, endedBefore, pruneTokensBatch, maxPruneTokensBatches)
	if err != nil {
		return n, fmt.Errorf("sites: prune ended service tokens: %w", database.Classify(err))
	}
	return n, nil
}
