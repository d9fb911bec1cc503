package frappe

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// The six transaction lists (sales orders and invoices, purchase orders and
// invoices, payments, bank transactions) share one builder: txnSpec
// declares a list as data, and listTransactions runs every one of them with
// the same rules for parties, dates, ranking, summaries and paging.

// txnSpec declares one transaction list tool.
type txnSpec struct {
	tool, title, doctype, description string
	// party is the party the documents are for; nil for payments and bank
	// transactions, which use party_type/party instead (partyTypeArg).
	party *partyKind
	// partyTypeArg offers party_type, party and party_query (payments).
	partyTypeArg bool
	// dateField is the document date the range applies to.
	dateField string
	statuses  []string
	fields    []string
	row       *schema.Schema
	order     ordering
	// rank says which filter makes an amount comparable before it may be
	// sorted by: "currency", "company" or "party_account_currency".
	rank         map[string][]string
	searchFields []string
	// invoice adds unpaid_only, overdue_as_of, party_account_currency and
	// is_return.
	invoice bool
	// pendingReceipt adds pending_receipt (purchase orders).
	pendingReceipt bool
	// currencyFilter is the field the currency argument filters ("" for
	// none).
	currencyFilter string
	currencyDesc   string
	// paymentFilters adds payment_type and mode_of_payment.
	paymentFilters bool
	// bankFilters adds bank_account.
	bankFilters bool
	totals      totalsSpec
}

// txnArgs is the union of every transaction list's arguments; each tool's
// strict schema admits only its own.
type txnArgs struct {
	pageArgs
	dateArgs
	Company              string `json:"company"`
	Customer             string `json:"customer"`
	CustomerQuery        string `json:"customer_query"`
	Supplier             string `json:"supplier"`
	SupplierQuery        string `json:"supplier_query"`
	PartyType            string `json:"party_type"`
	Party                string `json:"party"`
	PartyQuery           string `json:"party_query"`
	Status               string `json:"status"`
	Docstatus            *int   `json:"docstatus"`
	Currency             string `json:"currency"`
	PartyAccountCurrency string `json:"party_account_currency"`
	Search               string `json:"search"`
	UnpaidOnly           bool   `json:"unpaid_only"`
	OverdueAsOf          string `json:"overdue_as_of"`
	IsReturn             *bool  `json:"is_return"`
	PendingReceipt       bool   `json:"pending_receipt"`
	PaymentType          string `json:"payment_type"`
	ModeOfPayment        string `json:"mode_of_payment"`
	BankAccount          string `json:"bank_account"`
	Summary              string `json:"summary"`
	OrderBy              string `json:"order_by"`
	Order                string `json:"order"`
}

// txnResult is a transaction list's result: a page, or a summary, or a
// party match that needs confirmation (then nothing was read).
type txnResult struct {
	PartyMatch *partyMatch `json:"party_match,omitempty"`
	DateRange  *dateRange  `json:"date_range,omitempty"`
	// A page's rows are added as "data" by encodeWithRows; a summary or
	// an unconfirmed party sends no data at all.
	Meta    *pageMeta         `json:"meta,omitempty"`
	Summary *listSummary      `json:"summary,omitempty"`
	Ranking map[string]string `json:"ranking,omitempty"`
}

func (s txnSpec) build() connector.Tool {
	return connector.Tool{
		Name:        s.tool,
		Title:       s.title,
		Description: s.description,
		Input:       schema.Object(s.props()...),
		Output: schema.Object(
			schema.Prop("party_match", withDesc(partyMatchSchema(), "Present when a spoken party name was given. Unless its status is matched, nothing was read and data is absent: that is not \"no documents\".")),
			schema.Prop("date_range", withDesc(dateRangeSchema(), "The date range applied, with the period resolved.")),
			schema.Prop("data", schema.Array(s.row, "The documents of this page (absent for a summary or an unconfirmed party).")),
			schema.Prop("meta", withDesc(pageMetaSchema(), "Paging of data.")),
			schema.Prop("summary", withDesc(listSummarySchema(), "Present when summary was requested; then no page is returned.")),
			schema.Prop("ranking", withDesc(schema.Map(schema.String("")), "When sorted by an amount: the amount field, its currency and the field or filter that fixes that currency.")),
		),
		Effect:  connector.Read,
		Fields:  listFields(s.searchFields, nil),
		Handler: s.handle,
	}
}

