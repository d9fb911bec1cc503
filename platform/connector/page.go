package connector

import "github.com/erpgate/erpgate/platform/connector/schema"

// The paging of a list tool. A list tool that pages takes offset and limit
// (PageProps) and returns {"data": [rows], "meta": PageMeta}; to learn
// whether another page exists without an extra request it asks the ERP for
// limit+1 rows and passes the count to NewPageMeta. The conformance suite
// (connectortest) holds every tool with a "data" result to taking offset.

// PageArgs are the paging arguments; embed it in a list tool's arguments.
type PageArgs struct {
	Offset *int `json:"offset"`
	Limit  *int `json:"limit"`
}

// OffsetOrZero is the offset asked for, 0 when none was.
func (p PageArgs) OffsetOrZero() int {
	if p.Offset == nil {
		return 0
	}
	return *p.Offset
}

// LimitOr is the page size: the limit asked for (def when none was), never
// more than maxLimit nor than maxRecords, the site's row cap (Call.MaxRecords),
// and at least 1.
func (p PageArgs) LimitOr(def, maxLimit, maxRecords int) int {
	n := def
	if p.Limit != nil {
		n = *p.Limit
	}
	return max(min(n, maxLimit, max(maxRecords, 1)), 1)
}

// PageProps are the input properties of PageArgs: offset (0 to 1,000,000,
// default 0) and limit (1 to maxLimit, default def).
func PageProps(def, maxLimit int) []schema.Property {
	return []schema.Property{
		schema.Prop("offset", schema.Integer("Rows to skip. Repeat the same request with meta.next_offset to get the next page.").Min(0).Max(1_000_000).WithDefault(0)),
		schema.Prop("limit", schema.Integer("Rows per page.").Min(1).Max(float64(maxLimit)).WithDefault(def)),
	}
}

// PageMeta describes one page of a list. A connector with more to say
// embeds it first in its own meta type and adds its members after it.
type PageMeta struct {
	Offset   int `json:"offset"`
	Limit    int `json:"limit"`
	Returned int `json:"returned"`
	// OrderBy is the ordering used. It must end with a unique key, so that
	// pages neither repeat nor skip a row.
	OrderBy string `json:"order_by"`
	// NextOffset is where the next page starts, or null when this page is
	// the last one.
	NextOffset *int `json:"next_offset"`
	// Complete is true when no rows follow this page.
	Complete bool `json:"complete"`
}

// NewPageMeta describes the page at offset of at most limit rows, ordered by
// orderBy, when the ERP answered fetched rows to a request for limit+1. It
// returns how many of them the page keeps (at most limit); Returned counts
// them, so a connector that leaves more rows out afterwards sets it again.
func NewPageMeta(offset, limit, fetched int, orderBy string) (PageMeta, int) {
	m := PageMeta{Offset: offset, Limit: limit, OrderBy: orderBy, Complete: true}
	kept := fetched
	if fetched > limit {
		kept = limit
		next := offset + limit
		m.NextOffset = &next
		m.Complete = false
	}
	m.Returned = kept
	return m, kept
}

// PageMetaProps are the properties of PageMeta's schema, all required, in
// order; orderBy describes the connector's ordering. Append the
// connector's own members and pass them to schema.Object.
func PageMetaProps(orderBy string) []schema.Property {
	return []schema.Property{
		schema.Prop("offset", schema.Integer("Offset of this page.")).Required(),
		schema.Prop("limit", schema.Integer("Page size used.")).Required(),
		schema.Prop("returned", schema.Integer("Rows in this page.")).Required(),
		schema.Prop("order_by", schema.String(orderBy)).Required(),
		schema.Prop("next_offset", schema.Integer("Offset of the next page; null when this is the last page.").Nullable()).Required(),
		schema.Prop("complete", schema.Boolean("True when no rows follow this page.")).Required(),
	}
}
