// Package leases holds leases on work that one replica at a time does for
// a site, such as refreshing an ERP token, as rows of work_leases
// (migration 00028). A lease, unlike a row or advisory lock, holds no
// database connection while the work waits on an ERP, so a slow ERP slows
// only the work that waits for it. A lease lasts until its holder's
// deadline (at most Longest) and a little more; a holder that dies leaves
// it to run out. The table is UNLOGGED: a crash of the database frees
// every lease, as it should.
package leases

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// Longest is how long a lease taken without a deadline lasts.
const Longest = 2 * time.Minute

// margin is how long a lease outlasts its holder's deadline.
const margin = 5 * time.Second

// ErrLost is End's answer when the lease was no longer held: it ran out,
// or Forget ended it because its work was overtaken.
var ErrLost = errors.New("leases: the lease was lost")

// Lease is a held lease on one piece of work of a site.
type Lease struct {
	site uuid.UUID
	key  string
	id   uuid.UUID
}

// Take waits until it holds the lease on key of site, polling without a
// connection while another holder's lease has not run out, until ctx ends.
func Take(ctx context.Context, pool *pgxpool.Pool, site uuid.UUID, key string) (Lease, error) {
	l := Lease{site: site, key: key, id: uuid.New()}
	life := Longest
	if d, ok := ctx.Deadline(); ok {
		life = min(life, time.Until(d)+margin)
	}
	pause := 5 * time.Millisecond
	for {
		tag, err := pool.Exec(ctx, `
			INSERT INTO work_leases AS w (site_id, key, lease, until)
			VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
			ON CONFLICT (site_id, key) DO UPDATE SET lease = excluded.lease, until = excluded.until
			WHERE w.until < now()`, site, key, l.id, life.Milliseconds())
		if err != nil {
			return Lease{}, database.Classify(err)
		}
		if tag.RowsAffected() == 1 {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return Lease{}, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// deleteLease gives back the lease $3 on key $2 of site $1.
const deleteLease = `DELETE FROM work_leases WHERE site_id = $1 AND key = $2 AND lease = $3`

// End gives the lease back within tx, whose writes are the work's result:
// ErrLost, when the lease was no longer held, says they must not be
// committed.
func (l Lease) End(ctx context.Context, tx pgx.Tx) error {
	tag, err := tx.Exec(ctx, deleteLease, l.site, l.key, l.id)
	if err != nil {
		return database.Classify(err)
	}
	if tag.RowsAffected() == 0 {
		return ErrLost
	}
	return nil
}

// Drop gives the lease back for work that stores nothing (it failed, or
// found nothing to do), so that the next holder need not wait for it to
// run out. Best effort: a lease not given back runs out.
func (l Lease) Drop(ctx context.Context, pool *pgxpool.Pool) {
	_, _ = pool.Exec(context.WithoutCancel(ctx), deleteLease, l.site, l.key, l.id)
}

// Execer runs a statement: a pool or a transaction.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Forget ends any lease on key of site within q: the work under way there
// was overtaken (its input replaced), and its End reports ErrLost.
func Forget(ctx context.Context, q Execer, site uuid.UUID, key string) error {
	_, err := q.Exec(ctx, `DELETE FROM work_leases WHERE site_id = $1 AND key = $2`, site, key)
	return database.Classify(err)
}
