package storage

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// HasConsent reports whether user consented to client on site.
func (s *Store) HasConsent(ctx context.Context, siteID uuid.UUID, user, clientID string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM oauth_consents WHERE site_id = $1 AND erp_user = $2 AND client_id = $3)`,
		siteID, user, clientID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("storage: read consent: %w", notFound(err))
	}
	return ok, nil
}

// SaveConsent records that user consented to client on site.
func (s *Store) SaveConsent(ctx context.Context, siteID uuid.UUID, user, clientID string) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO oauth_consents (site_id, erp_user, client_id) VALUES ($1, $2, $3)
		ON CONFLICT (site_id, erp_user, client_id) DO UPDATE SET granted_at = now()`, siteID, user, clientID)
	if err != nil {
		return fmt.Errorf("storage: save consent: %w", notFound(err))
	}
	return nil
}
