package activity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// RollUpGrace is how long after an hour ends its calls are added to the
// chart rollup: longer than a usage batch waits before it is written (the
// recorder's flush interval) plus its insert deadline. Events stored later
// still (after a database outage of minutes) are in the events table, and
// so in every list and export, but not in that hour's charts.
const RollUpGrace = 2 * time.Minute

// maxHoursPerRollUp bounds one run, so that catching up a long backlog
// (the first run after migration 00023 on a large table) is many short
// transactions rather than one long one.
const maxHoursPerRollUp = 48

// rollUpLock is the advisory lock of the roll-up: one replica at a time.
const rollUpLock int64 = 0x6572706761746501 // "erpgate" 01

// rollUpSource is the hour of events RollUp counts ($1 inclusive, $2
// exclusive).
const rollUpSource = `(SELECT * FROM usage_events WHERE occurred_at >= $1 AND occurred_at < $2) hour_events`

// RollUp adds the tool calls of every hour that has been over for
// RollUpGrace, and is not in the rollup yet, to the rollup, and moves
// usage_rollup_mark on; a chart reads the later hours from the events. It
// returns the hours added. When another replica holds the roll-up, it
// returns 0 at once.
func (s *Store) RollUp(ctx context.Context, now time.Time) (int, error) {
	n, err := s.rollUp(ctx, now)
	if err != nil {
		return n, fmt.Errorf("activity: roll up usage: %w", database.Classify(err))
	}
	return n, nil
}

func (s *Store) rollUp(ctx context.Context, now time.Time) (int, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var mine bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, rollUpLock).Scan(&mine); err != nil || !mine {
		return 0, err
	}
	var until time.Time
	if err := tx.QueryRow(ctx, `SELECT rolled_until FROM usage_rollup_mark`).Scan(&until); err != nil {
		return 0, err
	}
	closed := now.Add(-RollUpGrace).UTC().Truncate(time.Hour)
	if !until.Before(closed) {
		return 0, nil
	}
	// Hours without a call are skipped at once.
	var next *time.Time
	if err := tx.QueryRow(ctx, `SELECT min(occurred_at) FROM usage_events WHERE occurred_at >= $1 AND occurred_at < $2`, until, closed).Scan(&next); err != nil {
		return 0, err
	}
	if next == nil {
		until = closed
	} else if h := next.UTC().Truncate(time.Hour); h.After(until) {
		until = h
	}
	var statement string
	if err := tx.QueryRow(ctx, `SELECT erpgate_usage_rollup_sql($1)`, rollUpSource).Scan(&statement); err != nil {
		return 0, err
	}
	n := 0
	for ; until.Before(closed) && n < maxHoursPerRollUp; until = until.Add(time.Hour) {
		// An hour is replaced whole, so a run that failed half-way leaves
		// nothing counted twice.
		if _, err := tx.Exec(ctx, `DELETE FROM usage_rollup WHERE bucket = $1`, until); err != nil {
			return n, err
		}
		if _, err := tx.Exec(ctx, statement, until, until.Add(time.Hour)); err != nil {
			return n, err
		}
		n++
	}
	if _, err := tx.Exec(ctx, `UPDATE usage_rollup_mark SET rolled_until = $1`, until); err != nil {
		return n, err
	}
	return n, tx.Commit(ctx)
}

// rolledUntil is where the rollup ends: the hours before it are in the
// rollup, the later ones only in the events.
func (s *Store) rolledUntil(ctx context.Context) (time.Time, error) {
	var until time.Time
	err := s.pool.QueryRow(ctx, `SELECT rolled_until FROM usage_rollup_mark`).Scan(&until)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	return until, err
}

// pruneBatch is the most events one statement of Prune deletes, and
// maxPruneBatches the most statements one run makes: a backlog of millions
// (retention first turned on) is deleted over several runs of short
// statements, never by one that holds the table for minutes.
const (
	pruneBatch      = 5000
	maxPruneBatches = 40
)

// pruneLock is the advisory lock of a pruning statement: one replica at a
// time.
const pruneLock int64 = 0x6572706761746502 // "erpgate" 02

// pruneEvents deletes up to $2 of the oldest events before $1, through the
// (occurred_at, id) index.
const pruneEvents = `DELETE FROM usage_events WHERE id = ANY(ARRAY(
  SELECT id FROM usage_events WHERE occurred_at < $1 ORDER BY occurred_at, id LIMIT $2))`

// Prune deletes the usage events older than before that the chart rollup
// already counts (before rolled_until): the charts of those hours keep
// their figures, the lists and exports lose the rows. It deletes at most
// pruneBatch events per statement and maxPruneBatches statements per run,
// and returns how many it deleted. When another replica is pruning, a
// statement deletes nothing and the run ends.
func (s *Store) Prune(ctx context.Context, before time.Time) (int64, error) {
	until, err := s.rolledUntil(ctx)
	if err != nil {
		return 0, fmt.Errorf("activity: prune usage: %w", database.Classify(err))
	}
	if until.Before(before) {
		before = until
	}
	n, err := database.PruneInBatches(ctx, s.pool, pruneLock, pruneEvents, before, pruneBatch, maxPruneBatches)
	if err != nil {
		return n, fmt.Errorf("activity: prune usage: %w", database.Classify(err))
	}
	return n, nil
}
