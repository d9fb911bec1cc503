package frappe

import (
	"context"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// documentShape is what get_document returns of one DocType: its header
// fields (all but internal and custom ones) and the child tables it
// selects, each with an allowlist of fields. Child tables not listed are
// left out: they carry internal bookkeeping, not business content.
type documentShape struct {
	tables map[string][]string
	// currencies names, for amount fields, the header field that holds
	// their currency.
	currencies map[string]string
}

var (
	taxFields      = []string{"charge_type", "account_head", "description", "rate", "tax_amount", "total", "base_tax_amount"}
	scheduleFields = []string{"payment_term", "due_date", "invoice_portion", "payment_amount", "paid_amount", "outstanding", "base_payment_amount"}
	sellingItem    = []string{"item_code", "item_name", "description", "qty", "uom", "rate", "amount", "discount_percentage", "net_amount", "base_amount", "base_net_amount", "warehouse", "item_group"}
	invoiceCurr    = map[string]string{"grand_total": "currency", "net_total": "currency", "rounded_total": "currency", "total_taxes_and_charges": "currency", "outstanding_amount": "party_account_currency", "paid_amount": "currency"}
	orderCurr      = map[string]string{"grand_total": "currency", "net_total": "currency", "rounded_total": "currency", "total_taxes_and_charges": "currency", "advance_paid": "party_account_currency"}
)

// documentShapes lists the DocTypes get_document and fetch may read.
var documentShapes = map[string]documentShape{
	"Customer": {},
	"Supplier": {},
	"Item": {tables: map[string][]string{
		"reorder_levels": {"warehouse", "warehouse_group", "warehouse_reorder_level", "warehouse_reorder_qty", "material_request_type"},
		"item_defaults":  {"company", "default_warehouse", "income_account", "expense_account", "selling_cost_center", "buying_cost_center"},
	}},
	"Sales Order": {tables: map[string][]string{
		"items":            append(slices.Clone(sellingItem), "delivery_date", "delivered_qty", "billed_amt"),
		"taxes":            taxFields,
		"payment_schedule": scheduleFields,
	}, currencies: orderCurr},
	"Sales Invoice": {tables: map[string][]string{
		"items":            append(slices.Clone(sellingItem), "income_account", "cost_center", "sales_order", "delivery_note"),
		"taxes":            taxFields,
		"payment_schedule": scheduleFields,
	}, currencies: invoiceCurr},
	"Purchase Order": {tables: map[string][]string{
		"items":            {"item_code", "item_name", "description", "qty", "uom", "rate", "amount", "net_amount", "base_amount", "base_net_amount", "warehouse", "schedule_date", "received_qty", "billed_amt", "expense_account", "project"},
		"taxes":            taxFields,
		"payment_schedule": scheduleFields,
	}, currencies: orderCurr},
	"Purchase Invoice": {tables: map[string][]string{
		"items":            {"item_code", "item_name", "description", "qty", "uom", "rate", "amount", "net_amount", "base_amount", "base_net_amount", "warehouse", "expense_account", "cost_center", "purchase_order", "purchase_receipt", "project"},
		"taxes":            taxFields,
		"payment_schedule": scheduleFields,
	}, currencies: invoiceCurr},
	"Payment Entry": {tables: map[string][]string{
		"references": {"reference_doctype", "reference_name", "due_date", "bill_no", "total_amount", "outstanding_amount", "allocated_amount", "exchange_rate", "exchange_gain_loss", "payment_term", "account"},
		"deductions": {"account", "cost_center", "amount", "description"},
	}, currencies: map[string]string{"paid_amount": "paid_from_account_currency", "received_amount": "paid_to_account_currency"}},
	"Bank Transaction": {tables: map[string][]string{
		"payment_entries": {"payment_document", "payment_entry", "allocated_amount", "clearance_date"},
	}, currencies: map[string]string{"deposit": "currency", "withdrawal": "currency", "allocated_amount": "currency", "unallocated_amount": "currency"}},
}

// documentDoctypes lists documentShapes' keys in a stable order.
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
	// Available is false when the document came without this table, e.g.
	// because field permissions hide it.
	Available  bool `json:"available"`
	Total      int  `json:"total"`
	Offset     int  `json:"offset"`
	Returned   int  `json:"returned"`
	NextOffset *int `json:"next_offset"`
	// Complete is true when rows were returned up to the end of the table.
	// It is false for an empty table: field permissions can hide rows, so
	// emptiness is not claimed as complete.
	Complete bool `json:"complete"`
}

// documentResult is get_document's result.
type documentResult struct {
	Doctype    string               `json:"doctype"`
	Name       string               `json:"name"`
	URL        string               `json:"url"`
	Document   map[string]any       `json:"document"`
	DetailMeta map[string]tableMeta `json:"detail_meta"`
	// Currencies maps amount fields to their currency code.
	Currencies map[string]string `json:"currencies"`
}

func tableMetaSchema() *schema.Schema {
	return schema.Object(
		schema.Prop("available", schema.Boolean("False when the ERP sent the document without this table (e.g. hidden by field permissions).")).Required(),
		schema.Prop("total", schema.Integer("Rows in the whole table.")).Required(),
		schema.Prop("offset", schema.Integer("First row returned.")).Required(),
		schema.Prop("returned", schema.Integer("Rows returned.")).Required(),
		schema.Prop("next_offset", schema.Integer("detail_offset of the next page; null when no rows follow.").Nullable()).Required(),
		schema.Prop("complete", schema.Boolean("True when the rows up to the end of the table were returned. False for an empty table, because field permissions can hide rows.")).Required(),
	)
}

