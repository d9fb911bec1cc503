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

// get_sales_summary: net invoice sales (submitted sales invoices, returns
// included as negatives, before taxes, in the company currency) grouped by
// customer, item, item group or month. The total comes from one ungrouped
// aggregate and every group is fetched before the displayed groups are cut
// to top, so "others" is exact.

const (
	salesGroupBound   = 5000
	defaultSalesGroup = 10
	maxSalesGroups    = 100
)

type salesSummaryArgs struct {
	dateArgs
	Company       string `json:"company"`
	GroupBy       string `json:"group_by"`
	Top           *int   `json:"top"`
	Customer      string `json:"customer"`
	CustomerQuery string `json:"customer_query"`
}

// salesGroup is one group's net sales.
type salesGroup struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	// NetSales is nil when the ERP would not return the amount summed.
	NetSales *json.Number `json:"net_sales"`
	// Invoices counts the invoices in the group (for item and item group,
	// the invoices with at least one line of it).
	Invoices int    `json:"invoices"`
	Qty      any    `json:"qty,omitempty"`
	UOM      string `json:"-"`
	net      *big.Rat
}

type salesSummaryResult struct {
	PartyMatch     *partyMatch  `json:"party_match,omitempty"`
	Company        string       `json:"company"`
	Currency       string       `json:"currency"`
	DateRange      *dateRange   `json:"date_range,omitempty"`
	GroupBy        string       `json:"group_by"`
	NetSales       *json.Number `json:"net_sales"`
	InvoiceCount   int          `json:"invoice_count"`
	GroupCount     int          `json:"group_count"`
	Groups         []salesGroup `json:"groups"`
	Others         *salesOthers `json:"others,omitempty"`
	GroupsComplete bool         `json:"groups_complete"`
	// UnavailableFields are amount fields the ERP would not return.
	UnavailableFields []string `json:"unavailable_fields,omitempty"`
	Warnings          []string `json:"warnings"`
}

// salesOthers is everything outside the displayed groups.
type salesOthers struct {
	Groups   int          `json:"groups"`
	NetSales *json.Number `json:"net_sales"`
}

func getSalesSummaryTool() connector.Tool {
	props := []schema.Property{companyProp("The company whose sales to summarise.")}
	props = append(props, dateRangeProps("posting date")...)
	props = append(props,
		schema.Prop("group_by", schema.String("Group net sales by customer, item, item_group or month.").OneOf("customer", "item", "item_group", "month").WithDefault("customer")),
		schema.Prop("top", schema.Integer("How many groups to list, largest first (months are listed in date order).").Min(1).Max(maxSalesGroups).WithDefault(defaultSalesGroup)),
		schema.Prop("customer", schema.String("Only this customer (exact id).").Len(1, 140)),
		schema.Prop("customer_query", schema.String("Only this customer, by name as the user said it; resolved or returned as candidates. Never combine with customer.").Len(1, 140)),
	)
	group := schema.Object(
		schema.Prop("key", schema.String("Customer id, item code, item group or month (YYYY-MM).")).Required(),
		schema.Prop("label", schema.String("Display name.")).Required(),
		schema.Prop("net_sales", money("Net sales of the group, company currency; null when unavailable (see unavailable_fields).").Nullable()).Required(),
		schema.Prop("invoices", schema.Integer("Invoices in the group (for items: invoices with a line of it).")).Required(),
		schema.Prop("qty", schema.Number("Quantity sold (item grouping only; in the item's unit).")),
	)
	return connector.Tool{
		Name:  "get_sales_summary",
		Title: "Sales summary",
		Description: "Summarise net invoice sales of one company over at most 366 days by customer, item, item group or month: submitted sales invoices before taxes, with returns and credit notes deducted, in the company currency. " +
			"net_sales and invoice_count cover every invoice; groups lists the largest groups and others holds the exact remainder, so groups plus others equals net_sales. " +
			"This is invoiced sales, not cash received or recognised revenue. PERMISSION_DENIED means the user may not read sales invoices.",
		Input: schema.Object(props...),
		Output: schema.Object(
			schema.Prop("party_match", withDesc(partyMatchSchema(), "Present when customer_query was given; unless matched, nothing was read.")),
			schema.Prop("company", schema.String("Company.")).Required(),
			schema.Prop("currency", schema.String("Company currency of every amount.")).Required(),
			schema.Prop("date_range", dateRangeSchema()),
			schema.Prop("group_by", schema.String("Grouping used.")).Required(),
			schema.Prop("net_sales", money("Net sales of every matching invoice, computed before groups are limited; null when unavailable (see unavailable_fields), which is unknown, not zero.").Nullable()).Required(),
			schema.Prop("invoice_count", schema.Integer("Matching invoices (returns included).")).Required(),
			schema.Prop("group_count", schema.Integer("Groups with sales.")).Required(),
			schema.Prop("groups", schema.Array(group, "The largest groups (months in date order).")).Required(),
			schema.Prop("others", withDesc(schema.Object(
				schema.Prop("groups", schema.Integer("Groups not listed.")).Required(),
				schema.Prop("net_sales", money("Their net sales: net_sales minus the listed groups; null when either is unavailable.").Nullable()).Required(),
			), "The groups not listed.")),
			schema.Prop("groups_complete", schema.Boolean("True when every group was compared before choosing the largest.")).Required(),
			schema.Prop("unavailable_fields", schema.Array(schema.String(""), "Amount fields the ERP would not return (hidden from this user by field permissions, or absent on this site); the amounts summed from them are null.")),
			warningsProp().Required(),
		),
		Effect:  connector.Read,
		Handler: getSalesSummary,
	}
}

