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
// refresh either sees the old row or the new one). Sign-in flows under
// way are RotateFlowKeys's.
func (s *Store) RotateKeys(ctx context.Context) (int, error) {
	primary := s.keys.PrimaryKeyID()
	// Keyset order, so that a token left under its old key (unreadable)
	// is not selected again.
	var (
		afterSite uuid.UUID
		afterUser string
		// current is the site of the token under way, none while finding.
		current *uuid.UUID
	)
	n, unreadable, err := database.ResealRows(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) (database.RowStep, error) {
		current = nil
		var (
			site uuid.UUID
			user string
		)
		err := tx.QueryRow(ctx, `SELECT site_id, erp_user FROM upstream_tokens
			WHERE key_id <> $1 AND (site_id, erp_user) > ($2, $3) ORDER BY site_id, erp_user LIMIT 1`, primary, afterSite, afterUser).Scan(&site, &user)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.NoRowLeft, nil
		}
		if err != nil {
			return 0, err
		}
		afterSite, afterUser, current = site, user, &site
		t, err := s.readUpstreamToken(ctx, tx, site, user, true)
		switch {
		case errors.Is(err, secrets.ErrUnknownKey) || errors.Is(err, secrets.ErrDecrypt):
			return database.RowUnreadable, nil
		case errors.Is(err, ErrNoUpstreamToken):
			return database.RowPassed, nil
		case err != nil:
			return 0, err
		}
		return database.RowResealed, s.putUpstreamToken(ctx, tx, t)
	})
	switch {
	case err != nil && current != nil:
		return n, fmt.Errorf("storage: rotate keys: ERP token of a user on site %s: %w", *current, err)
	case err != nil:
		return n, fmt.Errorf("storage: rotate keys: %w", err)
	}
	m, _, err := database.ResealRows(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) (database.RowStep, error) {
		var (
			name, keyID string
			ct          []byte
		)
		err := tx.QueryRow(ctx, `SELECT name FROM oauth_secrets WHERE key_id <> $1 ORDER BY name LIMIT 1`, primary).Scan(&name)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.NoRowLeft, nil
		}
		if err != nil {
			return 0, err
		}
		err = tx.QueryRow(ctx, `SELECT key_id, ciphertext FROM oauth_secrets WHERE name = $1 AND key_id <> $2 FOR UPDATE`, name, primary).Scan(&keyID, &ct)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.RowPassed, nil // re-sealed meanwhile
		}
		if err != nil {
			return 0, err
		}
		pt, err := s.keys.Open(keyID, ct, secretAD(name))
		if err != nil {
			return 0, fmt.Errorf("secret %s: %w", name, err)
		}
		newKeyID, newCT, err := s.keys.Seal(pt, secretAD(name))
		clear(pt)
		if err != nil {
			return 0, fmt.Errorf("secret %s: %w", name, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE oauth_secrets SET key_id = $2, ciphertext = $3 WHERE name = $1`, name, newKeyID, newCT); err != nil {
			return 0, fmt.Errorf("secret %s: %w", name, database.Classify(err))
		}
		return database.RowResealed, nil
	})
	n += m
	if err != nil {
		return n, fmt.Errorf("storage: rotate keys: %w", err)
	}
	if unreadable > 0 {
		return n, fmt.Errorf("%w: %d left under their old key (those people sign in again when they next call)", ErrUnreadableTokens, unreadable)
	}
	return n, nil
}

// RotateFlowKeys re-seals, under the keyring's primary key, what every
// sign-in flow sealed with another key holds (its PKCE verifier, or the
// user's ERP token until consent), with the same bindings, and returns how
// many flows it re-sealed and how many no configured key opens: a sign-in
// under way when the old key is dropped right after the rotation still
// finishes. Each flow is re-sealed in its own short transaction that locks
// just that row (waiting for a step that holds it), so it is safe while
// replicas serve. A flow no configured key opens is left as it is (in
// keyset order, so it is not found again): it can finish once its key is
// put back.
func (s *Store) RotateFlowKeys(ctx context.Context) (resealed, unreadable int, err error) {
	primary := s.keys.PrimaryKeyID()
	after := []byte{} // sorts before every flow's id hash
	resealed, unreadable, err = database.ResealRows(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) (database.RowStep, error) {
		var (
			idHash                    []byte
			keyID                     string
			verifier, access, refresh []byte
		)
		const stale = `key_id <> $1 AND (verifier_ciphertext IS NOT NULL OR access_ciphertext IS NOT NULL OR refresh_ciphertext IS NOT NULL)`
		err := tx.QueryRow(ctx, `SELECT id_hash FROM oauth_signin_flows WHERE `+stale+` AND id_hash > $2
			ORDER BY id_hash LIMIT 1`, primary, after).Scan(&idHash)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.NoRowLeft, nil
		}
		if err != nil {
			return 0, err
		}
		after = idHash
		// Locked apart, waiting for a step that holds it (PeekFlow and
		// StepFlow lock a flow without sealing it again): a flow passed
		// over would stay under the old key.
		err = tx.QueryRow(ctx, `SELECT key_id, verifier_ciphertext, access_ciphertext, refresh_ciphertext FROM oauth_signin_flows
			WHERE id_hash = $2 AND `+stale+` FOR UPDATE`, primary, idHash).Scan(&keyID, &verifier, &access, &refresh)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.RowPassed, nil // re-sealed or ended meanwhile
		}
		if err != nil {
			return 0, err
		}
		fields := []struct {
			name string
			ct   *[]byte
		}{{"verifier", &verifier}, {"access", &access}, {"refresh", &refresh}}
		// Seal seals under the primary key: every field shares it.
		newKeyID := primary
		for _, f := range fields {
			if *f.ct == nil {
				continue
			}
			pt, err := s.keys.Open(keyID, *f.ct, flowAD(idHash, f.name))
			if err != nil {
				// Nothing written yet: the flow stays as it was.
				return database.RowUnreadable, nil
			}
			kid, ct, err := s.keys.Seal(pt, flowAD(idHash, f.name))
			clear(pt)
			if err != nil {
				return 0, err
			}
			newKeyID, *f.ct = kid, ct
		}
		_, err = tx.Exec(ctx, `UPDATE oauth_signin_flows SET key_id = $2, verifier_ciphertext = $3, access_ciphertext = $4,
			refresh_ciphertext = $5 WHERE id_hash = $1`, idHash, newKeyID, verifier, access, refresh)
		return database.RowResealed, err
	})
	if err != nil {
		return resealed, unreadable, fmt.Errorf("storage: rotate sign-in keys: %w", err)
	}
	return resealed, unreadable, nil
}
