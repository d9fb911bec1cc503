package acumatica

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

type searchSchemaArgs struct {
	Query string `json:"query"`
	Kind  string `json:"kind"`
	Limit int    `json:"limit"`
}

func warningsProp() schema.Property {
	return schema.Prop("warnings", schema.Array(schema.String(""), "What the index lacks, if anything.")).Required()
}

func searchSchemaTool(conn *Connector) connector.Tool {
	hit := schema.Object(
		schema.Prop("kind", schema.String("entity, field, inquiry or inquiry_column.")).Required(),
		schema.Prop("name", schema.String("The name to use: an entity, Entity.Field, an inquiry, or Inquiry.Column.")).Required(),
		schema.Prop("title", schema.String("The form, label or title people know it by.")).Required(),
		schema.Prop("matchedAllWords", schema.Boolean("Whether it contains every word of the query.")).Required(),
		schema.Prop("detail", schema.OpenObject()).Required(),
	)
	return connector.Tool{
		Name:  "acumatica_search_schema",
		Title: "Search Acumatica's schema",
		Description: "Find which entity, field or generic inquiry holds something, by words people use (\"customer credit limit\", \"open AR invoices\", \"ext ref nbr\"). " +
			"Searches this site's schema-knowledge index — entities, fields with their on-screen labels, inquiries and their columns — built from the site's own OpenAPI document and inquiry metadata, ranked by full-text relevance (hits with every word first). " +
			"Use the names it returns exactly in the other tools.",
		Input: schema.Object(
			schema.Prop("query", schema.String("Words to look for.").Len(1, 200)).Required(),
			schema.Prop("kind", schema.String("Only this kind of item.").OneOf(docKinds...)),
			schema.Prop("limit", schema.Integer("Most hits to return.").Min(1).Max(50).WithDefault(10)),
		),
		Output: schema.Object(
			schema.Prop("results", schema.Array(hit, "Hits, best first.")).Required(),
			endpointProp(),
			warningsProp(),
		),
		Effect: connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[searchSchemaArgs](call)
			if err != nil {
				return nil, err
			}
			c := newClient(conn, call)
			st, err := c.schemaIndex(ctx)
			if err != nil {
				return nil, err
			}
			var kinds []string
			if a.Kind != "" {
				kinds = []string{a.Kind}
			}
			limit := a.Limit
			if limit <= 0 {
				limit = 10
			}
			hits, err := st.index.Search(ctx, a.Query, kinds, limit)
			if err != nil {
				return nil, toolerr.Wrap(toolerr.Internal, err, "erpgate could not search the schema index")
			}
			results := []map[string]any{}
			for _, h := range hits {
				results = append(results, map[string]any{
					"kind": h.Document.Kind, "name": h.Document.Name, "title": h.Document.Title,
					"matchedAllWords": h.AllTerms, "detail": summaryOf(h.Document),
				})
			}
			return map[string]any{"results": results, "endpoint": c.set.endpoint(), "warnings": nonNil(st.warnings)}, nil
		},
	}
}

// summaryOf is a short form of a document's data for search results: an
// entity's key facts without its field list.
func summaryOf(d connector.IndexDocument) map[string]any {
	var m map[string]any
	if json.Unmarshal(d.Data, &m) != nil || m == nil {
		return map[string]any{}
	}
	switch d.Kind {
	case docEntity:
		delete(m, "fields")
		m["details"] = linkNames(m["details"])
		m["linked"] = linkNames(m["linked"])
	case docInquiry:
		if cols, ok := m["columns"].([]any); ok {
			m["columns"] = len(cols)
		}
		delete(m, "filterExample")
	}
	return m
}