func getSalesSummary(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[salesSummaryArgs](call)
	if err != nil {
		return nil, err
	}
	if a.GroupBy == "" {
		a.GroupBy = "customer"
	}
	top := defaultSalesGroup
	if a.Top != nil {
		top = *a.Top
	}
	c := callClient(call)
	company, dr, err := reportScope(ctx, call, c, a.Company, a.dateArgs, "net sales are added up in the company currency")
	if err != nil {
		return nil, err
	}
	zero := json.Number("0")
	out := salesSummaryResult{Company: company.Name, Currency: company.Currency, DateRange: dr, GroupBy: a.GroupBy, Groups: []salesGroup{}, Warnings: []string{}, NetSales: &zero}
	if a.CustomerQuery != "" {
		if err := c.checkReadable(ctx, "Sales Invoice"); err != nil {
			return nil, err
		}
	}
	customer, m, err := resolvePartyArgs(ctx, c, customerParty, a.Customer, a.CustomerQuery)
	if err != nil {
		return nil, err
	}
	out.PartyMatch = m
	if m != nil && m.Status != matchMatched {
		out.Warnings = append(out.Warnings, "Nothing was read: the customer name needs confirmation (see party_match).")
		return out, nil
	}
	var f filters
	f.add("docstatus", "=", 1)
	f.add("company", "=", company.Name)
	f.add("posting_date", ">=", dr.From)
	f.add("posting_date", "<=", dr.To)
	f.addIf("customer", customer)

	// The total, before any grouping.
	rows, err := c.list(ctx, "Sales Invoice", listQuery{Fields: []string{"count(name) as row_count", "sum(base_net_total) as net"}, Filters: f, PageLength: 1, AllowUnavailable: true})
	if err != nil {
		return nil, err
	}
	var total decimalSum
	if len(rows) == 1 {
		if !total.add(rows[0]["net"]) {
			return nil, invalidResponse("the ERP sent a sales total that is not a number")
		}
		out.InvoiceCount = intOf(rows[0]["row_count"])
	}
	out.NetSales = totalOrNull(c, "Sales Invoice", "base_net_total", total.rat())

	groups, complete, read, err := salesGroups(ctx, c, a.GroupBy, f, call.MaxRecords)
	if err != nil {
		return nil, err
	}
	groupNets := len(groups) == 0 || groups[0].NetSales != nil
	if out.UnavailableFields = c.unavailable.of("Sales Invoice"); len(out.UnavailableFields) > 0 {
		w := unavailableNote(out.UnavailableFields)
		if !groupNets {
			w += " Groups are ordered by invoice count, since their net sales are unknown."
		}
		out.Warnings = append(out.Warnings, w)
	}
	out.GroupsComplete = complete
	out.GroupCount = len(groups)
	var grouped decimalSum
	for _, g := range groups {
		grouped.addRat(g.net)
	}
	if complete && out.NetSales != nil && groupNets && grouped.rat().Cmp(total.rat()) != 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("The groups add up to %s, not %s; the ERP changed between its two answers or hides some lines from this user. net_sales is the invoice total.", grouped.number(), *out.NetSales))
	}
	if !complete && a.GroupBy == "month" {
		out.Warnings = append(out.Warnings, fmt.Sprintf("Only the first %d posting dates were read (this site's row cap keeps each query small), so the months after those listed are missing. net_sales and others are still exact.", read))
	} else if !complete {
		out.Warnings = append(out.Warnings, fmt.Sprintf("There are more than %d groups; the largest among the first %d are listed, so a larger group may be missing. net_sales and others are still exact.", read, read))
	}
	if a.GroupBy == "month" {
		sort.SliceStable(groups, func(i, j int) bool { return groups[i].Key < groups[j].Key })
	} else {
		sort.SliceStable(groups, func(i, j int) bool {
			if c := groups[i].net.Cmp(groups[j].net); groupNets && c != 0 {
				return c > 0
			}
			if !groupNets && groups[i].Invoices != groups[j].Invoices {
				return groups[i].Invoices > groups[j].Invoices
			}
			return groups[i].Key < groups[j].Key
		})
	}
	shown := groups[:min(top, len(groups))]
	var shownSum decimalSum
	for _, g := range shown {
		shownSum.addRat(g.net)
	}
	out.Groups = append(out.Groups, shown...)
	if len(groups) > len(shown) || !complete {
		out.Others = &salesOthers{Groups: out.GroupCount - len(shown)}
		if out.NetSales != nil && groupNets {
			rest := decimalNumber(new(big.Rat).Sub(total.rat(), shownSum.rat()))
			out.Others.NetSales = &rest
		}
	}
	return out, nil
}

