package frappe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// search and fetch follow the ChatGPT connector contract: search(query)
// returns {results: [{id, title, url}]} and fetch(id) returns {id, title,
// text, url, metadata}. An id is "<DocType>/<name>" (for example
// "Sales Invoice/ACC-SINV-2025-00001"): stable, readable and parseable,
// because DocType names never contain "/". url is the document's page in
// the ERP's desk.

// searchSource is one DocType search covers.
type searchSource struct {
	doctype string
	// fields are searched for the text; the first is the record's name.
	fields []string
	// extra are read to build the title.
	extra []string
	// currency is the field naming the currency of the title's amount
	// ("" when the title shows none).
	currency string
	title    func(doctype string, row map[string]any, places currencyPlaces) string
}

const (
	perSourceResults = 5
	// searchParallel bounds the concurrent list requests of one search.
	searchParallel = 3
	// searchPage and searchScanBound bound the candidate rows read per
	// DocType: pages of searchPage, at most searchScanBound rows in all.
	searchPage      = 200
	searchScanBound = 1000
)

var searchSources = []searchSource{
	{doctype: "Customer", fields: []string{"name", "customer_name"}, title: func(_ string, r map[string]any, places currencyPlaces) string {
		return "Customer " + str(r["customer_name"]) + idSuffix(r, "customer_name")
	}},
	{doctype: "Supplier", fields: []string{"name", "supplier_name"}, title: func(_ string, r map[string]any, places currencyPlaces) string {
		return "Supplier " + str(r["supplier_name"]) + idSuffix(r, "supplier_name")
	}},
	{doctype: "Item", fields: []string{"name", "item_name"}, title: func(_ string, r map[string]any, places currencyPlaces) string {
		return "Item " + str(r["name"]) + ": " + str(r["item_name"])
	}},
	{doctype: "Sales Invoice", fields: []string{"name", "customer_name", "po_no"}, extra: []string{"posting_date", "currency", "grand_total", "status"}, currency: "currency", title: documentTitle("customer_name", "posting_date")},
	{doctype: "Sales Order", fields: []string{"name", "customer_name", "po_no"}, extra: []string{"transaction_date", "currency", "grand_total", "status"}, currency: "currency", title: documentTitle("customer_name", "transaction_date")},
	{doctype: "Purchase Invoice", fields: []string{"name", "supplier_name", "bill_no"}, extra: []string{"posting_date", "currency", "grand_total", "status"}, currency: "currency", title: documentTitle("supplier_name", "posting_date")},
	{doctype: "Purchase Order", fields: []string{"name", "supplier_name"}, extra: []string{"transaction_date", "currency", "grand_total", "status"}, currency: "currency", title: documentTitle("supplier_name", "transaction_date")},
	{doctype: "Payment Entry", fields: []string{"name", "party_name", "reference_no"}, extra: []string{"payment_type", "posting_date", "paid_from_account_currency", "paid_amount", "status"}, currency: "paid_from_account_currency", title: func(_ string, r map[string]any, places currencyPlaces) string {
		return fmt.Sprintf("Payment Entry %s: %s %s, %s %s, %s", str(r["name"]), str(r["payment_type"]), str(r["party_name"]), str(r["paid_from_account_currency"]), places.amount(r["paid_amount"], r["paid_from_account_currency"]), str(r["posting_date"]))
	}},
	{doctype: "Bank Transaction", fields: []string{"name", "description", "reference_number"}, extra: []string{"date", "currency", "deposit", "withdrawal", "status"}, currency: "currency", title: func(_ string, r map[string]any, places currencyPlaces) string {
		amount := "deposit " + places.amount(r["deposit"], r["currency"])
		if isPositive(r["withdrawal"]) {
			amount = "withdrawal " + places.amount(r["withdrawal"], r["currency"])
		}
		return fmt.Sprintf("Bank Transaction %s: %s %s %s, %s", str(r["name"]), str(r["currency"]), amount, str(r["date"]), firstN(str(r["description"]), 60))
	}},
}

func documentTitle(partyField, dateField string) func(string, map[string]any, currencyPlaces) string {
	return func(doctype string, r map[string]any, places currencyPlaces) string {
		return fmt.Sprintf("%s %s: %s, %s %s, %s, %s", doctype, str(r["name"]), str(r[partyField]), str(r["currency"]), places.amount(r["grand_total"], r["currency"]), str(r["status"]), str(r[dateField]))
	}
}

