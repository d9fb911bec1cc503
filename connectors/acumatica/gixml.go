package acumatica

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A Generic Inquiry exported from Acumatica (SM208000 → Export, or a
// customization project's GenericInquiryScreen item) is XML: a GIDesign
// row holding GITable, GIRelation/GIOn, GIWhere, GIFilter, GIResult, GISort
// and GIGroupBy rows. Newer exports nest relations and results inside
// their GITable; older ones keep every row flat and name the table in an
// attribute. parseGIXML reads both shapes into a giDesign.

// Limits on what parseGIXML reads, so hostile input costs little.
const (
	maxGIXMLBytes    = 2 << 20
	maxGIXMLDepth    = 64
	maxGIXMLElements = 50000
	// maxGIXMLRelations bounds the joins (GIRelation rows): a flat
	// export's GIOn rows are filed by a search of the relations.
	maxGIXMLRelations = 200
	// maxGIExplainBytes bounds the text of an explanation: each join
	// condition is qualified with its tables' names, so a long name and
	// many short conditions would otherwise explain into far more than
	// the export.
	maxGIExplainBytes = 4 << 20
)

// giDesign is an inquiry definition.
type giDesign struct {
	Name            string
	Screen          string
	Title           string
	ExposedViaOData string // "1", "0" or "" when the export does not say
	Tables          []giTableDef
	Relations       []giRelationDef
	Conditions      []giConditionDef
	Parameters      []giParameterDef
	Results         []giResultDef
	Sorts           []giSortDef
	GroupBy         []string
}

type giTableDef struct {
	Alias string
	Name  string
}

type giRelationDef struct {
	LineNbr  string
	Parent   string
	Child    string
	JoinType string
	Active   bool
	On       []giConditionDef
}

// giConditionDef is a GIWhere or GIOn row.
type giConditionDef struct {
	Field     string // DataFieldName, or ParentField for GIOn
	Condition string
	Value1    string // Value1, or ChildField for GIOn
	Value2    string
	IsExpr    bool
	Operation string // A (and) or O (or), joining to the next row
	Open      int
	Close     int
	Active    bool
	Relation  string // GIOn's RelationNbr, for the flat shape
}

type giParameterDef struct {
	Name     string
	Field    string
	Type     string
	Label    string
	Default  string
	Required bool
	Active   bool
}

type giResultDef struct {
	Object    string
	Field     string
	Caption   string
	Visible   bool
	Active    bool
	Aggregate string
}

type giSortDef struct {
	Field string
	Desc  bool
}

// errGIXMLEmpty means the XML holds no inquiry definition.
var errGIXMLEmpty = errors.New("the XML holds no generic inquiry definition (no GIDesign, GITable or GIResult rows)")

// parseGIXML reads an exported inquiry. It fails on malformed XML, on
// input beyond the limits, and on XML without any inquiry rows.
func parseGIXML(src string) (*giDesign, error) {
	if len(src) > maxGIXMLBytes {
		return nil, fmt.Errorf("the XML is larger than %d MiB", maxGIXMLBytes>>20)
	}
	dec := xml.NewDecoder(strings.NewReader(src))
	dec.Strict = true
	d := &giDesign{}
	var stack []string      // local names of open elements
	var tableStack []string // alias of each open GITable ("" for other elements)
	var relStack []int      // index in d.Relations of each open GIRelation, -1 for other elements
	elements := 0
	seenAny := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// encoding/xml's own text stays out of the answer; where the
			// XML breaks is told.
			var syntax *xml.SyntaxError
			if errors.As(err, &syntax) {
				return nil, fmt.Errorf("the XML is not well-formed: it breaks on line %d", syntax.Line)
			}
			return nil, errors.New("the XML is not well-formed")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			elements++
			if elements > maxGIXMLElements || len(stack) >= maxGIXMLDepth {
				return nil, fmt.Errorf("the XML is too large or too deeply nested to be one inquiry")
			}
			name := t.Name.Local
			attr := attrs(t.Attr)
			parent := ""
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			enclosingTable := lastNonEmpty(tableStack)
			enclosingRel := lastRel(relStack)
			alias, rel := "", -1
			switch name {
			case "GIDesign":
				seenAny = true
				d.absorbDesign(attr)
			case "row":
				switch {
				case parent == "GIDesign":
					d.absorbDesign(attr)
				case parent == "SiteMap":
					if d.Title == "" {
						d.Title = attr["Title"]
					}
					if d.Screen == "" {
						d.Screen = attr["ScreenID"]
					}
				}
			case "GITable":
				seenAny = true
				alias = attr["Alias"]
				d.Tables = append(d.Tables, giTableDef{Alias: alias, Name: attr["Name"]})
			case "GIRelation":
				seenAny = true
				if len(d.Relations) >= maxGIXMLRelations {
					return nil, fmt.Errorf("the XML has more than %d joins (GIRelation rows), more than one inquiry has", maxGIXMLRelations)
				}
				p := attr["ParentTable"]
				if p == "" {
					p = enclosingTable
				}
				d.Relations = append(d.Relations, giRelationDef{LineNbr: attr["LineNbr"], Parent: p, Child: attr["ChildTable"],
					JoinType: attr["JoinType"], Active: active(attr)})
				rel = len(d.Relations) - 1
			case "GIOn":
				c := conditionOf(attr, attr["ParentField"], attr["ChildField"])
				c.Relation = attr["RelationNbr"]
				if enclosingRel >= 0 {
					d.Relations[enclosingRel].On = append(d.Relations[enclosingRel].On, c)
				} else {
					d.attachOn(c)
				}
			case "GIWhere":
				seenAny = true
				d.Conditions = append(d.Conditions, conditionOf(attr, attr["DataFieldName"], attr["Value1"]))
			case "GIFilter":
				seenAny = true
				def := attr["DefaultValue"]
				if def == "" {
					def = attr["Value"]
				}
				d.Parameters = append(d.Parameters, giParameterDef{Name: attr["Name"], Field: attr["FieldName"], Type: attr["DataType"],
					Label: attr["DisplayName"], Default: def, Required: attr["Required"] == "1" || strings.EqualFold(attr["Required"], "true"), Active: active(attr)})
			case "GIResult":
				seenAny = true
				obj := attr["ObjectName"]
				if obj == "" {
					obj = enclosingTable
				}
				d.Results = append(d.Results, giResultDef{Object: obj, Field: attr["Field"], Caption: attr["Caption"],
					Visible: attr["IsVisible"] != "0" && !strings.EqualFold(attr["IsVisible"], "false"), Active: active(attr),
					Aggregate: strings.TrimSpace(attr["AggregateFunction"])})
			case "GISort":
				if active(attr) {
					d.Sorts = append(d.Sorts, giSortDef{Field: attr["DataFieldName"], Desc: strings.HasPrefix(strings.ToUpper(attr["SortOrder"]), "D")})
				}
			case "GIGroupBy":
				if active(attr) {
					d.GroupBy = append(d.GroupBy, attr["DataFieldName"])
				}
			}
			stack = append(stack, name)
			tableStack = append(tableStack, alias)
			relStack = append(relStack, rel)
		case xml.EndElement:
			if len(stack) > 0 {
				stack, tableStack, relStack = stack[:len(stack)-1], tableStack[:len(tableStack)-1], relStack[:len(relStack)-1]
			}
		case xml.Directive:
			return nil, fmt.Errorf("the XML declares a DOCTYPE or entities, which an inquiry export never does")
		}
	}
	if !seenAny {
		return nil, errGIXMLEmpty
	}
	return d, nil
}

