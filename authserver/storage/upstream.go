package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/leases"
)

// ErrNoUpstreamToken means erpgate holds no ERP token for the user on the
// site: they have to sign in (again).
var ErrNoUpstreamToken = errors.New("storage: no ERP token for this user")

// UpstreamToken is a user's ERP token for one site, opened.
type UpstreamToken struct {
	SiteID      uuid.UUID
	ERPUser     string
	DisplayName string
	Access      secrets.Secret
	// Refresh is empty when the ERP issued no refresh token.
	Refresh   secrets.Secret
	ExpiresAt time.Time
	// GateCheckedAt is when the connector's access gate last let the user
	// in (zero: not known, as for tokens stored before it was recorded).
	GateCheckedAt time.Time
}

// upstreamAD binds a sealed ERP token to its site, user and field.
func upstreamAD(siteID uuid.UUID, user, field string) []byte {
	return secrets.AdditionalData("upstream_token", siteID.String(), user, field)
}

// PutUpstreamToken stores (or replaces) a user's ERP token for a site.
func (s *Store) PutUpstreamToken(ctx context.Context, t UpstreamToken) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// A refresh under way refreshed the token this one replaces: it
		// loses its lease and stores nothing.
		if err := leases.Forget(ctx, tx, t.SiteID, refreshLeaseKey(t.ERPUser)); err != nil {
			return err
		}
		return s.putUpstreamToken(ctx, tx, t)
	})
	if err != nil {
		return fmt.Errorf("storage: store ERP token of a user on site %s: %w", t.SiteID, err)
	}
	s.usersChanged(ctx, changedUser{t.SiteID, t.ERPUser})
	return nil
}

func (s *Store) putUpstreamToken(ctx context.Context, q querier, t UpstreamToken) error {
	keyID, access, err := s.keys.Seal([]byte(t.Access.Reveal()), upstreamAD(t.SiteID, t.ERPUser, "access"))
	if err != nil {
		return err
	}
	var refresh []byte
	if t.Refresh.IsSet() {
		if _, refresh, err = s.keys.Seal([]byte(t.Refresh.Reveal()), upstreamAD(t.SiteID, t.ERPUser, "refresh")); err != nil {
			return err
		}
	}
	var gateChecked *time.Time
	if !t.GateCheckedAt.IsZero() {
		gateChecked = &t.GateCheckedAt
	}
	_, err = q.Exec(ctx, `
		INSERT INTO upstream_tokens (site_id, erp_user, display_name, key_id, access_ciphertext, refresh_ciphertext, expires_at,
			gate_checked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (site_id, erp_user) DO UPDATE SET display_name = excluded.display_name, key_id = excluded.key_id,
			access_ciphertext = excluded.access_ciphertext, refresh_ciphertext = excluded.refresh_ciphertext,
			expires_at = excluded.expires_at, gate_checked_at = excluded.gate_checked_at, updated_at = now()`,
		t.SiteID, t.ERPUser, t.DisplayName, keyID, access, refresh, t.ExpiresAt, gateChecked)
	return database.Classify(err)
}

// UpstreamToken returns a user's ERP token for a site, or
// ErrNoUpstreamToken.
func (s *Store) UpstreamToken(ctx context.Context, siteID uuid.UUID, user string) (UpstreamToken, error) {
	t, err := s.readUpstreamToken(ctx, s.pool, siteID, user, false)
	if err != nil {
		return UpstreamToken{}, fmt.Errorf("storage: read ERP token of a user on site %s: %w", siteID, err)
	}
	return t, nil
}

func (s *Store) readUpstreamToken(ctx context.Context, q querier, siteID uuid.UUID, user string, lock bool) (UpstreamToken, error) {
	query := `SELECT display_name, key_id, access_ciphertext, refresh_ciphertext, expires_at, gate_checked_at
		FROM upstream_tokens WHERE site_id = $1 AND erp_user = $2`
	if lock {
		query += ` FOR UPDATE`
	}
	t := UpstreamToken{SiteID: siteID, ERPUser: user}
	var (
		keyID           string
		access, refresh []byte
		gateChecked     *time.Time
	)
	err := q.QueryRow(ctx, query, siteID, user).Scan(&t.DisplayName, &keyID, &access, &refresh, &t.ExpiresAt, &gateChecked)
	if errors.Is(err, pgx.ErrNoRows) {
		return UpstreamToken{}, ErrNoUpstreamToken
	}
	if err != nil {
		return UpstreamToken{}, database.Classify(err)
	}
	if gateChecked != nil {
		t.GateCheckedAt = *gateChecked
	}
	pt, err := s.keys.Open(keyID, access, upstreamAD(siteID, user, "access"))
	if err != nil {
		return UpstreamToken{}, err
	}
	t.Access = secrets.Secret(pt)
	if refresh != nil {
		pt, err := s.keys.Open(keyID, refresh, upstreamAD(siteID, user, "refresh"))
		if err != nil {
			return UpstreamToken{}, err
		}
		t.Refresh = secrets.Secret(pt)
	}
	return t, nil
}

// RefreshOutcome is what a refresh function decided under the lock.
type RefreshOutcome struct {
	// Replace, when set, is stored in place of the current token.
	Replace *UpstreamToken
	// Dead means the ERP refused the refresh token for good: the token is
	// deleted and every erpgate grant of the user on the site revoked.
	Dead bool
	// AccessWithdrawn means the connector's access gate, read again on
	// refresh, refused the user: handled like Dead, but recorded with the
	// reason access_denied and reported as ErrUpstreamAccessWithdrawn.
	AccessWithdrawn bool
}

// ErrUpstreamTokenDead is returned by RefreshUpstreamToken when the refresh
// function found the refresh token dead.
var ErrUpstreamTokenDead = errors.New("storage: the ERP refused the user's refresh token; their grants were revoked")