// idSuffix adds the record id when it differs from the display name.
func idSuffix(r map[string]any, nameField string) string {
	if id := str(r["name"]); id != str(r[nameField]) {
		return " (" + id + ")"
	}
	return ""
}

// moneyText renders an amount exactly as the ERP holds it (to the places
// of its decimal(21,9) columns), with at least places decimals, its
// currency's: 1500 for yen, 12.50 for dollars, 3.250 for a dinar.
func moneyText(v any, places int) string {
	r, ok := decimalText(v)
	if !ok {
		return fmt.Sprint(v)
	}
	s := trimDecimal(roundRat(r, columnPlaces))
	point := strings.IndexByte(s, '.')
	if point < 0 {
		if places == 0 {
			return s
		}
		return s + "." + strings.Repeat("0", places)
	}
	if have := len(s) - point - 1; have < places {
		s += strings.Repeat("0", places-have)
	}
	return s
}

// currencyPlaces are currencies' own decimal places, by code: the places
// of each Currency's number_format ("#,###" for yen: none), as Frappe's
// desk shows its amounts (format_currency). A currency not in it has two.
type currencyPlaces map[string]int

// of is currency's places.
func (p currencyPlaces) of(currency string) int {
	if n, ok := p[currency]; ok {
		return n
	}
	return 2
}

// amount renders v, an amount in currency, to that currency's places.
func (p currencyPlaces) amount(v, currency any) string { return moneyText(v, p.of(str(currency))) }

// readCurrencyPlaces reads the number formats of the currencies codes, in
// one list request, as the caller. A currency it cannot read (the request
// fails, a number format Frappe does not know) keeps two places: the
// places only shape how an exact amount is padded.
func readCurrencyPlaces(ctx context.Context, c *client, codes []string) currencyPlaces {
	places := currencyPlaces{}
	if len(codes) == 0 {
		return places
	}
	q := listQuery{Fields: []string{"name", "number_format"}, PageLength: len(codes)}
	q.Filters.add("name", "in", codes)
	rows, err := c.list(ctx, "Currency", q)
	if err != nil {
		return places
	}
	for _, r := range rows {
		if n, ok := numberFormatPlaces[str(r["number_format"])]; ok {
			places[str(r["name"])] = n
		}
	}
	return places
}

