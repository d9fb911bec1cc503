package frappe

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Receivable and payable summaries and a single party's balance. Totals and
// ageing are exact sums of the detailed report's document rows; the top
// parties come from the per-party summary report, which must reconcile
// with the documents before an overdue amount is claimed.

const (
	defaultTopParties = 10
	maxTopParties     = 50
)

type balanceSummaryArgs struct {
	ageingArgs
	Top *int `json:"top"`
}

// balanceTotals are the whole-company totals of one side.
type balanceTotals struct {
	// Outstanding is the net open balance: documents minus credits.
	Outstanding json.Number `json:"outstanding"`
	// Positive is the sum of positive document balances.
	Positive json.Number `json:"positive_outstanding"`
	// Credits is the sum of negative balances (unallocated payments,
	// credit/debit notes), as a negative number.
	Credits    json.Number `json:"credits"`
	Invoiced   json.Number `json:"invoiced"`
	Paid       json.Number `json:"paid"`
	CreditNote json.Number `json:"credit_note"`
}

func balanceTotalsSchema() *schema.Schema {
	return schema.Object(
		schema.Prop("outstanding", money("Net open balance: positive document balances plus credits.")).Required(),
		schema.Prop("positive_outstanding", money("Sum of positive document balances.")).Required(),
		schema.Prop("credits", money("Sum of negative balances (unallocated payments, credit or debit notes), as a negative number.")).Required(),
		schema.Prop("invoiced", money("Invoiced amount of the open documents.")).Required(),
		schema.Prop("paid", money("Paid so far on the open documents.")).Required(),
		schema.Prop("credit_note", money("Credited so far on the open documents.")).Required(),
	)
}

// topParty is one of the largest balances.
type topParty struct {
	Party       string       `json:"party"`
	PartyName   string       `json:"party_name,omitempty"`
	Outstanding json.Number  `json:"outstanding"`
	Overdue     *json.Number `json:"overdue,omitempty"`
}

type balanceSummaryResult struct {
	Report          string         `json:"report"`
	Company         string         `json:"company"`
	Currency        string         `json:"currency"`
	ReportDate      string         `json:"report_date"`
	PartyType       string         `json:"party_type"`
	PartyCount      int            `json:"party_count"`
	DocumentCount   int            `json:"document_count"`
	Totals          balanceTotals  `json:"totals"`
	Overdue         *json.Number   `json:"overdue,omitempty"`
	OverdueComplete bool           `json:"overdue_complete"`
	Ageing          []ageingBucket `json:"ageing"`
	TopParties      []topParty     `json:"top_parties"`
	Warnings        []string       `json:"warnings"`
}

func (s ledgerSide) summaryTool(name, title, description string) connector.Tool {
	props := s.ageingProps()
	props = append(props, schema.Prop("top", schema.Integer("How many of the largest balances to list.").Min(1).Max(maxTopParties).WithDefault(defaultTopParties)))
	return connector.Tool{
		Name:        name,
		Title:       title,
		Description: description,
		Input:       schema.Object(props...),
		Output: schema.Object(
			schema.Prop("report", schema.String("The ERP report the documents come from.")).Required(),
			schema.Prop("company", schema.String("Company.")).Required(),
			schema.Prop("currency", schema.String("Currency of every amount (the company currency).")).Required(),
			schema.Prop("report_date", schema.String("Date the balances are stated at.")).Required(),
			schema.Prop("party_type", schema.String("Customer or Supplier.")).Required(),
			schema.Prop("party_count", schema.Integer("Parties with a non-zero balance.")).Required(),
			schema.Prop("document_count", schema.Integer("Open documents.")).Required(),
			schema.Prop("totals", balanceTotalsSchema()).Required(),
			schema.Prop("overdue", money("Positive balances due strictly before report_date (the overdue part of the first ageing bucket included; credits not deducted). Present only when overdue_complete is true.")),
			schema.Prop("overdue_complete", schema.Boolean("True when every positive balance had a date and the per-party detail reconciled; only then is overdue given. False never means nothing is overdue.")).Required(),
			schema.Prop("ageing", ageingSchema()).Required(),
			schema.Prop("top_parties", schema.Array(schema.Object(
				schema.Prop("party", schema.String("Party id.")).Required(),
				schema.Prop("party_name", schema.String("Party name, when the ERP reports it.")),
				schema.Prop("outstanding", money("Net balance.")).Required(),
				schema.Prop("overdue", money("Overdue part, when overdue_complete is true.")),
			), "The largest net balances, largest first; computed over every party before the list is cut to top.")).Required(),
			warningsProp().Required(),
		),
		Effect:  connector.Read,
		Handler: s.summary,
	}
}

