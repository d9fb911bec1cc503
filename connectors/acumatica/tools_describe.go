package acumatica

import (
	"context"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

type describeEntityArgs struct {
	Entity string `json:"entity"`
}

func describeEntityTool(conn *Connector) connector.Tool {
	field := schema.Object(
		schema.Prop("name", schema.String("Field name, as select and filterExpression take it.")).Required(),
		schema.Prop("type", schema.String("Type: String, Decimal, Int, Boolean, DateTime, Guid…")).Required(),
		schema.Prop("label", schema.String("The field's label on the Acumatica form, when it differs from the name.")),
	)
	collection := schema.Object(
		schema.Prop("name", schema.String("Name to put in expand.")).Required(),
		schema.Prop("entity", schema.String("The schema of its records.")).Required(),
		schema.Prop("fields", schema.Array(schema.String(""), "The scalar fields of its records.")).Required(),
	)
	return connector.Tool{
		Name:  "acumatica_describe_entity",
		Title: "Describe an Acumatica entity",
		Description: "Describe one contract-API entity of this site's endpoint: its form and screen id, key fields in URL order, every field with its type, " +
			"and its detail collections and linked entities (what expand takes) with their fields. Read from the OpenAPI document the site itself serves, so it matches the configured endpoint version; cached for a day (acumatica_clear_cache refreshes it). " +
			"Use it before filtering or selecting, to get field names exactly right.",
		Input: schema.Object(
			schema.Prop("entity", schema.String("The entity name, e.g. SalesOrder.").Match(entityNamePattern)).Required(),
		),
		Output: schema.Object(
			schema.Prop("entity", schema.String("The entity.")).Required(),
			endpointProp(),
			schema.Prop("form", schema.String("The Acumatica form behind it.")),
			schema.Prop("screen", schema.String("The form's screen id, e.g. AR303000; a PERMISSION_DENIED names it.")),
			schema.Prop("keys", schema.Array(schema.String(""), "Key fields in the order a by-key URL needs them; empty for inquiry forms, which are read with lists.")).Required(),
			schema.Prop("fields", schema.Array(field, "Scalar fields, sorted by name.")).Required(),
			schema.Prop("details", schema.Array(collection, "Detail collections (arrays of lines).")).Required(),
			schema.Prop("linked", schema.Array(collection, "Linked entities (single objects).")).Required(),
		),
		Effect: connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[describeEntityArgs](call)
			if err != nil {
				return nil, err
			}
			c := newClient(conn, call)
			m, err := c.model(ctx)
			if err != nil {
				return nil, err
			}
			e := m.entity(a.Entity)
			if e == nil {
				return nil, unknownEntity(m, a.Entity)
			}
			return describeEntity(m, e), nil
		},
	}
}

// unknownEntity is NOT_FOUND with the closest entity names.
func unknownEntity(m *apiModel, name string) error {
	msg := "endpoint " + m.Endpoint + " has no entity " + quote(name)
	if s := closestFields(name, m.names()); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return toolerr.New(toolerr.NotFound, "%s acumatica_list_schema_entities lists them all", msg+".")
}

func quote(s string) string { return "\"" + s + "\"" }

// describeEntity renders an entity for the describe tool.
func describeEntity(m *apiModel, e *apiEntity) map[string]any {
	fields := make([]map[string]any, len(e.Fields))
	for i, f := range e.Fields {
		fields[i] = map[string]any{"name": f.Name, "type": f.Type}
		if l := defaultFieldLabels[e.Name+"."+f.Name]; l != "" {
			fields[i]["label"] = l
		}
	}
	links := func(ls []apiLink) []map[string]any {
		out := make([]map[string]any, len(ls))
		for i, l := range ls {
			names := []string{}
			if sub := m.Subs[l.Entity]; sub != nil {
				for _, f := range sub.Fields {
					names = append(names, f.Name)
				}
			} else if top := m.Entities[l.Entity]; top != nil {
				for _, f := range top.Fields {
					names = append(names, f.Name)
				}
			}
			out[i] = map[string]any{"name": l.Name, "entity": l.Entity, "fields": names}
		}
		return out
	}
	keys := keysOf(e)
	if keys == nil {
		keys = []string{}
	}
	out := map[string]any{
		"entity":   e.Name,
		"endpoint": m.Endpoint,
		"keys":     keys,
		"fields":   fields,
		"details":  links(e.Details),
		"linked":   links(e.Linked),
	}
	if e.Form != "" {
		out["form"] = e.Form
	}
	if e.Screen != "" {
		out["screen"] = e.Screen
	}
	return out
}
