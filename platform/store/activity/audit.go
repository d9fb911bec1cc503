package activity

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// The audit's two sources, in the order the viewer shows rows of one
// instant: site administration before sign-in.
const (
	SourceSignIn = 0 // auth_events
	SourceAdmin  = 1 // admin_events
)

// AuditEvent is one row of auth_events or admin_events, in one shape.
type AuditEvent struct {
	Source     int
	ID         int64
	OccurredAt time.Time
	SiteID     uuid.UUID
	SiteSlug   string
	// Event is the sign-in event (sign_in, consent, login_denied,
	// grants_revoked) or the administration action.
	Event string
	// ERPUser is the person signing in, or the person an action concerned.
	ERPUser  string
	ClientID string
	// ActorKind and Actor say who acted (administration only).
	ActorKind string
	Actor     string
	// Outcome is success, refused (a denied sign-in) or error.
	Outcome string
	Reason  string
	// Repeats is how many events the row stands for: 1, or more for the
	// row that counts a minute's refusals of anonymous visitors
	// (migration 00043).
	Repeats int
	// Sentence says why an administration action was refused, for
	// people (siteadmin keeps it next to the reason, which is in the
	// admin API's words); empty for sign-in events and older events.
	Sentence string
}

// SourceName is "sign-in" or "administration".
func (e AuditEvent) SourceName() string {
	if e.Source == SourceAdmin {
		return "administration"
	}
	return "sign-in"
}

// Cursor is the position of e in the newest-first order.
func (e AuditEvent) Cursor() Cursor { return Cursor{At: e.OccurredAt, Source: e.Source, ID: e.ID} }

// AuditPage is one page of audit events, newest first.
type AuditPage struct {
	Events []AuditEvent
	Next   *Cursor
}

// signInOutcome is an auth event's outcome: a denied login was refused.
const signInOutcome = `CASE WHEN a.event = 'login_denied' THEN 'refused' ELSE 'success' END`

func authWhere(f Filter) *query {
	q := &query{}
	q.timeRange(f, "a.occurred_at")
	if f.SiteID != uuid.Nil {
		q.add("a.site_id = %s", f.SiteID)
	}
	if f.ERPUser != "" {
		q.add("a.erp_user = %s", f.ERPUser)
		q.where = append(q.where, "a.erp_user <> ''")
	}
	if f.Tool != "" {
		q.add("a.event = %s", f.Tool)
	}
	if f.Outcome != "" {
		q.add(signInOutcome+" = %s", f.Outcome)
	}
	if f.ErrorCode != "" {
		q.add("a.reason = %s", f.ErrorCode)
	}
	if f.Client != "" {
		q.add("a.client_id = %s", f.Client)
	}
	return q
}

// adminWhere continues q (whose arguments come first) with the filter on
// admin_events. The person an action concerned is in its details.
func adminWhere(q *query, f Filter) {
	q.where = nil
	q.timeRange(f, "e.occurred_at")
	if f.SiteID != uuid.Nil {
		q.add("e.site_id = %s", f.SiteID)
	}
	if f.ERPUser != "" {
		a := q.arg(f.ERPUser)
		q.where = append(q.where, "(e.details->>'erp_user' = "+a+" OR (e.actor_kind = 'erp_admin' AND e.actor = "+a+"))")
	}
	if f.Tool != "" {
		q.add("e.action = %s", f.Tool)
	}
	if f.Outcome != "" {
		q.add("e.outcome = %s", f.Outcome)
	}
	if f.ErrorCode != "" {
		q.add("e.reason = %s", f.ErrorCode)
	}
	if f.Client != "" {
		// Administration has no MCP client.
		q.where = append(q.where, "FALSE")
	}
}

// auditSQL is both sources merged newest first; each side is limited
// first so that each reads only the head of its index range.
func auditSQL(f Filter, after *Cursor, limit int) (string, []any) {
	q := authWhere(f)
	if after != nil {
		q.after(*after, SourceSignIn, "a.occurred_at", "a.id")
	}
	authClause := q.clause()
	adminWhere(q, f)
	if after != nil {
		q.after(*after, SourceAdmin, "e.occurred_at", "e.id")
	}
	adminClause := q.clause()
	lim := ""
	if limit > 0 {
		lim = " LIMIT " + q.arg(limit)
	}
	sql := `SELECT source, id, occurred_at, site_id, site_slug, event, erp_user, client_id, actor_kind, actor, outcome, reason, repeats, sentence FROM (
	(SELECT ` + fmt.Sprint(SourceSignIn) + ` AS source, a.id, a.occurred_at, a.site_id, coalesce(s.slug, '') AS site_slug,
	        a.event, a.erp_user, a.client_id, '' AS actor_kind, '' AS actor, ` + signInOutcome + ` AS outcome, a.reason, a.repeats, '' AS sentence
	   FROM auth_events a LEFT JOIN sites s ON s.id = a.site_id
	  WHERE ` + authClause + ` ORDER BY a.occurred_at DESC, a.id DESC` + lim + `)
	UNION ALL
	(SELECT ` + fmt.Sprint(SourceAdmin) + `, e.id, e.occurred_at, e.site_id, e.site_slug,
	        e.action, coalesce(e.details->>'erp_user', ''), '', e.actor_kind, e.actor, e.outcome, e.reason, e.repeats, e.sentence
	   FROM admin_events e
	  WHERE ` + adminClause + ` ORDER BY e.occurred_at DESC, e.id DESC` + lim + `)
) u ORDER BY occurred_at DESC, source DESC, id DESC` + lim
	return sql, q.args
}

// Audit returns up to limit audit events matching f, newest first, after
// the cursor (nil: from the newest).
func (s *Store) Audit(ctx context.Context, f Filter, after *Cursor, limit int) (AuditPage, error) {
	if err := f.Validate(); err != nil {
		return AuditPage{}, err
	}
	limit = min(max(limit, 1), MaxPage)
	sql, args := auditSQL(f, after, limit+1)
	events, next, err := page(ctx, s.pool, sql, args, scanAudit, limit, AuditEvent.Cursor)
	if err != nil {
		return AuditPage{}, fmt.Errorf("activity: audit events: %w", err)
	}
	return AuditPage{Events: events, Next: next}, nil
}

// EachAudit calls fn for every audit event matching f, newest first, as
// the rows arrive.
func (s *Store) EachAudit(ctx context.Context, f Filter, fn func(AuditEvent) error) error {
	if err := f.Validate(); err != nil {
		return err
	}
	sql, args := auditSQL(f, nil, 0)
	if err := each(ctx, s.pool, sql, args, scanAudit, fn); err != nil {
		return fmt.Errorf("activity: export audit events: %w", err)
	}
	return nil
}

func scanAudit(row pgx.CollectableRow) (AuditEvent, error) {
	var (
		e      AuditEvent
		siteID pgtype.UUID
	)
	err := row.Scan(&e.Source, &e.ID, &e.OccurredAt, &siteID, &e.SiteSlug, &e.Event, &e.ERPUser, &e.ClientID,
		&e.ActorKind, &e.Actor, &e.Outcome, &e.Reason, &e.Repeats, &e.Sentence)
	if siteID.Valid {
		e.SiteID = siteID.Bytes
	}
	e.OccurredAt = e.OccurredAt.UTC()
	return e, err
}
