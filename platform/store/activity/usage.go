package activity

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/requestid"
)

// Store reads the event tables.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore reads from pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// MaxPage is the most rows one page holds.
const MaxPage = 500

// UsageEvent is one row of usage_events.
type UsageEvent struct {
	ID         int64
	OccurredAt time.Time
	SiteID     uuid.UUID // uuid.Nil for rows stored without one
	SiteSlug   string
	AuthType   string
	ERPUser    string
	ClientID   string
	RequestID  string
	Method     string
	Tool       string
	Outcome    string
	ErrorCode  string
	DurationMS int64
	// ERPMS is the time with the ERP; HasERPMS is false for requests
	// other than tools/call and rows stored before it was measured.
	ERPMS    int64
	HasERPMS bool
	// RedactedCount values were redacted from the result, in the fields
	// RedactedFields names.
	RedactedCount  int
	RedactedFields string
}

// Cursor is the position of e in the newest-first order.
func (e UsageEvent) Cursor() Cursor { return Cursor{At: e.OccurredAt, ID: e.ID} }

// UsagePage is one page of usage events, newest first. Next is where the
// next page starts; nil on the last page.
type UsagePage struct {
	Events []UsageEvent
	Next   *Cursor
}

const usageColumns = `id, occurred_at, site_id, site_slug, auth_type, erp_user, client_id, request_id,
	method, tool, outcome, error_code, duration_ms, erp_ms, redacted_count, redacted_fields`

// usageWhere is the filter on usage_events.
func usageWhere(f Filter) *query {
	q := &query{}
	q.timeRange(f, "occurred_at")
	if f.SiteID != uuid.Nil {
		q.add("site_id = %s", f.SiteID)
	}
	if f.ERPUser != "" {
		q.add("erp_user = %s", f.ERPUser)
	}
	if f.Tool != "" {
		q.add("tool = %s", f.Tool)
	}
	if f.Outcome != "" {
		q.add("outcome = %s", f.Outcome)
		if f.Outcome != "success" {
			// The same condition as the partial index of failed calls, so
			// that the planner may use it.
			q.where = append(q.where, "outcome <> 'success'")
		}
	}
	if f.ErrorCode != "" {
		q.add("error_code = %s", f.ErrorCode)
		q.where = append(q.where, "error_code <> ''")
	}
	if f.Client != "" {
		q.add("client_id = %s", f.Client)
		q.where = append(q.where, "client_id <> ''")
	}
	if f.ERPUser != "" {
		q.where = append(q.where, "erp_user <> ''")
	}
	if f.Redacted {
		// The partial index's condition.
		q.where = append(q.where, "redacted_count > 0")
	}
	if f.RequestID != "" {
		q.add("request_id = %s", f.RequestID)
		// usage_events has no index of request ids, which every stored
		// event would pay for. An id carries the time it was made
		// (requestid), shortly before its call started: the event is found
		// among the minutes after it, by the time indexes.
		if made, ok := requestid.Time(f.RequestID); ok && mayHold(f, made) {
			q.add("occurred_at >= %s", made.Add(-requestClockSlack))
			q.add("occurred_at < %s", made.Add(requestStartWithin))
		}
	}
	return q
}

const (
	// requestStartWithin bounds how long after its id a call starts: the
	// id is made when the request is admitted, the call starts once its
	// body is read (ERPGATE_HTTP_BODY_TIMEOUT, 30 s) and it has a work
	// slot (within ERPGATE_UPSTREAM_BUDGET, 50 s), with room for settings
	// far above those.
	requestStartWithin = 15 * time.Minute
	// requestClockSlack allows for the replica's clock being set back
	// between the two readings.
	requestClockSlack = time.Minute
)

// mayHold reports whether f's time range may hold the event of a request
// id made at made. An id made before ids carried their time is random,
// and reads as an instant somewhere in 180 years, almost never in the
// range asked for: such an id is looked for in the whole range.
func mayHold(f Filter, made time.Time) bool {
	return (f.From.IsZero() || made.Add(requestStartWithin).After(f.From)) &&
		(f.To.IsZero() || made.Add(-requestClockSlack).Before(f.To))
}

// Usage returns up to limit usage events matching f, newest first, after
// the cursor (nil: from the newest).
func (s *Store) Usage(ctx context.Context, f Filter, after *Cursor, limit int) (UsagePage, error) {
	if err := f.Validate(); err != nil {
		return UsagePage{}, err
	}
	limit = min(max(limit, 1), MaxPage)
	q := usageWhere(f)
	if after != nil {
		q.after(*after, 0, "occurred_at", "id")
	}
	sql := `SELECT ` + usageColumns + ` FROM usage_events WHERE ` + q.clause() +
		` ORDER BY occurred_at DESC, id DESC LIMIT ` + q.arg(limit+1)
	events, next, err := page(ctx, s.pool, sql, q.args, scanUsage, limit, UsageEvent.Cursor)
	if err != nil {
		return UsagePage{}, fmt.Errorf("activity: usage events: %w", err)
	}
	return UsagePage{Events: events, Next: next}, nil
}

// EachUsage calls fn for every usage event matching f, newest first, as
// the rows arrive: an export of a million rows holds one row at a time.
func (s *Store) EachUsage(ctx context.Context, f Filter, fn func(UsageEvent) error) error {
	if err := f.Validate(); err != nil {
		return err
	}
	q := usageWhere(f)
	err := each(ctx, s.pool, `SELECT `+usageColumns+` FROM usage_events WHERE `+q.clause()+
		` ORDER BY occurred_at DESC, id DESC`, q.args, scanUsage, fn)
	if err != nil {
		return fmt.Errorf("activity: export usage events: %w", err)
	}
	return nil
}

// page runs a page query that asked for limit+1 rows: the rows beyond
// limit only tell that there is a next page, which starts after the last
// row shown.
func page[T any](ctx context.Context, pool *pgxpool.Pool, sql string, args []any, scan pgx.RowToFunc[T], limit int, cursor func(T) Cursor) ([]T, *Cursor, error) {
	rows, err := pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, nil, database.Classify(err)
	}
	list, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, nil, database.Classify(err)
	}
	if len(list) <= limit {
		return list, nil, nil
	}
	list = list[:limit]
	c := cursor(list[limit-1])
	return list, &c, nil
}

// each calls fn for every row of the query as it arrives.
func each[T any](ctx context.Context, pool *pgxpool.Pool, sql string, args []any, scan pgx.RowToFunc[T], fn func(T) error) error {
	rows, err := pool.Query(ctx, sql, args...)
	if err != nil {
		return database.Classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return err
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	return database.Classify(rows.Err())
}

func scanUsage(row pgx.CollectableRow) (UsageEvent, error) {
	var (
		e      UsageEvent
		siteID pgtype.UUID
		dur    int32
		erp    pgtype.Int4
		rc     int32
	)
	err := row.Scan(&e.ID, &e.OccurredAt, &siteID, &e.SiteSlug, &e.AuthType, &e.ERPUser, &e.ClientID, &e.RequestID,
		&e.Method, &e.Tool, &e.Outcome, &e.ErrorCode, &dur, &erp, &rc, &e.RedactedFields)
	if siteID.Valid {
		e.SiteID = siteID.Bytes
	}
	e.OccurredAt = e.OccurredAt.UTC()
	e.DurationMS, e.ERPMS, e.HasERPMS = int64(dur), int64(erp.Int32), erp.Valid
	e.RedactedCount = int(rc)
	return e, err
}