func (d *giDesign) absorbDesign(attr map[string]string) {
	if v := attr["Name"]; v != "" && d.Name == "" {
		d.Name = v
	}
	if v := attr["ScreenID"]; v != "" && d.Screen == "" {
		d.Screen = v
	}
	if v := attr["ExposeViaOData"]; v != "" {
		d.ExposedViaOData = v
	}
}

// attachOn files a flat GIOn under its relation by RelationNbr, or under
// the last relation when the row does not say.
func (d *giDesign) attachOn(c giConditionDef) {
	for i := range d.Relations {
		if c.Relation != "" && d.Relations[i].LineNbr == c.Relation {
			d.Relations[i].On = append(d.Relations[i].On, c)
			return
		}
	}
	if len(d.Relations) > 0 && c.Relation == "" {
		last := &d.Relations[len(d.Relations)-1]
		last.On = append(last.On, c)
	}
}

func attrs(as []xml.Attr) map[string]string {
	m := make(map[string]string, len(as))
	for _, a := range as {
		m[a.Name.Local] = a.Value
	}
	return m
}

// active reads IsActive, which defaults to true when absent.
func active(attr map[string]string) bool {
	v, ok := attr["IsActive"]
	return !ok || (v != "0" && !strings.EqualFold(v, "false"))
}

func conditionOf(attr map[string]string, field, value1 string) giConditionDef {
	return giConditionDef{
		Field: field, Condition: strings.ToUpper(strings.TrimSpace(attr["Condition"])), Value1: value1, Value2: attr["Value2"],
		IsExpr: attr["IsExpression"] == "1" || strings.EqualFold(attr["IsExpression"], "true"), Operation: strings.ToUpper(strings.TrimSpace(attr["Operation"])),
		Open: brackets(attr["OpenBrackets"], '('), Close: brackets(attr["CloseBrackets"], ')'), Active: active(attr),
	}
}

// brackets reads a bracket count: a number ("1") or the bracket
// characters themselves, space-padded ("((      ").
func brackets(v string, ch rune) int {
	v = strings.TrimSpace(v)
	if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < 100 {
		return n
	}
	return strings.Count(v, string(ch))
}

func lastNonEmpty(s []string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != "" {
			return s[i]
		}
	}
	return ""
}

func lastRel(s []int) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] >= 0 {
			return s[i]
		}
	}
	return -1
}
