package erpadmin

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// RotateKeys re-seals, under keys' primary key, the verifier of every
// proof in progress sealed with another key, with the same binding to its
// state, and returns how many it re-sealed: a sign-in begun before a
// rotation can still finish once the old key is dropped; it also returns
// how many no key of keys opens. Each row is re-sealed in its own short
// transaction that locks just that row (waiting for a callback that holds
// it), so it is safe while replicas serve. A proof whose verifier no key
// of keys opens is left as it is (in keyset order, so it is not found
// again): its sign-in can finish once its key is put back.
func RotateKeys(ctx context.Context, pool *pgxpool.Pool, keys *secrets.Keyring) (resealed, unreadable int, err error) {
	primary := keys.PrimaryKeyID()
	after := []byte{} // sorts before every state hash
	resealed, unreadable, err = database.ResealRows(ctx, pool, func(ctx context.Context, tx pgx.Tx) (database.RowStep, error) {
		var (
			stateHash, sealed []byte
			keyID             string
		)
		err := tx.QueryRow(ctx, `SELECT state_hash FROM erpadmin_proofs WHERE key_id <> $1 AND state_hash > $2
			ORDER BY state_hash LIMIT 1`, primary, after).Scan(&stateHash)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.NoRowLeft, nil
		}
		if err != nil {
			return 0, err
		}
		after = stateHash
		// Locked apart, waiting for a request that holds it: a row
		// passed over would stay under the old key.
		err = tx.QueryRow(ctx, `SELECT key_id, verifier_ciphertext FROM erpadmin_proofs
			WHERE state_hash = $1 AND key_id <> $2 FOR UPDATE`, stateHash, primary).Scan(&keyID, &sealed)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.RowPassed, nil // re-sealed or claimed meanwhile
		}
		if err != nil {
			return 0, err
		}
		ad := proofAD(stateHash)
		plaintext, err := keys.Open(keyID, sealed, ad)
		if err != nil {
			return database.RowUnreadable, nil
		}
		newKeyID, newSealed, err := keys.Seal(plaintext, ad)
		clear(plaintext)
		if err != nil {
			return 0, err
		}
		_, err = tx.Exec(ctx, `UPDATE erpadmin_proofs SET key_id = $2, verifier_ciphertext = $3 WHERE state_hash = $1`, stateHash, newKeyID, newSealed)
		return database.RowResealed, err
	})
	if err != nil {
		return resealed, unreadable, fmt.Errorf("erpadmin: rotate keys: %w", err)
	}
	return resealed, unreadable, nil
}
