package svgchart

import (
	"encoding/xml"
	"math"
	"slices"
	"strings"
	"testing"
)

// element is any SVG element, for counting what was drawn.
type element struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Text     string     `xml:",chardata"`
	Children []element  `xml:",any"`
}

func parse(t *testing.T, svg string) element {
	t.Helper()
	var root element
	if err := xml.Unmarshal([]byte(svg), &root); err != nil {
		t.Fatalf("not well-formed SVG: %v\n%s", err, svg)
	}
	return root
}

func count(e element, name string) int {
	n := 0
	if e.XMLName.Local == name {
		n++
	}
	for _, c := range e.Children {
		n += count(c, name)
	}
	return n
}

func attr(e element, name string) string {
	for _, a := range e.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// TestBarsAreAccessibleAndEscaped: the chart is an image labelled by its
// title and description, draws one bar segment per positive value, and a
// series name that is markup stays text.
func TestBarsAreAccessibleAndEscaped(t *testing.T) {
	c := Chart{
		ID: "calls", Title: "Calls per hour", Desc: "Tool calls per hour; the table below has the numbers.",
		Kind: StackedBars, Labels: []string{"10:00", "11:00", "12:00"},
		Series: []Series{{Name: "list_customers", Values: []float64{3, 0, 5}}, {Name: `<script>alert(1)</script>`, Values: []float64{1, 2, 0}}},
	}
	svg := string(c.SVG())
	if strings.Contains(svg, "<script") {
		t.Fatal("a series name became markup")
	}
	root := parse(t, svg)
	if attr(root, "role") != "img" || attr(root, "aria-labelledby") != "calls-title calls-desc" {
		t.Errorf("svg role %q labelledby %q", attr(root, "role"), attr(root, "aria-labelledby"))
	}
	if root.Children[0].XMLName.Local != "title" || root.Children[0].Text != "Calls per hour" || root.Children[1].XMLName.Local != "desc" {
		t.Errorf("first children %v %v, want title and desc", root.Children[0].XMLName, root.Children[1].XMLName)
	}
	// Four positive values → four bar segments, plus two legend swatches.
	if got := count(root, "rect"); got != 4+2 {
		t.Errorf("%d rects, want 6", got)
	}
	if strings.Contains(svg, "style=") {
		t.Error("the chart has a style attribute, which the CSP refuses")
	}
}

// TestLinesDifferByMoreThanColour: each line has its own dash pattern.
func TestLinesDifferByMoreThanColour(t *testing.T) {
	c := Chart{ID: "lat", Title: "Latency", Kind: Lines, Labels: []string{"a", "b"},
		Series: []Series{{"p50 ERP", []float64{1, 2}}, {"p95 ERP", []float64{3, 4}}, {"p50 erpgate", []float64{1, 1}}, {"p95 erpgate", []float64{2, 2}}}}
	root := parse(t, string(c.SVG()))
	var seen []string
	var walk func(e element)
	walk = func(e element) {
		if e.XMLName.Local == "polyline" {
			seen = append(seen, attr(e, "stroke-dasharray"))
		}
		for _, ch := range e.Children {
			walk(ch)
		}
	}
	walk(root)
	if len(seen) != 4 || len(slices.Compact(slices.Sorted(slices.Values(seen)))) != 4 {
		t.Errorf("dash patterns %q, want four different", seen)
	}
}

// TestEmptyChartDraws: no buckets, or only zeros, is a valid chart.
func TestEmptyChartDraws(t *testing.T) {
	parse(t, string(Chart{ID: "e", Title: "Nothing"}.SVG()))
	parse(t, string(Chart{ID: "z", Title: "Zeros", Kind: Lines, Labels: []string{"a"}, Series: []Series{{"x", []float64{0}}}}.SVG()))
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		top  float64
		want []float64
	}{
		{0, []float64{0, 1}},
		{1, []float64{0, 0.25, 0.5, 0.75, 1}},
		{7, []float64{0, 2, 4, 6, 8}},
		{100, []float64{0, 25, 50, 75, 100}},
		{1234, []float64{0, 500, 1000, 1500}},
		{0.3, []float64{0, 0.1, 0.2, 0.3}},
	} {
		if got := niceTicks(c.top); !slices.Equal(got, c.want) {
			t.Errorf("niceTicks(%g) = %v, want %v", c.top, got, c.want)
		}
	}
}

// TestMissingValuesBreakTheLine: a bucket where nothing was measured is a
// gap, not a zero; a lone value between gaps still has its marker.
func TestMissingValuesBreakTheLine(t *testing.T) {
	nan := math.NaN()
	c := Chart{ID: "gap", Title: "Gaps", Kind: Lines, Labels: []string{"a", "b", "c", "d", "e", "f"},
		Series: []Series{{"x", []float64{1, 2, nan, 4, 5, nan}}}}
	root := parse(t, string(c.SVG()))
	if got := count(root, "polyline"); got != 2 {
		t.Errorf("%d polylines, want 2 (a gap at c and f)", got)
	}
	if got := count(root, "circle"); got != 4 {
		t.Errorf("%d markers, want 4", got)
	}
	if strings.Contains(string(c.SVG()), "NaN") {
		t.Error("NaN reached the SVG")
	}
}

// TestLegendApart: a chart drawn with its legend apart has no legend in
// the SVG, and Legend lists every series once, its name as text.
func TestLegendApart(t *testing.T) {
	c := Chart{ID: "calls", Title: "Calls", Kind: StackedBars, Labels: []string{"10:00", "11:00"}, LegendApart: true,
		Series: []Series{{Name: "list_customers", Values: []float64{3, 1}}, {Name: `<img src=x>`, Values: []float64{1, 0}}}}
	root := parse(t, string(c.SVG()))
	// Three positive values, three bar segments, no swatch.
	if got := count(root, "rect"); got != 3 {
		t.Errorf("%d rects in the SVG, want the 3 bars", got)
	}
	legend := string(c.Legend())
	if strings.Contains(legend, "<img") {
		t.Fatal("a series name became markup in the legend")
	}
	var list element
	if err := xml.Unmarshal([]byte(legend), &list); err != nil {
		t.Fatalf("the legend is not well-formed: %v\n%s", err, legend)
	}
	if n := count(list, "li"); n != 2 || !strings.Contains(legend, "list_customers") || !strings.Contains(legend, "&lt;img src=x&gt;") {
		t.Errorf("legend %s, want the two series", legend)
	}
}
