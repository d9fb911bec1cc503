package frappe

import (
	"context"
	"encoding/json"
	"math/big"
	"slices"

	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// summary: "count" and summary: "totals" answer "how many" and "how much"
// for everything a list's filters match, independent of offset and limit,
// without returning pages. Counting uses Frappe's permission-aware counter
// and totals use fixed aggregate expressions through the same permission-
// aware list API, so a user restricted to one company counts and totals
// only that company's documents.

const (
	summaryCount  = "count"
	summaryTotals = "totals"

	// literalWalkBound bounds how many candidate rows erpgate checks itself
	// when a search text has % or _, which the ERP cannot match literally.
	literalWalkBound = 5000
	// walkPageSize is the page size of such walks.
	walkPageSize = 500
)

// summaryProp is the summary argument; transaction lists also offer totals.
func summaryProp(withTotals bool, totalsRule string) schema.Property {
	if !withTotals {
		return schema.Prop("summary", schema.String("count: return only the number of every matching record this user may see, independent of offset and limit, instead of a page.").OneOf(summaryCount))
	}
	return schema.Prop("summary", schema.String("count: return only the number of every matching document this user may see, instead of a page. totals: the count plus summed amounts of every matching document ("+totalsRule+"). Totals are current document amounts, not recognised revenue, balances or net cash; filter docstatus 1 to leave out drafts and cancelled documents.").OneOf(summaryCount, summaryTotals))
}

// listSummary is the result of summary: count or totals.
type listSummary struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
	// Company is the one company totals cover.
	Company string `json:"company,omitempty"`
	// Totals are exact sums of each amount field over every match; nil
	// (null) for a field the ERP would not return (UnavailableFields).
	Totals map[string]*json.Number `json:"totals,omitempty"`
	// Currencies names the currency each total is stated in.
	Currencies map[string]string `json:"currencies,omitempty"`
	// Breakdown splits totals whose currency varies per document, such as
	// outstanding_amount by party_account_currency.
	Breakdown []map[string]any `json:"breakdown,omitempty"`
	// UnavailableFields are the amount fields the ERP would not return
	// to this user or that this site lacks: their totals are null.
	UnavailableFields []string `json:"unavailable_fields,omitempty"`
	// WithoutCurrency counts the documents that match every filter but
	// the currency and have no currency at all, so are in no total.
	WithoutCurrency int    `json:"without_currency,omitempty"`
	Note            string `json:"note,omitempty"`
}

func listSummarySchema() *schema.Schema {
	return schema.Object(
		schema.Prop("kind", schema.String("count or totals.").OneOf(summaryCount, summaryTotals)).Required(),
		schema.Prop("count", schema.Integer("Every matching record this user may see.")).Required(),
		schema.Prop("company", schema.String("The company the totals cover.")),
		schema.Prop("totals", withDesc(schema.Map(schema.Number("Exact sum over every matching document; null when the field is unavailable (see unavailable_fields).").Nullable()), "Summed amounts by field.")),
		schema.Prop("currencies", withDesc(schema.Map(schema.String("ISO currency code.")), "The currency of each total.")),
		schema.Prop("breakdown", schema.Array(schema.OpenObject(), "Totals whose currency differs per document, one entry per currency; an unavailable field's amount is null.")),
		schema.Prop("unavailable_fields", schema.Array(schema.String(""), "Amount fields the ERP would not return (hidden from this user by field permissions, or absent on this site): their totals are null, unknown rather than zero.")),
		schema.Prop("without_currency", schema.Integer("Documents that match every filter but currency and have no currency in the ERP (e.g. bank lines imported without one): they are in no total. Absent when there are none.")),
		schema.Prop("note", schema.String("How to read these totals.")),
	)
}

// countMatches counts every row matching f and search. When the search
// text has LIKE wildcards the ERP's count would include rows that only match
// the pattern, so erpgate walks the candidates and counts literal matches.
func countMatches(ctx context.Context, c *client, doctype string, f filters, search *textSearch, maxRecords int) (int, error) {
	if search == nil || !hasWildcards(search.text) {
		var or filters
		if search != nil {
			or = search.orFilters()
		}
		return c.count(ctx, doctype, f, or)
	}
	q := listQuery{Fields: append([]string{"name"}, search.fields...), Filters: f, OrderBy: "name asc"}
	pageSize := min(walkPageSize, max(maxRecords, 1))
	rows, truncated, err := walkRows(ctx, c, doctype, q, search, pageSize, literalWalkBound)
	if err != nil {
		return 0, err
	}
	if truncated {
		return 0, literalWalkTooLarge(pageSize)
	}
	return len(rows), nil
}

// literalWalkTooLarge refuses a count or totals whose literal walk, in
// pages of pageSize, stopped before the last candidate: a count of the
// candidates read would be wrong.
func literalWalkTooLarge(pageSize int) error {
	return toolerr.New(toolerr.InvalidArgument,
		"the search text contains %% or _, which the ERP cannot match literally, so erpgate checks each candidate itself; more than %d candidates match: add filters or a longer search text", walkBound(pageSize, literalWalkBound))
}