func getDocumentTool() connector.Tool {
	return connector.Tool{
		Name:  "get_document",
		Title: "Get a document",
		Description: "Get one business document by its exact name: " + joinOr(documentDoctypes) + ". " +
			"It includes selected child rows: item lines of orders and invoices (with taxes and payment schedule), the invoices a Payment Entry settled (references), and the payments a Bank Transaction is reconciled with (payment_entries). " +
			"Child tables are paged by detail_limit and detail_offset; detail_meta.<table> gives each table's full row count and next_offset. " +
			"currencies says which currency each header amount is in: outstanding_amount is in party_account_currency, which can differ from the document currency. " +
			"NOT_FOUND means no document has that name; PERMISSION_DENIED means this user may not read it.",
		Input: schema.Object(
			schema.Prop("doctype", schema.String("Document type.").OneOf(documentDoctypes...)).Required(),
			schema.Prop("name", schema.String("Exact document name, e.g. ACC-SINV-2025-00001.").Len(1, 140)).Required(),
			schema.Prop("detail_limit", schema.Integer("Rows per child table.").Min(1).Max(maxDetailLimit).WithDefault(defaultDetailLimit)),
			schema.Prop("detail_offset", schema.Integer("Child-table rows to skip (the same for every table).").Min(0).Max(100000).WithDefault(0)),
		),
		Output: schema.Object(
			schema.Prop("doctype", schema.String("Document type.")).Required(),
			schema.Prop("name", schema.String("Document name.")).Required(),
			schema.Prop("url", schema.String("The document's page in the ERP.")).Required(),
			schema.Prop("document", schema.OpenObject()).Required(),
			schema.Prop("detail_meta", schema.Map(tableMetaSchema())).Required(),
			schema.Prop("currencies", withDesc(schema.Map(schema.String("")), "Currency code of each header amount field.")).Required(),
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
	return readDocument(ctx, callClient(call), a.Doctype, a.Name, a.DetailOffset, limit)
}

// readDocument reads one allowlisted document and shapes it.
func readDocument(ctx context.Context, c *client, doctype, name string, offset, limit int) (*documentResult, error) {
	shape := documentShapes[doctype]
	doc, err := c.get(ctx, doctype, name)
	if err != nil {
		return nil, err
	}
	if n := str(doc["name"]); n != "" {
		name = n
	}
	meta := map[string]tableMeta{}
	for key, v := range doc {
		if internalField(key) {
			delete(doc, key)
			continue
		}
		if _, isTable := v.([]any); isTable {
			if _, selected := shape.tables[key]; !selected {
				delete(doc, key)
			}
		}
	}
	for table, fields := range shape.tables {
		rows, ok := doc[table].([]any)
		if !ok {
			meta[table] = tableMeta{Available: false}
			continue
		}
		page, m := pageRows(rows, offset, limit, fields)
		doc[table] = page
		meta[table] = m
	}
	// outstanding_amount is meaningless without its currency: say so even
	// when the ERP left the field out.
	if _, ok := doc["outstanding_amount"]; ok {
		if _, ok := doc["party_account_currency"]; !ok {
			doc["party_account_currency"] = nil
		}
	}
	currencies := map[string]string{}
	for field, currencyField := range shape.currencies {
		if _, ok := doc[field]; !ok {
			continue
		}
		if code := str(doc[currencyField]); code != "" {
			currencies[field] = code
		}
	}
	if doctype == "Payment Entry" {
		// Reference amounts are in the party account's currency: the
		// account the money came from for a receipt, went to for a payment.
		switch str(doc["payment_type"]) {
		case "Receive":
			currencies["references"] = str(doc["paid_from_account_currency"])
		case "Pay":
			currencies["references"] = str(doc["paid_to_account_currency"])
		}
	}
	return &documentResult{
		Doctype: doctype, Name: name, URL: c.deskURL(doctype, name),
		Document: doc, DetailMeta: meta, Currencies: currencies,
	}, nil
}

// pageRows returns one page of a child table with only the selected fields.
func pageRows(rows []any, offset, limit int, fields []string) ([]any, tableMeta) {
	m := tableMeta{Available: true, Total: len(rows), Offset: offset}
	start := min(offset, len(rows))
	end := min(start+limit, len(rows))
	page := make([]any, 0, end-start)
	for _, r := range rows[start:end] {
		row, ok := r.(map[string]any)
		if !ok {
			continue
		}
		out := map[string]any{"idx": row["idx"]}
		for _, f := range fields {
			if v, ok := row[f]; ok {
				out[f] = v
			}
		}
		page = append(page, out)
	}
	m.Returned = len(page)
	if end < len(rows) {
		next := end
		m.NextOffset = &next
	} else {
		m.Complete = len(rows) > 0
	}
	return page, m
}

// internalField reports Frappe's internal and custom fields, which are left
// out of documents.
func internalField(key string) bool {
	return strings.HasPrefix(key, "_") || strings.HasPrefix(key, "custom_")
}