func firstN(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

type searchResult struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

type searchOutput struct {
	Results     []searchResult `json:"results"`
	NotSearched []notSearched  `json:"not_searched"`
	// Complete is true when every kind was searched in full.
	Complete bool `json:"complete"`
}

// notSearched is a kind of record that was skipped, or searched only in
// part (Partial).
type notSearched struct {
	Doctype string `json:"doctype"`
	Reason  string `json:"reason"`
	// Partial is true when some records of the kind were searched.
	Partial bool `json:"partial"`
}

func searchTool() connector.Tool {
	return connector.Tool{
		Name:  "search",
		Title: "Search the ERP",
		Description: "Search customers, suppliers, items and business documents (sales and purchase invoices and orders, payments, bank transactions) for text in their id, name or reference; every word must appear, ignoring case and accents. " +
			"Returns up to 5 matches per kind, most recently modified first, as {id, title, url}; pass an id to fetch for the full record. The text is matched literally, not as a filter language. " +
			"complete is false when a kind was skipped (this user may not read it, or the ERP has no such kind) or searched only in part; not_searched says which and why: absence from results then does not mean nothing matches.",
		Input: schema.Object(
			schema.Prop("query", schema.String("Words to find, e.g. a name, an invoice number or a reference.").Len(1, 200)).Required(),
		),
		Output: schema.Object(
			schema.Prop("results", schema.Array(schema.Object(
				schema.Prop("id", schema.String("Record id for fetch: \"<DocType>/<name>\".")).Required(),
				schema.Prop("title", schema.String("What the record is.")).Required(),
				schema.Prop("url", schema.String("The record's page in the ERP.")).Required(),
			), "Matches, grouped by kind.")).Required(),
			schema.Prop("not_searched", schema.Array(schema.Object(
				schema.Prop("doctype", schema.String("Kind of record.")).Required(),
				schema.Prop("reason", schema.String("Why it was skipped, or which of its records were not searched.")).Required(),
				schema.Prop("partial", schema.Boolean("True when some records of this kind were searched and the rest were not.")).Required(),
			), "Kinds of record that were not searched, or only in part.")).Required(),
			schema.Prop("complete", schema.Boolean("True when every kind was searched in full, so a kind without results has no match.")).Required(),
		),
		Effect:  connector.Read,
		Handler: search,
	}
}

type searchArgs struct {
	Query string `json:"query"`
}

func search(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[searchArgs](call)
	if err != nil {
		return nil, err
	}
	words := strings.Fields(a.Query)
	if len(words) == 0 {
		return nil, toolerr.New(toolerr.InvalidArgument, "query is empty: give a name, number or reference to search for")
	}
	c := callClient(call)
	answers := make([]sourceAnswer, len(searchSources))
	var wg sync.WaitGroup
	// At most searchParallel lists run at once, to spare the ERP.
	slots := make(chan struct{}, searchParallel)
	for i, src := range searchSources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			ans, err := src.search(ctx, c, words, searchScanBound)
			if err != nil {
				ans = sourceAnswer{err: err}
			}
			answers[i] = ans
		}()
	}
	wg.Wait()
	var codes []string
	for i, ans := range answers {
		if f := searchSources[i].currency; f != "" {
			for _, r := range ans.rows {
				if code := str(r[f]); code != "" && !slices.Contains(codes, code) {
					codes = append(codes, code)
				}
			}
		}
	}
	places := readCurrencyPlaces(ctx, c, codes)
	out := searchOutput{Results: []searchResult{}, NotSearched: []notSearched{}, Complete: true}
	for i, ans := range answers {
		dt := searchSources[i].doctype
		var te *toolerr.Error
		switch {
		case errors.As(ans.err, &te) && te.Code == toolerr.PermissionDenied:
			out.NotSearched = append(out.NotSearched, notSearched{Doctype: dt, Reason: "this user may not read it"})
		case errors.As(ans.err, &te) && te.Code == toolerr.NotFound:
			// Frappe answers a list of a DocType it lacks (an app not
			// installed) with 404 "DocType ... not found".
			out.NotSearched = append(out.NotSearched, notSearched{Doctype: dt, Reason: "this ERP does not have this kind of record (HTTP 404: DocType not found; the app that provides it may not be installed)"})
		case ans.err != nil:
			return nil, ans.err
		case ans.truncated:
			out.NotSearched = append(out.NotSearched, notSearched{Doctype: dt, Partial: true, Reason: fmt.Sprintf(
				"only the %d most recently modified records that may contain %s were checked; older ones were not searched: add a word or a number to narrow the search", ans.scanned, quote(ans.word))})
		}
		src := searchSources[i]
		for _, r := range ans.rows {
			name := str(r["name"])
			out.Results = append(out.Results, searchResult{ID: src.doctype + "/" + name, Title: src.title(src.doctype, r, places), URL: c.deskURL(src.doctype, name)})
		}
	}
	out.Complete = len(out.NotSearched) == 0
	return out, nil
}

// sourceAnswer is what searching one DocType found.
type sourceAnswer struct {
	// rows are the matching records, as listed.
	rows []map[string]any
	// truncated is true when candidates remained after scanned rows were
	// read without finding perSourceResults matches.
	truncated bool
	scanned   int
	// word is the word the ERP was asked for.
	word string
	err  error
}

