package acumatica

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// getterTool turns a getterSpec row into its acumatica_get_* tool.
func getterTool(conn *Connector, g getterSpec) connector.Tool {
	var props []schema.Property
	keyNames := make([]string, len(g.Keys))
	for i, k := range g.Keys {
		keyNames[i] = k.Name
		if k.Default != "" {
			props = append(props, schema.Prop(k.Name, keySchema(k).WithDefault(k.Default)))
			continue
		}
		props = append(props, schema.Prop(k.Name, keySchema(k)).Required())
	}
	if len(g.Expand) > 0 {
		props = append(props, schema.Prop("expand", schema.Array(schema.String("").OneOf(g.Expand...),
			"Detail collections and linked entities to include (Acumatica returns none unless asked).").Count(1, len(g.Expand))))
	}
	props = append(props, selectProp())

	keyPhrase := "its key field " + keyNames[0]
	if len(keyNames) > 1 {
		keyPhrase = "its key fields " + strings.Join(keyNames, " and ") + " (in that order)"
	}
	desc := fmt.Sprintf("Get one %s from Acumatica by %s, as the signed-in user: %s. "+
		"Returns the record with plain values: Acumatica's {\"value\": x} wrappers removed, empty fields null, decimals exactly as stored. ",
		g.Label, keyPhrase, g.Holds)
	for _, k := range g.Keys {
		if k.Default != "" {
			desc += fmt.Sprintf("Left out, %s is %s; name it for any other type. ", k.Name, k.Default)
		}
	}
	if len(g.Expand) > 0 {
		desc += "expand adds " + strings.Join(g.Expand, ", ") + ". "
	}
	desc += fmt.Sprintf("A record that does not exist is NOT_FOUND naming the keys; to find keys, use acumatica_list_entities with entity %q and a filterExpression. Module: %s.", g.Entity, g.Module)

	keyOut := make([]schema.Property, len(g.Keys))
	for i, k := range g.Keys {
		keyOut[i] = schema.Prop(k.Name, schema.String(sentence(capitalize(k.Hint)))).Required()
	}
	return connector.Tool{
		Name:        "acumatica_get_" + g.Tool,
		Title:       "Acumatica " + g.Label,
		Description: desc,
		Input:       schema.Object(props...),
		Output: schema.Object(
			schema.Prop("entity", schema.String("The contract-API entity read.")).Required(),
			endpointProp(),
			schema.Prop("keys", schema.Object(keyOut...)).Required(),
			schema.Prop("record", recordSchema("The record: field names as Acumatica names them, with plain values; expanded collections are arrays of records.")).Required(),
		),
		Effect: connector.Read,
		Fields: queryFields,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			return runGetter(ctx, newClient(conn, call), g, call.Args)
		},
	}
}

// keySchema describes one key argument.
func keySchema(k keySpec) *schema.Schema {
	hint := capitalize(k.Hint)
	switch k.Kind {
	case keyInteger:
		return schema.String(hint + ", as text.").Match(`^[0-9]{1,18}$`)
	case keyGUID:
		return schema.String(sentence(hint)).Match(guidPattern)
	}
	return schema.String(sentence(hint)+" Written exactly as Acumatica shows it.").Len(1, 100)
}

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// getterArgs are a getter's arguments besides the keys.
type getterArgs struct {
	Expand []string `json:"expand"`
	Select []string `json:"select"`
}

func runGetter(ctx context.Context, c *client, g getterSpec, raw json.RawMessage) (any, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments are not a JSON object")
	}
	op := contractOp{entity: g.Entity}
	keysOut := map[string]string{}
	for _, k := range g.Keys {
		var v string
		if given, ok := all[k.Name]; !ok && k.Default != "" {
			v = k.Default
		} else if err := json.Unmarshal(given, &v); err != nil {
			return nil, toolerr.New(toolerr.InvalidArgument, "%s must be text", k.Name)
		}
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, toolerr.New(toolerr.InvalidArgument, "%s must not be empty", k.Name)
		}
		op.keyNames = append(op.keyNames, k.Name)
		op.keys = append(op.keys, v)
		keysOut[k.Name] = v
	}
	var a getterArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments do not fit this tool")
	}
	op.expand = strings.Join(dedupe(a.Expand), ",")
	if err := checkSelect(a.Select, a.Expand); err != nil {
		return nil, err
	}
	op.sel = selectWithExpanded(a.Select, a.Expand)

	rec, err := c.getRecord(ctx, op)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"entity":   g.Entity,
		"endpoint": c.set.endpoint(),
		"keys":     keysOut,
		"record":   unwrapRecord(rec),
	}, nil
}

