package frappe

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/rawjson"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

const (
	defaultLimit = 20
	maxLimit     = 100
)

// pageArgs are the paging arguments every list tool takes.
type pageArgs struct{ connector.PageArgs }

func (p pageArgs) offset() int { return p.OffsetOrZero() }

func (p pageArgs) limit(maxRecords int) int { return p.LimitOr(defaultLimit, maxLimit, maxRecords) }

func pageProps() []schema.Property { return connector.PageProps(defaultLimit, maxLimit) }

// pageMeta describes one page of a list: the shared paging members, then
// Frappe's own.
type pageMeta struct {
	connector.PageMeta
	// LiteralFiltered counts rows of this page that matched the ERP's
	// pattern but not the literal search text, and were left out.
	LiteralFiltered int `json:"literal_filtered,omitempty"`
	// UnavailableFields are the fields the ERP would not return to this
	// user (field-level permissions) or that this site lacks; the rows do
	// not have them.
	UnavailableFields []string `json:"unavailable_fields,omitempty"`
}

func pageMetaSchema() *schema.Schema {
	return schema.Object(append(connector.PageMetaProps("Ordering used, always ending with the document name as tie-breaker."),
		schema.Prop("literal_filtered", schema.Integer("Rows of this page left out because they matched the search only through a % or _ the ERP cannot match literally; a page may hold fewer rows than the limit, and next_offset still covers every row.")),
		schema.Prop("unavailable_fields", schema.Array(schema.String(""), "Fields the rows lack because the ERP would not return them: hidden from this user by field permissions, or absent on this site. Their values are unknown, not empty.")),
	)...)
}

// listPage is the result of a list tool. Its rows are the ERP's JSON,
// passed on without being decoded.
type listPage struct {
	Data []json.RawMessage `json:"data"`
	Meta pageMeta          `json:"meta"`
}

// encodeWithRows encodes v, a result without its rows, and puts rows in
// front of its other members as "data". The rows are the ERP's JSON,
// checked when they were read (splitRows), so they are copied, not
// encoded again.
func encodeWithRows(v any, rows []json.RawMessage) (connector.RawResult, error) {
	rest, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	size := len(`{"data":,`) + rawjson.ArrayLen(rows) + len(rest)
	out := append(make([]byte, 0, size), `{"data":`...)
	out, err = rawjson.AppendMembers(rawjson.AppendArray(out, rows), rest)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return out, nil
}

func listPageSchema(row *schema.Schema) *schema.Schema {
	return schema.Object(
		schema.Prop("data", schema.Array(row, "The rows of this page.")).Required(),
		schema.Prop("meta", pageMetaSchema()).Required(),
	)
}

// fetchPage runs q for one page: it asks for limit+1 rows to learn whether
// another page exists, then trims. When search is set and its text has LIKE
// wildcards, rows that match the ERP's pattern but not the literal text are
// left out; offsets still count the ERP's rows, so walking the pages with
// next_offset misses nothing.
func fetchPage(ctx context.Context, c *client, doctype string, q listQuery, page pageArgs, maxRecords int, search *textSearch) (listPage, error) {
	limit := page.limit(maxRecords)
	q.Start = page.offset()
	q.PageLength = limit + 1
	q.AllowUnavailable = true
	if search != nil {
		q.OrFilters = search.orFilters()
	}
	rows, err := c.listRows(ctx, doctype, q)
	if err != nil {
		return listPage{}, err
	}
	// erpgate asked for one row more than the limit, so the end is known
	// without an extra empty request.
	shared, kept := connector.NewPageMeta(q.Start, limit, len(rows), q.OrderBy)
	meta := pageMeta{PageMeta: shared}
	rows = rows[:kept]
	if search != nil && hasWildcards(search.text) {
		kept := rows[:0]
		for _, r := range rows {
			m, err := decodeRow(r)
			if err != nil {
				return listPage{}, err
			}
			if search.keep(m) {
				kept = append(kept, r)
			}
		}
		meta.LiteralFiltered = len(rows) - len(kept)
		rows = kept
	}
	meta.Returned = len(rows)
	meta.UnavailableFields = c.unavailable.of(doctype)
	if rows == nil {
		rows = []json.RawMessage{}
	}
	return listPage{Data: rows, Meta: meta}, nil
}

// walkRows reads the rows matching q page by page, in q's order (which must
// end with the name tie-breaker), until the end or until bound rows have
// been read; truncated reports that more rows exist. Rows that match the
// ERP's LIKE pattern but not search's literal text are left out.
func walkRows(ctx context.Context, c *client, doctype string, q listQuery, search *textSearch, pageSize, bound int) (rows []map[string]any, truncated bool, err error) {
	keep := func(map[string]any) bool { return true }
	if search != nil {
		q.OrFilters = search.orFilters()
		if hasWildcards(search.text) {
			keep = search.keep
		}
	}
	fetch := func(q listQuery) ([]map[string]any, error) { return c.list(ctx, doctype, q) }
	return walkPages(fetch, q, keep, pageSize, bound)
}

// walkChildRows is walkRows for a child table read through its parent.
func walkChildRows(ctx context.Context, c *client, child, parent string, q listQuery, pageSize, bound int) ([]map[string]any, bool, error) {
	fetch := func(q listQuery) ([]map[string]any, error) { return c.childList(ctx, child, parent, q) }
	return walkPages(fetch, q, func(map[string]any) bool { return true }, pageSize, bound)
}

// walkBound is how many rows a walk of pages of pageSize reads at most when
// it is bounded at bound rows: bound, or fewer when pages are smaller than
// walkPageSize (a site's low row cap, pageOf). A walk never sends more
// requests than it would in pages of walkPageSize, so a site capped at one
// row a query is not sent one request per row. Messages that say where a
// walk stopped use this number.
func walkBound(pageSize, bound int) int {
	pages := max(1, (bound+walkPageSize-1)/walkPageSize)
	return min(bound, max(pageSize, 1)*pages)
}

// walkPages pages through fetch, up to walkBound(pageSize, bound) rows.
// The last page allowed asks for one more row, to learn whether the bound
// cut the set short.
func walkPages(fetch func(listQuery) ([]map[string]any, error), q listQuery, keep func(map[string]any) bool, pageSize, bound int) ([]map[string]any, bool, error) {
	bound = walkBound(pageSize, bound)
	pageSize = max(1, min(pageSize, bound))
	var rows []map[string]any
	for start := 0; ; start += pageSize {
		q.Start = start
		q.PageLength = pageSize
		if start+pageSize >= bound {
			q.PageLength = bound - start + 1
		}
		page, err := fetch(q)
		if err != nil {
			return nil, false, err
		}
		for i, r := range page {
			if start+i >= bound {
				return rows, true, nil
			}
			if keep(r) {
				rows = append(rows, r)
			}
		}
		if len(page) < q.PageLength {
			return rows, false, nil
		}
	}
}
