package frappe

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/schema"
	"github.com/erpgate/erpgate/platform/toolerr"
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
	title func(doctype string, row map[string]any) string
}

const (
	perSourceResults = 5
	// searchParallel bounds the concurrent list requests of one search.
	searchParallel = 3
	// searchCandidates bounds the rows read per DocType when a query has
	// several words and every word must be found.
	searchCandidates = 50
)

var searchSources = []searchSource{
	{doctype: "Customer", fields: []string{"name", "customer_name"}, title: func(_ string, r map[string]any) string {
		return "Customer " + str(r["customer_name"]) + idSuffix(r, "customer_name")
	}},
	{doctype: "Supplier", fields: []string{"name", "supplier_name"}, title: func(_ string, r map[string]any) string {
		return "Supplier " + str(r["supplier_name"]) + idSuffix(r, "supplier_name")
	}},
	{doctype: "Item", fields: []string{"name", "item_name"}, title: func(_ string, r map[string]any) string {
		return "Item " + str(r["name"]) + ": " + str(r["item_name"])
	}},
	{doctype: "Sales Invoice", fields: []string{"name", "customer_name", "po_no"}, extra: []string{"posting_date", "currency", "grand_total", "status"}, title: documentTitle("customer_name", "posting_date")},
	{doctype: "Sales Order", fields: []string{"name", "customer_name", "po_no"}, extra: []string{"transaction_date", "currency", "grand_total", "status"}, title: documentTitle("customer_name", "transaction_date")},
	{doctype: "Purchase Invoice", fields: []string{"name", "supplier_name", "bill_no"}, extra: []string{"posting_date", "currency", "grand_total", "status"}, title: documentTitle("supplier_name", "posting_date")},
	{doctype: "Purchase Order", fields: []string{"name", "supplier_name"}, extra: []string{"transaction_date", "currency", "grand_total", "status"}, title: documentTitle("supplier_name", "transaction_date")},
	{doctype: "Payment Entry", fields: []string{"name", "party_name", "reference_no"}, extra: []string{"payment_type", "posting_date", "paid_from_account_currency", "paid_amount", "status"}, title: func(_ string, r map[string]any) string {
		return fmt.Sprintf("Payment Entry %s: %s %s, %s %s, %s", str(r["name"]), str(r["payment_type"]), str(r["party_name"]), str(r["paid_from_account_currency"]), moneyText(r["paid_amount"]), str(r["posting_date"]))
	}},
	{doctype: "Bank Transaction", fields: []string{"name", "description", "reference_number"}, extra: []string{"date", "currency", "deposit", "withdrawal", "status"}, title: func(_ string, r map[string]any) string {
		amount := "deposit " + moneyText(r["deposit"])
		if isPositive(r["withdrawal"]) {
			amount = "withdrawal " + moneyText(r["withdrawal"])
		}
		return fmt.Sprintf("Bank Transaction %s: %s %s %s, %s", str(r["name"]), str(r["currency"]), amount, str(r["date"]), firstN(str(r["description"]), 60))
	}},
}

func documentTitle(partyField, dateField string) func(string, map[string]any) string {
	return func(doctype string, r map[string]any) string {
		return fmt.Sprintf("%s %s: %s, %s %s, %s, %s", doctype, str(r["name"]), str(r[partyField]), str(r["currency"]), moneyText(r["grand_total"]), str(r["status"]), str(r[dateField]))
	}
}

// idSuffix adds the record id when it differs from the display name.
func idSuffix(r map[string]any, nameField string) string {
	if id := str(r["name"]); id != str(r[nameField]) {
		return " (" + id + ")"
	}
	return ""
}

// moneyText renders an amount with two decimals, exactly.
func moneyText(v any) string {
	r, ok := decimalText(v)
	if !ok {
		return fmt.Sprint(v)
	}
	return roundRat(r, 2)
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
}

type notSearched struct {
	Doctype string `json:"doctype"`
	Reason  string `json:"reason"`
}

func searchTool() connector.Tool {
	return connector.Tool{
		Name:  "search",
		Title: "Search the ERP",
		Description: "Search customers, suppliers, items and business documents (sales and purchase invoices and orders, payments, bank transactions) for text in their id, name or reference; every word must appear. " +
			"Returns up to 5 matches per kind as {id, title, url}; pass an id to fetch for the full record. The text is matched literally, not as a filter language. " +
			"not_searched lists kinds this user may not read, which were skipped: their absence from results does not mean nothing matches.",
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
				schema.Prop("reason", schema.String("Why it was skipped.")).Required(),
			), "Kinds of record that were not searched.")).Required(),
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
	c := newClient(call.Site, call.HTTP)
	type answer struct {
		results []searchResult
		denied  bool
		err     error
	}
	answers := make([]answer, len(searchSources))
	var wg sync.WaitGroup
	// At most searchParallel lists run at once, to spare the ERP.
	slots := make(chan struct{}, searchParallel)
	for i, src := range searchSources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			res, err := src.search(ctx, c, words)
			var te *toolerr.Error
			if errors.As(err, &te) && te.Code == toolerr.PermissionDenied {
				answers[i] = answer{denied: true}
				return
			}
			answers[i] = answer{results: res, err: err}
		}()
	}
	wg.Wait()
	out := searchOutput{Results: []searchResult{}, NotSearched: []notSearched{}}
	for i, ans := range answers {
		if ans.err != nil {
			return nil, ans.err
		}
		if ans.denied {
			out.NotSearched = append(out.NotSearched, notSearched{Doctype: searchSources[i].doctype, Reason: "this user may not read it"})
			continue
		}
		out.Results = append(out.Results, ans.results...)
	}
	return out, nil
}

// search finds records of one DocType containing every word. The ERP is
// asked for the longest word (LIKE, over all fields); the other words, and
// any % or _ the ERP cannot match literally, are checked here.
func (s searchSource) search(ctx context.Context, c *client, words []string) ([]searchResult, error) {
	longest := words[0]
	for _, w := range words {
		if len([]rune(w)) > len([]rune(longest)) {
			longest = w
		}
	}
	ts := &textSearch{text: longest, fields: s.fields}
	q := listQuery{Fields: dedupe(append(append([]string{}, s.fields...), s.extra...)), OrderBy: "modified desc, name desc"}
	limit := perSourceResults
	if len(words) > 1 || hasWildcards(longest) {
		limit = searchCandidates
	}
	q.OrFilters = ts.orFilters()
	q.PageLength = limit
	rows, err := c.list(ctx, s.doctype, q)
	if err != nil {
		return nil, err
	}
	var out []searchResult
	for _, r := range rows {
		if !containsEveryWord(r, s.fields, words) {
			continue
		}
		name := str(r["name"])
		out = append(out, searchResult{ID: s.doctype + "/" + name, Title: s.title(s.doctype, r), URL: c.deskURL(s.doctype, name)})
		if len(out) == perSourceResults {
			break
		}
	}
	return out, nil
}

// containsEveryWord reports whether each word appears in one of the
// fields, ignoring case and accents as the ERP does.
func containsEveryWord(row map[string]any, fields, words []string) bool {
	var text strings.Builder
	for _, f := range fields {
		text.WriteString(foldText(str(row[f])))
		text.WriteByte('\n')
	}
	all := text.String()
	for _, w := range words {
		if !strings.Contains(all, foldText(w)) {
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
	doc, err := readDocument(ctx, newClient(call.Site, call.HTTP), doctype, name, 0, maxDetailLimit)
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
			line = fmt.Sprintf("%s: %s %s", strings.ReplaceAll(f, "_", " "), cur, moneyText(v))
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
