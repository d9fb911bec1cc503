package database_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestResealRows: ResealRows runs the step, one transaction a run, until
// it finds nothing left, and counts apart the rows it re-sealed and those
// it left because no key opens them; a step's error rolls that run back
// and ends the run, with the counts so far.
func TestResealRows(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := t.Context()
	if _, err := pool.Exec(ctx, `CREATE TABLE sealed (id int PRIMARY KEY, key_id text NOT NULL);
		INSERT INTO sealed VALUES (1, 'old'), (2, 'old'), (3, 'new'), (4, 'old'), (5, 'old')`); err != nil {
		t.Fatal(err)
	}
	errBroken := errors.New("row 5 is broken")
	after := 0 // keyset order: a row left is not found again
	step := func(ctx context.Context, tx pgx.Tx) (database.RowStep, error) {
		var id int
		err := tx.QueryRow(ctx, `SELECT id FROM sealed WHERE key_id <> 'new' AND id > $1 ORDER BY id LIMIT 1 FOR UPDATE`, after).Scan(&id)
		if database.IsNoRows(err) {
			return database.NoRowLeft, nil
		}
		if err != nil {
			return 0, err
		}
		after = id
		if id == 2 { // no key opens it: left as it is
			return database.RowUnreadable, nil
		}
		if _, err := tx.Exec(ctx, `UPDATE sealed SET key_id = 'new' WHERE id = $1`, id); err != nil {
			return 0, err
		}
		if id == 5 {
			return 0, errBroken
		}
		return database.RowResealed, nil
	}
	n, unreadable, err := database.ResealRows(ctx, pool, step)
	if n != 2 || unreadable != 1 || !errors.Is(err, errBroken) {
		t.Fatalf("ResealRows = %d, %d, %v; want 2 (rows 1 and 4), 1 unreadable (row 2) and row 5's error", n, unreadable, err)
	}
	rows, _ := pool.Query(ctx, `SELECT id FROM sealed WHERE key_id <> 'new' ORDER BY id`)
	left, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil || len(left) != 2 || left[0] != 2 || left[1] != 5 {
		t.Fatalf("rows left under the old key: %v, %v; want [2 5], row 2 as it was and row 5's run rolled back", left, err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM sealed WHERE id = 5`); err != nil {
		t.Fatal(err)
	}
	after = 0
	if n, unreadable, err := database.ResealRows(ctx, pool, step); n != 0 || unreadable != 1 || err != nil {
		t.Fatalf("second ResealRows = %d, %d, %v; want 0, 1 (row 2 still), nil", n, unreadable, err)
	}
}