func (s txnSpec) props() []schema.Property {
	var p []schema.Property
	p = append(p, schema.Prop("company", schema.String("Exact company name (see list_companies). Without it the list spans every company the user may see; totals and sorting by a base_* amount need one company (the site's default company is used for them if the operator set one).").Len(1, 140)))
	if s.party != nil {
		k := s.party
		p = append(p,
			schema.Prop(k.ExactArg, schema.String("Exact "+strings.ToLower(k.Doctype)+" id, confirmed with the user or taken from "+k.ListTool+" or a party_match candidate.").Len(1, 140)),
			schema.Prop(k.QueryArg, schema.String("A "+strings.ToLower(k.Doctype)+" name as the user said it (\"acme widgets\"). It is resolved to one "+strings.ToLower(k.Doctype)+" or returned as candidates to confirm; never combine with "+k.ExactArg+".").Len(1, 140)),
		)
	}
	if s.partyTypeArg {
		p = append(p,
			schema.Prop("party_type", schema.String("Party type of party or party_query.").OneOf("Customer", "Supplier", "Employee", "Shareholder")),
			schema.Prop("party", schema.String("Exact party id (needs party_type).").Len(1, 140)),
			schema.Prop("party_query", schema.String("A customer or supplier name as the user said it (needs party_type Customer or Supplier); resolved like customer_query. Never combine with party.").Len(1, 140)),
		)
	}
	p = append(p, schema.Prop("status", schema.String("Exact document status.").OneOf(s.statuses...)), docstatusProp())
	if s.currencyFilter != "" {
		p = append(p, schema.Prop("currency", currencyCode(s.currencyDesc)))
	}
	if s.invoice {
		p = append(p,
			schema.Prop("party_account_currency", currencyCode("Exact currency of the party account, in which outstanding_amount is stated.")),
			schema.Prop("unpaid_only", schema.Boolean("Only submitted invoices with a positive outstanding balance, including partly paid and overdue ones. Not combinable with status.").WithDefault(false)),
			schema.Prop("overdue_as_of", schema.Date("Only submitted invoices with a positive outstanding balance due strictly before this date (YYYY-MM-DD). Not combinable with status.")),
			schema.Prop("is_return", schema.Boolean("true: only returns and credit/debit notes; false: leave them out.")),
		)
	}
	if s.pendingReceipt {
		p = append(p, schema.Prop("pending_receipt", schema.Boolean("Only submitted, open orders (not on hold, closed or completed) with less than 100% received. Not combinable with status.").WithDefault(false)))
	}
	if s.paymentFilters {
		p = append(p,
			schema.Prop("payment_type", schema.String("Receive (from a customer), Pay (to a supplier) or Internal Transfer.").OneOf("Receive", "Pay", "Internal Transfer")),
			schema.Prop("mode_of_payment", schema.String("Exact mode of payment, e.g. Wire Transfer.").Len(1, 140)),
		)
	}
	if s.bankFilters {
		p = append(p, schema.Prop("bank_account", schema.String("Exact Bank Account record name.").Len(1, 140)))
	}
	p = append(p, dateRangeProps(strings.ReplaceAll(s.dateField, "_", " "))...)
	p = append(p,
		schema.Prop("search", schema.String("Text to find in "+joinOr(s.searchFields)+", matched literally as text (not a filter language; % and _ are ordinary characters); an empty string is the same as no search.").Len(0, 140)),
		summaryProp(true, s.totals.rule),
	)
	p = append(p, s.order.props()...)
	return append(p, pageProps()...)
}

