package frappe

import (
	"context"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// Master-data lists (companies, parties, items, warehouses, accounts, cost
// centres, projects) share one builder: dirSpec declares a list as data,
// and listDirectory runs it with literal text search, allowlisted filters
// and sorting, paging and summary: "count".

// dirFilter is one allowlisted equality filter of a directory list.
type dirFilter struct {
	// arg is the argument name; field the Frappe field it filters.
	arg, field string
	schema     *schema.Schema
}

// dirSpec declares one directory list tool.
type dirSpec struct {
	tool, title, doctype, description string
	fields                            []string
	row                               *schema.Schema
	order                             ordering
	searchFields                      []string
	filters                           []dirFilter
	// companyScoped lists one company's records; the company argument (or
	// the site's default company) is then required.
	companyScoped bool
	// disabledField, when set, hides disabled records unless
	// include_disabled is true.
	disabledField string
	// party, for the customer and supplier directories, makes a search
	// that no record contains literally fall back to resolving it as a
	// spoken name (resolveParty), reported as party_match.
	party *partyKind
}

// dirArgs is the union of every directory list's arguments.
type dirArgs struct {
	pageArgs
	Company         string `json:"company"`
	Search          string `json:"search"`
	IncludeDisabled bool   `json:"include_disabled"`
	Summary         string `json:"summary"`
	OrderBy         string `json:"order_by"`
	Order           string `json:"order"`
}

// dirResult is a page or a count.
type dirResult struct {
	// A page's rows are added as "data" by encodeWithRows; a summary
	// sends no data at all.
	Meta    *pageMeta    `json:"meta,omitempty"`
	Summary *listSummary `json:"summary,omitempty"`
	// PartyMatch is set when a search no record contains literally was
	// resolved as a spoken party name.
	PartyMatch *partyMatch `json:"party_match,omitempty"`
}

func dirResultSchema(row *schema.Schema, party *partyKind) *schema.Schema {
	p := []schema.Property{
		schema.Prop("data", schema.Array(row, "The records of this page (absent for a summary).")),
		schema.Prop("meta", withDesc(pageMetaSchema(), "Paging of data.")),
		schema.Prop("summary", withDesc(listSummarySchema(), "Present when summary was requested; then no page is returned.")),
	}
	if party != nil {
		p = append(p, schema.Prop("party_match", withDesc(partyMatchSchema(), "Present when no "+strings.ToLower(party.Doctype)+" id or name contains search literally and it was compared as a spoken name instead. matched: data is that record. Otherwise data is empty: ask the user which candidate is meant.")))
	}
	return schema.Object(p...)
}

func (s dirSpec) build() connector.Tool {
	var p []schema.Property
	if s.companyScoped {
		p = append(p, companyProp("The company whose records to list."))
	}
	if len(s.searchFields) > 0 {
		p = append(p, schema.Prop("search", schema.String("Text to find in "+joinOr(s.searchFields)+", matched literally as text (not a filter language; % and _ are ordinary characters); an empty string is the same as no search.").Len(0, 140)))
	}
	for _, f := range s.filters {
		p = append(p, schema.Prop(f.arg, f.schema))
	}
	if s.disabledField != "" {
		p = append(p, schema.Prop("include_disabled", schema.Boolean("Include disabled records.").WithDefault(false)))
	}
	p = append(p, summaryProp(false, ""))
	p = append(p, s.order.props()...)
	p = append(p, pageProps()...)
	return connector.Tool{
		Name:        s.tool,
		Title:       s.title,
		Description: s.description,
		Input:       schema.Object(p...),
		Output:      dirResultSchema(s.row, s.party),
		Effect:      connector.Read,
		Fields:      listFields(s.searchFields, s.filters),
		Handler:     s.handle,
	}
}

func (s dirSpec) handle(ctx context.Context, call *connector.Call) (any, error) {
	// The per-tool filters are taken out generically (the schema has
	// already admitted only this tool's filter arguments); the rest decodes
	// strictly into dirArgs.
	var filterArgs []string
	for _, df := range s.filters {
		filterArgs = append(filterArgs, df.arg)
	}
	a, raw, err := argsSplit[dirArgs](call, filterArgs)
	if err != nil {
		return nil, err
	}
	c := newClient(call.Site, call.HTTP)
	var f filters
	if s.companyScoped {
		name, err := requireCompany(call, a.Company, s.tool+" lists one company's records")
		if err != nil {
			return nil, err
		}
		info, err := c.company(ctx, name)
		if err != nil {
			return nil, err
		}
		f.add("company", "=", info.Name)
	}
	for _, df := range s.filters {
		v, ok := raw[df.arg]
		if !ok {
			continue
		}
		if b, isBool := v.(bool); isBool {
			f.add(df.field, "=", boolInt(b))
			continue
		}
		f.add(df.field, "=", v)
	}
	if s.disabledField != "" && !a.IncludeDisabled {
		f.add(s.disabledField, "=", 0)
	}
	var search *textSearch
	if a.Search != "" {
		search = &textSearch{text: a.Search, fields: s.searchFields}
	}
	if a.Summary == summaryCount {
		n, err := countMatches(ctx, c, s.doctype, f, search, call.MaxRecords)
		if err != nil {
			return nil, err
		}
		return dirResult{Summary: &listSummary{Kind: summaryCount, Count: n}}, nil
	}
	orderBy, err := s.order.build(a.OrderBy, a.Order)
	if err != nil {
		return nil, err
	}
	q := listQuery{Fields: s.fields, Filters: f, OrderBy: orderBy}
	page, err := fetchPage(ctx, c, s.doctype, q, a.pageArgs, call.MaxRecords, search)
	if err != nil {
		return nil, err
	}
	if s.party == nil || search == nil || a.offset() != 0 || len(page.Data) != 0 || !page.Meta.Complete || len(raw) != 0 {
		return encodeWithRows(dirResult{Meta: &page.Meta}, page.Data)
	}
	// Nothing contains the text literally and no other filter narrows the
	// list: compare it as a name a person says, as customer_query does.
	m, err := resolveParty(ctx, c, *s.party, a.Search)
	if err != nil {
		return nil, err
	}
	m.Message = directoryMatchMessage(m, s.party)
	if m.Status == matchMatched {
		q.Filters.add("name", "=", m.ID)
		if page, err = fetchPage(ctx, c, s.doctype, q, a.pageArgs, call.MaxRecords, nil); err != nil {
			return nil, err
		}
		if len(page.Data) == 0 {
			m.Message = "No " + strings.ToLower(s.party.Doctype) + " id or name contains " + quote(m.Query) + " as typed; it is the name of " + quote(m.ID) + " once case, accents, punctuation and legal suffixes are ignored, which is disabled and so listed only with include_disabled."
		}
	}
	return encodeWithRows(dirResult{Meta: &page.Meta, PartyMatch: m}, page.Data)
}

// directoryMatchMessage says what a spoken-name fallback of a directory
// search found, pointing at the arguments of other tools rather than at
// the directory's own.
func directoryMatchMessage(m *partyMatch, kind *partyKind) string {
	what := strings.ToLower(kind.Doctype)
	q := quote(m.Query)
	switch m.Status {
	case matchMatched:
		return "No " + what + " id or name contains " + q + " as typed; it is the name of " + what + " " + quote(m.ID) + " once case, accents, punctuation and legal suffixes such as Ltd are ignored, which is the record listed. Use its id as the " + kind.ExactArg + " filter of other tools."
	case matchAmbiguous:
		return "No " + what + " id or name contains " + q + " as typed; the candidates fit it once case, accents, punctuation and legal suffixes are ignored, or contain its words. Ask the user which one is meant, then use its id as the " + kind.ExactArg + " filter of other tools."
	}
	msg := "No " + what + " id or name contains " + q + ", and none is called that once case, accents, punctuation and legal suffixes are ignored."
	if len(m.Candidates) > 0 {
		msg += " The candidates share a word with it; ask the user whether one of them is meant."
	} else {
		msg += " Check the spelling with the user."
	}
	return msg
}

// exactText is the schema of an exact-match text filter on what.
func exactText(what string) *schema.Schema {
	return schema.String("Exact "+what+".").Len(1, 140)
}
