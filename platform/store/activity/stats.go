package activity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/erpgate/erpgate/platform/infra/database"
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
	// of its latency slot (up to twice the true value, at most two-thirds more from 2 ms to 10 s,
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
	// on ERP user, outcome, error code or redaction, nor on a client of one
	// site)
	// rather than the events.
	FromRollup bool
}

// binOrigin aligns buckets on UTC hours and days.
var binOrigin = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// AllSites is the rollup's id for every site together (not a version-4
// UUID, so never a site's).
var AllSites = uuid.MustParse("ffffffff-ffff-ffff-ffff-ffffffffffff")

// Stats aggregates the tool calls matching f (From and To required) by
// step, a whole number of hours. Without a filter on ERP user, outcome,
// error code or redaction, and with a client only across every site, it reads the
// hourly rollup (migration 00023): at most one row per hour and tool,
// whatever the number of events; otherwise the matching events, through
// the filter's index. Both give the same figures for the same calls.
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
	sb := newStatsBuilder(first, step, n)
	rollup := f.ERPUser == "" && f.Outcome == "" && f.ErrorCode == "" && !f.Redacted && f.RequestID == "" && (f.Client == "" || f.SiteID == uuid.Nil)
	// The rollup holds the hours before rolledUntil; the later ones are
	// counted from the events.
	split := first
	if rollup {
		until, err := s.rolledUntil(ctx)
		if err != nil {
			return Stats{}, fmt.Errorf("activity: chart data: %w", database.Classify(err))
		}
		split = clampTime(until, first, end)
		rollup = split.After(first)
	}
	if rollup {
		if err := s.rollupStats(ctx, f, sb, split); err != nil {
			return Stats{}, fmt.Errorf("activity: chart data: %w", err)
		}
	}
	if split.Before(end) {
		if err := s.eventStats(ctx, f, sb, split, end); err != nil {
			return Stats{}, fmt.Errorf("activity: chart data: %w", err)
		}
	}
	st := sb.finish()
	st.From, st.To, st.FromRollup = first, end, rollup
	return st, nil
}

