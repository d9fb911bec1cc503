package acumatica

import (
	"context"
	"fmt"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// giJoinTypes names GIRelation join types.
var giJoinTypes = map[string]string{"I": "INNER JOIN", "L": "LEFT JOIN", "R": "RIGHT JOIN", "F": "FULL JOIN", "C": "CROSS JOIN"}

// giConditionWords names GIWhere/GIOn condition codes (both the two-letter
// codes exports use and their long forms).
var giConditionWords = map[string]string{
	"E": "=", "EQ": "=", "NE": "<>", "G": ">", "GT": ">", "GE": ">=", "L": "<", "LT": "<", "LE": "<=",
	"LI": "contains", "LIKE": "contains", "LL": "starts with", "RL": "ends with", "NL": "does not contain",
	"B": "is between", "BT": "is between", "NU": "is empty", "NN": "is not empty",
}

type explainGIXMLArgs struct {
	XML string `json:"xml"`
}

func explainGIXMLTool() connector.Tool {
	table := schema.Object(
		schema.Prop("alias", schema.String("The alias fields are qualified with.")).Required(),
		schema.Prop("table", schema.String("The data access class (table) it reads, e.g. PX.Objects.AR.ARInvoice.")).Required(),
		schema.Prop("role", schema.String("primary (the FROM table) or joined.")).Required(),
	)
	join := schema.Object(
		schema.Prop("join", schema.String("INNER JOIN, LEFT JOIN, RIGHT JOIN, FULL JOIN or CROSS JOIN.")).Required(),
		schema.Prop("parent", schema.String("The table joined from.")).Required(),
		schema.Prop("child", schema.String("The table joined.")).Required(),
		schema.Prop("on", schema.String("The join condition.")).Required(),
		schema.Prop("active", schema.Boolean("False when the relation is switched off in the design.")).Required(),
	)
	param := schema.Object(
		schema.Prop("name", schema.String("Parameter name; conditions refer to it as [name].")).Required(),
		schema.Prop("field", schema.String("The field it filters.")).Required(),
		schema.Prop("type", schema.String("Its data type.")).Required(),
		schema.Prop("label", schema.String("The label on the inquiry form.")).Required(),
		schema.Prop("default", schema.String("Default value or expression.")).Required(),
		schema.Prop("required", schema.Boolean("Whether a value is required.")).Required(),
	)
	column := schema.Object(
		schema.Prop("table", schema.String("The table alias.")).Required(),
		schema.Prop("field", schema.String("The field or formula.")).Required(),
		schema.Prop("caption", schema.String("The column heading (OData turns it into the column name).")).Required(),
		schema.Prop("visible", schema.Boolean("Whether the column is shown.")).Required(),
		schema.Prop("aggregate", schema.String("Aggregate function with grouping (SUM, COUNT…), if any.")).Required(),
	)
	return connector.Tool{
		Name:  "acumatica_explain_gi_xml",
		Title: "Explain a Generic Inquiry definition",
		Description: "Explain a Generic Inquiry definition exported from Acumatica as XML (SM208000 → Export, or a customization project's GenericInquiryScreen item): " +
			"its tables, joins and their conditions, the WHERE conditions as readable logic, parameters, result columns, sorting and grouping, plus a plain-language summary. " +
			"It only parses the XML you pass; it reads nothing from Acumatica.",
		Input: schema.Object(
			schema.Prop("xml", schema.String("The exported inquiry XML.").Len(1, maxGIXMLBytes)).Required(),
		),
		Output: schema.Object(
			schema.Prop("name", schema.String("The inquiry's name (its OData name when exposed).")).Required(),
			schema.Prop("screen", schema.String("Its screen id.")).Required(),
			schema.Prop("exposedViaOData", schema.String("yes, no, or unknown when the export does not say.")).Required(),
			schema.Prop("summary", schema.String("What the inquiry does, in plain language.")).Required(),
			schema.Prop("tables", schema.Array(table, "Tables read.")).Required(),
			schema.Prop("joins", schema.Array(join, "How the tables are joined.")).Required(),
			schema.Prop("conditions", schema.String("The WHERE conditions as one expression; empty when there are none.")).Required(),
			schema.Prop("parameters", schema.Array(param, "Parameters the inquiry takes.")).Required(),
			schema.Prop("columns", schema.Array(column, "Result columns, in order.")).Required(),
			schema.Prop("sorting", schema.Array(schema.String(""), "Sort order.")).Required(),
			schema.Prop("grouping", schema.Array(schema.String(""), "Group-by fields.")).Required(),
		),
		Effect: connector.Read,
		Local:  true,
		Handler: func(_ context.Context, call *connector.Call) (any, error) {
			a, err := args[explainGIXMLArgs](call)
			if err != nil {
				return nil, err
			}
			d, err := parseGIXML(a.XML)
			if err != nil {
				return nil, toolerr.New(toolerr.InvalidArgument, "the text is not an exported generic inquiry: %v", err)
			}
			out, ok := explainGI(d)
			if !ok {
				return nil, toolerr.New(toolerr.InvalidArgument, "the inquiry's tables, joins and conditions are too long to explain (more than %d MiB of text)", maxGIExplainBytes>>20)
			}
			return out, nil
		},
	}
}

// explainGI renders a parsed design for a model, or reports false when
// the explanation would be longer than maxGIExplainBytes: a join's
// conditions repeat its tables' names, and a nested export's joins and
// columns their table's alias, so a few long names explain into far more
// than the export.
func explainGI(d *giDesign) (map[string]any, bool) {
	budget := maxGIExplainBytes
	children := map[string]bool{}
	for _, r := range d.Relations {
		children[r.Child] = true
	}
	tables := []map[string]any{}
	primary := ""
	for _, t := range d.Tables {
		role := "joined"
		if !children[t.Alias] && primary == "" {
			role, primary = "primary", t.Alias
		}
		tables = append(tables, map[string]any{"alias": t.Alias, "table": t.Name, "role": role})
	}
	joins := []map[string]any{}
	for _, r := range d.Relations {
		jt := giJoinTypes[strings.ToUpper(strings.TrimSpace(r.JoinType))]
		if jt == "" {
			jt = "JOIN (" + r.JoinType + ")"
		}
		on, ok := conditionText(r.On, r.Parent, r.Child, &budget)
		if !ok {
			return nil, false
		}
		joins = append(joins, map[string]any{"join": jt, "parent": r.Parent, "child": r.Child,
			"on": on, "active": r.Active})
	}
	params := []map[string]any{}
	for _, p := range d.Parameters {
		if !p.Active {
			continue
		}
		params = append(params, map[string]any{"name": p.Name, "field": p.Field, "type": p.Type, "label": p.Label, "default": p.Default, "required": p.Required})
	}
	cols := []map[string]any{}
	for _, r := range d.Results {
		if !r.Active {
			continue
		}
		cols = append(cols, map[string]any{"table": r.Object, "field": r.Field, "caption": r.Caption, "visible": r.Visible, "aggregate": r.Aggregate})
	}
	var sorts []string
	for _, s := range d.Sorts {
		dir := "ascending"
		if s.Desc {
			dir = "descending"
		}
		sorts = append(sorts, s.Field+" "+dir)
	}
	exposed := "unknown"
	switch d.ExposedViaOData {
	case "1", "True", "true":
		exposed = "yes"
	case "0", "False", "false":
		exposed = "no"
	}
	where, ok := conditionText(d.Conditions, "", "", &budget)
	if !ok {
		return nil, false
	}
	name := d.Name
	if name == "" {
		name = d.Title
	}
	out := map[string]any{
		"name": name, "screen": d.Screen, "exposedViaOData": exposed,
		"tables": tables, "joins": joins, "conditions": where, "parameters": params, "columns": cols,
		"sorting": nonNil(sorts), "grouping": nonNil(d.GroupBy),
	}
	// The rest shares the export's strings until it is encoded: measured
	// before the summary, which repeats some of it, is written.
	if budget -= textSize(out); budget < 0 {
		return nil, false
	}
	summary := giSummary(d, name, primary, where, len(params), len(cols), exposed)
	if budget -= len(summary); budget < 0 {
		return nil, false
	}
	out["summary"] = summary
	return out, true
}

// textSize is the length of the strings (member names included) in an
// explanation, about the length of its JSON; the conditions, already
// counted, are left out.
func textSize(v any) int {
	n := 0
	switch v := v.(type) {
	case string:
		return len(v) + 3
	case []string:
		for _, s := range v {
			n += len(s) + 3
		}
	case []map[string]any:
		for _, m := range v {
			n += textSize(m)
		}
	case map[string]any:
		for k, x := range v {
			if k != "on" && k != "conditions" {
				n += len(k) + 4 + textSize(x)
			}
		}
	default:
		return 8
	}
	return n
}

// conditionText writes active condition rows as one expression with their
// brackets and AND/OR. For join conditions parent and child qualify the
// two sides. It reports false when the text would be longer than what is
// left of budget, and takes what it wrote from it.
func conditionText(rows []giConditionDef, parent, child string, budget *int) (string, bool) {
	// At most, per row: AND or OR, brackets, both sides qualified, the
	// words between them and the second value quoted. Grown once, as a
	// text grown row by row allocates several times its length.
	size := 0
	for _, c := range rows {
		if c.Active {
			size += len(parent) + len(child) + len(c.Field) + len(c.Value1) + len(c.Value2) + len(c.Condition) + 64
			if size > *budget {
				return "", false
			}
		}
	}
	var b strings.Builder
	b.Grow(size)
	var pendingOp string
	for _, c := range rows {
		if !c.Active {
			continue
		}
		if b.Len() > 0 {
			if pendingOp == "" {
				pendingOp = "AND"
			}
			b.WriteString(" " + pendingOp + " ")
		}
		b.WriteString(strings.Repeat("(", min(c.Open, 10)))
		// Each side is written in place, its table's name before it: a
		// name joined to each side first would be copied once per row.
		left := func() {
			if parent != "" && c.Field != "" && !strings.Contains(c.Field, ".") {
				b.WriteString(parent)
				b.WriteString(".")
			}
			b.WriteString(c.Field)
		}
		right := func() {
			v := c.Value1
			switch {
			case child != "" && v != "" && !strings.Contains(v, "."):
				b.WriteString(child)
				b.WriteString(".")
				b.WriteString(v)
			case child == "" && !c.IsExpr && v != "" && !strings.HasPrefix(v, "[") && !strings.HasPrefix(v, "="):
				b.WriteString("'" + v + "'")
			default:
				b.WriteString(v)
			}
		}
		op := giConditionWords[c.Condition]
		if op == "" {
			op = "condition " + c.Condition
		}
		left()
		b.WriteString(" " + op)
		switch c.Condition {
		case "NU", "NN":
		case "B", "BT":
			b.WriteString(" ")
			right()
			v2 := c.Value2
			if !c.IsExpr && v2 != "" && !strings.HasPrefix(v2, "[") {
				v2 = "'" + v2 + "'"
			}
			b.WriteString(" and " + v2)
		default:
			b.WriteString(" ")
			right()
		}
		b.WriteString(strings.Repeat(")", min(c.Close, 10)))
		pendingOp = "AND"
		if c.Operation == "O" || c.Operation == "OR" {
			pendingOp = "OR"
		}
	}
	*budget -= b.Len()
	return b.String(), true
}

func giSummary(d *giDesign, name, primary, where string, params, cols int, exposed string) string {
	var b strings.Builder
	if name == "" {
		name = "This inquiry"
	}
	b.WriteString(name)
	if d.Screen != "" {
		b.WriteString(" (" + d.Screen + ")")
	}
	if primary != "" {
		fmt.Fprintf(&b, " reads %s", primary)
	} else {
		b.WriteString(" reads no named table")
	}
	if len(d.Relations) > 0 {
		var js []string
		for _, r := range d.Relations {
			js = append(js, strings.ToLower(giJoinTypes[strings.ToUpper(strings.TrimSpace(r.JoinType))])+" "+r.Child)
		}
		b.WriteString(" with " + strings.Join(js, ", "))
	}
	if where != "" {
		b.WriteString(", keeps rows where " + where)
	}
	fmt.Fprintf(&b, ", and returns %d column(s)", cols)
	if len(d.GroupBy) > 0 {
		b.WriteString(" grouped by " + strings.Join(d.GroupBy, ", "))
	}
	if params > 0 {
		fmt.Fprintf(&b, "; it takes %d parameter(s)", params)
	}
	switch exposed {
	case "yes":
		b.WriteString("; it is exposed via OData, so acumatica_run_inquiry can read it by name")
	case "no":
		b.WriteString("; it is not exposed via OData, so acumatica_run_inquiry cannot read it until Expose via OData is set")
	}
	b.WriteString(".")
	return b.String()
}
