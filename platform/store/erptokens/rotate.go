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
// first key, one row per short transaction, so it is safe while replicas
// serve. A row no configured key can open is deleted: the connection signs
// in afresh on its next call. It returns how many rows it re-sealed.
func (s *Store) RotateKeys(ctx context.Context) (int, error) {
	primary := s.keys.PrimaryKeyID()
	resealed := 0
	for {
		done := false
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var site uuid.UUID
			var user string
			err := tx.QueryRow(ctx, `
				SELECT site_id, erp_user FROM service_connection_tokens
				WHERE key_id <> $1 ORDER BY site_id, erp_user LIMIT 1 FOR UPDATE SKIP LOCKED`, primary).Scan(&site, &user)
			if errors.Is(err, pgx.ErrNoRows) {
				done = true
				return nil
			}
			if err != nil {
				return err
			}
			tok, err := s.read(ctx, tx, site, user)
			if err != nil {
				return err
			}
			if !tok.Access.IsSet() {
				_, err := tx.Exec(ctx, `DELETE FROM service_connection_tokens WHERE site_id = $1 AND erp_user = $2`, site, user)
				return err
			}
			if err := s.write(ctx, tx, site, user, tok); err != nil {
				return err
			}
			resealed++
			return nil
		})
		if err != nil {
			return resealed, fmt.Errorf("erptokens: rotate keys: %w", database.Classify(err))
		}
		if done {
			return resealed, nil
		}
	}
}
