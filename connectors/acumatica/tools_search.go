package acumatica

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// ChatGPT's connectors call two tools by these exact names: search(query)
// returns {results:[{id,title,url}]} and fetch(id) returns {id,title,text,
// url,metadata}. Here they search customers, vendors, stock items and the
// main documents by id or name, and fetch one of them whole.

// searchSource is one entity search covers.
type searchSource struct {
	entity string
	// match are the text fields the query is looked for in.
	match []string
	// show are the fields read for the title (keys first).
	show []string
	// title builds the result title from an unwrapped row.
	title func(r map[string]any) string
	// expand is what fetch adds (document lines).
	expand string
	// uiKeys maps key fields to the parameters of the form's URL, with an
	// optional translation of display values to the form's codes.
	uiKeys []uiKey
}

type uiKey struct {
	param string
	field string
	codes map[string]string
}

var arDocTypes = map[string]string{"Invoice": "INV", "Debit Memo": "DRM", "Credit Memo": "CRM", "Prepayment Invoice": "PPI"}
var apDocTypes = map[string]string{"Bill": "INV", "Debit Adj.": "ADR", "Credit Adj.": "ACR", "Prepayment": "PPM"}

var searchSources = []searchSource{
	{entity: "Customer", match: []string{"CustomerID", "CustomerName"}, show: []string{"CustomerID", "CustomerName", "Status"},
		title: func(r map[string]any) string {
			return fmt.Sprintf("Customer %s — %s", str(r["CustomerID"]), str(r["CustomerName"]))
		},
		uiKeys: []uiKey{{param: "AcctCD", field: "CustomerID"}}},
	{entity: "Vendor", match: []string{"VendorID", "VendorName"}, show: []string{"VendorID", "VendorName", "Status"},
		title: func(r map[string]any) string {
			return fmt.Sprintf("Vendor %s — %s", str(r["VendorID"]), str(r["VendorName"]))
		},
		uiKeys: []uiKey{{param: "AcctCD", field: "VendorID"}}},
	{entity: "StockItem", match: []string{"InventoryID", "Description"}, show: []string{"InventoryID", "Description", "ItemStatus"},
		title: func(r map[string]any) string {
			return fmt.Sprintf("Stock item %s — %s", str(r["InventoryID"]), str(r["Description"]))
		},
		expand: "WarehouseDetails", uiKeys: []uiKey{{param: "InventoryCD", field: "InventoryID"}}},
	{entity: "SalesOrder", match: []string{"OrderNbr", "CustomerID", "Description"}, show: []string{"OrderType", "OrderNbr", "CustomerID", "Description", "Status"},
		title: func(r map[string]any) string {
			return fmt.Sprintf("Sales order %s %s — %s %s", str(r["OrderType"]), str(r["OrderNbr"]), str(r["CustomerID"]), str(r["Description"]))
		},
		expand: "Details", uiKeys: []uiKey{{param: "OrderType", field: "OrderType"}, {param: "OrderNbr", field: "OrderNbr"}}},
	{entity: "Invoice", match: []string{"ReferenceNbr", "Customer", "Description"}, show: []string{"Type", "ReferenceNbr", "Customer", "Description", "Status"},
		title: func(r map[string]any) string {
			return fmt.Sprintf("AR %s %s — %s %s", str(r["Type"]), str(r["ReferenceNbr"]), str(r["Customer"]), str(r["Description"]))
		},
		expand: "Details", uiKeys: []uiKey{{param: "DocType", field: "Type", codes: arDocTypes}, {param: "RefNbr", field: "ReferenceNbr"}}},
	{entity: "Bill", match: []string{"ReferenceNbr", "Vendor", "Description"}, show: []string{"Type", "ReferenceNbr", "Vendor", "Description", "Status"},
		title: func(r map[string]any) string {
			return fmt.Sprintf("AP %s %s — %s %s", str(r["Type"]), str(r["ReferenceNbr"]), str(r["Vendor"]), str(r["Description"]))
		},
		expand: "Details", uiKeys: []uiKey{{param: "DocType", field: "Type", codes: apDocTypes}, {param: "RefNbr", field: "ReferenceNbr"}}},
}

// perSourceResults bounds each source's share of a search.
const perSourceResults = 5

// searchConcurrency bounds the parallel list requests of one search, so a
// search stays within small licences' concurrent-request limits.
const searchConcurrency = 2

