package frappe

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Names people say. A voice or chat user says "invoices for Acme Widgets";
// the ERP knows "Acme Widgets Inc" and "Acme Widgets LLC". resolveParty
// turns the spoken name into one confirmed party id or says why it cannot:
//
//  1. exact: the phrase equals a party id or name (the ERP compares case-
//     and accent-insensitively);
//  2. otherwise a bounded search for the most selective word finds the
//     candidates (accents folded here, whatever the ERP's collation), and
//     their names are compared after normalizeName;
//  3. one normalised match is used; several, or only partial matches, are
//     returned as candidates for the user to choose from, never used.

// partyKind describes a party DocType and the arguments that name it.
type partyKind struct {
	// Doctype is "Customer" or "Supplier".
	Doctype string
	// NameField holds the display name ("customer_name").
	NameField string
	// ExactArg and QueryArg are the tool arguments for a confirmed id and a
	// spoken name ("customer", "customer_query").
	ExactArg, QueryArg string
	// ListTool is the directory tool for this party.
	ListTool string
	// DisabledField is the Check field that marks a disabled record, or
	// "" when the DocType has none (Company).
	DisabledField string
}

var (
	customerParty = partyKind{Doctype: "Customer", NameField: "customer_name", ExactArg: "customer", QueryArg: "customer_query", ListTool: "list_customers", DisabledField: "disabled"}
	supplierParty = partyKind{Doctype: "Supplier", NameField: "supplier_name", ExactArg: "supplier", QueryArg: "supplier_query", ListTool: "list_suppliers", DisabledField: "disabled"}

	// Items and companies are not parties, but list_items and
	// list_companies compare a search as a spoken name the same way
	// (dirSpec.names); they have no spoken-name argument elsewhere.
	itemKind    = partyKind{Doctype: "Item", NameField: "item_name", ExactArg: "item_code", ListTool: "list_items", DisabledField: "disabled"}
	companyKind = partyKind{Doctype: "Company", NameField: "company_name", ExactArg: "company", ListTool: "list_companies"}
)

// partyKindOf returns the party kind of a party_type value.
func partyKindOf(partyType string) (partyKind, bool) {
	switch partyType {
	case "Customer":
		return customerParty, true
	case "Supplier":
		return supplierParty, true
	}
	return partyKind{}, false
}

const (
	matchMatched   = "matched"
	matchAmbiguous = "ambiguous"
	matchNotFound  = "not_found"

	// partyPage and partyScanBound bound the token search: pages of
	// partyPage rows, at most partyScanBound rows in all.
	partyPage      = 200
	partyScanBound = 1000
	// partyTokenBound bounds how many words of a phrase are searched.
	partyTokenBound = 4
	// shownCandidates bounds the candidates returned to the caller.
	shownCandidates = 10
)

// partyCandidate is a party the phrase may mean.
type partyCandidate struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Disabled bool   `json:"disabled"`
}

// partyMatch is the outcome of resolving a spoken name.
type partyMatch struct {
	Status    string `json:"status"`
	Query     string `json:"query"`
	PartyType string `json:"party_type"`
	// ID and Name are set when Status is matched.
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	// Method says how the match was found: exact, normalised or partial.
	Method     string           `json:"method,omitempty"`
	Candidates []partyCandidate `json:"candidates"`
	// CandidatesTruncated is true when the token search hit its bound, so
	// other parties may share the words.
	CandidatesTruncated bool   `json:"candidates_truncated"`
	Message             string `json:"message"`
}

func partyMatchSchema() *schema.Schema {
	return matchSchema("party", "parties", "party", "Customer or Supplier.")
}

// nameMatchSchema is partyMatchSchema for a directory of records that are
// not parties (items, companies); party_type then names their DocType.
func nameMatchSchema(kind partyKind) *schema.Schema {
	return matchSchema(strings.ToLower(kind.Doctype), plural(kind.Doctype), kind.ExactArg, "Always "+kind.Doctype+".")
}

