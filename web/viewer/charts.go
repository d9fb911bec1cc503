package viewer

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/erpgate/erpgate/platform/store/activity"
	"github.com/erpgate/erpgate/web/svgchart"
)

// chartTools is how many tools the calls chart names; the rest are
// "other tools".
const chartTools = 5

// chartView is one chart and the table with its numbers.
type chartView struct {
	ID, Heading string
	SVG         template.HTML
	// Legend is outside the chart's scrolling box, all of it in sight.
	Legend template.HTML
	Table  tableView
}

type tableView struct {
	Caption string
	Head    []string
	Rows    [][]string
}

// charts draws the three charts of the usage page.
func charts(st activity.Stats) []chartView {
	step := "hour"
	if st.Step >= 24*time.Hour {
		step = "day"
	}
	labels := make([]string, len(st.Buckets))
	multiDay := len(st.Buckets) > 0 && st.Buckets[len(st.Buckets)-1].Start.Sub(st.Buckets[0].Start) >= 24*time.Hour
	// Days of more than one year name it: a range of up to 400 days may
	// hold the same day of two years.
	years := len(st.Buckets) > 0 && st.Buckets[len(st.Buckets)-1].Start.Year() != st.Buckets[0].Start.Year()
	for i, b := range st.Buckets {
		switch {
		case step == "day" && years:
			labels[i] = b.Start.Format("2 Jan 2006")
		case step == "day":
			labels[i] = b.Start.Format("2 Jan")
		case multiDay:
			labels[i] = b.Start.Format("2 Jan 15:04")
		default:
			labels[i] = b.Start.Format("15:04")
		}
	}

	// Calls per step, stacked by tool.
	named := st.Tools
	if len(named) > chartTools {
		named = named[:chartTools]
	}
	var series []svgchart.Series
	index := map[string]int{}
	for i, t := range named {
		index[t.Tool] = i
		series = append(series, svgchart.Series{Name: toolName(t.Tool), Values: make([]float64, len(st.Buckets))})
	}
	other := -1
	if len(st.Tools) > chartTools {
		other = len(series)
		series = append(series, svgchart.Series{Name: "other tools", Values: make([]float64, len(st.Buckets))})
	}
	for i, b := range st.Buckets {
		for _, t := range b.Tools {
			if k, ok := index[t.Tool]; ok {
				series[k].Values[i] += float64(t.Calls)
			} else if other >= 0 {
				series[other].Values[i] += float64(t.Calls)
			}
		}
	}
	calls := chartView{ID: "calls", Heading: "Tool calls per " + step}
	callsDrawing := svgchart.Chart{LegendApart: true,
		ID: "calls", Title: "Tool calls per " + step + ", by tool",
		Desc: fmt.Sprintf("Stacked bars of tool calls in each %s, one colour per tool, from %s to %s UTC. The table after the chart has the numbers.",
			step, labelOr(labels, 0), labelOr(labels, len(labels)-1)),
		Kind: svgchart.StackedBars, Labels: labels, Series: series,
		Format: func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) },
	}
	calls.SVG, calls.Legend = callsDrawing.SVG(), callsDrawing.Legend()
	calls.Table = tableView{Caption: "Tool calls per " + step + ", by tool (UTC), newest first", Head: []string{"Start"}}
	for _, s := range series {
		calls.Table.Head = append(calls.Table.Head, s.Name)
	}
	calls.Table.Head = append(calls.Table.Head, "All tools")
	for i, b := range st.Buckets {
		row := []string{labels[i]}
		for _, s := range series {
			row = append(row, strconv.FormatFloat(s.Values[i], 'f', -1, 64))
		}
		calls.Table.Rows = append(calls.Table.Rows, append(row, strconv.FormatInt(b.Calls, 10)))
	}

	// Error rate.
	rate := make([]float64, len(st.Buckets))
	errorsChart := chartView{ID: "errors", Heading: "Error rate per " + step}
	errorsChart.Table = tableView{Caption: "Failed tool calls per " + step + " (UTC), newest first", Head: []string{"Start", "Calls", "Failed", "Error rate"}}
	for i, b := range st.Buckets {
		rate[i] = math.NaN() // no calls: no rate, and a gap in the line
		if b.Calls > 0 {
			rate[i] = 100 * b.ErrorRate()
		}
		errorsChart.Table.Rows = append(errorsChart.Table.Rows, []string{labels[i], strconv.FormatInt(b.Calls, 10),
			strconv.FormatInt(b.Errors, 10), percent(rate[i], b.Calls)})
	}
	errorsDrawing := svgchart.Chart{LegendApart: true,
		ID: "errors", Title: "Error rate per " + step,
		Desc: "A line of the share of tool calls that failed in each " + step + ", in percent. The table after the chart has the numbers.",
		Kind: svgchart.Lines, Labels: labels, Series: []svgchart.Series{{Name: "failed calls (%)", Values: rate}},
		Format: func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "%" },
	}
	errorsChart.SVG, errorsChart.Legend = errorsDrawing.SVG(), errorsDrawing.Legend()

	// Latency, split into the ERP's part and erpgate's.
	lat := []svgchart.Series{{Name: "ERP p50"}, {Name: "ERP p95"}, {Name: "erpgate p50"}, {Name: "erpgate p95"}}
	latency := chartView{ID: "latency", Heading: "Latency per " + step + ": time at the ERP and time in erpgate"}
	latency.Table = tableView{Caption: "Tool call latency per " + step + " in milliseconds, at most (UTC), newest first",
		Head: []string{"Start", "Calls timed", "ERP p50", "ERP p95", "erpgate p50", "erpgate p95"}}
	for i, b := range st.Buckets {
		vals := []int64{b.P50ERP, b.P95ERP, b.P50Gate, b.P95Gate}
		row := []string{labels[i], strconv.FormatInt(b.Timed, 10)}
		for k, v := range vals {
			point := math.NaN()
			if b.Timed > 0 {
				point = float64(min(v, activity.LatencyBounds[len(activity.LatencyBounds)-1]))
			}
			lat[k].Values = append(lat[k].Values, point)
			row = append(row, msText(v, b.Timed))
		}
		latency.Table.Rows = append(latency.Table.Rows, row)
	}
	latencyDrawing := svgchart.Chart{LegendApart: true,
		ID: "latency", Title: "Tool call latency per " + step + ", at the ERP and in erpgate",
		Desc: "Four lines in milliseconds: the median (p50) and 95th percentile (p95) of the time each tool call spent at the ERP, and of the time it spent in erpgate. Each value is the upper bound of a latency step (1, 2, 3, 5, 7, 10, 15 ms and so on), so it may be up to two-thirds more than the true value, and up to twice beyond 10 seconds. The table after the chart has the numbers.",
		Kind: svgchart.Lines, Labels: labels, Series: lat,
		Format: func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + " ms" },
	}
	latency.SVG, latency.Legend = latencyDrawing.SVG(), latencyDrawing.Legend()
	out := []chartView{calls, errorsChart, latency}
	// A chart reads oldest left to newest right; its table, like the
	// events under it, starts with the newest, which is what an operator
	// looks for first and which a long range would otherwise put last.
	for i := range out {
		slices.Reverse(out[i].Table.Rows)
	}
	return out
}

func toolName(t string) string {
	if t == "" {
		return "(no tool)"
	}
	return t
}

func labelOr(labels []string, i int) string {
	if i < 0 || i >= len(labels) {
		return ""
	}
	return labels[i]
}

func percent(v float64, calls int64) string {
	if calls == 0 {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + "%"
}

func msText(v, timed int64) string {
	switch {
	case timed == 0:
		return "–"
	case v == activity.Beyond:
		return "over " + strconv.FormatInt(activity.LatencyBounds[len(activity.LatencyBounds)-1], 10)
	default:
		return strconv.FormatInt(v, 10)
	}
}