// rollupStats reads the hourly rollup: one row per step and tool, summed
// from at most one row per hour and tool.
func (s *Store) rollupStats(ctx context.Context, f Filter, sb *statsBuilder, end time.Time) error {
	q := &query{}
	site := AllSites
	if f.SiteID != uuid.Nil {
		site = f.SiteID
	}
	q.add("site_id = %s", site)
	q.add("client_id = %s", f.Client)
	q.add("bucket >= %s", sb.first)
	q.add("bucket < %s", end)
	if f.Tool != "" {
		q.add("tool = %s", f.Tool)
	}
	step := q.arg(pgtype.Interval{Microseconds: sb.step.Microseconds(), Valid: true})
	sql := `SELECT date_bin(` + step + `, bucket, ` + q.arg(binOrigin) + `) AS b, tool, sum(calls), sum(errors), ` +
		slotColumns("sum(e%d)", "sum(g%d)") + `
	  FROM usage_rollup WHERE ` + q.clause() + ` GROUP BY 1, 2`
	rows, err := s.pool.Query(ctx, sql, q.args...)
	if err != nil {
		return database.Classify(err)
	}
	defer rows.Close()
	var (
		at          time.Time
		tool        string
		calls, errs int64
		erp         = make([]int64, latencySlots)
		gate        = make([]int64, latencySlots)
		dest        = []any{&at, &tool, &calls, &errs}
	)
	for i := range erp {
		dest = append(dest, &erp[i])
	}
	for i := range gate {
		dest = append(dest, &gate[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if i, ok := sb.index(at); ok {
			sb.addTool(i, tool, calls, errs)
			for k := range latencySlots {
				sb.erp[i][k] += erp[k]
				sb.gate[i][k] += gate[k]
			}
		}
	}
	return database.Classify(rows.Err())
}

// eventStats counts the matching events themselves, through the filter's
// index: each event's two latency slots are computed once (OFFSET 0 keeps
// the subquery from being folded into every use of them), and three
// grouping sets count calls per tool and calls per slot of each kind.
func (s *Store) eventStats(ctx context.Context, f Filter, sb *statsBuilder, from, end time.Time) error {
	g := f
	g.From, g.To = from, end
	q := usageWhere(g)
	q.where = append(q.where, "method = 'tools/call'")
	step := q.arg(pgtype.Interval{Microseconds: sb.step.Microseconds(), Valid: true})
	sql := `SELECT date_bin(` + step + `, occurred_at, ` + q.arg(binOrigin) + `) AS b, tool, failed, es, gs,
	       GROUPING(tool, failed, es, gs), count(*)
	  FROM (SELECT occurred_at, tool, outcome = 'error' AS failed, erpgate_latency_slot(erp_ms) AS es,
	               erpgate_latency_slot(duration_ms - erp_ms) AS gs
	          FROM usage_events WHERE ` + q.clause() + ` OFFSET 0) e
	 GROUP BY GROUPING SETS ((b, tool, failed), (b, es), (b, gs))`
	rows, err := s.pool.Query(ctx, sql, q.args...)
	if err != nil {
		return database.Classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			at     time.Time
			tool   pgtype.Text
			failed pgtype.Bool
			es, gs pgtype.Int4
			set    int32
			count  int64
		)
		if err := rows.Scan(&at, &tool, &failed, &es, &gs, &set, &count); err != nil {
			return err
		}
		i, ok := sb.index(at)
		if !ok {
			continue
		}
		// GROUPING's bits, highest first: tool, failed, es, gs.
		switch set {
		case 0b0011: // (b, tool, failed)
			errs := int64(0)
			if failed.Bool {
				errs = count
			}
			sb.addTool(i, tool.String, count, errs)
		case 0b1101: // (b, es)
			if es.Valid && int(es.Int32) < latencySlots {
				sb.erp[i][es.Int32] += count
			}
		case 0b1110: // (b, gs)
			if gs.Valid && int(gs.Int32) < latencySlots {
				sb.gate[i][gs.Int32] += count
			}
		}
	}
	return database.Classify(rows.Err())
}

// statsBuilder gathers a chart's counts by bucket.
type statsBuilder struct {
	first     time.Time
	step      time.Duration
	buckets   []Bucket
	erp, gate [][]int64 // calls per latency slot, per bucket
	tools     map[string]*ToolCount
}

func newStatsBuilder(first time.Time, step time.Duration, n int) *statsBuilder {
	sb := &statsBuilder{first: first, step: step, buckets: make([]Bucket, n),
		erp: make([][]int64, n), gate: make([][]int64, n), tools: map[string]*ToolCount{}}
	for i := range n {
		sb.buckets[i].Start = first.Add(time.Duration(i) * step)
		sb.erp[i], sb.gate[i] = make([]int64, latencySlots), make([]int64, latencySlots)
	}
	return sb
}

// index is the bucket of a bucket start the query returned.
func (sb *statsBuilder) index(at time.Time) (int, bool) {
	i := int(at.Sub(sb.first) / sb.step)
	return i, i >= 0 && i < len(sb.buckets)
}

// addTool adds calls of a tool in bucket i.
func (sb *statsBuilder) addTool(i int, tool string, calls, errs int64) {
	b := &sb.buckets[i]
	b.Calls += calls
	b.Errors += errs
	k := slices.IndexFunc(b.Tools, func(t ToolCount) bool { return t.Tool == tool })
	if k < 0 {
		b.Tools = append(b.Tools, ToolCount{Tool: tool})
		k = len(b.Tools) - 1
	}
	b.Tools[k].Calls += calls
	b.Tools[k].Errors += errs
	t := sb.tools[tool]
	if t == nil {
		t = &ToolCount{Tool: tool}
		sb.tools[tool] = t
	}
	t.Calls += calls
	t.Errors += errs
}

// finish computes each bucket's percentiles and orders the tools.
func (sb *statsBuilder) finish() Stats {
	st := Stats{Step: sb.step, Buckets: sb.buckets}
	for i := range sb.buckets {
		b := &sb.buckets[i]
		for _, c := range sb.erp[i] {
			b.Timed += c
		}
		b.P50ERP, b.P95ERP = percentile(sb.erp[i], 0.50), percentile(sb.erp[i], 0.95)
		b.P50Gate, b.P95Gate = percentile(sb.gate[i], 0.50), percentile(sb.gate[i], 0.95)
		byCalls(b.Tools)
	}
	for _, t := range sb.tools {
		st.Tools = append(st.Tools, *t)
	}
	byCalls(st.Tools)
	return st
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

// clampTime returns t within [lo, hi].
func clampTime(t, lo, hi time.Time) time.Time {
	switch {
	case t.Before(lo):
		return lo
	case t.After(hi):
		return hi
	}
	return t
}
