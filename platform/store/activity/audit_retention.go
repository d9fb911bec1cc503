package activity

import (
	"context"
	"fmt"
	"time"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// pruneAuditLock is the advisory lock of an audit pruning statement: one
// replica at a time.
const pruneAuditLock int64 = 0x6572706761746503 // "erpgate" 03

// pruneAuditTables are the audit's tables, each deleted from through its
// (occurred_at, id) index ($1 the cutoff, $2 the batch).
var pruneAuditTables = []struct{ name, statement string }{
	{"admin_events", `DELETE FROM admin_events WHERE id = ANY(ARRAY(
  SELECT id FROM admin_events WHERE occurred_at < $1 ORDER BY occurred_at, id LIMIT $2))`},
	{"auth_events", `DELETE FROM auth_events WHERE id = ANY(ARRAY(
  SELECT id FROM auth_events WHERE occurred_at < $1 ORDER BY occurred_at, id LIMIT $2))`},
}

// PruneAudit deletes the sign-in and administration events (auth_events,
// admin_events) that happened before before: the audit's retention. Anyone
// can cause some of them (a refused sign-in, a registration's steps), so
// without it the tables grow for as long as erpgate runs. Like Prune, it
// deletes at most pruneBatch events per statement and maxPruneBatches
// statements per table and run, and returns how many it deleted; when
// another replica is pruning, a statement deletes nothing and the table's
// run ends.
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for _, table := range pruneAuditTables {
		n, err := database.PruneInBatches(ctx, s.pool, pruneAuditLock, table.statement, before, pruneBatch, maxPruneBatches)
		total += n
		if err != nil {
			return total, fmt.Errorf("activity: prune %s: %w", table.name, database.Classify(err))
		}
	}
	return total, nil
}
