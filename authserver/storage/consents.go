package storage

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// HasConsent reports whether user consented to client on site, for answers
// sent to redirectHost.
func (s *Store) HasConsent(ctx context.Context, siteID uuid.UUID, user, clientID, redirectHost string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM oauth_consents WHERE site_id = $1 AND erp_user = $2 AND client_id = $3
			AND $4 <> '' AND $4 = ANY (redirect_hosts))`,
		siteID, user, clientID, redirectHost).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("storage: read consent: %w", notFound(err))
	}
	return ok, nil
}

// SaveConsent records that user consented to client on site, for answers
// sent to redirectHost (added to the hosts consented to before).
func (s *Store) SaveConsent(ctx context.Context, siteID uuid.UUID, user, clientID, redirectHost string) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO oauth_consents (site_id, erp_user, client_id, redirect_hosts) VALUES ($1, $2, $3, ARRAY[$4::text])
		ON CONFLICT (site_id, erp_user, client_id) DO UPDATE SET granted_at = now(),
			redirect_hosts = CASE WHEN $4 = ANY (oauth_consents.redirect_hosts) THEN oauth_consents.redirect_hosts
				ELSE array_append(oauth_consents.redirect_hosts, $4::text) END`, siteID, user, clientID, redirectHost)
	if err != nil {
		return fmt.Errorf("storage: save consent: %w", notFound(err))
	}
	return nil
}