func str(v any) string {
	if v == nil {
		return ""
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

func sourceOf(entity string) *searchSource {
	for i := range searchSources {
		if searchSources[i].entity == entity {
			return &searchSources[i]
		}
	}
	return nil
}

type searchArgs struct {
	Query string `json:"query"`
}

func searchTool(conn *Connector) connector.Tool {
	return connector.Tool{
		Name:  "search",
		Title: "Search Acumatica",
		Description: "Search this Acumatica site for customers, vendors, stock items, sales orders, AR invoices and AP bills whose id, number, name or description contains the query text. " +
			"The text is matched literally, not as a filter language. Returns ids for fetch. For precise questions prefer acumatica_list_entities with a filterExpression.",
		Input: schema.Object(schema.Prop("query", schema.String("Text to look for.").Len(1, 100)).Required()),
		Output: schema.Object(
			schema.Prop("results", schema.Array(schema.Object(
				schema.Prop("id", schema.String("Pass to fetch.")).Required(),
				schema.Prop("title", schema.String("What the record is.")).Required(),
				schema.Prop("url", schema.String("The record's form in Acumatica.")).Required(),
			), "Matches, at most five per kind.")).Required(),
			schema.Prop("warnings", schema.Array(schema.String(""), "Kinds that could not be searched; the results may be incomplete.")),
		),
		Effect: connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[searchArgs](call)
			if err != nil {
				return nil, err
			}
			return search(ctx, newClient(conn, call), strings.TrimSpace(a.Query))
		},
	}
}

func search(ctx context.Context, c *client, query string) (any, error) {
	if query == "" {
		return nil, toolerr.New(toolerr.InvalidArgument, "query must contain text")
	}
	literal := "'" + strings.ReplaceAll(query, "'", "''") + "'"
	type outcome struct {
		rows []map[string]any
		err  error
	}
	outcomes := make([]outcome, len(searchSources))
	sem := make(chan struct{}, searchConcurrency)
	var wg sync.WaitGroup
	for i, src := range searchSources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			conds := make([]string, len(src.match))
			for j, f := range src.match {
				conds[j] = "substringof(" + literal + ", " + f + ")"
			}
			op := contractOp{entity: src.entity, filter: strings.Join(conds, " or "), sel: strings.Join(src.show, ",")}
			// Five a kind, or fewer where the site caps the rows of a query.
			rows, err := c.listRecords(ctx, op, min(perSourceResults, c.set.recordCap(c.call)))
			outcomes[i] = outcome{rows, err}
		}()
	}
	wg.Wait()
	results := []map[string]any{}
	var warnings []string
	failed := 0
	for i, o := range outcomes {
		src := searchSources[i]
		if o.err != nil {
			failed++
			if te := asToolErr(o.err); te != nil && te.Code == toolerr.PermissionDenied {
				warnings = append(warnings, src.entity+": this user may not read them")
				continue
			}
			warnings = append(warnings, src.entity+": "+errorText(o.err))
			continue
		}
		for _, r := range o.rows {
			row := unwrapRecord(r)
			results = append(results, map[string]any{"id": c.resultID(src, row), "title": src.title(row), "url": c.formURL(src, row)})
		}
	}
	if failed == len(searchSources) {
		// Nothing could be searched: that is a failure, not "no matches".
		return nil, outcomes[0].err
	}
	out := map[string]any{"results": results}
	if len(warnings) > 0 {
		out["warnings"] = warnings
	}
	return out, nil
}

// resultID is "Entity:key1/key2", each key path-escaped.
func (c *client) resultID(src searchSource, row map[string]any) string {
	spec := getterOf(src.entity)
	keys := make([]string, len(spec.Keys))
	for i, k := range spec.Keys {
		keys[i] = url.PathEscape(str(row[k.Name]))
	}
	return src.entity + ":" + strings.Join(keys, "/")
}

// formURL links to the record's form in Acumatica's UI.
func (c *client) formURL(src searchSource, row map[string]any) string {
	info := defaultEntities[src.entity]
	q := url.Values{"ScreenId": {info.Screen}}
	for _, k := range src.uiKeys {
		v := str(row[k.field])
		if code, ok := k.codes[v]; ok {
			v = code
		}
		q.Set(k.param, v)
	}
	return c.site.URL("/Main", q)
}

func getterOf(entity string) getterSpec {
	for _, g := range getterSpecs {
		if g.Entity == entity {
			return g
		}
	}
	return getterSpec{}
}

type fetchArgs struct {
	ID string `json:"id"`
}

