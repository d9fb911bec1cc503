package activity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
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

// LatencyBounds are the bounds of the latency slots, in milliseconds
// (migration 00023's erpgate_latency_slot): a slot holds the calls of at
// most its bound and more than the bound before it; one more slot holds
// everything longer than the last bound.
var LatencyBounds = []int64{0, 1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700,
	1000, 1500, 2000, 3000, 5000, 7000, 10000, 20000, 30000, 60000}

// latencySlots is the number of slots, the one beyond the bounds included.
var latencySlots = len(LatencyBounds) + 1

// Beyond is the percentile of calls in the last slot: longer than the
// last bound.
const Beyond = int64(math.MaxInt32)

// Bucket is one step of a chart: the tool calls that started in
// [Start, Start+step).
type Bucket struct {
	Start  time.Time
	Calls  int64
	Errors int64
	Tools  []ToolCount // most calls first
	// Timed is the number of calls with a measured ERP time. The
	// percentiles (nearest rank) are over those, each given as the bound
	// of its latency slot (at most half as much again as the true value,
	// or Beyond): the time with the ERP and the time in erpgate (the whole
	// call minus the ERP's part).
	Timed            int64
	P50ERP, P95ERP   int64
	P50Gate, P95Gate int64
}

// ErrorRate is Errors/Calls, 0 without calls.
func (b Bucket) ErrorRate() float64 {
	if b.Calls == 0 {
		return 0
	}
	return float64(b.Errors) / float64(b.Calls)
}

// Stats are the charts' data: every bucket of the range, empty ones
// included, and the tools by calls over the whole range. Charts cover
// whole steps: From is taken back to the start of its step and To on to
// the end of its own.
type Stats struct {
	Step     time.Duration
	From, To time.Time
	Buckets  []Bucket
	Tools    []ToolCount
	// FromRollup says the figures came from the hourly rollup (no filter
	// on ERP user, client, outcome or error code) rather than the events.
	FromRollup bool
}

// binOrigin aligns buckets on UTC hours and days.
var binOrigin = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// AllSites is the rollup's id for every site together (not a version-4
// UUID, so never a site's).
var AllSites = uuid.MustParse("ffffffff-ffff-ffff-ffff-ffffffffffff")

// Stats aggregates the tool calls matching f (From and To required) by
// step, a whole number of hours. Without a filter on ERP user, client,
// outcome or error code it reads the hourly rollup (migration 00023): at
// most one row per hour and tool, whatever the number of events; with
// one, the matching events, through the filter's index. Both give the
// same figures for the same calls.
func (s *Store) Stats(ctx context.Context, f Filter, step time.Duration) (Stats, error) {
	if err := f.Validate(); err != nil {
		return Stats{}, err
	}
	if f.From.IsZero() || f.To.IsZero() {
		return Stats{}, ErrOpenRange
	}
	if step <= 0 || step%time.Hour != 0 {
		step = time.Hour
	}
	first := binStart(f.From, step)
	end := binStart(f.To, step)
	if end.Before(f.To) {
		end = end.Add(step)
	}
	n := int(end.Sub(first) / step)
	if n > MaxBuckets {
		return Stats{}, ErrTooManyBuckets
	}
	rollup := f.ERPUser == "" && f.Client == "" && f.Outcome == "" && f.ErrorCode == ""
	q := &query{}
	var source string
	if rollup {
		site := AllSites
		if f.SiteID != uuid.Nil {
			site = f.SiteID
		}
		q.add("site_id = %s", site)
		q.add("bucket >= %s", first)
		q.add("bucket < %s", end)
		if f.Tool != "" {
			q.add("tool = %s", f.Tool)
		}
		source = `SELECT bucket, tool, calls, errors, timed, ` + slotColumns("", "") + ` FROM usage_rollup WHERE ` + q.clause()
	} else {
		g := f
		g.From, g.To = first, end
		q = usageWhere(g)
		q.where = append(q.where, "method = 'tools/call'")
		source = `SELECT occurred_at AS bucket, tool, 1 AS calls, (outcome = 'error')::int AS errors, (es IS NOT NULL)::int AS timed, ` +
			slotColumns("(es = %d)::int AS e%d", "(gs = %d)::int AS g%d") + `
		  FROM (SELECT occurred_at, tool, outcome, erpgate_latency_slot(erp_ms) AS es, erpgate_latency_slot(duration_ms - erp_ms) AS gs
		          FROM usage_events WHERE ` + q.clause() + `) e`
	}
	stepArg, originArg := q.arg(pgtype.Interval{Microseconds: step.Microseconds(), Valid: true}), q.arg(binOrigin)
	sql := `SELECT date_bin(` + stepArg + `, bucket, ` + originArg + `) AS b, tool, GROUPING(tool) = 1 AS whole,
	       sum(calls)::bigint, sum(errors)::bigint, sum(timed)::bigint, ` + slotColumns("coalesce(sum(e%d), 0)::bigint", "coalesce(sum(g%d), 0)::bigint") + `
	  FROM (` + source + `) s
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
	var (
		at                 time.Time
		tool               pgtype.Text
		whole              bool
		calls, errs, timed int64
		erp                = make([]int64, latencySlots)
		gate               = make([]int64, latencySlots)
		dest               = []any{&at, &tool, &whole, &calls, &errs, &timed}
	)
	for i := range erp {
		dest = append(dest, &erp[i])
	}
	for i := range gate {
		dest = append(dest, &gate[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
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
		b.P50ERP, b.P95ERP = percentile(erp, 0.50), percentile(erp, 0.95)
		b.P50Gate, b.P95Gate = percentile(gate, 0.50), percentile(gate, 0.95)
	}
	if err := rows.Err(); err != nil {
		return Stats{}, fmt.Errorf("activity: chart data: %w", database.Classify(err))
	}
	st := Stats{Step: step, From: first, To: end, Buckets: buckets, FromRollup: rollup}
	for _, t := range tools {
		st.Tools = append(st.Tools, *t)
	}
	byCalls(st.Tools)
	for i := range buckets {
		byCalls(buckets[i].Tools)
	}
	return st, nil
}

// slotColumns lists the latency slot columns, e0..eN then g0..gN, each
// written by its format (with the slot number given twice if the format
// takes it twice); empty formats give the bare names.
func slotColumns(erpFormat, gateFormat string) string {
	var b strings.Builder
	for k, format := range []string{erpFormat, gateFormat} {
		prefix := [2]string{"e", "g"}[k]
		for i := range latencySlots {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			switch strings.Count(format, "%d") {
			case 0:
				b.WriteString(prefix + strconv.Itoa(i))
			case 1:
				fmt.Fprintf(&b, format, i)
			default:
				fmt.Fprintf(&b, format, i, i)
			}
		}
	}
	return b.String()
}

// percentile is the bound of the slot holding the nearest-rank q-th
// percentile of the counts; 0 without calls.
func percentile(counts []int64, q float64) int64 {
	var n int64
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	var seen int64
	for i, c := range counts {
		if seen += c; seen >= rank {
			if i < len(LatencyBounds) {
				return LatencyBounds[i]
			}
			return Beyond
		}
	}
	return Beyond
}

func byCalls(ts []ToolCount) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Calls != ts[j].Calls {
			return ts[i].Calls > ts[j].Calls
		}
		return ts[i].Tool < ts[j].Tool
	})
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