func (s txnSpec) handle(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[txnArgs](call)
	if err != nil {
		return nil, err
	}
	c := callClient(call)
	if a.Company == "" && s.needsCompany(a) {
		// The site's default company stands in only where a company is
		// required; otherwise a list spans every company the user sees.
		a.Company = companyOrDefault(call, "")
	}
	if err := s.checkCombinations(a); err != nil {
		return nil, err
	}
	var result txnResult
	f, done, err := s.partyFilters(ctx, c, a, &result)
	if err != nil {
		return nil, err
	}
	if done {
		return result, nil
	}
	companyCurrency, err := s.documentFilters(ctx, c, &a, &f, &result)
	if err != nil {
		return nil, err
	}
	var search *textSearch
	if a.Search != "" {
		search = &textSearch{text: a.Search, fields: s.searchFields}
	}

	switch a.Summary {
	case summaryCount:
		n, err := countMatches(ctx, c, s.doctype, f, search, call.MaxRecords)
		if err != nil {
			return nil, err
		}
		result.Summary = &listSummary{Kind: summaryCount, Count: n}
		return result, nil
	case summaryTotals:
		sum, err := s.totalsSummary(ctx, c, a, companyCurrency, f, search, call.MaxRecords)
		if err != nil {
			return nil, err
		}
		result.Summary = sum
		return result, nil
	}

	orderBy, err := s.order.build(a.OrderBy, a.Order)
	if err != nil {
		return nil, err
	}
	if a.OrderBy != "" {
		result.Ranking = s.ranking(a, companyCurrency)
	}
	page, err := fetchPage(ctx, c, s.doctype, listQuery{Fields: s.fields, Filters: f, OrderBy: orderBy}, a.pageArgs, call.MaxRecords, search)
	if err != nil {
		return nil, err
	}
	result.Meta = &page.Meta
	return encodeWithRows(result, page.Data)
}

// partyFilters resolves the party arguments into filters. done is true
// when a spoken name needs confirmation: result then holds the match and
// nothing else may be read.
func (s txnSpec) partyFilters(ctx context.Context, c *client, a txnArgs, result *txnResult) (f filters, done bool, err error) {
	switch {
	case s.party != nil:
		exact, query := a.Customer, a.CustomerQuery
		if s.party.Doctype == "Supplier" {
			exact, query = a.Supplier, a.SupplierQuery
		}
		if query != "" {
			if err := c.checkReadable(ctx, s.doctype); err != nil {
				return nil, false, err
			}
		}
		id, m, err := resolvePartyArgs(ctx, c, *s.party, exact, query)
		if err != nil {
			return nil, false, err
		}
		result.PartyMatch = m
		if m != nil && m.Status != matchMatched {
			return nil, true, nil
		}
		f.addIf(strings.ToLower(s.party.Doctype), id)
	case s.partyTypeArg:
		if (a.Party != "" || a.PartyQuery != "") && a.PartyType == "" {
			return nil, false, toolerr.New(toolerr.InvalidArgument, "add party_type (Customer or Supplier) to say what kind of party this is")
		}
		id := a.Party
		kind, known := partyKindOf(a.PartyType)
		switch {
		case a.PartyQuery != "" && !known:
			return nil, false, toolerr.New(toolerr.InvalidArgument, "party_query resolves customer and supplier names only: set party_type to Customer or Supplier, or give the exact party id")
		case known && (a.Party != "" || a.PartyQuery != ""):
			if a.PartyQuery != "" {
				if err := c.checkReadable(ctx, s.doctype); err != nil {
					return nil, false, err
				}
			}
			var m *partyMatch
			id, m, err = resolvePartyArgs(ctx, c, kind, a.Party, a.PartyQuery)
			if err != nil {
				return nil, false, err
			}
			result.PartyMatch = m
			if m != nil && m.Status != matchMatched {
				return nil, true, nil
			}
		}
		f.addIf("party_type", a.PartyType)
		f.addIf("party", id)
	}
	return f, false, nil
}