// ErrUpstreamAccessWithdrawn is returned by RefreshUpstreamToken when the
// refresh function found that the ERP no longer lets the user use erpgate.
var ErrUpstreamAccessWithdrawn = errors.New("storage: the ERP withdrew the user's access to erpgate; their grants were revoked")

// RefreshUpstreamToken runs refresh under a lease on the user's ERP token,
// so that on any number of replicas only one refresh runs at a time; the
// others wait for the lease to go and then see its result (refresh should
// check whether the token it is given is still stale). The lease is a row,
// not a lock: no database connection is held while refresh talks to the
// ERP, so a slow ERP slows its own users' refreshes and nobody else's
// queries. It returns the token as it is after refresh. A dead outcome
// deletes the token, revokes the user's erpgate grants on the site and
// records a grants_revoked event, in one transaction, and returns
// ErrUpstreamTokenDead; an access-withdrawn outcome does the same with the
// reason access_denied and returns ErrUpstreamAccessWithdrawn. A refresh
// whose lease was lost meanwhile (a new sign-in replaced the token, or the
// lease outlived its time) stores nothing and returns ErrRefreshOvertaken.
func (s *Store) RefreshUpstreamToken(ctx context.Context, siteID uuid.UUID, user string,
	refresh func(ctx context.Context, current UpstreamToken) (RefreshOutcome, error)) (UpstreamToken, error) {
	result, err := s.refreshUpstreamToken(ctx, siteID, user, refresh)
	if err != nil && !errors.Is(err, ErrUpstreamTokenDead) && !errors.Is(err, ErrUpstreamAccessWithdrawn) {
		return UpstreamToken{}, fmt.Errorf("storage: refresh ERP token of a user on site %s: %w", siteID, err)
	}
	return result, err
}

// ErrRefreshOvertaken is returned by RefreshUpstreamToken when the token
// changed under its lease: what it refreshed is not stored.
var ErrRefreshOvertaken = errors.New("storage: the ERP token changed while it was being refreshed")

// refreshLeaseKey names the lease on refreshing user's ERP token.
func refreshLeaseKey(user string) string { return "erp_token:" + user }

func (s *Store) refreshUpstreamToken(ctx context.Context, siteID uuid.UUID, user string,
	refresh func(ctx context.Context, current UpstreamToken) (RefreshOutcome, error)) (UpstreamToken, error) {
	lease, err := leases.Take(ctx, s.pool, siteID, refreshLeaseKey(user))
	if err != nil {
		return UpstreamToken{}, err
	}
	current, err := s.readUpstreamToken(ctx, s.pool, siteID, user, false)
	if err != nil {
		lease.Drop(ctx, s.pool)
		return UpstreamToken{}, err
	}
	outcome, err := refresh(ctx, current)
	if err != nil {
		lease.Drop(ctx, s.pool)
		return UpstreamToken{}, err
	}
	var (
		result UpstreamToken
		ended  error
	)
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lease.End(ctx, tx); errors.Is(err, leases.ErrLost) {
			return ErrRefreshOvertaken
		} else if err != nil {
			return err
		}
		switch {
		case outcome.Dead || outcome.AccessWithdrawn:
			reason := "upstream_refresh_token_dead"
			ended = ErrUpstreamTokenDead
			if outcome.AccessWithdrawn {
				reason, ended = "access_denied", ErrUpstreamAccessWithdrawn
			}
			if err := endSignIn(ctx, tx, siteID, user, reason); err != nil {
				return err
			}
		case outcome.Replace != nil:
			if err := s.putUpstreamToken(ctx, tx, *outcome.Replace); err != nil {
				return err
			}
			result = *outcome.Replace
		default:
			result = current
		}
		return nil
	})
	if err != nil {
		return UpstreamToken{}, err
	}
	s.usersChanged(ctx, changedUser{siteID, user})
	if ended != nil {
		return UpstreamToken{}, ended
	}
	return result, nil
}

// endSignIn deletes the user's ERP token and revokes their grants on the
// site, so that their client has to sign them in again, and records why.
func endSignIn(ctx context.Context, tx pgx.Tx, siteID uuid.UUID, user, reason string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM upstream_tokens WHERE site_id = $1 AND erp_user = $2`, siteID, user); err != nil {
		return database.Classify(err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM oauth_tokens WHERE site_id = $1 AND subject = $2`, siteID, user); err != nil {
		return database.Classify(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO auth_events (site_id, event, erp_user, reason) VALUES ($1, 'grants_revoked', $2, $3)`,
		siteID, user, reason); err != nil {
		return database.Classify(err)
	}
	return nil
}

// EndUnreadableUpstreamToken ends the user's sign-in on the site when their
// stored ERP token cannot be opened (sealed under a key no longer
// configured, or damaged): the token is deleted and their grants revoked,
// as for a dead refresh token, so that their client signs them in again
// instead of failing every call. A token replaced meanwhile by one this
// replica can open is kept.
func (s *Store) EndUnreadableUpstreamToken(ctx context.Context, siteID uuid.UUID, user string) error {
	ended := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		_, err := s.readUpstreamToken(ctx, tx, siteID, user, true)
		switch {
		case errors.Is(err, ErrNoUpstreamToken) || err == nil:
			return nil
		case !errors.Is(err, secrets.ErrUnknownKey) && !errors.Is(err, secrets.ErrDecrypt):
			return err
		}
		ended = true
		return endSignIn(ctx, tx, siteID, user, "upstream_token_unreadable")
	})
	if err != nil {
		return fmt.Errorf("storage: end the sign-in of a user on site %s: %w", siteID, err)
	}
	if ended {
		s.usersChanged(ctx, changedUser{siteID, user})
	}
	return nil
}
