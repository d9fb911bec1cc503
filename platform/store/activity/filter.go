// Package activity reads what happened for the operator: the usage events
// (platform/store/usage's usage_events) and the audit (the OAuth server's
// auth_events and the site-administration layer's admin_events), with the
// viewer's filters, keyset paging newest first, CSV export streamed row by
// row, and the aggregates its charts draw.
//
// Every query is tenant-scoped when the filter names a site: the site id is
// a condition of the query, never a check afterwards. Pages are keyset
// pages on (occurred_at, id) — never OFFSET — so that a page costs the
// same at the millionth row as at the first (migration 00023 gives every
// filter an index ending in that order).
package activity

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Filter selects events. Zero fields select everything.
type Filter struct {
	// From and To bound occurred_at: From <= occurred_at < To. Zero: open.
	From, To time.Time
	// SiteID scopes the query to one site; uuid.Nil: every site.
	SiteID uuid.UUID
	// ERPUser is the ERP user (usage and sign-in events) exactly.
	ERPUser string
	// Tool is the tool name (usage), or the event or action (audit).
	Tool string
	// Outcome is success, error or cancelled (usage); success, refused or
	// error (audit).
	Outcome string
	// ErrorCode is the stable error code (usage) or the reason (audit).
	ErrorCode string
	// Client is the MCP client: OAuth client id or service token id.
	Client string
	// Redacted keeps only calls whose result had values redacted (usage).
	Redacted bool
	// RequestID is the request id of one reply, as X-Request-Id gave it to
	// the client (usage).
	RequestID string
}

// Bad input is refused with one of these; the message is a plain sentence.
var (
	ErrBadCursor = errors.New("the page position is not one this viewer made; start again from the first page")
	ErrBadRange  = errors.New("the end of the time range is before its start")
)

// Validate reports the first thing wrong with f.
func (f Filter) Validate() error {
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		return ErrBadRange
	}
	return nil
}

// Cursor is a position in the newest-first order: the last row of a page.
// Source orders the audit's two tables at the same instant (0 for usage).
type Cursor struct {
	At     time.Time
	Source int
	ID     int64
}

// String encodes the cursor for a link: "<unix microseconds>.<source>.<id>".
func (c Cursor) String() string {
	return strconv.FormatInt(c.At.UnixMicro(), 10) + "." + strconv.Itoa(c.Source) + "." + strconv.FormatInt(c.ID, 10)
}

// ParseCursor reads what String wrote; "" is the first page (ok false).
func ParseCursor(s string) (c Cursor, ok bool, err error) {
	if s == "" {
		return Cursor{}, false, nil
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return Cursor{}, false, ErrBadCursor
	}
	micros, err1 := strconv.ParseInt(parts[0], 10, 64)
	src, err2 := strconv.Atoi(parts[1])
	id, err3 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || src < 0 || src > 1 || id < 0 {
		return Cursor{}, false, ErrBadCursor
	}
	// Postgres keeps 4713 BC to 294276 AD; a cursor outside that range was
	// not made here.
	if micros < minMicros || micros > maxMicros {
		return Cursor{}, false, ErrBadCursor
	}
	return Cursor{At: time.UnixMicro(micros).UTC(), Source: src, ID: id}, true, nil
}

const (
	minMicros = -210866803200000000 // 4713-11-24 BC
	maxMicros = 9224318016000000    // 294276 AD
)

// query builds a WHERE clause with numbered arguments.
type query struct {
	where []string
	args  []any
}

func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

func (q *query) add(format string, v any) {
	q.where = append(q.where, fmt.Sprintf(format, q.arg(v)))
}

func (q *query) clause() string {
	if len(q.where) == 0 {
		return "TRUE"
	}
	return strings.Join(q.where, " AND ")
}

// timeRange adds the filter's time bounds on column.
func (q *query) timeRange(f Filter, column string) {
	if !f.From.IsZero() {
		q.add(column+" >= %s", f.From)
	}
	if !f.To.IsZero() {
		q.add(column+" < %s", f.To)
	}
}

// after adds the keyset condition: rows strictly after c in the order
// (occurred_at DESC, source DESC, id DESC), for a table whose rows all
// have source src.
func (q *query) after(c Cursor, src int, at, id string) {
	switch {
	case src < c.Source:
		q.add(at+" <= %s", c.At)
	case src > c.Source:
		q.add(at+" < %s", c.At)
	default:
		a := q.arg(c.At)
		q.where = append(q.where, fmt.Sprintf("(%s, %s) < (%s, %s)", at, id, a, q.arg(c.ID)))
	}
}
