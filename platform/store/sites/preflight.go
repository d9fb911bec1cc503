package sites

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// Preflight is a site's last preflight, as site_preflight keeps it: when
// it ran, whether every check passed, and the checks as a JSON array
// (platform/front/siteadmin defines their shape). It never holds a secret.
type Preflight struct {
	SiteID uuid.UUID
	RanAt  time.Time
	Passed bool
	Checks json.RawMessage
}

// PutPreflight stores p as the site's last preflight, replacing the one
// before. ErrNotFound: the site was deleted meanwhile.
func (s *Store) PutPreflight(ctx context.Context, p Preflight) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO site_preflight (site_id, ran_at, passed, checks) VALUES ($1, $2, $3, $4)
		ON CONFLICT (site_id) DO UPDATE SET ran_at = excluded.ran_at, passed = excluded.passed, checks = excluded.checks`,
		p.SiteID, p.RanAt, p.Passed, []byte(p.Checks))
	if _, ok := database.IsForeignKeyViolation(err); ok {
		return fmt.Errorf("sites: store preflight of site %s: %w", p.SiteID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("sites: store preflight of site %s: %w", p.SiteID, database.Classify(err))
	}
	return nil
}

// GetPreflight returns the site's last preflight. ErrNotFound: it has
// never run (or the site does not exist).
func (s *Store) GetPreflight(ctx context.Context, siteID uuid.UUID) (Preflight, error) {
	p := Preflight{SiteID: siteID}
	var checks []byte
	err := s.pool.QueryRow(ctx, `SELECT ran_at, passed, checks FROM site_preflight WHERE site_id = $1`, siteID).
		Scan(&p.RanAt, &p.Passed, &checks)
	if database.IsNoRows(err) {
		return Preflight{}, fmt.Errorf("sites: preflight of site %s: %w", siteID, ErrNotFound)
	}
	if err != nil {
		return Preflight{}, fmt.Errorf("sites: preflight of site %s: %w", siteID, database.Classify(err))
	}
	p.Checks = checks
	return p, nil
}
