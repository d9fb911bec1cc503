// Package svgchart draws small charts as SVG on the server: stacked bars
// and lines over a row of time buckets, with a title and a description for
// screen readers, the axes labelled, and each series told apart by more
// than its colour (bars by their order and the legend; lines by dash
// pattern and marker). The page shows the same numbers in a table next to
// the chart. No script, no style attribute: colours are presentation
// attributes, which the pages' Content-Security-Policy allows.
//
// It imports nothing of erpgate's.
package svgchart

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Kind is how a chart draws its series.
type Kind int

// Kinds.
const (
	StackedBars Kind = iota
	Lines
)

// Series is one named row of values, one per label.
type Series struct {
	Name   string
	Values []float64
}

// Chart is what to draw.
type Chart struct {
	// ID makes the element ids unique on the page ("calls", "latency").
	ID    string
	Title string
	// Desc is the sentence a screen reader reads after the title: what
	// the chart shows and where its table is.
	Desc   string
	Kind   Kind
	Labels []string // one per bucket, left to right
	Series []Series
	// Format writes a value for the axis ("12", "4.5%", "120 ms").
	Format func(float64) string
	// LegendApart leaves the legend out of the SVG, for the page to show
	// Legend next to it: a chart scrolled in a narrow box would otherwise
	// hide part of its legend.
	LegendApart bool
}

// Geometry, in SVG user units; the SVG scales to its container.
const (
	width, height = 760.0, 260.0
	// The values' axis is on the right, next to the newest bucket; the
	// left keeps room for the first time label ("12 Nov 2025") centred
	// under its bucket.
	padLeft, padRight    = 40.0, 64.0
	padTop, padBottom    = 12.0, 44.0
	legendRow            = 20.0
	plotW                = width - padLeft - padRight
	maxXLabels           = 8
	axisInk, gridInk     = "#4d5566", "#d5dae3"
	textSize             = "12"
	markerSize           = 3.0
	barGapShare          = 0.2
	legendSwatch, legend = 12.0, 8.0
)

// palette is Okabe and Ito's, readable with the common colour-vision
// deficiencies; the darker ones come first, all at least 3:1 against white.
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#8a6d00", "#56B4E9", "#4d5566"}

// dashes tell lines apart without colour.
var dashes = []string{"", "6 3", "2 3", "8 3 2 3"}