// search finds the most recently modified records of one DocType that
// contain every word, ignoring case and accents. The ERP is asked for the
// most selective word with a pattern that cannot miss a match on any
// collation (foldedPattern), over all fields; the candidates are read page
// by page (of searchPage rows, or the site's row cap if lower), at most
// bound rows in as many pages as searchScanBound takes of searchPage, and
// each is checked here for every word.
func (s searchSource) search(ctx context.Context, c *client, words []string, bound int) (sourceAnswer, error) {
	word := mostSelective(words)
	ans := sourceAnswer{word: word}
	q := listQuery{Fields: dedupe(append(append([]string{}, s.fields...), s.extra...)), OrderBy: "modified desc, name desc"}
	p := foldedPattern(word)
	for _, f := range s.fields {
		q.OrFilters.add(f, "like", p)
	}
	folded := make([]string, len(words))
	for i, w := range words {
		folded[i] = foldText(w)
	}
	// Pages keep to the site's row cap; a lowered cap reads fewer
	// candidates rather than sending the ERP more requests.
	page := c.pageOf(searchPage)
	bound = min(bound, page*(searchScanBound/searchPage))
	for q.Start = 0; ; q.Start += page {
		want := min(page, bound-q.Start)
		// The last page allowed asks for one row more, to learn whether
		// the bound left candidates unread.
		q.PageLength = want
		if q.Start+want >= bound {
			q.PageLength = want + 1
		}
		rows, err := c.list(ctx, s.doctype, q)
		if err != nil {
			return ans, err
		}
		for i, r := range rows {
			if i == want {
				ans.truncated = true
				return ans, nil
			}
			ans.scanned++
			if !containsEveryWord(r, s.fields, folded) {
				continue
			}
			ans.rows = append(ans.rows, r)
			if len(ans.rows) == perSourceResults {
				return ans, nil
			}
		}
		if len(rows) < q.PageLength {
			return ans, nil
		}
	}
}

// containsEveryWord reports whether each folded word appears in one of
// the fields once they are folded too.
func containsEveryWord(row map[string]any, fields, folded []string) bool {
	var text strings.Builder
	for _, f := range fields {
		text.WriteString(foldText(str(row[f])))
		text.WriteByte('\n')
	}
	all := text.String()
	for _, w := range folded {
		if !strings.Contains(all, w) {
			return false
		}
	}
	return true
}

func fetchTool() connector.Tool {
	return connector.Tool{
		Name:  "fetch",
		Title: "Fetch a record",
		Description: "Fetch one record found by search, by its id: a readable text of its main fields and first 50 lines, its ERP url and key fields as metadata. " +
			"An id is \"<DocType>/<name>\", for example \"Sales Invoice/ACC-SINV-2025-00001\". " +
			"Amounts keep their currency (outstanding_amount is in party_account_currency). Use get_document for paged item lines. NOT_FOUND means no record has that id; PERMISSION_DENIED means this user may not read it.",
		Input: schema.Object(
			schema.Prop("id", schema.String("A search result id: \"<DocType>/<name>\".").Len(3, 300)).Required(),
		),
		Output: schema.Object(
			schema.Prop("id", schema.String("The record id.")).Required(),
			schema.Prop("title", schema.String("What the record is.")).Required(),
			schema.Prop("text", schema.String("The record as readable text.")).Required(),
			schema.Prop("url", schema.String("The record's page in the ERP.")).Required(),
			schema.Prop("metadata", schema.OpenObject()).Required(),
		),
		Effect:  connector.Read,
		Handler: fetch,
	}
}

type fetchArgs struct {
	ID string `json:"id"`
}

// parseRecordID splits "<DocType>/<name>" and checks the DocType.
func parseRecordID(id string) (doctype, name string, err error) {
	doctype, name, ok := strings.Cut(id, "/")
	if !ok || name == "" {
		return "", "", toolerr.New(toolerr.InvalidArgument, "id %q is not a search result id; it looks like \"Sales Invoice/ACC-SINV-2025-00001\"", id)
	}
	if _, known := documentShapes[doctype]; !known {
		return "", "", toolerr.New(toolerr.InvalidArgument, "id %q names %q, which fetch cannot read; kinds: %s", id, doctype, joinOr(documentDoctypes))
	}
	return doctype, name, nil
}

