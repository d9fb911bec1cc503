package sites

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// Event is one site-administration action, as the admin_events table keeps
// it. It never holds a secret.
type Event struct {
	ID         int64
	OccurredAt time.Time
	// SiteID is the site the action concerned; uuid.Nil when there was none
	// (a refused creation). SiteSlug is kept so that events outlive sites.
	SiteID   uuid.UUID
	SiteSlug string
	// ActorKind is operator, erp_admin or registrant; Actor names who
	// (the ERP user, or "admin_token").
	ActorKind string
	Actor     string
	Action    string
	// Outcome is success, refused or error; Reason says why when not
	// success, in the admin API's words or as a code. Sentence says why a
	// refused action was refused as a sentence for people (the site
	// owner's page); empty for events stored without one.
	Outcome  string
	Reason   string
	Sentence string
	// Details holds old and new values of what changed; nil for none.
	Details map[string]any
	// Repeats is how many refusals the event stands for: 1, or more for
	// the summary of a minute's anonymous refusals (RecordRefusalSummary).
	Repeats int
}

// RecordEvent appends e to admin_events.
func (s *Store) RecordEvent(ctx context.Context, e Event) error {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	raw, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("sites: record %s event: %w", e.Action, err)
	}
	var siteID *uuid.UUID
	if e.SiteID != uuid.Nil {
		siteID = &e.SiteID
	}
	// A refused action's input may hold what Postgres cannot store (a NUL,
	// bytes that are not UTF-8); the event is kept with those replaced.
	if _, err := s.pool.Exec(ctx, `
		INSERT INTO admin_events (site_id, site_slug, actor_kind, actor, action, outcome, reason, sentence, details)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		siteID, database.StorableText(e.SiteSlug), database.StorableText(e.ActorKind), database.StorableText(e.Actor), database.StorableText(e.Action),
		database.StorableText(e.Outcome), database.StorableText(e.Reason), database.StorableText(e.Sentence), database.StorableJSON(raw)); err != nil {
		return fmt.Errorf("sites: record %s event: %w", e.Action, database.Classify(err))
	}
	return nil
}

// RecordRefusalSummary counts e, the refusal of an anonymous visitor (no
// signed-in person; e.SiteID is the site it concerned, or uuid.Nil), in
// the summary row of its action, site, code and the current minute (the
// database's clock, UTC), which every replica adds to: the row is made
// with e's actor, reason, sentence and details, as an example, and counts
// the refusals (repeats). code names the kind of refusal from a fixed set
// (never the visitor's input), so that a minute has few rows. Anyone may
// cause these refusals from many addresses, each within its own limit:
// one row a minute per action, site and code bounds what they add.
func (s *Store) RecordRefusalSummary(ctx context.Context, e Event, code string) error {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	raw, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("sites: record %s refusals: %w", e.Action, err)
	}
	var siteID *uuid.UUID
	site := "-"
	if e.SiteID != uuid.Nil {
		siteID, site = &e.SiteID, e.SiteID.String()
	}
	if _, err := s.pool.Exec(ctx, `
		INSERT INTO admin_events AS e (site_id, site_slug, actor_kind, actor, action, outcome, reason, sentence, details, summary_key)
		VALUES ($1, $2, $3, $4, $5, 'refused', $6, $7, $8,
		        $5 || ' ' || $9::text || ' ' || $10::text || ' ' || to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI'))
		ON CONFLICT (summary_key) WHERE summary_key IS NOT NULL DO UPDATE SET repeats = e.repeats + 1`,
		siteID, database.StorableText(e.SiteSlug), database.StorableText(e.ActorKind), database.StorableText(e.Actor), database.StorableText(e.Action),
		database.StorableText(e.Reason), database.StorableText(e.Sentence), database.StorableJSON(raw), site, database.StorableText(code)); err != nil {
		return fmt.Errorf("sites: record %s refusals: %w", e.Action, database.Classify(err))
	}
	return nil
}

// ListEvents returns the site's events since since (the zero time: all),
// newest first, at most limit.
func (s *Store) ListEvents(ctx context.Context, siteID uuid.UUID, since time.Time, limit int) ([]Event, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, occurred_at, coalesce(site_id, '00000000-0000-0000-0000-000000000000'), site_slug,
		       actor_kind, actor, action, outcome, reason, sentence, details, repeats
		FROM admin_events WHERE site_id = $1 AND occurred_at >= $2
		ORDER BY occurred_at DESC, id DESC LIMIT $3`, siteID, since, limit)
	if err != nil {
		return nil, fmt.Errorf("sites: list events of site %s: %w", siteID, database.Classify(err))
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) {
		var (
			e   Event
			raw []byte
		)
		if err := r.Scan(&e.ID, &e.OccurredAt, &e.SiteID, &e.SiteSlug, &e.ActorKind, &e.Actor, &e.Action, &e.Outcome, &e.Reason, &e.Sentence, &raw, &e.Repeats); err != nil {
			return e, err
		}
		if err := json.Unmarshal(raw, &e.Details); err != nil {
			return e, err
		}
		return e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("sites: list events of site %s: %w", siteID, database.Classify(err))
	}
	return list, nil
}

// TenantSince returns when the site last moved to another tenant, or the
// zero time when it never has (or does not exist). From then on its
// administrators are another company's: the owner's page shows them only
// what happened since.
func (s *Store) TenantSince(ctx context.Context, siteID uuid.UUID) (time.Time, error) {
	var since *time.Time
	err := s.pool.QueryRow(ctx, `SELECT tenant_since FROM sites WHERE id = $1`, siteID).Scan(&since)
	if err != nil && !database.IsNoRows(err) {
		return time.Time{}, fmt.Errorf("sites: tenant move of site %s: %w", siteID, database.Classify(err))
	}
	if since == nil {
		return time.Time{}, nil
	}
	return *since, nil
}
