package acumatica

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/connectortest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

func readGI(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/gi/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExplainNestedExport(t *testing.T) {
	d, err := parseGIXML(readGI(t, "nested-export.xml"))
	if err != nil {
		t.Fatal(err)
	}
	out, ok := explainGI(d)
	if !ok {
		t.Fatal("explanation refused as too long")
	}
	if out["name"] != "AR-OpenInvoices" || out["screen"] != "GI000003" || out["exposedViaOData"] != "yes" {
		t.Errorf("header = %v %v %v", out["name"], out["screen"], out["exposedViaOData"])
	}
	tables := out["tables"].([]map[string]any)
	if len(tables) != 2 || tables[0]["role"] != "primary" || tables[1]["role"] != "joined" {
		t.Errorf("tables = %v", tables)
	}
	joins := out["joins"].([]map[string]any)
	if len(joins) != 1 || joins[0]["join"] != "LEFT JOIN" || joins[0]["parent"] != "ARInvoice" ||
		joins[0]["on"] != "ARInvoice.customerID = Customer.bAccountID" {
		t.Errorf("joins = %v", joins)
	}
	wantWhere := "ARInvoice.released = 'True' AND (ARInvoice.status = 'N' OR ARInvoice.status = 'H') AND ARInvoice.customerID = [Customer] AND ARInvoice.dueDate < [AsOf]"
	if out["conditions"] != wantWhere {
		t.Errorf("conditions = %q\nwant        %q", out["conditions"], wantWhere)
	}
	params := out["parameters"].([]map[string]any)
	if len(params) != 2 || params[1]["name"] != "AsOf" || params[1]["required"] != true || params[1]["default"] != "@Today" {
		t.Errorf("parameters = %v", params)
	}
	cols := out["columns"].([]map[string]any)
	if len(cols) != 3 || cols[2]["table"] != "Customer" || cols[2]["caption"] != "Customer Name" {
		t.Errorf("columns (inactive ones dropped) = %v", cols)
	}
	if s := out["sorting"].([]string); len(s) != 2 || s[1] != "ARInvoice.docBal descending" {
		t.Errorf("sorting = %v", s)
	}
	summary := out["summary"].(string)
	for _, w := range []string{"AR-OpenInvoices (GI000003) reads ARInvoice", "left join Customer", "3 column(s)", "2 parameter(s)", "exposed via OData"} {
		if !strings.Contains(summary, w) {
			t.Errorf("summary lacks %q: %s", w, summary)
		}
	}
}

func TestExplainFlatExport(t *testing.T) {
	d, err := parseGIXML(readGI(t, "flat-export.xml"))
	if err != nil {
		t.Fatal(err)
	}
	out, ok := explainGI(d)
	if !ok {
		t.Fatal("explanation refused as too long")
	}
	joins := out["joins"].([]map[string]any)
	if len(joins) != 2 || joins[0]["join"] != "INNER JOIN" ||
		joins[0]["on"] != "SOLine.orderType = SOOrder.orderType AND SOLine.orderNbr = SOOrder.orderNbr" ||
		joins[1]["on"] != "SOLine.inventoryID = InventoryItem.inventoryID" {
		t.Errorf("joins = %v", joins)
	}
	want := "SOOrder.status <> 'L' AND SOLine.orderQty is between '1' and '100' AND InventoryItem.descr contains 'bolt' AND SOLine.shipDate is empty"
	if out["conditions"] != want {
		t.Errorf("conditions = %q\nwant        %q", out["conditions"], want)
	}
	if cols := out["columns"].([]map[string]any); cols[1]["aggregate"] != "SUM" {
		t.Errorf("columns = %v", cols)
	}
	if g := out["grouping"].([]string); len(g) != 1 || g[0] != "SOLine.orderNbr" {
		t.Errorf("grouping = %v", g)
	}
	if out["exposedViaOData"] != "no" || !strings.Contains(out["summary"].(string), "not exposed via OData") {
		t.Errorf("exposure = %v / %v", out["exposedViaOData"], out["summary"])
	}
}

func TestExplainGIXMLToolRefusesWhatIsNotAnInquiry(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, kind := range userKinds {
		out := h.mustRun(kind, "acumatica_explain_gi_xml", map[string]any{"xml": readGI(t, "nested-export.xml")})
		if out["name"] != "AR-OpenInvoices" {
			t.Errorf("%s: %v", kind.name, out["name"])
		}
	}
	for _, bad := range []string{
		"not xml at all <",
		"<root><child/></root>",
		`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><GIDesign Name="x">&a;</GIDesign>`,
		strings.Repeat("<GITable>", maxGIXMLDepth+1),
	} {
		_, err := h.run(kindFull, "acumatica_explain_gi_xml", map[string]any{"xml": bad})
		te := wantCode(t, err, toolerr.InvalidArgument, bad[:min(len(bad), 30)])
		// erpgate's words, not encoding/xml's ("XML syntax error on line
		// 1: unexpected EOF").
		if strings.Contains(te.Message, "XML syntax error") || strings.Contains(te.Message, "unexpected EOF") {
			t.Errorf("%s: message %q carries encoding/xml's text", bad[:min(len(bad), 30)], te.Message)
		}
	}
	// Where the XML breaks is still told.
	_, err := h.run(kindFull, "acumatica_explain_gi_xml", map[string]any{"xml": "<GIDesign>\n<GITable>\n</GIDesign>"})
	if te := wantCode(t, err, toolerr.InvalidArgument, "mismatched tags"); !strings.Contains(te.Message, "line 3") {
		t.Errorf("mismatched tags: %q does not say where", te.Message)
	}
}

// A flat export files each GIOn under its relation by RelationNbr, which
// costs relations × conditions: within the element limit, 24,000 joins
// and 25,000 unmatched conditions took seconds of CPU for one call. The
// joins of one inquiry are bounded, far above any real inquiry's.
func TestExplainGIXMLBoundsTheJoins(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	var b strings.Builder
	b.WriteString(`<GIDesign Name="Many">`)
	for range maxGIXMLRelations + 1 {
		b.WriteString(`<GIRelation LineNbr="1"/>`)
	}
	b.WriteString(`<GIOn RelationNbr="2"/></GIDesign>`)
	_, err := h.run(kindFull, "acumatica_explain_gi_xml", map[string]any{"xml": b.String()})
	if te := wantCode(t, err, toolerr.InvalidArgument, "too many joins"); !strings.Contains(te.Message, "joins") {
		t.Errorf("message = %s", te.Message)
	}
	// At the bound, it is explained.
	src := strings.Replace(b.String(), `<GIRelation LineNbr="1"/>`, "", 1)
	out := h.mustRun(kindFull, "acumatica_explain_gi_xml", map[string]any{"xml": src})
	if got := len(out["joins"].([]any)); got != maxGIXMLRelations {
		t.Errorf("%d joins explained, want %d", got, maxGIXMLRelations)
	}
}

// FuzzGIXML: the parser and the explanation never panic, and whatever
// they accept explains into something with a summary.
func FuzzGIXML(f *testing.F) {
	f.Add(readGI(f, "nested-export.xml"))
	f.Add(readGI(f, "flat-export.xml"))
	f.Add(`<GIDesign><GIRelation><GIOn Condition="B" Value2="x"/></GIRelation><GIWhere OpenBrackets="99999" CloseBrackets="((((("/></GIDesign>`)
	f.Add(`<GITable Alias="a"><GIResult/><GIRelation ChildTable="a"><GIOn/></GIRelation></GITable>`)
	f.Fuzz(func(t *testing.T, src string) {
		d, err := parseGIXML(src)
		if err != nil {
			return
		}
		out, ok := explainGI(d)
		if !ok {
			return // long names repeated: refused, as the tool does
		}
		if s, _ := out["summary"].(string); s == "" {
			t.Fatal("an accepted inquiry explained without a summary")
		}
	})
}

// Each join condition is explained with its relation's parent and child
// qualifying the two sides, so one long table alias repeated by thousands
// of short GIOn rows explained into gigabytes from a request of under a
// megabyte: one caller's call held the replica's memory (and everyone's
// calls with it). The explanation is bounded; beyond it the call is
// refused, and what it allocates stays within a few times the bound.
func TestExplainGIXMLBoundsTheExplanation(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	long := strings.Repeat("T", 8<<10)
	// A flat export's join conditions qualified with both tables' names,
	// and a nested export's columns each naming its table's alias.
	var flat, nested strings.Builder
	flat.WriteString(`<GIDesign Name="Wide"><GIRelation ParentTable="` + long + `" ChildTable="` + long + `" LineNbr="1">`)
	nested.WriteString(`<GIDesign Name="Wide"/><GITable Alias="` + long + `" Name="PX.Objects.AR.ARInvoice">`)
	for range 2000 {
		flat.WriteString(`<GIOn ParentField="a" ChildField="b"/>`)
		nested.WriteString(`<GIResult Field="a"/><GIResult Field="b"/>`)
	}
	flat.WriteString(`</GIRelation></GIDesign>`)
	nested.WriteString(`</GITable>`)
	for _, src := range []string{flat.String(), nested.String()} {
		var (
			out map[string]any
			err error
		)
		alloc := connectortest.Allocated(func() {
			out, err = h.run(kindFull, "acumatica_explain_gi_xml", map[string]any{"xml": src})
		})
		if err == nil {
			raw, _ := json.Marshal(out)
			t.Errorf("a %d-byte export explained into %d bytes", len(src), len(raw))
		} else if te := wantCode(t, err, toolerr.InvalidArgument, "wide joins"); !strings.Contains(te.Message, "too long") {
			t.Errorf("message = %s", te.Message)
		}
		if alloc > 4*maxGIExplainBytes {
			t.Errorf("the call allocated %d MiB for a %d KiB export", alloc>>20, len(src)>>10)
		}
	}
	// An export as long as a real one explains as before.
	d := h.mustRun(kindFull, "acumatica_explain_gi_xml", map[string]any{"xml": readGI(t, "flat-export.xml")})
	if d["summary"] == "" {
		t.Error("the flat export explained without a summary")
	}
}
