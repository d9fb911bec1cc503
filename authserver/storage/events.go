package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// AuthEventKind names a sign-in audit event.
type AuthEventKind string

// The events of auth_events_event_check.
const (
	EventSignIn        AuthEventKind = "sign_in"
	EventConsent       AuthEventKind = "consent"
	EventLoginDenied   AuthEventKind = "login_denied"
	EventGrantsRevoked AuthEventKind = "grants_revoked"
)

// AuthEvent is one sign-in audit record. It never carries tokens.
type AuthEvent struct {
	OccurredAt time.Time
	SiteID     uuid.UUID
	Kind       AuthEventKind
	ERPUser    string
	ClientID   string
	// Reason says why a login was denied ("access_denied",
	// "access_check_misconfigured", …).
	Reason string
}

// RecordAuthEvent stores e.
func (s *Store) RecordAuthEvent(ctx context.Context, e AuthEvent) error {
	var siteID *uuid.UUID
	if e.SiteID != uuid.Nil {
		siteID = &e.SiteID
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO auth_events (site_id, event, erp_user, client_id, reason) VALUES ($1, $2, $3, $4, $5)`,
		siteID, string(e.Kind), e.ERPUser, e.ClientID, e.Reason)
	if err != nil {
		return fmt.Errorf("storage: record %s event: %w", e.Kind, notFound(err))
	}
	return nil
}

// CountAnonymousRefusal counts e, a sign-in refused before anyone signed
// in (no ERP user), in the summary row of its site, event and reason for
// the current minute (the database's clock, UTC), which every replica adds
// to (repeats); the row keeps the first one's client id. Anyone may start
// a sign-in and end it so, from many addresses: one row a minute per site
// and reason bounds what they add. e.Reason must come from a fixed set.
func (s *Store) CountAnonymousRefusal(ctx context.Context, e AuthEvent) error {
	var siteID *uuid.UUID
	key := "-"
	if e.SiteID != uuid.Nil {
		siteID, key = &e.SiteID, e.SiteID.String()
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO auth_events AS a (site_id, event, client_id, reason, summary_key)
		VALUES ($1, $2, $3, $4, $5 || ' ' || $2 || ' ' || $4 || ' ' || to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI'))
		ON CONFLICT (summary_key) WHERE summary_key IS NOT NULL DO UPDATE SET repeats = a.repeats + 1`,
		siteID, string(e.Kind), e.ClientID, e.Reason, key)
	if err != nil {
		return fmt.Errorf("storage: count %s event: %w", e.Kind, notFound(err))
	}
	return nil
}

// AuthEvents returns a site's most recent events, newest first.
func (s *Store) AuthEvents(ctx context.Context, siteID uuid.UUID, limit int) ([]AuthEvent, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT occurred_at, event, erp_user, client_id, reason FROM auth_events
		WHERE site_id = $1 ORDER BY id DESC LIMIT $2`, siteID, limit)
	if err != nil {
		return nil, fmt.Errorf("storage: list auth events: %w", notFound(err))
	}
	defer rows.Close()
	var out []AuthEvent
	for rows.Next() {
		e := AuthEvent{SiteID: siteID}
		var kind string
		if err := rows.Scan(&e.OccurredAt, &kind, &e.ERPUser, &e.ClientID, &e.Reason); err != nil {
			return nil, fmt.Errorf("storage: list auth events: %w", notFound(err))
		}
		e.Kind = AuthEventKind(kind)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: list auth events: %w", notFound(err))
	}
	return out, nil
}
