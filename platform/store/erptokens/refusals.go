package erptokens

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/database"
)

var _ connector.ServiceRefusals = (*Store)(nil)

// HoldRefusal keeps refusal for user on site, for every replica, until
// hold has passed by the database's clock. It replaces a hold already
// there, and removes the site's holds that ran out.
func (s *Store) HoldRefusal(ctx context.Context, site uuid.UUID, user string, refusal *toolerr.Error, hold time.Duration) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM service_connection_refusals WHERE site_id = $1 AND until <= now()`, site); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO service_connection_refusals (site_id, erp_user, code, message, until)
			VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))
			ON CONFLICT (site_id, erp_user) DO UPDATE SET code = excluded.code, message = excluded.message, until = excluded.until`,
			site, user, string(refusal.Code), refusal.Message, hold.Seconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("erptokens: hold the refusal of %q on site %s: %w", user, site, database.Classify(err))
	}
	return nil
}

// HeldRefusal returns the refusal held for user on site and how long it
// still holds by the database's clock, or nil when none does.
func (s *Store) HeldRefusal(ctx context.Context, site uuid.UUID, user string) (*toolerr.Error, time.Duration, error) {
	var (
		code, message string
		left          float64
	)
	err := s.pool.QueryRow(ctx, `SELECT code, message, extract(epoch FROM until - now())::float8 FROM service_connection_refusals
		WHERE site_id = $1 AND erp_user = $2 AND until > now()`, site, user).Scan(&code, &message, &left)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("erptokens: read the refusal of %q on site %s: %w", user, site, database.Classify(err))
	}
	return &toolerr.Error{Code: toolerr.Code(code), Message: message}, time.Duration(left * float64(time.Second)), nil
}