// matchSchema is the schema of a partyMatch about what (plural whats),
// whose id is the filter named filter and whose party_type is described
// by typeDesc.
func matchSchema(what, whats, filter, typeDesc string) *schema.Schema {
	Whats := strings.ToUpper(whats[:1]) + whats[1:]
	cand := schema.Object(
		schema.Prop("id", schema.String(strings.ToUpper(what[:1])+what[1:]+" id: pass it as the exact "+filter+" filter once the user confirms.")).Required(),
		schema.Prop("name", schema.String("Display name.")).Required(),
		schema.Prop("disabled", schema.Boolean("True when the "+what+" is disabled.")).Required(),
	)
	return schema.Object(
		schema.Prop("status", schema.String("matched: one "+what+" was found and used. ambiguous: several "+whats+" fit (or only partly); nothing was read, ask the user which candidate is meant. not_found: no "+what+" fits; nothing was read.").OneOf(matchMatched, matchAmbiguous, matchNotFound)).Required(),
		schema.Prop("query", schema.String("The spoken name as given.")).Required(),
		schema.Prop("party_type", schema.String(typeDesc)).Required(),
		schema.Prop("id", schema.String("The matched "+what+" id.")),
		schema.Prop("name", schema.String("The matched "+what+"'s name.")),
		schema.Prop("method", schema.String("exact (the phrase is the id or name), normalised (equal after ignoring case, punctuation and legal suffixes such as Ltd or Inc) or partial (some words match).").OneOf("exact", "normalised", "partial")),
		schema.Prop("candidates", schema.Array(cand, Whats+" the phrase may mean, for the user to confirm; for not_found, "+whats+" sharing a word.")).Required(),
		schema.Prop("candidates_truncated", schema.Boolean("True when more "+whats+" share the words than were compared; ask for a fuller name.")).Required(),
		schema.Prop("message", schema.String("What happened, in a sentence to relay to the user.")).Required(),
	)
}

// resolveParty resolves a spoken party name among the records scope
// admits (nil: every record of the kind this user may read). Errors are
// ERP failures; a name that fits no party or several is a result, not an
// error.
func resolveParty(ctx context.Context, c *client, kind partyKind, query string, scope filters) (*partyMatch, error) {
	query = strings.TrimSpace(query)
	m := &partyMatch{Query: query, PartyType: kind.Doctype, Candidates: []partyCandidate{}}
	fields := []string{"name", kind.NameField}
	if kind.DisabledField != "" {
		fields = append(fields, kind.DisabledField)
	}
	order := kind.NameField + " asc, name asc"

	// Within the site's row cap, as the token search's pages below.
	shown := c.pageOf(shownCandidates)
	exact := listQuery{Fields: fields, Filters: slices.Clone(scope), OrderBy: order, PageLength: shown + 1}
	exact.OrFilters.add("name", "=", query)
	exact.OrFilters.add(kind.NameField, "=", query)
	rows, err := c.list(ctx, kind.Doctype, exact)
	if err != nil {
		return nil, err
	}
	if len(rows) > 0 {
		cands := candidates(rows, kind)
		if len(cands) > 1 {
			// An id typed exactly (case included) wins over another
			// party's display name that collates equal.
			for _, cand := range cands {
				if cand.ID == query {
					cands = []partyCandidate{cand}
					break
				}
			}
		}
		if len(cands) == 1 {
			return m.matched(cands[0], "exact"), nil
		}
		return m.ambiguous(cands[:min(len(cands), shown)], "exact", len(rows) > shown), nil
	}

	tokens := searchTokens(query, partyTokenBound)
	if len(tokens) == 0 {
		m.Status = matchNotFound
		m.Message = "The name has no word to search for; ask for the " + strings.ToLower(kind.Doctype) + "'s name."
		return m, nil
	}
	// The ERP is asked for the most selective word with a pattern that
	// cannot miss it on any collation; the rows are checked here with
	// accents folded, then compared below.
	word := mostSelective(tokens)
	search := listQuery{Fields: fields, Filters: slices.Clone(scope), OrderBy: order}
	p := foldedPattern(word)
	search.OrFilters.add(kind.NameField, "like", p)
	search.OrFilters.add("name", "like", p)
	hasWord := func(r map[string]any) bool {
		return strings.Contains(strings.Join(nameTokens(str(r[kind.NameField])), ""), word) ||
			strings.Contains(strings.Join(nameTokens(str(r["name"])), ""), word)
	}
	fetch := func(q listQuery) ([]map[string]any, error) { return c.list(ctx, kind.Doctype, q) }
	// Pages keep to the site's row cap; a lowered cap reads fewer rows
	// rather than sending the ERP more requests.
	page := c.pageOf(partyPage)
	rows, truncated, err := walkPages(fetch, search, hasWord, page, min(partyScanBound, page*(partyScanBound/partyPage)))
	if err != nil {
		return nil, err
	}
	m.CandidatesTruncated = truncated
	all := candidates(rows, kind)
	key := compactKey(query)
	queryTokens := stripLegal(nameTokens(query))
	var equal, partial []partyCandidate
	for _, cand := range all {
		switch {
		case compactKey(cand.Name) == key || compactKey(cand.ID) == key:
			equal = append(equal, cand)
		case containsAllTokens(cand.Name, queryTokens) || containsAllTokens(cand.ID, queryTokens):
			partial = append(partial, cand)
		}
	}
	switch {
	case len(equal) == 1 && !truncated:
		return m.matched(equal[0], "normalised"), nil
	case len(equal) > 1 || len(equal) == 1 && truncated:
		return m.ambiguous(equal, "normalised", truncated), nil
	case len(partial) > 0:
		return m.ambiguous(partial, "partial", truncated), nil
	}
	m.Status = matchNotFound
	m.Candidates = firstCandidates(all)
	m.Message = "No " + strings.ToLower(kind.Doctype) + " is called " + quote(query) + "."
	if len(m.Candidates) > 0 {
		m.Message += " Some share a word with it (candidates); ask the user whether one of them is meant, or use " + kind.ListTool + "."
	} else {
		m.Message += " Check the spelling with the user, or search with " + kind.ListTool + "."
	}
	return m, nil
}