// documentFilters adds the company, date and document filters and
// returns the company currency ("" without a company).
func (s txnSpec) documentFilters(ctx context.Context, c *client, a *txnArgs, f *filters, result *txnResult) (string, error) {
	var companyCurrency string
	if a.Company != "" {
		info, err := c.company(ctx, a.Company)
		if err != nil {
			return "", err
		}
		a.Company, companyCurrency = info.Name, info.Currency
		f.add("company", "=", a.Company)
	}
	dr, err := resolveRange(ctx, c, a.dateArgs, rangeRules{company: a.Company})
	if err != nil {
		return "", err
	}
	result.DateRange = dr
	if dr != nil {
		f.add(s.dateField, ">=", dr.From)
		f.add(s.dateField, "<=", dr.To)
	}
	f.addIf("status", a.Status)
	if a.Docstatus != nil {
		f.add("docstatus", "=", *a.Docstatus)
	}
	if s.currencyFilter != "" {
		f.addIf(s.currencyFilter, a.Currency)
	}
	f.addIf("party_account_currency", a.PartyAccountCurrency)
	if a.UnpaidOnly || a.OverdueAsOf != "" {
		if a.Docstatus == nil {
			f.add("docstatus", "=", 1)
		}
		f.add("outstanding_amount", ">", 0)
	}
	if a.OverdueAsOf != "" {
		if _, err := parseDate("overdue_as_of", a.OverdueAsOf); err != nil {
			return "", err
		}
		f.add("due_date", "<", a.OverdueAsOf)
	}
	if a.IsReturn != nil {
		f.add("is_return", "=", boolInt(*a.IsReturn))
	}
	if a.PendingReceipt {
		if a.Docstatus == nil {
			f.add("docstatus", "=", 1)
		}
		f.add("per_received", "<", 100)
		f.add("status", "not in", []string{"Closed", "On Hold", "Completed", "Delivered", "Cancelled"})
	}
	f.addIf("payment_type", a.PaymentType)
	f.addIf("mode_of_payment", a.ModeOfPayment)
	f.addIf("bank_account", a.BankAccount)

	return companyCurrency, nil
}

// needsCompany reports whether the request is only meaningful for one
// company: totals, and ranking by a company-currency amount.
func (s txnSpec) needsCompany(a txnArgs) bool {
	return a.Summary == summaryTotals || slices.Contains(s.rank[a.OrderBy], "company")
}

// checkCombinations refuses argument combinations whose answer would be
// misleading, with a message that says what to change.
func (s txnSpec) checkCombinations(a txnArgs) error {
	if a.Status != "" {
		switch {
		case a.UnpaidOnly:
			return toolerr.New(toolerr.InvalidArgument, "unpaid_only already selects submitted invoices with a balance (Unpaid, Partly Paid, Overdue ...); remove status or unpaid_only")
		case a.OverdueAsOf != "":
			return toolerr.New(toolerr.InvalidArgument, "overdue_as_of selects by due date and balance, whatever the status; remove status or overdue_as_of")
		case a.PendingReceipt:
			return toolerr.New(toolerr.InvalidArgument, "pending_receipt already selects open orders not fully received; remove status or pending_receipt")
		}
	}
	if a.Party != "" && a.PartyQuery != "" {
		return toolerr.New(toolerr.InvalidArgument, "use party (a confirmed id) or party_query (a spoken name), not both")
	}
	if (a.UnpaidOnly || a.OverdueAsOf != "" || a.PendingReceipt) && a.Docstatus != nil && *a.Docstatus != 1 {
		return toolerr.New(toolerr.InvalidArgument, "unpaid_only, overdue_as_of and pending_receipt cover submitted documents (docstatus 1); remove docstatus")
	}
	if a.OrderBy != "" {
		for _, need := range s.rank[a.OrderBy] {
			switch need {
			case "currency":
				if a.Currency == "" {
					return toolerr.New(toolerr.InvalidArgument, "sorting by %s compares amounts in each document's own currency: add a currency filter so that only one currency is ranked", a.OrderBy)
				}
			case "company":
				if a.Company == "" {
					return toolerr.New(toolerr.InvalidArgument, "sorting by %s compares company-currency amounts, which differ between companies: add a company filter", a.OrderBy)
				}
			case "party_account_currency":
				if a.PartyAccountCurrency == "" {
					return toolerr.New(toolerr.InvalidArgument, "sorting by %s compares balances in each party account's currency: add an exact party_account_currency filter (a document currency filter alone does not make balances comparable)", a.OrderBy)
				}
			}
		}
	}
	if a.Summary == summaryTotals {
		var missing []string
		if a.Company == "" {
			missing = append(missing, "company")
		}
		if s.totals.needCurrency && a.Currency == "" {
			missing = append(missing, "currency")
		}
		if len(missing) > 0 {
			return toolerr.New(toolerr.InvalidArgument, "totals need %s: %s; add %s", strings.Join(missing, " and "), s.totals.rule, strings.Join(missing, " and "))
		}
	}
	return nil
}