// fetchFields are the header fields fetch shows, in order, per DocType.
var fetchFields = map[string][]string{
	"Customer":         {"customer_name", "customer_type", "customer_group", "territory", "default_currency", "tax_id", "email_id", "mobile_no", "payment_terms", "disabled"},
	"Supplier":         {"supplier_name", "supplier_type", "supplier_group", "country", "default_currency", "tax_id", "email_id", "payment_terms", "on_hold", "disabled"},
	"Item":             {"item_name", "item_group", "stock_uom", "brand", "description", "is_stock_item", "standard_rate", "valuation_rate", "disabled"},
	"Sales Order":      {"customer", "customer_name", "company", "transaction_date", "delivery_date", "currency", "net_total", "total_taxes_and_charges", "grand_total", "base_grand_total", "per_delivered", "per_billed", "status", "docstatus"},
	"Sales Invoice":    {"customer", "customer_name", "company", "posting_date", "due_date", "currency", "net_total", "total_taxes_and_charges", "grand_total", "base_grand_total", "outstanding_amount", "party_account_currency", "is_return", "po_no", "status", "docstatus"},
	"Purchase Order":   {"supplier", "supplier_name", "company", "transaction_date", "schedule_date", "currency", "net_total", "total_taxes_and_charges", "grand_total", "base_grand_total", "per_received", "per_billed", "status", "docstatus"},
	"Purchase Invoice": {"supplier", "supplier_name", "bill_no", "bill_date", "company", "posting_date", "due_date", "currency", "net_total", "total_taxes_and_charges", "grand_total", "base_grand_total", "outstanding_amount", "party_account_currency", "is_return", "status", "docstatus"},
	"Payment Entry":    {"payment_type", "party_type", "party", "party_name", "company", "posting_date", "mode_of_payment", "paid_from", "paid_from_account_currency", "paid_amount", "paid_to", "paid_to_account_currency", "received_amount", "base_paid_amount", "unallocated_amount", "reference_no", "reference_date", "status", "docstatus"},
	"Bank Transaction": {"date", "company", "bank_account", "currency", "deposit", "withdrawal", "allocated_amount", "unallocated_amount", "description", "reference_number", "party_type", "party", "status", "docstatus"},
}

func fetch(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[fetchArgs](call)
	if err != nil {
		return nil, err
	}
	doctype, name, err := parseRecordID(a.ID)
	if err != nil {
		return nil, err
	}
	doc, err := readDocument(ctx, callClient(call), doctype, name, 0, maxDetailLimit)
	if err != nil {
		return nil, err
	}
	id := doctype + "/" + doc.Name
	title := doctype + " " + doc.Name
	for _, f := range []string{"customer_name", "supplier_name", "item_name", "party_name"} {
		if n := str(doc.Document[f]); n != "" && n != doc.Name {
			title += ": " + n
			break
		}
	}
	metadata := map[string]any{"doctype": doctype, "name": doc.Name}
	var codes []string
	for _, f := range fetchFields[doctype] {
		if cur := doc.Currencies[f]; cur != "" && !slices.Contains(codes, cur) {
			codes = append(codes, cur)
		}
	}
	places := readCurrencyPlaces(ctx, callClient(call), codes)
	var text strings.Builder
	text.WriteString(title + "\n")
	for _, f := range fetchFields[doctype] {
		v, ok := doc.Document[f]
		if !ok || v == nil || v == "" {
			continue
		}
		metadata[f] = v
		line := fmt.Sprintf("%s: %v", strings.ReplaceAll(f, "_", " "), v)
		if cur := doc.Currencies[f]; cur != "" {
			line = fmt.Sprintf("%s: %s %s", strings.ReplaceAll(f, "_", " "), cur, places.amount(v, cur))
		}
		text.WriteString(line + "\n")
	}
	tables := make([]string, 0, len(doc.DetailMeta))
	for t := range doc.DetailMeta {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		rows, _ := doc.Document[t].([]any)
		m := doc.DetailMeta[t]
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&text, "\n%s (%d of %d rows):\n", strings.ReplaceAll(t, "_", " "), m.Returned, m.Total)
		for _, r := range rows {
			row, _ := r.(map[string]any)
			text.WriteString("- " + rowText(row, documentShapes[doctype].tables[t]) + "\n")
		}
	}
	if cur := doc.Currencies["references"]; cur != "" {
		fmt.Fprintf(&text, "\nReference amounts are in %s.\n", cur)
		metadata["references_currency"] = cur
	}
	metadata["detail_meta"] = doc.DetailMeta
	return map[string]any{"id": id, "title": title, "text": text.String(), "url": doc.URL, "metadata": metadata}, nil
}

// rowText renders a child row as "field: value, ..." in field order.
func rowText(row map[string]any, fields []string) string {
	var parts []string
	for _, f := range fields {
		v, ok := row[f]
		if !ok || v == nil || v == "" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %v", strings.ReplaceAll(f, "_", " "), v))
	}
	return strings.Join(parts, ", ")
}
