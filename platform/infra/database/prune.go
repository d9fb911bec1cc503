package database

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// PruneInBatches runs statement, a DELETE of at most $2 rows older than $1
// (cutoff), again and again, each run in a transaction of its own that
// first takes the transaction-scoped advisory lock lock: one replica
// prunes at a time, and a backlog goes in short statements, never in one
// that holds the table for long. It stops after maxBatches statements,
// after one that deleted fewer than batch rows, or when another replica
// holds the lock (a statement then deletes nothing), and returns how many
// rows it deleted. Its errors are pgx's; the caller classifies them.
func PruneInBatches(ctx context.Context, pool *pgxpool.Pool, lock int64, statement string, cutoff time.Time, batch, maxBatches int) (int64, error) {
	var total int64
	for range maxBatches {
		n, err := pruneOnce(ctx, pool, lock, statement, cutoff, batch)
		total += n
		if err != nil || n < int64(batch) {
			return total, err
		}
	}
	return total, nil
}

func pruneOnce(ctx context.Context, pool *pgxpool.Pool, lock int64, statement string, cutoff time.Time, batch int) (int64, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var mine bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, lock).Scan(&mine); err != nil || !mine {
		return 0, err
	}
	tag, err := tx.Exec(ctx, statement, cutoff, batch)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), tx.Commit(ctx)
}