// selectWithExpanded is the $select a call sends: select's names and,
// when select names any, each expanded collection or linked entity it
// names no field of, whole. Acumatica answers only what $select names, and
// its own examples name an expanded entity there whole
// ($select=InventoryID,Description,Translations&$expand=Translations);
// without it, expand Details with select OrderNbr answered an order
// without its lines.
func selectWithExpanded(sel, expand []string) string {
	names := dedupe(sel)
	if len(names) == 0 {
		return ""
	}
	for _, e := range dedupe(expand) {
		if !slices.ContainsFunc(names, func(n string) bool { return n == e || strings.HasPrefix(n, e+"/") }) {
			names = append(names, e)
		}
	}
	return strings.Join(names, ",")
}

// checkSelect refuses a nested select whose linked entity is not expanded:
// Acumatica would otherwise fail the whole request.
func checkSelect(sel, expand []string) error {
	for _, s := range sel {
		parent, _, nested := strings.Cut(s, "/")
		if nested && !slices.Contains(expand, parent) {
			return toolerr.New(toolerr.InvalidArgument, "select names %q, but %s is not in expand; add it to expand or select a top-level field", s, parent)
		}
	}
	return nil
}

func dedupe(names []string) []string {
	var out []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// keysNeedFilter reports keys that cannot travel in a URL path. Acumatica
// splits key segments at "/" (and "|"); ASP.NET refuses paths with any of
// < > * % & : \ ? by default; IIS refuses "+" (its double-escaping check)
// and drops a trailing dot or space; "." and ".." are folded away by path
// normalisation; and IIS's request filtering hides every URL with a
// segment named as one of its default hidden segments (bin, App_Data,
// web.config…, in any case), answering its own 404. Such records are found
// with a filter on the key fields instead, which Acumatica documents as
// the way to reach them.
func keysNeedFilter(keys []string) bool {
	for _, k := range keys {
		if strings.ContainsAny(k, "/|<>*%&:\\?+") || strings.HasSuffix(k, ".") || strings.HasSuffix(k, " ") || iisHidden(k) {
			return true
		}
	}
	return false
}

// iisHiddenSegments are IIS's default hidden segments (applicationHost.config,
// requestFiltering/hiddenSegments).
var iisHiddenSegments = []string{"web.config", "bin", "App_code", "App_GlobalResources", "App_LocalResources",
	"App_WebReferences", "App_Data", "App_Browsers"}

// iisHidden reports whether IIS hides a path segment k.
func iisHidden(k string) bool {
	for _, h := range iisHiddenSegments {
		if strings.EqualFold(k, h) {
			return true
		}
	}
	return false
}

// getByFilter finds one record by its key fields with a $filter.
func (c *client) getByFilter(ctx context.Context, op contractOp, specs []keySpec) (map[string]any, error) {
	if len(specs) != len(op.keys) {
		// Never a filter on fewer keys than given: it could match another record.
		return nil, fmt.Errorf("look up %s: %d key values for %d key fields", op.entity, len(op.keys), len(specs))
	}
	conds := make([]string, len(specs))
	for i, k := range specs {
		conds[i] = k.Name + " eq " + odataV3Literal(k.Kind, op.keys[i])
	}
	lop := op
	lop.filter = strings.Join(conds, " and ")
	rows, err := c.listRecords(ctx, lop, 2)
	if err != nil {
		return nil, err
	}
	switch len(rows) {
	case 0:
		return nil, toolerr.New(toolerr.NotFound, "no %s record has %s at endpoint %s", op.entity, op.keysText(), c.set.endpoint())
	case 1:
		return rows[0], nil
	}
	return nil, toolerr.New(toolerr.UpstreamInvalidResponse, "Acumatica returned more than one %s record for %s", op.entity, op.keysText())
}

// odataV3Literal writes a key value as an OData v3 literal.
func odataV3Literal(kind keyKind, v string) string {
	switch kind {
	case keyInteger:
		return v
	case keyGUID:
		return "guid'" + v + "'"
	}
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}