func linkNames(v any) []string {
	out := []string{}
	list, _ := v.([]any)
	for _, l := range list {
		if lm, ok := l.(map[string]any); ok {
			if n, ok := lm["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type getSchemaEntityArgs struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

func getSchemaEntityTool(conn *Connector) connector.Tool {
	return connector.Tool{
		Name:  "acumatica_get_schema_entity",
		Title: "Get an entity or inquiry from Acumatica's schema index",
		Description: "Get everything the schema-knowledge index holds about one entity (form, screen, module, keys, every field with type and on-screen label, collections) or one generic inquiry (columns, keys, parameters). " +
			"Faster than the describe tools once the index is built, and it covers inquiries too. Names are matched case-insensitively.",
		Input: schema.Object(
			schema.Prop("name", schema.String("An entity name (SalesOrder) or an inquiry name (AR-OpenInvoices).").Len(1, 128)).Required(),
			schema.Prop("kind", schema.String("entity or inquiry; by default an entity is looked up first, then an inquiry.").OneOf(docEntity, docInquiry)),
		),
		Output: schema.Object(
			schema.Prop("kind", schema.String("entity or inquiry.")).Required(),
			schema.Prop("name", schema.String("Its exact name.")).Required(),
			schema.Prop("title", schema.String("Its form or title.")).Required(),
			schema.Prop("detail", schema.OpenObject()).Required(),
			endpointProp(),
			warningsProp(),
		),
		Effect: connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[getSchemaEntityArgs](call)
			if err != nil {
				return nil, err
			}
			c := newClient(conn, call)
			st, err := c.schemaIndex(ctx)
			if err != nil {
				return nil, err
			}
			kinds := []string{docEntity, docInquiry}
			if a.Kind != "" {
				kinds = []string{a.Kind}
			}
			for _, k := range kinds {
				d, ok, err := st.index.Document(ctx, k, a.Name)
				if err != nil {
					return nil, toolerr.Wrap(toolerr.Internal, err, "erpgate could not read the schema index")
				}
				if ok {
					var detail map[string]any
					_ = json.Unmarshal(d.Data, &detail)
					if detail == nil {
						detail = map[string]any{}
					}
					return map[string]any{"kind": d.Kind, "name": d.Name, "title": d.Title, "detail": detail,
						"endpoint": c.set.endpoint(), "warnings": nonNil(st.warnings)}, nil
				}
			}
			msg := "the schema index has no " + strings.Join(kinds, " or ") + " named " + quote(a.Name)
			if hits, err := st.index.Search(ctx, a.Name, kinds, 3); err == nil && len(hits) > 0 {
				var names []string
				for _, h := range hits {
					names = append(names, h.Document.Name)
				}
				msg += "; closest: " + strings.Join(names, ", ")
			}
			return nil, toolerr.New(toolerr.NotFound, "%s", msg)
		},
	}
}

type listSchemaEntitiesArgs struct {
	Kind   string `json:"kind"`
	Module string `json:"module"`
	Prefix string `json:"prefix"`
	Top    int    `json:"top"`
}

var moduleNames = []string{moduleFinance, moduleReceivables, modulePayables, moduleSales, modulePurchasing, moduleInventory,
	moduleCRM, moduleProjects, moduleTimeExpenses, moduleOrganisation, "payroll", "field services", "commerce", "subcontracts"}

func listSchemaEntitiesTool(conn *Connector) connector.Tool {
	row := schema.Object(
		schema.Prop("name", schema.String("The entity or inquiry name.")).Required(),
		schema.Prop("title", schema.String("Its form or title.")).Required(),
		schema.Prop("screen", schema.String("The form's screen id (entities).")),
		schema.Prop("module", schema.String("Its Acumatica module (entities).")),
	)
	return connector.Tool{
		Name:  "acumatica_list_schema_entities",
		Title: "List Acumatica entities or inquiries",
		Description: "List the entities of this site's contract endpoint (or its exposed generic inquiries) from the schema-knowledge index, by name, optionally only one module's or those starting with a prefix. " +
			"Use it to see what exists; acumatica_search_schema finds things by meaning.",
		Input: schema.Object(
			schema.Prop("kind", schema.String("entity (default) or inquiry.").OneOf(docEntity, docInquiry)),
			schema.Prop("module", schema.String("Only entities of this module.").OneOf(moduleNames...)),
			schema.Prop("prefix", schema.String("Only names starting with this (case-insensitive).").Len(1, 64)),
			topProp(),
		),
		Output: envelopeSchema(row, endpointProp(), warningsProp()),
		Effect: connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[listSchemaEntitiesArgs](call)
			if err != nil {
				return nil, err
			}
			c := newClient(conn, call)
			st, err := c.schemaIndex(ctx)
			if err != nil {
				return nil, err
			}
			kind := a.Kind
			if kind == "" {
				kind = docEntity
			}
			recordCap := c.set.recordCap(call)
			limit := rowLimit(a.Top, recordCap)
			// The index holds a few hundred entities at most: read them all
			// and filter by module here.
			docs, err := st.index.Documents(ctx, kind, a.Prefix, 5000)
			if err != nil {
				return nil, toolerr.Wrap(toolerr.Internal, err, "erpgate could not read the schema index")
			}
			var rows []any
			for _, d := range docs {
				var data struct {
					Screen string `json:"screen"`
					Module string `json:"module"`
				}
				_ = json.Unmarshal(d.Data, &data)
				if a.Module != "" && data.Module != a.Module {
					continue
				}
				row := map[string]any{"name": d.Name, "title": d.Title}
				if data.Screen != "" {
					row["screen"] = data.Screen
				}
				if data.Module != "" {
					row["module"] = data.Module
				}
				rows = append(rows, row)
				if len(rows) > limit {
					break
				}
			}
			env := newEnvelope(rows, limit, recordCap, "a module or a name prefix")
			return struct {
				listEnvelope
				Endpoint string   `json:"endpoint"`
				Warnings []string `json:"warnings"`
			}{env, c.set.endpoint(), nonNil(st.warnings)}, nil
		},
	}
}
