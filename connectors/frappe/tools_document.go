package frappe

import (
	"context"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/schema"
)

// documentDoctypes are the business documents get_document may read.
var documentDoctypes = []string{
	"Customer", "Supplier", "Item", "Sales Order", "Sales Invoice",
	"Purchase Order", "Purchase Invoice", "Payment Entry", "Bank Transaction",
}

const (
	defaultDetailLimit = 20
	maxDetailLimit     = 50
)

type getDocumentArgs struct {
	Doctype      string `json:"doctype"`
	Name         string `json:"name"`
	DetailLimit  *int   `json:"detail_limit"`
	DetailOffset int    `json:"detail_offset"`
}

// tableMeta describes the page of one child table that was returned.
type tableMeta struct {
	Total      int  `json:"total"`
	Offset     int  `json:"offset"`
	Returned   int  `json:"returned"`
	NextOffset *int `json:"next_offset"`
	Complete   bool `json:"complete"`
}

func getDocumentTool() connector.Tool {
	return connector.Tool{
		Name:  "get_document",
		Title: "Get a document",
		Description: "Get one business document by its exact name, with its child tables (item rows, payment references, bank payment links). " +
			"Child tables are paged by detail_limit and detail_offset; detail_meta.<table> gives each table's full row count and next_offset. " +
			"An empty table may also mean that field permissions hide its rows.",
		Input: schema.Object(
			schema.Prop("doctype", schema.String("Document type.").OneOf(documentDoctypes...)).Required(),
			schema.Prop("name", schema.String("Exact document name, e.g. ACC-SINV-2025-00001.").Len(1, 140)).Required(),
			schema.Prop("detail_limit", schema.Integer("Rows per child table.").Min(1).Max(maxDetailLimit).WithDefault(defaultDetailLimit)),
			schema.Prop("detail_offset", schema.Integer("Child-table rows to skip.").Min(0).Max(100000).WithDefault(0)),
		),
		Output: schema.Object(
			schema.Prop("doctype", schema.String("Document type.")).Required(),
			schema.Prop("name", schema.String("Document name.")).Required(),
			schema.Prop("document", schema.OpenObject()).Required(),
			schema.Prop("detail_meta", schema.Map(schema.Object(
				schema.Prop("total", schema.Integer("Rows in the table.")).Required(),
				schema.Prop("offset", schema.Integer("First row returned.")).Required(),
				schema.Prop("returned", schema.Integer("Rows returned.")).Required(),
				schema.Prop("next_offset", schema.Integer("detail_offset of the next page; null at the end.").Nullable()).Required(),
				schema.Prop("complete", schema.Boolean("True when no rows follow.")).Required(),
			))).Required(),
		),
		Effect:  connector.Read,
		Handler: getDocument,
	}
}

func getDocument(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[getDocumentArgs](call)
	if err != nil {
		return nil, err
	}
	limit := defaultDetailLimit
	if a.DetailLimit != nil {
		limit = *a.DetailLimit
	}
	doc, err := newClient(call.Site, call.HTTP).get(ctx, a.Doctype, a.Name)
	if err != nil {
		return nil, err
	}
	meta := map[string]tableMeta{}
	for key, v := range doc {
		if internalField(key) {
			delete(doc, key)
			continue
		}
		rows, ok := v.([]any)
		if !ok {
			continue
		}
		page, m := pageRows(rows, a.DetailOffset, limit)
		doc[key] = page
		meta[key] = m
	}
	return map[string]any{"doctype": a.Doctype, "name": a.Name, "document": doc, "detail_meta": meta}, nil
}

// pageRows returns one page of a child table, without Frappe's
// bookkeeping fields.
func pageRows(rows []any, offset, limit int) ([]any, tableMeta) {
	m := tableMeta{Total: len(rows), Offset: offset, Complete: true}
	start := min(offset, len(rows))
	end := min(start+limit, len(rows))
	page := make([]any, 0, end-start)
	for _, r := range rows[start:end] {
		if row, ok := r.(map[string]any); ok {
			for k := range row {
				if internalField(k) || childBookkeeping[k] {
					delete(row, k)
				}
			}
		}
		page = append(page, r)
	}
	m.Returned = len(page)
	if end < len(rows) {
		next := end
		m.NextOffset = &next
		m.Complete = false
	}
	return page, m
}

var childBookkeeping = map[string]bool{
	"name": true, "owner": true, "creation": true, "modified": true, "modified_by": true,
	"docstatus": true, "parent": true, "parentfield": true, "parenttype": true, "doctype": true,
}

// internalField reports Frappe's internal and custom fields, which are left
// out of documents.
func internalField(key string) bool {
	return strings.HasPrefix(key, "_") || strings.HasPrefix(key, "custom_")
}
