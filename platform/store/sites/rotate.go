package sites

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// rotateBatchSize is how many credential rows RotateKeys lists at a time.
// A variable so tests can cross batch boundaries with a few rows.
var rotateBatchSize = 100

// credentialKey identifies one credential row.
type credentialKey struct {
	connectionID uuid.UUID
	field        string
}

// RotateKeys re-seals, under the keyring's primary key, every stored
// credential sealed with another key, and returns how many it re-sealed.
//
// It is safe to run while replicas serve: each row is re-sealed in its own
// short transaction that locks just that row (SELECT ... FOR UPDATE), so a
// concurrent PutConnection either sees the old row or the new one, and a row
// replaced meanwhile is skipped rather than overwritten. Rows are visited in
// key order, so the walk ends even if rows keep changing. A row that no key
// in the keyring can open stops the run with ErrCredentialUnreadable; the
// rows already re-sealed stay re-sealed.
func (s *Store) RotateKeys(ctx context.Context) (int, error) {
	primary := s.keys.PrimaryKeyID()
	var (
		// The zero key sorts before every row: field names are never empty.
		after credentialKey
		batch []credentialKey
		last  bool // the batch listed last was the final one
		// current is the row of the run under way, none while listing.
		current *credentialKey
	)
	n, _, err := database.ResealRows(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) (database.RowStep, error) {
		current = nil
		if len(batch) == 0 {
			if last {
				return database.NoRowLeft, nil
			}
			var err error
			if batch, err = s.staleCredentials(ctx, tx, primary, after); err != nil {
				return 0, err
			}
			last = len(batch) < rotateBatchSize
			if len(batch) == 0 {
				return database.NoRowLeft, nil
			}
			after = batch[len(batch)-1]
		}
		key := batch[0]
		batch, current = batch[1:], &key
		return s.resealCredential(ctx, tx, key, primary)
	})
	switch {
	case err != nil && current != nil:
		return n, fmt.Errorf("sites: rotate keys: connection %s field %s: %w", current.connectionID, current.field, err)
	case err != nil:
		return n, fmt.Errorf("sites: rotate keys: %w", err)
	}
	return n, nil
}

// staleCredentials lists up to rotateBatchSize rows not sealed with primary,
// after the given row in (connection_id, field) order.
func (s *Store) staleCredentials(ctx context.Context, tx pgx.Tx, primary string, after credentialKey) ([]credentialKey, error) {
	rows, err := tx.Query(ctx, `
		SELECT connection_id, field FROM credentials
		WHERE key_id <> $1 AND (connection_id, field) > ($2, $3)
		ORDER BY connection_id, field
		LIMIT $4`,
		primary, after.connectionID, after.field, rotateBatchSize)
	if err != nil {
		return nil, fmt.Errorf("list stale credentials: %w", err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (credentialKey, error) {
		var k credentialKey
		err := r.Scan(&k.connectionID, &k.field)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("list stale credentials: %w", err)
	}
	return keys, nil
}

// resealCredential re-seals one row under primary, in tx. It reports
// RowPassed when the row is gone or was re-sealed by someone else in the
// meantime.
func (s *Store) resealCredential(ctx context.Context, tx pgx.Tx, key credentialKey, primary string) (database.RowStep, error) {
	var (
		siteID     uuid.UUID
		typ        string
		keyID      string
		ciphertext []byte
	)
	err := tx.QueryRow(ctx, `
		SELECT cr.site_id, c.type, cr.key_id, cr.ciphertext
		FROM credentials cr
		JOIN connections c ON c.site_id = cr.site_id AND c.id = cr.connection_id
		WHERE cr.connection_id = $1 AND cr.field = $2
		FOR UPDATE OF cr`,
		key.connectionID, key.field).Scan(&siteID, &typ, &keyID, &ciphertext)
	if database.IsNoRows(err) {
		return database.RowPassed, nil
	}
	if err != nil {
		return 0, fmt.Errorf("lock: %w", err)
	}
	if keyID == primary {
		return database.RowPassed, nil
	}
	ad := credentialAD(siteID, ConnectionType(typ), key.field)
	plaintext, err := s.keys.Open(keyID, ciphertext, ad)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrCredentialUnreadable, err)
	}
	newKeyID, newCiphertext, err := s.keys.Seal(plaintext, ad)
	clear(plaintext)
	if err != nil {
		return 0, fmt.Errorf("seal: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		UPDATE credentials SET key_id = $3, ciphertext = $4, updated_at = now()
		WHERE connection_id = $1 AND field = $2`,
		key.connectionID, key.field, newKeyID, newCiphertext); err != nil {
		return 0, fmt.Errorf("update: %w", err)
	}
	return database.RowResealed, nil
}
