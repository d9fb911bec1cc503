package database

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// RowStep is what one run of a ResealRows step did.
type RowStep int

const (
	// NoRowLeft: no row is left under another key than the primary one;
	// ResealRows stops.
	NoRowLeft RowStep = iota
	// RowPassed: the row found was not re-sealed: re-sealed or gone
	// meanwhile, deleted because no key opens it, or left as it is.
	RowPassed
	// RowResealed: the row found was re-sealed.
	RowResealed
	// RowUnreadable: no key opens the row found, and it was left as it
	// is; the step's next run must not find it again (keyset order).
	RowUnreadable
)

// ResealRows runs step again and again, each run in a short transaction
// of its own, until step reports NoRowLeft or fails, and returns how many
// runs re-sealed a row and how many left one no key opens (runs that were
// committed). A step finds one row sealed under another key than the
// keyring's primary one, locks it, opens it and seals it again (or, when
// no key opens it, leaves it and reports RowUnreadable, or deletes it,
// where that is its store's rule): one row per transaction, so a re-seal
// is safe while replicas serve. A step should find its row first and then
// lock it with a plain FOR UPDATE, which waits for a request that holds the
// row for a moment: FOR UPDATE SKIP LOCKED would pass over it and leave it
// under the old key. A step's error rolls its transaction back and ends
// the run; it is returned classified (Classify), for the caller to name
// its table.
func ResealRows(ctx context.Context, pool *pgxpool.Pool, step func(ctx context.Context, tx pgx.Tx) (RowStep, error)) (resealed, unreadable int, err error) {
	for {
		var did RowStep
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var err error
			did, err = step(ctx, tx)
			return err
		})
		if err != nil {
			return resealed, unreadable, Classify(err)
		}
		switch did {
		case RowResealed:
			resealed++
		case RowUnreadable:
			unreadable++
		case NoRowLeft:
			return resealed, unreadable, nil
		}
	}
}