// SVG draws the chart.
func (c Chart) SVG() template.HTML {
	format := c.Format
	if format == nil {
		format = func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	}
	n := len(c.Labels)
	legendRows := (len(c.Series) + 3) / 4
	if c.LegendApart {
		legendRows = 0
	}
	total := height + float64(legendRows)*legendRow
	if c.LegendApart {
		// Only the x labels under the plot (their baseline is 18 below
		// it): the room the legend's first row had goes too.
		total = height - legendRow + 2
	}
	plotH := height - padTop - padBottom

	top := 0.0
	for i := range n {
		sum := 0.0
		for _, s := range c.Series {
			v := at(s.Values, i)
			if c.Kind == StackedBars {
				sum += v
			} else {
				top = math.Max(top, v)
			}
		}
		top = math.Max(top, sum)
	}
	ticks := niceTicks(top)
	scaleTop := ticks[len(ticks)-1]
	y := func(v float64) float64 { return padTop + plotH - v/scaleTop*plotH }
	step := plotW / float64(max(n, 1))

	var b strings.Builder
	id := html.EscapeString(c.ID)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %g %g" role="img" aria-labelledby="%s-title %s-desc" font-family="system-ui, sans-serif" font-size="%s">`,
		width, total, id, id, textSize)
	fmt.Fprintf(&b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, id, html.EscapeString(c.Title), id, html.EscapeString(c.Desc))

	// Grid and y axis.
	for _, t := range ticks {
		ty := y(t)
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="%s" stroke-width="1"/>`, padLeft, ty, width-padRight, ty, gridInk)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="start" dominant-baseline="middle" fill="%s">%s</text>`, width-padRight+6, ty, axisInk, html.EscapeString(format(t)))
	}
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="1"/>`, padLeft, padTop+plotH, width-padRight, padTop+plotH, axisInk)

	// X labels: at most maxXLabels, evenly spaced.
	every := max(1, (n+maxXLabels-1)/maxXLabels)
	for i := 0; i < n; i += every {
		x := padLeft + step*(float64(i)+0.5)
		// A label near either edge is anchored inside the chart.
		anchor := "middle"
		half := float64(len(c.Labels[i])) * 3.5
		switch {
		case x+half > width:
			anchor, x = "end", width-2
		case x-half < 0:
			anchor, x = "start", 2
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="%s" fill="%s">%s</text>`, x, padTop+plotH+18, anchor, axisInk, html.EscapeString(c.Labels[i]))
	}

	switch c.Kind {
	case StackedBars:
		barW := step * (1 - barGapShare)
		for i := range n {
			base := 0.0
			x := padLeft + step*float64(i) + (step-barW)/2
			for si, s := range c.Series {
				v := at(s.Values, i)
				if v <= 0 {
					continue
				}
				y0, y1 := y(base), y(base+v)
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s, %s: %s</title></rect>`,
					x, y1, barW, math.Max(y0-y1, 0.5), palette[si%len(palette)],
					html.EscapeString(c.Labels[i]), html.EscapeString(s.Name), html.EscapeString(format(v)))
				base += v
			}
		}
	case Lines:
		// A missing value (NaN: nothing measured in that bucket) breaks
		// the line rather than drawing a zero.
		for si, s := range c.Series {
			colour := palette[si%len(palette)]
			dash := ""
			if d := dashes[si%len(dashes)]; d != "" {
				dash = ` stroke-dasharray="` + d + `"`
			}
			var pts []string
			flush := func() {
				if len(pts) > 1 {
					fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, strings.Join(pts, " "), colour, dash)
				}
				pts = pts[:0]
			}
			for i := range n {
				if missing(s.Values, i) {
					flush()
					continue
				}
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", padLeft+step*(float64(i)+0.5), y(at(s.Values, i))))
			}
			flush()
			for i := range n {
				if missing(s.Values, i) || n > 60 && !isolated(s.Values, i) {
					continue
				}
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="%g" fill="%s"><title>%s, %s: %s</title></circle>`,
					padLeft+step*(float64(i)+0.5), y(at(s.Values, i)), markerSize, colour,
					html.EscapeString(c.Labels[i]), html.EscapeString(s.Name), html.EscapeString(format(at(s.Values, i))))
			}
		}
	}

	// Legend, four to a row, under the x labels.
	for si, s := range c.Series {
		if c.LegendApart {
			break
		}
		colour := palette[si%len(palette)]
		lx := padLeft + float64(si%4)*(plotW/4)
		ly := height + float64(si/4)*legendRow - 10
		if c.Kind == StackedBars {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%g" height="%g" fill="%s"/>`, lx, ly-legendSwatch+2, legendSwatch, legendSwatch, colour)
		} else {
			dash := ""
			if d := dashes[si%len(dashes)]; d != "" {
				dash = ` stroke-dasharray="` + d + `"`
			}
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`, lx, ly-4, lx+24, ly-4, colour, dash)
		}
		off := legendSwatch + legend
		if c.Kind == Lines {
			off = 24 + legend
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s">%s</text>`, lx+off, ly, "#1c2230", html.EscapeString(s.Name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text in it went through html.EscapeString
}

// Legend is the chart's legend as HTML, a list that wraps on a narrow
// screen: each series' name after a key drawn as in the chart (a swatch
// for bars, the line's colour and dashes for lines). The keys are hidden
// from screen readers, which read the chart's table.
func (c Chart) Legend() template.HTML {
	var b strings.Builder
	b.WriteString(`<ul class="legend">`)
	for si, s := range c.Series {
		colour := palette[si%len(palette)]
		if c.Kind == StackedBars {
			fmt.Fprintf(&b, `<li><svg class="key" viewBox="0 0 %g %g" aria-hidden="true"><rect width="%g" height="%g" fill="%s"/></svg>`,
				legendSwatch, legendSwatch, legendSwatch, legendSwatch, colour)
		} else {
			dash := ""
			if d := dashes[si%len(dashes)]; d != "" {
				dash = ` stroke-dasharray="` + d + `"`
			}
			fmt.Fprintf(&b, `<li><svg class="key line" viewBox="0 0 24 %g" aria-hidden="true"><line x1="0" y1="%g" x2="24" y2="%g" stroke="%s" stroke-width="2"%s/></svg>`,
				legendSwatch, legendSwatch/2, legendSwatch/2, colour, dash)
		}
		b.WriteString(html.EscapeString(s.Name))
		b.WriteString(`</li>`)
	}
	b.WriteString(`</ul>`)
	return template.HTML(b.String()) //nolint:gosec // every name went through html.EscapeString
}

// missing reports a value that was not measured (NaN, or none given).
func missing(v []float64, i int) bool { return i >= len(v) || math.IsNaN(v[i]) }

// isolated reports a value with no measured neighbour: a line cannot show
// it, so it gets a marker even on a dense chart.
func isolated(v []float64, i int) bool {
	return (i == 0 || missing(v, i-1)) && missing(v, i+1)
}

func at(v []float64, i int) float64 {
	if i < len(v) && !math.IsNaN(v[i]) && v[i] > 0 {
		return v[i]
	}
	return 0
}

// niceTicks are 0 and up to four round steps (1, 2 or 5 times a power of
// ten) reaching at least top.
func niceTicks(top float64) []float64 {
	if top <= 0 || math.IsInf(top, 0) || math.IsNaN(top) {
		return []float64{0, 1}
	}
	raw := top / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	var stepV float64
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if stepV = m * mag; stepV >= raw {
			break
		}
	}
	var ticks []float64
	for k := 0; ; k++ {
		v := float64(k) * stepV
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64) // 0.30000000000000004 → 0.3
		ticks = append(ticks, v)
		if v >= top {
			break
		}
	}
	return ticks
}