func (s ledgerSide) summary(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[balanceSummaryArgs](call)
	if err != nil {
		return nil, err
	}
	top := defaultTopParties
	if a.Top != nil {
		top = *a.Top
	}
	c := callClient(call)
	company, err := sideCompany(ctx, call, c, a.Company)
	if err != nil {
		return nil, err
	}
	d, rows, err := s.runDetail(ctx, c, company.Name, a.ageingArgs, "")
	if err != nil {
		return nil, err
	}
	f, _ := s.ageingFilters(company.Name, a.ageingArgs, "")
	sd, err := c.runReport(ctx, s.summaryReport, f)
	if err != nil {
		return nil, err
	}
	out := balanceSummaryResult{
		Report: s.detailReport, Company: company.Name, ReportDate: a.ReportDate, PartyType: s.party.Doctype,
		DocumentCount: len(rows), Warnings: append([]string{}, d.messages...),
	}
	out.Warnings = append(out.Warnings, sd.messages...)
	out.Currency = rowCurrency(rows, company.Currency, &out.Warnings)
	if out.Totals, err = balanceTotalsOf(d, rows); err != nil {
		return nil, err
	}
	if out.Ageing, err = ageingTotals(d, rows); err != nil {
		return nil, err
	}

	parties := partyRows(sd)
	out.PartyCount = len(parties)
	reconciled, party := reconcileParties(parties, partyBalances(rows))
	if !reconciled {
		out.Warnings = append(out.Warnings, fmt.Sprintf("The per-party summary does not reconcile with the documents for %s; overdue is left out.", party))
	}
	names := partyNames(rows, s.party.NameField)
	overdue := overdueOf(rows, a.ReportDate)
	if overdue.complete && reconciled {
		n := overdue.amount.number()
		out.Overdue, out.OverdueComplete = &n, true
	} else if !overdue.complete {
		out.Warnings = append(out.Warnings, "Overdue is left out because "+overdue.reason+"; this does not mean nothing is overdue.")
	}

	sort.SliceStable(parties, func(i, j int) bool {
		if c := compareDecimal(parties[i]["outstanding"], parties[j]["outstanding"]); c != 0 {
			return c > 0
		}
		return str(parties[i]["party"]) < str(parties[j]["party"])
	})
	out.TopParties = []topParty{}
	for _, p := range parties[:min(top, len(parties))] {
		outstanding, ok := exactNumber(p["outstanding"])
		if !ok {
			return nil, invalidResponse("the %s report sent a balance that is not a number", s.summaryReport)
		}
		tp := topParty{Party: str(p["party"]), PartyName: str(p["party_name"]), Outstanding: outstanding}
		if tp.PartyName == "" {
			tp.PartyName = names[tp.Party]
		}
		if out.OverdueComplete {
			n := json.Number("0")
			if o := overdue.byParty[tp.Party]; o != nil {
				n = o.number()
			}
			tp.Overdue = &n
		}
		out.TopParties = append(out.TopParties, tp)
	}
	if len(parties) > top {
		out.Warnings = append(out.Warnings, fmt.Sprintf("top_parties lists %d of %d parties with a balance; totals cover all of them.", top, len(parties)))
	}
	return out, nil
}

// reconcileParties checks the per-party summary against the documents in
// both directions: every summary balance must equal the sum of that
// party's documents, and every party whose documents do not net to zero
// must be in the summary. It returns the first party that disagrees.
func reconcileParties(parties []map[string]any, detail map[string]*decimalSum) (bool, string) {
	seen := map[string]bool{}
	for _, p := range parties {
		name := str(p["party"])
		seen[name] = true
		want, ok := decimalText(p["outstanding"])
		got := detail[name]
		if !ok || got == nil && want.Sign() != 0 || got != nil && !reconciles(got.rat(), want) {
			return false, name
		}
	}
	missing := make([]string, 0, len(detail))
	for name := range detail {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		if !reconciles(detail[name].rat(), new(big.Rat)) {
			return false, name
		}
	}
	return true, ""
}