// totalsSpec says which amounts a transaction list sums and under which
// currency rule.
type totalsSpec struct {
	// fields are summed over every match.
	fields []string
	// currencyOf maps each field to "document" (the currency filter),
	// "company" (the company currency) or "bank" (the currency filter,
	// which is the bank account's).
	currencyOf map[string]string
	// groupBy, when set, splits groupFields per value of this column, for
	// amounts whose currency varies per document.
	groupBy     string
	groupFields []string
	// needCurrency requires the currency filter.
	needCurrency bool
	// currencyOptional says the ERP lets a document have no currency;
	// such documents never match the currency filter, so they are
	// counted apart (listSummary.WithoutCurrency).
	currencyOptional bool
	// rule is the currency rule in words, for messages and the schema.
	rule string
	note string
}

// aggregateTotals sums spec's fields over every row matching f and search.
func aggregateTotals(ctx context.Context, c *client, doctype string, f filters, search *textSearch, spec totalsSpec, maxRecords int) (count int, totals map[string]*decimalSum, groups []map[string]any, err error) {
	pageSize := min(walkPageSize, max(maxRecords, 1))
	summed := slices.Clone(spec.fields)
	for _, g := range spec.groupFields {
		if !slices.Contains(summed, g) {
			summed = append(summed, g)
		}
	}
	totals = map[string]*decimalSum{}
	for _, s := range summed {
		totals[s] = &decimalSum{}
	}
	type group struct {
		count int
		sums  map[string]*decimalSum
	}
	byGroup := map[string]*group{}
	var order []string
	addGroup := func(key string, n int, values map[string]any) error {
		g := byGroup[key]
		if g == nil {
			g = &group{sums: map[string]*decimalSum{}}
			for _, s := range spec.groupFields {
				g.sums[s] = &decimalSum{}
			}
			byGroup[key] = g
			order = append(order, key)
		}
		g.count += n
		for _, s := range summed {
			if !totals[s].add(values[s]) {
				return invalidResponse("the ERP sent a %s total that is not a number", s)
			}
		}
		for _, s := range spec.groupFields {
			g.sums[s].add(values[s])
		}
		return nil
	}

	if search != nil && hasWildcards(search.text) {
		fields := append([]string{"name"}, search.fields...)
		fields = append(fields, summed...)
		if spec.groupBy != "" {
			fields = append(fields, spec.groupBy)
		}
		rows, truncated, err := walkRows(ctx, c, doctype, listQuery{Fields: dedupe(fields), Filters: f, OrderBy: "name asc", AllowUnavailable: true}, search, pageSize, literalWalkBound)
		if err != nil {
			return 0, nil, nil, err
		}
		if truncated {
			return 0, nil, nil, literalWalkTooLarge(pageSize)
		}
		for _, r := range rows {
			if err := addGroup(str(r[spec.groupBy]), 1, r); err != nil {
				return 0, nil, nil, err
			}
			count++
		}
	} else {
		fields := []string{"count(name) as row_count"}
		for _, s := range summed {
			fields = append(fields, "sum("+s+") as sum_"+s)
		}
		// One row, or one per currency of spec.groupBy: far fewer than a
		// page.
		q := listQuery{Filters: f, PageLength: pageSize, AllowUnavailable: true}
		if spec.groupBy != "" {
			q.Fields = append([]string{spec.groupBy}, fields...)
			q.GroupBy = spec.groupBy
		} else {
			q.Fields = fields
		}
		if search != nil {
			q.OrFilters = search.orFilters()
		}
		rows, err := c.list(ctx, doctype, q)
		if err != nil {
			return 0, nil, nil, err
		}
		for _, r := range rows {
			n, ok := decimalText(r["row_count"])
			if !ok || !n.IsInt() {
				return 0, nil, nil, invalidResponse("the ERP sent a count that is not a whole number")
			}
			values := map[string]any{}
			for _, s := range summed {
				values[s] = r["sum_"+s]
			}
			k := int(n.Num().Int64())
			if k == 0 {
				continue
			}
			if err := addGroup(str(r[spec.groupBy]), k, values); err != nil {
				return 0, nil, nil, err
			}
			count += k
		}
	}
	if spec.groupBy != "" {
		slices.Sort(order)
		for _, key := range order {
			g := byGroup[key]
			entry := map[string]any{spec.groupBy: key, "count": g.count}
			for _, s := range spec.groupFields {
				entry[s] = totalOrNull(c, doctype, s, g.sums[s].rat())
			}
			groups = append(groups, entry)
		}
	}
	return count, totals, groups, nil
}

// totalOrNull is sum as a JSON number, or nil when the ERP did not return
// field: a total over a field it hides is unknown, not zero.
func totalOrNull(c *client, doctype, field string, sum *big.Rat) *json.Number {
	if c.unavailable.has(doctype, field) {
		return nil
	}
	n := decimalNumber(sum)
	return &n
}

// unavailableNote says why totals are null.
func unavailableNote(fields []string) string {
	if len(fields) == 1 {
		return fields[0] + " could not be summed: the ERP does not return it to this user (field permissions) or this site lacks it, so its total is null, unknown and not zero."
	}
	return joinAnd(fields) + " could not be summed: the ERP does not return them to this user (field permissions) or this site lacks them, so their totals are null, unknown and not zero."
}

// dedupe removes repeated strings, keeping the first.
func dedupe(values []string) []string {
	var out []string
	for _, v := range values {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
