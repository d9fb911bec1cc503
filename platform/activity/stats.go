package activity

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/erpgate/erpgate/platform/database"
)

// MaxBuckets is the most time buckets one chart has: 400 (a fortnight of
// hours, a year of days).
const MaxBuckets = 400

// ErrTooManyBuckets refuses a range too long for its step.
var ErrTooManyBuckets = errors.New("the time range is too long to chart by that step; chart it by day, or choose a shorter range")

// ErrOpenRange refuses charts of a range without both ends.
var ErrOpenRange = errors.New("a chart needs both the start and the end of the time range")

// ToolCount is one tool's calls in a bucket.
type ToolCount struct {
	Tool   string
	Calls  int64
	Errors int64
}

// Bucket is one step of a chart: the tool calls that started in
// [Start, Start+step).
type Bucket struct {
	Start  time.Time
	Calls  int64
	Errors int64
	Tools  []ToolCount // most calls first
	// Timed is the number of calls with a measured ERP time; the
	// percentiles (milliseconds, nearest rank) are over those: the whole
	// call, its time with the ERP and its time in erpgate (the whole call
	// minus the ERP's part).
	Timed              int64
	P50Total, P95Total int64
	P50ERP, P95ERP     int64
	P50Gate, P95Gate   int64
}

// ErrorRate is Errors/Calls, 0 without calls.
func (b Bucket) ErrorRate() float64 {
	if b.Calls == 0 {
		return 0
	}
	return float64(b.Errors) / float64(b.Calls)
}

// Stats are the charts' data: every bucket of the range, empty ones
// included, and the tools by calls over the whole range.
type Stats struct {
	Step    time.Duration
	Buckets []Bucket
	Tools   []ToolCount
}

// binOrigin aligns buckets on UTC hours and days.
var binOrigin = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Stats aggregates the tool calls matching f (From and To required) by
// step, in one pass over the rows: counts per (bucket, tool) and
// percentiles per bucket are grouping sets of one query.
func (s *Store) Stats(ctx context.Context, f Filter, step time.Duration) (Stats, error) {
	if err := f.Validate(); err != nil {
		return Stats{}, err
	}
	if f.From.IsZero() || f.To.IsZero() {
		return Stats{}, ErrOpenRange
	}
	if step <= 0 {
		step = time.Hour
	}
	first := binStart(f.From, step)
	n := int(f.To.Sub(first) / step)
	if f.To.Sub(first)%step != 0 {
		n++
	}
	if n > MaxBuckets {
		return Stats{}, ErrTooManyBuckets
	}
	q := usageWhere(f)
	q.where = append(q.where, "method = 'tools/call'")
	stepArg, originArg := q.arg(pgtype.Interval{Microseconds: step.Microseconds(), Valid: true}), q.arg(binOrigin)
	sql := `SELECT date_bin(` + stepArg + `, occurred_at, ` + originArg + `) AS b, tool, GROUPING(tool) = 1 AS whole,
	       count(*), count(*) FILTER (WHERE outcome = 'error'),
	       count(erp_ms),
	       percentile_disc(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE erp_ms IS NOT NULL),
	       percentile_disc(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY erp_ms),
	       percentile_disc(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY greatest(duration_ms - erp_ms, 0)) FILTER (WHERE erp_ms IS NOT NULL)
	  FROM usage_events WHERE ` + q.clause() + `
	 GROUP BY GROUPING SETS ((b, tool), (b))`
	rows, err := s.pool.Query(ctx, sql, q.args...)
	if err != nil {
		return Stats{}, fmt.Errorf("activity: chart data: %w", database.Classify(err))
	}
	defer rows.Close()
	buckets := make([]Bucket, n)
	for i := range buckets {
		buckets[i].Start = first.Add(time.Duration(i) * step)
	}
	tools := map[string]*ToolCount{}
	for rows.Next() {
		var (
			at                 time.Time
			tool               pgtype.Text
			whole              bool
			calls, errs, timed int64
			total, erp, gate   []pgtype.Int8
		)
		if err := rows.Scan(&at, &tool, &whole, &calls, &errs, &timed, &total, &erp, &gate); err != nil {
			return Stats{}, fmt.Errorf("activity: chart data: %w", err)
		}
		i := int(at.Sub(first) / step)
		if i < 0 || i >= n {
			continue
		}
		b := &buckets[i]
		if !whole {
			b.Tools = append(b.Tools, ToolCount{Tool: tool.String, Calls: calls, Errors: errs})
			t := tools[tool.String]
			if t == nil {
				t = &ToolCount{Tool: tool.String}
				tools[tool.String] = t
			}
			t.Calls += calls
			t.Errors += errs
			continue
		}
		b.Calls, b.Errors, b.Timed = calls, errs, timed
		b.P50Total, b.P95Total = pair(total)
		b.P50ERP, b.P95ERP = pair(erp)
		b.P50Gate, b.P95Gate = pair(gate)
	}
	if err := rows.Err(); err != nil {
		return Stats{}, fmt.Errorf("activity: chart data: %w", database.Classify(err))
	}
	st := Stats{Step: step, Buckets: buckets}
	for _, t := range tools {
		st.Tools = append(st.Tools, *t)
	}
	byCalls(st.Tools)
	for i := range buckets {
		byCalls(buckets[i].Tools)
	}
	return st, nil
}

func byCalls(ts []ToolCount) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Calls != ts[j].Calls {
			return ts[i].Calls > ts[j].Calls
		}
		return ts[i].Tool < ts[j].Tool
	})
}

func pair(v []pgtype.Int8) (int64, int64) {
	if len(v) != 2 {
		return 0, 0
	}
	return v[0].Int64, v[1].Int64
}

// binStart is the start of t's bucket.
func binStart(t time.Time, step time.Duration) time.Time {
	d := t.Sub(binOrigin)
	k := d / step
	if d%step < 0 {
		k--
	}
	return binOrigin.Add(k * step).UTC()
}

func siteIDText(id uuid.UUID) string {
	if id == uuid.Nil {
		return ""
	}
	return id.String()
}