// partyNames maps party ids to the names the detailed report carries.
func partyNames(rows []map[string]any, nameField string) map[string]string {
	out := map[string]string{}
	for _, r := range rows {
		if n := str(r[nameField]); n != "" {
			out[str(r["party"])] = n
		}
	}
	return out
}

// balanceTotalsOf adds up the document rows of a detailed report.
func balanceTotalsOf(d *reportData, rows []map[string]any) (balanceTotals, error) {
	sums, err := sumColumns(rows, d.presentColumns(ageingAmountFields...))
	if err != nil {
		return balanceTotals{}, err
	}
	var pos, neg decimalSum
	for _, r := range rows {
		v, _ := decimalText(r["outstanding"])
		if v == nil {
			continue
		}
		if v.Sign() > 0 {
			pos.addRat(v)
		} else {
			neg.addRat(v)
		}
	}
	zero := json.Number("0")
	get := func(k string) json.Number {
		if n, ok := sums[k]; ok {
			return n
		}
		return zero
	}
	return balanceTotals{
		Outstanding: get("outstanding"), Positive: pos.number(), Credits: neg.number(),
		Invoiced: get("invoiced"), Paid: get("paid"), CreditNote: get("credit_note"),
	}, nil
}

func getAccountsReceivableSummaryTool() connector.Tool {
	return receivableSide.summaryTool("get_accounts_receivable_summary", "Receivables summary",
		"Summarise what customers owe one company at report_date: exact totals (net outstanding, positive balances, unallocated credits), ageing buckets, the largest customer balances and, when overdue_complete is true, the overdue amount. "+
			"Amounts are in the company currency and come from ERPNext's Accounts Receivable reports. overdue is omitted, never zero, when it cannot be confirmed. "+
			"Use get_party_balance for one customer and get_accounts_receivable for the documents. PERMISSION_DENIED means the user has no access to accounting reports.")
}

func getAccountsPayableSummaryTool() connector.Tool {
	return payableSide.summaryTool("get_accounts_payable_summary", "Payables summary",
		"Summarise what one company owes suppliers at report_date: exact totals (net outstanding, positive balances, unallocated credits such as advances and debit notes), ageing buckets, the largest supplier balances and, when overdue_complete is true, the overdue amount. "+
			"Amounts are in the company currency and come from ERPNext's Accounts Payable reports. overdue is omitted, never zero, when it cannot be confirmed. "+
			"Use get_party_balance for one supplier and get_accounts_payable for the documents. PERMISSION_DENIED means the user has no access to accounting reports.")
}

type partyBalanceArgs struct {
	ageingArgs
	PartyType  string `json:"party_type"`
	PartyID    string `json:"party_id"`
	PartyQuery string `json:"party_query"`
}

type partyBalanceResult struct {
	PartyMatch      *partyMatch    `json:"party_match,omitempty"`
	PartyType       string         `json:"party_type"`
	Party           string         `json:"party,omitempty"`
	Company         string         `json:"company"`
	Currency        string         `json:"currency"`
	ReportDate      string         `json:"report_date"`
	Found           bool           `json:"found"`
	Totals          *balanceTotals `json:"totals,omitempty"`
	Overdue         *json.Number   `json:"overdue,omitempty"`
	OverdueComplete bool           `json:"overdue_complete"`
	Ageing          []ageingBucket `json:"ageing,omitempty"`
	OpenDocuments   int            `json:"open_documents"`
	Warnings        []string       `json:"warnings"`
}

