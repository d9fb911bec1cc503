package frappe

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
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
	// names does the same for directories of records that are not
	// parties (items, companies), reported as name_match.
	names *partyKind
}

// Values of search_mode, on the directories that compare spoken names.
const (
	// searchAuto searches literally and, when nothing contains the text,
	// compares it as a spoken name.
	searchAuto = "auto"
	// searchLiteral searches literally only.
	searchLiteral = "literal"
	// searchName compares the text as a spoken name only.
	searchName = "name"
)

// nameKind is the kind whose spoken names the directory compares, or nil.
func (s dirSpec) nameKind() *partyKind {
	if s.party != nil {
		return s.party
	}
	return s.names
}

// dirArgs is the union of every directory list's arguments.
type dirArgs struct {
	pageArgs
	Company         string `json:"company"`
	Search          string `json:"search"`
	SearchMode      string `json:"search_mode"`
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
	// NameMatch is PartyMatch for items and companies.
	NameMatch *partyMatch `json:"name_match,omitempty"`
}

func dirResultSchema(row *schema.Schema, s dirSpec) *schema.Schema {
	p := []schema.Property{
		schema.Prop("data", schema.Array(row, "The records of this page (absent for a summary).")),
		schema.Prop("meta", withDesc(pageMetaSchema(), "Paging of data.")),
		schema.Prop("summary", withDesc(listSummarySchema(), "Present when summary was requested; then no page is returned.")),
	}
	if s.party != nil {
		p = append(p, schema.Prop("party_match", withDesc(partyMatchSchema(), matchDesc(s.party))))
	}
	if s.names != nil {
		p = append(p, schema.Prop("name_match", withDesc(nameMatchSchema(*s.names), matchDesc(s.names))))
	}
	return schema.Object(p...)
}

// matchDesc describes party_match or name_match of a directory.
func matchDesc(kind *partyKind) string {
	return "Present when search was compared as a spoken name: with search_mode name, or when no " + strings.ToLower(kind.Doctype) + " id or name contains it literally. matched: data is that record. Otherwise data is empty: ask the user which candidate is meant."
}