// ranking describes a sort by amount: which field, in which currency.
func (s txnSpec) ranking(a txnArgs, companyCurrency string) map[string]string {
	needs := s.rank[a.OrderBy]
	if len(needs) == 0 {
		return nil
	}
	r := map[string]string{"field": a.OrderBy}
	switch {
	case slices.Contains(needs, "party_account_currency"):
		r["currency"], r["currency_source"] = a.PartyAccountCurrency, "party_account_currency"
	case slices.Contains(needs, "currency"):
		r["currency"], r["currency_source"] = a.Currency, s.currencyFilter
	case slices.Contains(needs, "company"):
		r["currency"], r["currency_source"] = companyCurrency, "company default_currency"
	}
	return r
}

func (s txnSpec) totalsSummary(ctx context.Context, c *client, a txnArgs, companyCurrency string, f filters, search *textSearch, maxRecords int) (*listSummary, error) {
	count, totals, groups, err := aggregateTotals(ctx, c, s.doctype, f, search, s.totals, maxRecords)
	if err != nil {
		return nil, err
	}
	out := &listSummary{Kind: summaryTotals, Count: count, Company: a.Company, Totals: map[string]*json.Number{}, Currencies: map[string]string{}, Note: s.totals.note}
	for _, field := range s.totals.fields {
		out.Totals[field] = totalOrNull(c, s.doctype, field, totals[field].rat())
		if out.Totals[field] == nil {
			out.UnavailableFields = append(out.UnavailableFields, field)
		}
		switch s.totals.currencyOf[field] {
		case "company":
			out.Currencies[field] = companyCurrency
		default:
			out.Currencies[field] = a.Currency
		}
	}
	for _, field := range s.totals.groupFields {
		if c.unavailable.has(s.doctype, field) {
			out.UnavailableFields = append(out.UnavailableFields, field)
		}
	}
	if len(out.UnavailableFields) > 0 {
		slices.Sort(out.UnavailableFields)
		out.UnavailableFields = slices.Compact(out.UnavailableFields)
		out.Note += " " + unavailableNote(out.UnavailableFields)
	}
	out.Breakdown = groups
	if s.totals.currencyOptional && a.Currency != "" {
		n, err := countMatches(ctx, c, s.doctype, withoutCurrency(f, s.currencyFilter), search, maxRecords)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			out.WithoutCurrency = n
			out.Note += fmt.Sprintf(" %d more matching document(s) have no currency in the ERP, so they are in no total (see without_currency); a bank line's amounts are in its bank account's currency.", n)
		}
	}
	return out, nil
}

// withoutCurrency is f with the currency filter on field replaced by one
// that matches documents without a currency.
func withoutCurrency(f filters, field string) filters {
	out := make(filters, 0, len(f)+1)
	for _, c := range f {
		if c.Field != field || c.Doctype != "" {
			out = append(out, c)
		}
	}
	out.add(field, "is", "not set")
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