func (m *partyMatch) matched(c partyCandidate, method string) *partyMatch {
	m.Status, m.ID, m.Name, m.Method = matchMatched, c.ID, c.Name, method
	m.Candidates = []partyCandidate{c}
	m.Message = "Using " + strings.ToLower(m.PartyType) + " " + quote(c.ID)
	if method == "normalised" {
		m.Message += " (the name matches once case, punctuation and legal suffixes are ignored)"
	}
	m.Message += "."
	return m
}

func (m *partyMatch) ambiguous(cands []partyCandidate, method string, truncated bool) *partyMatch {
	m.Status, m.Method = matchAmbiguous, method
	m.Candidates = firstCandidates(cands)
	m.CandidatesTruncated = m.CandidatesTruncated || truncated || len(cands) > shownCandidates
	if method == "partial" {
		m.Message = "No " + strings.ToLower(m.PartyType) + " is called exactly " + quote(m.Query) + "; some names contain its words. Nothing was read: ask the user which candidate is meant, then call again with " + exactArgOf(m.PartyType) + " set to its id."
	} else {
		m.Message = "Several " + strings.ToLower(m.PartyType) + "s fit " + quote(m.Query) + ". Nothing was read: ask the user which candidate is meant, then call again with " + exactArgOf(m.PartyType) + " set to its id."
	}
	return m
}

// exactArgOf names the exact-id argument for a party type.
func exactArgOf(partyType string) string {
	if k, ok := partyKindOf(partyType); ok {
		return k.ExactArg
	}
	return "the party id"
}

func candidates(rows []map[string]any, kind partyKind) []partyCandidate {
	out := make([]partyCandidate, 0, len(rows))
	seen := map[string]bool{}
	for _, r := range rows {
		id := str(r["name"])
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		name := str(r[kind.NameField])
		if name == "" {
			name = id
		}
		out = append(out, partyCandidate{ID: id, Name: name, Disabled: kind.DisabledField != "" && isTrue(r[kind.DisabledField])})
	}
	return out
}

func firstCandidates(c []partyCandidate) []partyCandidate {
	if len(c) > shownCandidates {
		c = c[:shownCandidates]
	}
	return slices.Clone(c)
}

// isTrue reads a Frappe Check value (0/1, sent as a JSON number).
func isTrue(v any) bool {
	r, ok := decimalText(v)
	return ok && r.Sign() != 0
}

func quote(s string) string { return "\u201c" + s + "\u201d" }

// checkParty confirms that an exact party id exists and returns it as the
// ERP spells it. Without this check a mistyped id would filter every list
// and report down to nothing, which reads as "no documents".
func (c *client) checkParty(ctx context.Context, kind partyKind, id string) (string, error) {
	doc, err := c.get(ctx, kind.Doctype, id)
	if err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) && te.Code == toolerr.NotFound {
			return "", toolerr.Wrap(toolerr.NotFound, err, "there is no %s with id %q; pass the name as the user said it in %s to resolve it, or look it up with %s", strings.ToLower(kind.Doctype), id, kind.QueryArg, kind.ListTool)
		}
		return "", err
	}
	if n := str(doc["name"]); n != "" {
		return n, nil
	}
	return id, nil
}

// partyArgs picks the exact id or the spoken name of a party, refusing
// both at once. It returns the resolved party id ("" when neither was
// given) and the match to report (nil unless a spoken name was resolved).
func resolvePartyArgs(ctx context.Context, c *client, kind partyKind, exact, query string) (string, *partyMatch, error) {
	switch {
	case exact != "" && query != "":
		return "", nil, toolerr.New(toolerr.InvalidArgument, "use %s (a confirmed %s id) or %s (a spoken name), not both", kind.ExactArg, strings.ToLower(kind.Doctype), kind.QueryArg)
	case exact != "":
		id, err := c.checkParty(ctx, kind, exact)
		return id, nil, err
	case query == "":
		return "", nil, nil
	}
	m, err := resolveParty(ctx, c, kind, query, nil)
	if err != nil {
		return "", nil, err
	}
	if m.Status != matchMatched {
		return "", m, nil
	}
	return m.ID, m, nil
}