func (s dirSpec) build() connector.Tool {
	var p []schema.Property
	if s.companyScoped {
		p = append(p, companyProp("The company whose records to list."))
	}
	if len(s.searchFields) > 0 {
		p = append(p, schema.Prop("search", schema.String("Text to find in "+joinOr(s.searchFields)+", matched literally as text (not a filter language; % and _ are ordinary characters); an empty string is the same as no search.").Len(0, 140)))
	}
	if len(s.searchFields) > 0 && s.nameKind() != nil {
		desc := "How search is matched. auto: literally and, when no record contains the text, as a name a person says. " +
			"literal: literally only. " +
			"name: only as a name a person says (ignoring case, accents, punctuation and legal suffixes), even when records contain the text; the answer is the one matching record or the candidates to confirm, so it takes no offset or summary."
		if len(s.filters) > 0 {
			desc += " Other filters are kept: only the records they admit are compared as names."
		}
		p = append(p, schema.Prop("search_mode", schema.String(desc).
			OneOf(searchAuto, searchLiteral, searchName).WithDefault(searchAuto)))
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
		Output:      dirResultSchema(s.row, s),
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
	if a.SearchMode == searchName {
		if err := s.checkNameMode(a); err != nil {
			return nil, err
		}
	}
	c := callClient(call)
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
	var given []string
	for _, df := range s.filters {
		v, ok := raw[df.arg]
		if !ok {
			continue
		}
		given = append(given, df.arg)
		if b, isBool := v.(bool); isBool {
			f.add(df.field, "=", boolInt(b))
			continue
		}
		f.add(df.field, "=", v)
	}
	// scope is what a spoken-name comparison keeps: the company and the
	// explicit filters. Disabled records stay among the candidates, marked
	// (matchName says when the matched one is hidden). The filters after
	// these are only appended, so scope keeps their first part, capped so
	// that nothing appended to it reaches f's.
	scope := f[:len(f):len(f)]
	slices.Sort(given)
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
	kind := s.nameKind()
	if a.SearchMode == searchName {
		// Compared as a spoken name alone; until a record is matched the
		// page is empty.
		meta, _ := connector.NewPageMeta(0, a.limit(call.MaxRecords), 0, orderBy)
		empty := listPage{Data: []json.RawMessage{}, Meta: pageMeta{PageMeta: meta}}
		return s.matchName(ctx, c, call, q, a, empty, scope, given, false)
	}
	page, err := fetchPage(ctx, c, s.doctype, q, a.pageArgs, call.MaxRecords, search)
	if err != nil {
		return nil, err
	}
	if kind == nil || a.SearchMode == searchLiteral || search == nil || a.offset() != 0 || len(page.Data) != 0 || !page.Meta.Complete {
		return encodeWithRows(dirResult{Meta: &page.Meta}, page.Data)
	}
	// Nothing the filters admit contains the text literally: compare it
	// as a name a person says among those records, as customer_query does.
	return s.matchName(ctx, c, call, q, a, page, scope, given, true)
}

// checkNameMode refuses the arguments search_mode name cannot honour: the
// spoken-name comparison answers with one record or candidates, so it has
// no pages or count.
func (s dirSpec) checkNameMode(a dirArgs) error {
	switch {
	case a.Search == "":
		return toolerr.New(toolerr.InvalidArgument, "search_mode name compares search as a name a person says: give the name in search")
	case a.Summary != "":
		return toolerr.New(toolerr.InvalidArgument, "search_mode name answers with one record or candidates to confirm, not a summary: use search_mode literal to count the records containing the text")
	case a.offset() != 0:
		return toolerr.New(toolerr.InvalidArgument, "search_mode name answers on one page, so it takes no offset: use search_mode literal to page through the records containing the text")
	}
	return nil
}

// matchName compares a.Search as a spoken name among the records scope
// admits (given names the filter arguments behind it) and answers with
// the matched record (read with q, so disabled records stay hidden unless
// include_disabled) or with page and the candidates. literal says whether
// the text was searched literally first and found in no record.
func (s dirSpec) matchName(ctx context.Context, c *client, call *connector.Call, q listQuery, a dirArgs, page listPage, scope filters, given []string, literal bool) (connector.RawResult, error) {
	kind := s.nameKind()
	m, err := resolveParty(ctx, c, *kind, a.Search, scope)
	if err != nil {
		return nil, err
	}
	m.Message = directoryMatchMessage(m, kind, literal)
	if m.Status == matchMatched {
		q.Filters.add("name", "=", m.ID)
		if page, err = fetchPage(ctx, c, s.doctype, q, a.pageArgs, call.MaxRecords, nil); err != nil {
			return nil, err
		}
		if len(page.Data) == 0 {
			m.Message = directoryDisabledMessage(m, kind, literal)
		}
	}
	if len(given) > 0 {
		m.Message += " Only " + plural(kind.Doctype) + " matching " + strings.Join(given, " and ") + " were compared."
	}
	res := dirResult{Meta: &page.Meta}
	if s.party != nil {
		res.PartyMatch = m
	} else {
		res.NameMatch = m
	}
	return encodeWithRows(res, page.Data)
}

// directoryMatchMessage says what a spoken-name comparison of a directory
// search found, pointing at the arguments of other tools rather than at
// the directory's own. literal says whether it was the fallback of a
// literal search that found nothing.
func directoryMatchMessage(m *partyMatch, kind *partyKind, literal bool) string {
	what := strings.ToLower(kind.Doctype)
	q := quote(m.Query)
	if !literal {
		return nameModeMessage(m, kind)
	}
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

// directoryDisabledMessage says that the matched record is disabled, so
// not listed.
func directoryDisabledMessage(m *partyMatch, kind *partyKind, literal bool) string {
	if !literal {
		return quote(m.Query) + " is the name of " + strings.ToLower(kind.Doctype) + " " + quote(m.ID) + ", which is disabled and so listed only with include_disabled."
	}
	return "No " + strings.ToLower(kind.Doctype) + " id or name contains " + quote(m.Query) + " as typed; it is the name of " + quote(m.ID) + " once case, accents, punctuation and legal suffixes are ignored, which is disabled and so listed only with include_disabled."
}

// nameModeMessage is directoryMatchMessage for search_mode name, where no
// literal search came first.
func nameModeMessage(m *partyMatch, kind *partyKind) string {
	what := strings.ToLower(kind.Doctype)
	q := quote(m.Query)
	switch m.Status {
	case matchMatched:
		msg := q + " is the name of " + what + " " + quote(m.ID)
		if m.Method != "exact" {
			msg += " once case, accents, punctuation and legal suffixes such as Ltd are ignored"
		}
		return msg + ", which is the record listed. Use its id as the " + kind.ExactArg + " filter of other tools."
	case matchAmbiguous:
		return "Several " + what + " names fit " + q + " once case, accents, punctuation and legal suffixes are ignored, or contain its words. Ask the user which one is meant, then use its id as the " + kind.ExactArg + " filter of other tools."
	}
	msg := "No " + what + " is called " + q + ", even once case, accents, punctuation and legal suffixes are ignored."
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