func fetchTool(conn *Connector) connector.Tool {
	return connector.Tool{
		Name:  "fetch",
		Title: "Fetch an Acumatica record",
		Description: "Fetch one record found by search, whole: its fields as readable text (documents with their lines), a link to its form and its metadata. " +
			"The id is what search returned, e.g. Customer:C000000001 or SalesOrder:SO/SO000123.",
		Input: schema.Object(schema.Prop("id", schema.String("An id from search.").Match(`^[A-Za-z]{1,40}:.{1,400}$`)).Required()),
		Output: schema.Object(
			schema.Prop("id", schema.String("The id.")).Required(),
			schema.Prop("title", schema.String("What the record is.")).Required(),
			schema.Prop("text", schema.String("The record as text: one field per line, then its lines.")).Required(),
			schema.Prop("url", schema.String("The record's form in Acumatica.")).Required(),
			schema.Prop("metadata", schema.Object(
				schema.Prop("entity", schema.String("The contract-API entity.")).Required(),
				schema.Prop("keys", withDesc(schema.Map(schema.String("")), "Key field to value.")).Required(),
				endpointProp(),
			)).Required(),
		),
		Effect: connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[fetchArgs](call)
			if err != nil {
				return nil, err
			}
			return fetch(ctx, newClient(conn, call), a.ID)
		},
	}
}

func fetch(ctx context.Context, c *client, id string) (any, error) {
	entity, rest, _ := strings.Cut(id, ":")
	src := sourceOf(entity)
	if src == nil {
		return nil, toolerr.New(toolerr.InvalidArgument, "%q is not an id from search (it must start with one of Customer, Vendor, StockItem, SalesOrder, Invoice, Bill)", id)
	}
	spec := getterOf(entity)
	parts := strings.Split(rest, "/")
	if len(parts) != len(spec.Keys) {
		return nil, toolerr.New(toolerr.InvalidArgument, "%q is not an id from search: %s ids have %d key part(s)", id, entity, len(spec.Keys))
	}
	op := contractOp{entity: entity, expand: src.expand}
	keysOut := map[string]string{}
	for i, p := range parts {
		v, err := url.PathUnescape(p)
		if err != nil || strings.TrimSpace(v) == "" {
			return nil, toolerr.New(toolerr.InvalidArgument, "%q is not an id from search", id)
		}
		op.keyNames = append(op.keyNames, spec.Keys[i].Name)
		op.keys = append(op.keys, v)
		keysOut[spec.Keys[i].Name] = v
	}
	rec, err := c.getRecord(ctx, op)
	if err != nil {
		return nil, err
	}
	row := unwrapRecord(rec)
	return map[string]any{
		"id":       id,
		"title":    src.title(row),
		"text":     recordText(row),
		"url":      c.formURL(*src, row),
		"metadata": map[string]any{"entity": entity, "keys": keysOut, "endpoint": c.set.endpoint()},
	}, nil
}

// recordText renders an unwrapped record as "Field: value" lines, empty
// fields left out, then each detail line.
func recordText(row map[string]any) string {
	var b strings.Builder
	names := make([]string, 0, len(row))
	for k := range row {
		names = append(names, k)
	}
	sort.Strings(names)
	var collections []string
	for _, k := range names {
		v := row[k]
		switch t := v.(type) {
		case nil:
		case []any:
			collections = append(collections, k)
		case map[string]any:
			if k != "custom" {
				fmt.Fprintf(&b, "%s: %s\n", k, inlineRecord(t))
			}
		default:
			if s := str(t); s != "" && k != "id" {
				fmt.Fprintf(&b, "%s: %s\n", k, s)
			}
		}
	}
	for _, k := range collections {
		lines, _ := row[k].([]any)
		fmt.Fprintf(&b, "\n%s (%d lines):\n", k, len(lines))
		for i, l := range lines {
			if i == 100 {
				fmt.Fprintf(&b, "… %d more lines\n", len(lines)-100)
				break
			}
			if m, ok := l.(map[string]any); ok {
				fmt.Fprintf(&b, "- %s\n", inlineRecord(m))
			}
		}
	}
	return strings.TrimSpace(b.String())
}

// inlineRecord writes a record's non-empty scalar fields on one line.
func inlineRecord(m map[string]any) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		switch v := m[k].(type) {
		case nil, map[string]any, []any:
		default:
			if s := str(v); s != "" && k != "id" && k != "note" {
				parts = append(parts, k+"="+s)
			}
		}
	}
	return strings.Join(parts, ", ")
}
