package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"
)

// migrationLockKey is the session advisory lock held while goose runs; the
// bytes spell "erpgmigr". Advisory locks are scoped to one database, so
// migrating two databases on one server never contends.
const migrationLockKey int64 = 0x657270676d696772

// unlockTimeout bounds releasing the lock after ctx has ended.
const unlockTimeout = 10 * time.Second

// withMigrationLock runs fn while holding migrationLockKey on a dedicated
// connection of db, so that replicas starting together apply each migration
// once: the second waits, then finds nothing pending.
//
// It blocks in pg_advisory_lock rather than using goose's SessionLocker,
// which polls pg_try_advisory_lock every 5 s and does not cover the
// version-table creation in Provider.HasPending (goose retries that instead).
// A session lock also dies with its connection, so a crashed replica never
// leaves it held.
func withMigrationLock(ctx context.Context, db *sql.DB, fn func() error) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("database: connect for the migration lock: %w", Classify(err))
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLockKey); err != nil {
		return fmt.Errorf("database: take the migration lock: %w", Classify(err))
	}
	defer func() {
		unlockCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
		defer cancel()
		if _, unlockErr := conn.ExecContext(unlockCtx, "SELECT pg_advisory_unlock($1)", migrationLockKey); unlockErr != nil {
			// Ending the session releases the lock: returning ErrBadConn
			// makes database/sql close the connection instead of reusing it.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			err = errors.Join(err, fmt.Errorf("database: release the migration lock: %w", Classify(unlockErr)))
		}
	}()
	return fn()
}
