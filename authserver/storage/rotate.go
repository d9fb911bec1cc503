package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// ErrUnreadableTokens is returned by RotateKeys when it re-sealed all it
// could but some users' ERP tokens could not be opened with the keys it was
// given: they are left as they are, and each of those people is asked to
// sign in again when they next call.
var ErrUnreadableTokens = errors.New("storage: some ERP tokens could not be opened with the configured keys")

// RotateKeys re-seals, under the keyring's primary key, every user's ERP
// token and every server secret sealed with another key, and returns how
// many it re-sealed. Each row is re-sealed in its own short transaction
// under its row lock, so it is safe while replicas serve (a concurrent
// refresh either sees the old row or the new one). Sign-in flows are left
// alone: they expire within minutes.
func (s *Store) RotateKeys(ctx context.Context) (int, error) {
	primary := s.keys.PrimaryKeyID()
	n, unreadable := 0, 0
	// Keyset order, so that a token left under its old key (unreadable)
	// is not selected again.
	var afterSite uuid.UUID
	afterUser := ""
	for {
		rows, err := s.pool.Query(ctx, `SELECT site_id, erp_user FROM upstream_tokens
			WHERE key_id <> $1 AND (site_id, erp_user) > ($2, $3) ORDER BY site_id, erp_user LIMIT 100`, primary, afterSite, afterUser)
		if err != nil {
			return n, fmt.Errorf("storage: rotate keys: %w", database.Classify(err))
		}
		type key struct {
			site uuid.UUID
			user string
		}
		batch, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (key, error) {
			var k key
			return k, r.Scan(&k.site, &k.user)
		})
		if err != nil {
			return n, fmt.Errorf("storage: rotate keys: %w", database.Classify(err))
		}
		if len(batch) == 0 {
			break
		}
		for _, k := range batch {
			afterSite, afterUser = k.site, k.user
			err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
				t, err := s.readUpstreamToken(ctx, tx, k.site, k.user, true)
				if err != nil {
					return err
				}
				return s.putUpstreamToken(ctx, tx, t)
			})
			switch {
			case errors.Is(err, secrets.ErrUnknownKey) || errors.Is(err, secrets.ErrDecrypt):
				unreadable++
				continue
			case errors.Is(err, ErrNoUpstreamToken):
				continue
			case err != nil:
				return n, fmt.Errorf("storage: rotate keys: ERP token of a user on site %s: %w", k.site, err)
			}
			n++
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT name, key_id, ciphertext FROM oauth_secrets WHERE key_id <> $1`, primary)
	if err != nil {
		return n, fmt.Errorf("storage: rotate keys: %w", database.Classify(err))
	}
	type sealed struct {
		name, keyID string
		ct          []byte
	}
	stale, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sealed, error) {
		var x sealed
		return x, r.Scan(&x.name, &x.keyID, &x.ct)
	})
	if err != nil {
		return n, fmt.Errorf("storage: rotate keys: %w", database.Classify(err))
	}
	for _, x := range stale {
		pt, err := s.keys.Open(x.keyID, x.ct, secretAD(x.name))
		if err != nil {
			return n, fmt.Errorf("storage: rotate keys: secret %s: %w", x.name, err)
		}
		keyID, ct, err := s.keys.Seal(pt, secretAD(x.name))
		clear(pt)
		if err != nil {
			return n, fmt.Errorf("storage: rotate keys: secret %s: %w", x.name, err)
		}
		if _, err := s.pool.Exec(ctx, `UPDATE oauth_secrets SET key_id = $2, ciphertext = $3 WHERE name = $1 AND key_id = $4`,
			x.name, keyID, ct, x.keyID); err != nil {
			return n, fmt.Errorf("storage: rotate keys: secret %s: %w", x.name, database.Classify(err))
		}
		n++
	}
	if unreadable > 0 {
		return n, fmt.Errorf("%w: %d left under their old key (those people sign in again when they next call)", ErrUnreadableTokens, unreadable)
	}
	return n, nil
}
