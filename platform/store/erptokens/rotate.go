package erptokens

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// RotateKeys re-seals every stored token that is not under the keyring's
// first key, one row per short transaction that locks just that row
// (waiting for a request that holds it, such as Reject's update), so it is
// safe while replicas serve. A row no configured key can open is deleted:
// the connection signs in afresh on its next call. It returns how many
// rows it re-sealed.
func (s *Store) RotateKeys(ctx context.Context) (int, error) {
	primary := s.keys.PrimaryKeyID()
	n, _, err := database.ResealRows(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) (database.RowStep, error) {
		var site uuid.UUID
		var user string
		err := tx.QueryRow(ctx, `
			SELECT site_id, erp_user FROM service_connection_tokens
			WHERE key_id <> $1 ORDER BY site_id, erp_user LIMIT 1`, primary).Scan(&site, &user)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.NoRowLeft, nil
		}
		if err != nil {
			return 0, err
		}
		// Locked apart, waiting for a request that holds it: a row passed
		// over (FOR UPDATE SKIP LOCKED) would stay under the old key.
		var locked bool
		err = tx.QueryRow(ctx, `SELECT true FROM service_connection_tokens
			WHERE site_id = $1 AND erp_user = $2 AND key_id <> $3 FOR UPDATE`, site, user, primary).Scan(&locked)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.RowPassed, nil // re-sealed or gone meanwhile
		}
		if err != nil {
			return 0, err
		}
		tok, err := s.read(ctx, tx, site, user)
		if err != nil {
			return 0, err
		}
		if !tok.Access.IsSet() {
			_, err := tx.Exec(ctx, `DELETE FROM service_connection_tokens WHERE site_id = $1 AND erp_user = $2`, site, user)
			return database.RowPassed, err
		}
		return database.RowResealed, s.write(ctx, tx, site, user, tok)
	})
	if err != nil {
		return n, fmt.Errorf("erptokens: rotate keys: %w", err)
	}
	return n, nil
}