func getPartyBalanceTool() connector.Tool {
	return connector.Tool{
		Name:  "get_party_balance",
		Title: "Party balance",
		Description: "Get one customer's or supplier's open balance with one company at report_date, in the company currency: net outstanding, credits, ageing and, when overdue_complete is true, the overdue amount. " +
			"Give party_query with the name as the user said it; if party_match is ambiguous or not_found nothing was read, so confirm a candidate and call again with party_id. " +
			"A balance of 0 means the ERP reports no open documents for the party. PERMISSION_DENIED means the user has no access to accounting reports.",
		Input: schema.Object(append([]schema.Property{
			schema.Prop("party_type", schema.String("Customer (what they owe) or Supplier (what is owed to them).").OneOf("Customer", "Supplier")).Required(),
			schema.Prop("party_id", schema.String("Exact customer or supplier id, once confirmed.").Len(1, 140)),
			schema.Prop("party_query", schema.String("The name as the user said it. Never combine with party_id.").Len(1, 140)),
		}, receivableSide.ageingProps()...)...),
		Output: schema.Object(
			schema.Prop("party_match", withDesc(partyMatchSchema(), "Present when party_query was given; unless matched, nothing was read.")),
			schema.Prop("party_type", schema.String("Customer or Supplier.")).Required(),
			schema.Prop("party", schema.String("The party id the balance is for.")),
			schema.Prop("company", schema.String("Company.")).Required(),
			schema.Prop("currency", schema.String("Currency of every amount (the company currency).")).Required(),
			schema.Prop("report_date", schema.String("Date the balance is stated at.")).Required(),
			schema.Prop("found", schema.Boolean("True when a party was identified and its balance read.")).Required(),
			schema.Prop("totals", withDesc(balanceTotalsSchema(), "The party's balance.")),
			schema.Prop("overdue", money("Positive balances due strictly before report_date; present only when overdue_complete is true.")),
			schema.Prop("overdue_complete", schema.Boolean("True when every positive balance had a date; only then is overdue given.")).Required(),
			schema.Prop("ageing", ageingSchema()),
			schema.Prop("open_documents", schema.Integer("Open documents of the party.")).Required(),
			warningsProp().Required(),
		),
		Effect:  connector.Read,
		Handler: getPartyBalance,
	}
}

func getPartyBalance(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[partyBalanceArgs](call)
	if err != nil {
		return nil, err
	}
	side := receivableSide
	if a.PartyType == "Supplier" {
		side = payableSide
	}
	if a.PartyID == "" && a.PartyQuery == "" {
		return nil, toolerr.New(toolerr.InvalidArgument, "add party_query (the name as the user said it) or party_id (a confirmed id)")
	}
	if a.PartyID != "" && a.PartyQuery != "" {
		return nil, toolerr.New(toolerr.InvalidArgument, "use party_id (a confirmed id) or party_query (a spoken name), not both")
	}
	c := callClient(call)
	company, err := sideCompany(ctx, call, c, a.Company)
	if err != nil {
		return nil, err
	}
	out := partyBalanceResult{PartyType: a.PartyType, Company: company.Name, Currency: company.Currency, ReportDate: a.ReportDate, Warnings: []string{}}
	partyID := a.PartyID
	if a.PartyQuery != "" {
		if err := c.checkReportAccess(ctx, side.detailReport); err != nil {
			return nil, err
		}
		m, err := resolveParty(ctx, c, side.party, a.PartyQuery, nil)
		if err != nil {
			return nil, err
		}
		out.PartyMatch = m
		if m.Status != matchMatched {
			out.Warnings = append(out.Warnings, "No balance was read: the name needs confirmation (see party_match).")
			return out, nil
		}
		partyID = m.ID
	}
	if a.PartyID != "" {
		if partyID, err = c.checkParty(ctx, side.party, a.PartyID); err != nil {
			return nil, err
		}
	}
	out.Party = partyID
	d, rows, err := side.runDetail(ctx, c, company.Name, a.ageingArgs, partyID)
	if err != nil {
		return nil, err
	}
	out.Found = true
	out.Warnings = append(out.Warnings, d.messages...)
	out.OpenDocuments = len(rows)
	out.Currency = rowCurrency(rows, company.Currency, &out.Warnings)
	totals, err := balanceTotalsOf(d, rows)
	if err != nil {
		return nil, err
	}
	out.Totals = &totals
	if out.Ageing, err = ageingTotals(d, rows); err != nil {
		return nil, err
	}
	overdue := overdueOf(rows, a.ReportDate)
	if overdue.complete {
		n := overdue.amount.number()
		out.Overdue, out.OverdueComplete = &n, true
	} else {
		out.Warnings = append(out.Warnings, "Overdue is left out because "+overdue.reason+"; this does not mean nothing is overdue.")
	}
	if len(rows) == 0 {
		out.Warnings = append(out.Warnings, "The ERP reports no open documents for "+partyID+" with "+company.Name+" at "+a.ReportDate+": the balance is zero.")
	}
	return out, nil
}
