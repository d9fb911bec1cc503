package sites

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// OwnerChange is a change on a site owner's page waiting for its proof at
// the ERP (a sign-in with the new OAuth client secret, or as an
// administrator of the tenant the site moves to). Nothing of it applies
// until the proof succeeds.
type OwnerChange struct {
	ID     uuid.UUID
	SiteID uuid.UUID
	// ERPUser is the owner who asked for the change.
	ERPUser string
	// Settings, when not nil, replace the site's settings.
	Settings json.RawMessage
	// ClientSecret, when set, replaces the OAuth client's secret.
	ClientSecret secrets.Secret
	ExpiresAt    time.Time
}

func ownerChangeAD(siteID, id uuid.UUID) []byte {
	return secrets.AdditionalData("owner_change", siteID.String(), id.String())
}

// PutOwnerChange stores a pending change of the site for ttl and returns
// its id. Expired changes of the site are dropped on the way.
func (s *Store) PutOwnerChange(ctx context.Context, c OwnerChange, ttl time.Duration) (uuid.UUID, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, fmt.Errorf("new id: %w", err)
	}
	var keyID *string
	var sealed []byte
	if c.ClientSecret.IsSet() {
		if len(c.ClientSecret.Reveal()) > maxFieldBytes {
			return uuid.Nil, invalidf("the client secret is longer than %d bytes", maxFieldBytes)
		}
		kid, ct, err := s.keys.Seal([]byte(c.ClientSecret.Reveal()), ownerChangeAD(c.SiteID, id))
		if err != nil {
			return uuid.Nil, fmt.Errorf("sites: seal owner change: %w", err)
		}
		keyID, sealed = &kid, ct
	}
	var settings *string
	if c.Settings != nil {
		v := string(c.Settings)
		settings = &v
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM owner_changes WHERE site_id = $1 AND expires_at <= now()`, c.SiteID); err != nil {
		return uuid.Nil, fmt.Errorf("sites: drop expired owner changes of site %s: %w", c.SiteID, database.Classify(err))
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO owner_changes (id, site_id, erp_user, settings, secret_key_id, secret, expires_at)
		VALUES ($1, $2, $3, $4::jsonb, $5, $6, now() + $7::interval)`,
		id, c.SiteID, c.ERPUser, settings, keyID, sealed, fmt.Sprintf("%d milliseconds", ttl.Milliseconds()))
	if err != nil {
		if _, fk := database.IsForeignKeyViolation(err); fk {
			return uuid.Nil, fmt.Errorf("sites: owner change of site %s: %w", c.SiteID, ErrNotFound)
		}
		return uuid.Nil, fmt.Errorf("sites: put owner change of site %s: %w", c.SiteID, database.Classify(err))
	}
	return id, nil
}

// GetOwnerChange returns the site's pending change id, if it has not
// expired; ErrNotFound otherwise.
func (s *Store) GetOwnerChange(ctx context.Context, siteID, id uuid.UUID) (OwnerChange, error) {
	c := OwnerChange{ID: id, SiteID: siteID}
	var (
		settings []byte
		keyID    *string
		sealed   []byte
	)
	err := s.pool.QueryRow(ctx, `
		SELECT erp_user, settings, secret_key_id, secret, expires_at FROM owner_changes
		WHERE site_id = $1 AND id = $2 AND expires_at > now()`, siteID, id).
		Scan(&c.ERPUser, &settings, &keyID, &sealed, &c.ExpiresAt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return OwnerChange{}, fmt.Errorf("sites: owner change %s of site %s: %w", id, siteID, ErrNotFound)
	case err != nil:
		return OwnerChange{}, fmt.Errorf("sites: get owner change of site %s: %w", siteID, database.Classify(err))
	}
	if settings != nil {
		c.Settings = json.RawMessage(settings)
	}
	if keyID != nil {
		plaintext, err := s.keys.Open(*keyID, sealed, ownerChangeAD(siteID, id))
		if err != nil {
			return OwnerChange{}, fmt.Errorf("sites: owner change %s of site %s: %w: %w", id, siteID, ErrCredentialUnreadable, err)
		}
		c.ClientSecret = secrets.Secret(plaintext)
		clear(plaintext)
	}
	return c, nil
}

// DeleteOwnerChange removes the site's pending change id (done or
// abandoned). A change already gone is not an error.
func (s *Store) DeleteOwnerChange(ctx context.Context, siteID, id uuid.UUID) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM owner_changes WHERE site_id = $1 AND id = $2`, siteID, id); err != nil {
		return fmt.Errorf("sites: delete owner change of site %s: %w", siteID, database.Classify(err))
	}
	return nil
}

// SweepOwnerChanges removes the expired pending changes of every site (a
// maintenance sweep; reads refuse them anyway) and returns how many.
func (s *Store) SweepOwnerChanges(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM owner_changes WHERE expires_at <= now()`)
	if err != nil {
		return 0, fmt.Errorf("sites: sweep owner changes: %w", database.Classify(err))
	}
	return tag.RowsAffected(), nil
}

// RotateOwnerChangeKeys re-seals, under the keyring's primary key, the
// secret of every pending change sealed with another key, with the same
// binding to its site and change, and returns how many it re-sealed and
// how many no configured key opens: a change begun before a rotation can
// still be applied once the old key is dropped. Each row is re-sealed in
// its own short transaction that locks just that row (waiting for a
// request that holds it), so it is safe while replicas serve. A change
// whose secret no configured key opens is left as it is (in keyset order,
// so it is not found again): it can be applied once its key is put back.
func (s *Store) RotateOwnerChangeKeys(ctx context.Context) (resealed, unreadable int, err error) {
	primary := s.keys.PrimaryKeyID()
	var after uuid.UUID // the nil UUID sorts before every change's id
	resealed, unreadable, err = database.ResealRows(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) (database.RowStep, error) {
		var (
			id, siteID uuid.UUID
			keyID      string
			sealed     []byte
		)
		err := tx.QueryRow(ctx, `SELECT id FROM owner_changes WHERE secret_key_id <> $1 AND id > $2 ORDER BY id LIMIT 1`, primary, after).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.NoRowLeft, nil
		}
		if err != nil {
			return 0, err
		}
		after = id
		// Locked apart, waiting for a request that holds it: a row
		// passed over would stay under the old key.
		err = tx.QueryRow(ctx, `SELECT site_id, secret_key_id, secret FROM owner_changes
			WHERE id = $1 AND secret_key_id <> $2 FOR UPDATE`, id, primary).Scan(&siteID, &keyID, &sealed)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.RowPassed, nil // re-sealed or gone meanwhile
		}
		if err != nil {
			return 0, err
		}
		ad := ownerChangeAD(siteID, id)
		plaintext, err := s.keys.Open(keyID, sealed, ad)
		if err != nil {
			return database.RowUnreadable, nil
		}
		newKeyID, newSealed, err := s.keys.Seal(plaintext, ad)
		clear(plaintext)
		if err != nil {
			return 0, err
		}
		_, err = tx.Exec(ctx, `UPDATE owner_changes SET secret_key_id = $2, secret = $3 WHERE id = $1`, id, newKeyID, newSealed)
		return database.RowResealed, err
	})
	if err != nil {
		return resealed, unreadable, fmt.Errorf("sites: rotate owner change keys: %w", err)
	}
	return resealed, unreadable, nil
}