// salesGroups fetches every group's net sales, page by page in group
// order, up to read rows: salesGroupBound, or fewer on a site with a low
// row cap (walkBound). complete is false when there are more; by month,
// the last month read is then left out, as its sum may be short.
func salesGroups(ctx context.Context, c *client, groupBy string, f filters, maxRecords int) (groups []salesGroup, complete bool, read int, err error) {
	const item = "`tabSales Invoice Item`"
	var q listQuery
	q.Filters = f
	q.AllowUnavailable = true
	// netColumn is the amount each group sums.
	netColumn := "base_net_total"
	switch groupBy {
	case "customer":
		q.Fields = []string{"customer", "max(customer_name) as label", "count(name) as invoices", "sum(base_net_total) as net"}
		q.GroupBy = "customer"
	case "month":
		// One row per posting date (at most 366), bucketed by month here.
		q.Fields = []string{"posting_date", "count(name) as invoices", "sum(base_net_total) as net"}
		q.GroupBy = "posting_date"
	// A child column is selected without an alias: Frappe splits an
	// aliased plain field on spaces, and the table name has one.
	case "item":
		q.Fields = []string{item + ".item_code", "max(" + item + ".item_name) as label", "count(distinct `tabSales Invoice`.name) as invoices",
			"sum(" + item + ".base_net_amount) as net", "sum(" + item + ".stock_qty) as qty"}
		q.GroupBy = item + ".item_code"
		netColumn = "base_net_amount"
	case "item_group":
		q.Fields = []string{item + ".item_group", "count(distinct `tabSales Invoice`.name) as invoices", "sum(" + item + ".base_net_amount) as net"}
		q.GroupBy = item + ".item_group"
		netColumn = "base_net_amount"
	default:
		return nil, false, 0, toolerr.New(toolerr.InvalidArgument, "group_by must be customer, item, item_group or month")
	}
	// Groups are unique, so ordering by the group key pages them stably.
	q.OrderBy = q.GroupBy + " asc"
	fetch := func(q listQuery) ([]map[string]any, error) { return c.list(ctx, "Sales Invoice", q) }
	pageSize := min(walkPageSize, max(maxRecords, 1))
	read = walkBound(pageSize, salesGroupBound)
	rows, truncated, err := walkPages(fetch, q, func(map[string]any) bool { return true }, pageSize, salesGroupBound)
	if err != nil {
		return nil, false, 0, err
	}
	complete = !truncated
	byKey := map[string]*salesGroup{}
	var order []string
	for _, r := range rows {
		var key, label string
		switch groupBy {
		case "customer":
			key, label = str(r["customer"]), str(r["label"])
		case "month":
			d := str(r["posting_date"])
			if len(d) < 7 {
				return nil, false, 0, invalidResponse("the ERP sent a posting date erpgate cannot read")
			}
			key, label = d[:7], d[:7]
		case "item":
			key, label = str(r["item_code"]), str(r["label"])
		case "item_group":
			key, label = str(r["item_group"]), str(r["item_group"])
		}
		if label == "" {
			label = key
		}
		net, ok := decimalText(r["net"])
		if !ok {
			return nil, false, 0, invalidResponse("the ERP sent a sales amount that is not a number")
		}
		g := byKey[key]
		if g == nil {
			g = &salesGroup{Key: key, Label: label, net: new(big.Rat)}
			byKey[key] = g
			order = append(order, key)
		}
		g.net.Add(g.net, net)
		g.Invoices += intOf(r["invoices"])
		if groupBy == "item" {
			g.Qty, _ = exactNumber(r["qty"])
		}
	}
	if !complete && groupBy == "month" && len(order) > 0 {
		// The walk stopped within the last month it read: that month's
		// later posting dates are missing, so its sum would be short.
		order = order[:len(order)-1]
	}
	out := make([]salesGroup, 0, len(order))
	for _, k := range order {
		g := byKey[k]
		g.NetSales = totalOrNull(c, "Sales Invoice", netColumn, g.net)
		out = append(out, *g)
	}
	return out, complete, read, nil
}

// intOf reads a whole number the ERP sent; anything else is 0.
func intOf(v any) int {
	r, ok := decimalText(v)
	if !ok || !r.IsInt() {
		return 0
	}
	return int(r.Num().Int64())
}
