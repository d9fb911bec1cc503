package register

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// RotateKeys re-seals, under keys' primary key, the client secret of
// every open registration sealed with another key, with the same binding
// to its registration, and returns how many it re-sealed: a registration
// begun before a rotation can still go on once the old key is dropped; it
// also returns how many no key of keys opens. Each row is re-sealed in its
// own short transaction that locks just that row (waiting for a step that
// holds it), so it is safe while replicas serve. A registration whose
// secret no key of keys opens is left as it is (in keyset order, so it is
// not found again): it goes on once its key is put back.
func RotateKeys(ctx context.Context, pool *pgxpool.Pool, keys *secrets.Keyring) (resealed, unreadable int, err error) {
	primary := keys.PrimaryKeyID()
	var after uuid.UUID // the nil UUID sorts before every registration's id
	resealed, unreadable, err = database.ResealRows(ctx, pool, func(ctx context.Context, tx pgx.Tx) (database.RowStep, error) {
		var (
			id     uuid.UUID
			keyID  string
			sealed []byte
		)
		err := tx.QueryRow(ctx, `SELECT id FROM pending_registrations
			WHERE key_id <> $1 AND secret_ciphertext IS NOT NULL AND id > $2 ORDER BY id LIMIT 1`, primary, after).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.NoRowLeft, nil
		}
		if err != nil {
			return 0, err
		}
		after = id
		// Locked apart, waiting for a step that holds it: a row passed
		// over would stay under the old key.
		err = tx.QueryRow(ctx, `SELECT key_id, secret_ciphertext FROM pending_registrations
			WHERE id = $1 AND key_id <> $2 AND secret_ciphertext IS NOT NULL FOR UPDATE`, id, primary).Scan(&keyID, &sealed)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.RowPassed, nil // re-sealed, finished or gone meanwhile
		}
		if err != nil {
			return 0, err
		}
		plaintext, err := keys.Open(keyID, sealed, secretAD(id))
		if err != nil {
			return database.RowUnreadable, nil
		}
		newKeyID, newSealed, err := keys.Seal(plaintext, secretAD(id))
		clear(plaintext)
		if err != nil {
			return 0, err
		}
		_, err = tx.Exec(ctx, `UPDATE pending_registrations SET key_id = $2, secret_ciphertext = $3 WHERE id = $1`, id, newKeyID, newSealed)
		return database.RowResealed, err
	})
	if err != nil {
		return resealed, unreadable, fmt.Errorf("register: rotate keys: %w", err)
	}
	return resealed, unreadable, nil
}
