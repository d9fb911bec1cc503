package frappe

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math/big"
	"net/http"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// The write tools. Each has a Preview, which reads as the caller and
// changes nothing, and a Handler, which the engine runs only after a
// person approved that preview (docs/writes.md).

// ---- create_sales_order ----

type salesOrderLine struct {
	ItemCode string       `json:"item_code"`
	Qty      json.Number  `json:"qty"`
	Rate     *json.Number `json:"rate"`
}

type createSalesOrderArgs struct {
	Customer        string           `json:"customer"`
	Company         string           `json:"company"`
	TransactionDate string           `json:"transaction_date"`
	DeliveryDate    string           `json:"delivery_date"`
	PONo            string           `json:"po_no"`
	Items           []salesOrderLine `json:"items"`
}

func createSalesOrderTool() connector.Tool {
	return connector.Tool{
		Name:  "create_sales_order",
		Title: "Create a draft sales order",
		Description: "Create a Sales Order as a draft (docstatus 0) for a customer, with item lines. " +
			"A line without rate gets the price the ERP fills from its selling price list; taxes and pricing rules are the ERP's too. " +
			"The draft is not submitted: use submit_document for that." + approvalNote +
			" Not idempotent: every approved call creates another order.",
		Input: schema.Object(
			schema.Prop("customer", schema.String("Exact customer name (the Customer record's name, see list_customers).").Len(1, 140)).Required(),
			schema.Prop("delivery_date", schema.Date("Expected delivery date (YYYY-MM-DD); ERPNext requires one and it may not be before the order date.")).Required(),
			schema.Prop("items", schema.Array(schema.Object(
				schema.Prop("item_code", schema.String("Exact item code (see list_items).").Len(1, 140)).Required(),
				schema.Prop("qty", schema.Number("Quantity in the item's stock unit.").Min(0.01).Max(1e9)).Required(),
				schema.Prop("rate", money("Price per unit in the order's currency; omit to use the ERP's price list rate (ERPNext replaces a rate of 0 with the price list rate too, so 0 is not accepted).").Min(0.01).Max(1e12)),
			), "Order lines.").Count(1, 50)).Required(),
			schema.Prop("transaction_date", schema.Date("Order date (YYYY-MM-DD); the ERP's today when omitted.")),
			companyProp("Company taking the order."),
			schema.Prop("po_no", schema.String("The customer's purchase order number.").Len(1, 140)),
		),
		Output: writtenProps(
			schema.Prop("docstatus", schema.Integer("0: the order is a draft.")).Required(),
			schema.Prop("erp_status", schema.String("The ERP's status field (Draft).")).Required(),
			schema.Prop("grand_total", money("Grand total as the ERP computed it, in currency.")).Required(),
			schema.Prop("currency", schema.String("Currency of the order.")).Required(),
		),
		Effect:  connector.Write,
		Preview: previewSalesOrder,
		Handler: unlessSent(createSalesOrder),
	}
}

// checkWholeUnit refuses, as ERPNext's validate_uom_is_integer would once
// the order is approved, line's qty of an item counted in a unit that must
// be whole when the qty, rounded as the ERP saves it (float_precision,
// the site's rounding_method), is not. The unit is read only for such a
// qty; one the user may not read is left to the ERP.
func checkWholeUnit(ctx context.Context, c *client, line int, item, uom, qty string, prec amountPrecision) error {
	q, ok := parseDecimal(qty)
	if !ok || uom == "" {
		return nil
	}
	if r, ok := parseDecimal(prec.roundQty(q)); !ok || r.IsInt() {
		return nil
	}
	u, err := c.get(ctx, "UOM", uom)
	if err != nil || text(u["must_be_whole_number"]) != "1" {
		return nil
	}
	return toolerr.New(toolerr.InvalidArgument, "line %d: item %q is counted in %s, which the ERP takes in whole numbers only; it would refuse qty %s: send a whole number", line, item, uom, qty)
}

func previewSalesOrder(ctx context.Context, call *connector.Call) (*connector.Preview, error) {
	a, err := args[createSalesOrderArgs](call)
	if err != nil {
		return nil, err
	}
	company, err := requireCompany(call, a.Company, "a sales order belongs to one company and this site has no default company")
	if err != nil {
		return nil, err
	}
	if a.TransactionDate != "" && a.DeliveryDate < a.TransactionDate {
		return nil, toolerr.New(toolerr.InvalidArgument, "delivery_date %s is before transaction_date %s; ERPNext refuses a delivery date before the order date", a.DeliveryDate, a.TransactionDate)
	}
	c := callClient(call)
	comp, err := c.company(ctx, company)
	if err != nil {
		return nil, err
	}
	cust, err := readAsCaller(ctx, c, "Customer", a.Customer)
	if err != nil {
		return nil, err
	}
	if text(cust["disabled"]) == "1" {
		return nil, toolerr.New(toolerr.InvalidArgument, "customer %q is disabled in the ERP, which refuses orders for it", a.Customer)
	}
	currency := str(cust["default_currency"])
	if currency == "" {
		currency = comp.Currency
	}
	prec := readAmountPrecision(ctx, c)
	table := connector.PreviewTable{Title: itemsTitle, Columns: []string{"Item", "Item name", "Qty", unitColumn, "Rate", "Amount"}}
	var total big.Rat
	priced := true
	for i, l := range a.Items {
		item, err := readAsCaller(ctx, c, "Item", l.ItemCode)
		if err != nil {
			return nil, err
		}
		if text(item["disabled"]) == "1" {
			return nil, toolerr.New(toolerr.InvalidArgument, "item %q is disabled in the ERP, which refuses it on orders", l.ItemCode)
		}
		if err := checkWholeUnit(ctx, c, i+1, l.ItemCode, str(item["stock_uom"]), l.Qty.String(), prec); err != nil {
			return nil, err
		}
		rate, amount := "price list rate", ""
		if l.Rate != nil {
			rate = l.Rate.String()
			if r, ok := lineAmount(l.Qty, *l.Rate, prec); ok {
				amount = r
				if rounded, ok := parseDecimal(amount); ok {
					total.Add(&total, rounded)
				}
			}
		} else {
			priced = false
		}
		table.Rows = append(table.Rows, []string{l.ItemCode, str(item["item_name"]), l.Qty.String(), str(item["stock_uom"]), rate, amount})
	}
	name := str(cust["customer_name"])
	summary := fmt.Sprintf("Create a draft Sales Order for %s (%s) in %s, %d line(s)", name, str(cust["name"]), comp.Name, len(a.Items))
	if priced {
		summary += ", net total " + prec.round(&total) + " " + currency
	} else {
		summary += ", in " + currency + " at the ERP's price list rates where no rate is given"
	}
	fields := []connector.PreviewField{
		{Name: "customer", Label: "Customer", After: str(cust["name"])},
		{Name: "company", Label: "Company", After: comp.Name},
		{Name: "currency", Label: "Currency", After: currency},
		{Name: "transaction_date", Label: "Order date", After: orDefault(a.TransactionDate, "today (the ERP's date)")},
		{Name: "delivery_date", Label: "Delivery date", After: a.DeliveryDate},
	}
	if a.PONo != "" {
		fields = append(fields, connector.PreviewField{Name: "po_no", Label: "Customer's PO number", After: a.PONo})
	}
	warnings := []string{"The ERP applies its taxes, discounts and pricing rules when it saves the draft, so its grand total can differ from the net total shown."}
	if prec.warning != "" {
		warnings = append(warnings, prec.warning)
	}
	for i, l := range a.Items {
		if q, ok := decimalText(l.Qty); ok && terminatingPlaces(q) > prec.qtyPlaces {
			warnings = append(warnings, fmt.Sprintf("Line %d's qty %s has more than %s: if the ERP rounds it to its float precision, the draft is created but the call fails and names the difference.", i+1, l.Qty.String(), placesText(prec.qtyPlaces)))
		}
		if l.Rate == nil {
			continue
		}
		if r, ok := decimalText(*l.Rate); ok && terminatingPlaces(r) > prec.places {
			warnings = append(warnings, fmt.Sprintf("Line %d's rate %s has more than %s: if the ERP rounds it to its currency precision, the draft is created but the call fails and names the difference.", i+1, l.Rate.String(), placesText(prec.places)))
		}
	}
	return &connector.Preview{
		Operation: "create", DocType: "Sales Order", Summary: summary + ".",
		Fields: fields, Tables: []connector.PreviewTable{table},
		Warnings: warnings,
	}, nil
}

// lineAmount is a line's amount as ERPNext computes it
// (calculate_item_values): the qty rounded to the float precision (a tie
// as the site's rounding_method says), times
// the rate rounded to the currency precision, rounded to it.
func lineAmount(qty, rate json.Number, prec amountPrecision) (string, bool) {
	q, ok1 := parseDecimal(qty.String())
	r, ok2 := parseDecimal(rate.String())
	if !ok1 || !ok2 {
		return "", false
	}
	q, _ = parseDecimal(prec.roundQty(q))
	r, _ = parseDecimal(prec.round(r))
	return prec.round(new(big.Rat).Mul(q, r)), true
}

// defaultFloatPlaces is the precision of Float fields when System
// Settings' float_precision is unset (or cannot be read): the places
// ERPNext rounds a qty to.
const defaultFloatPlaces = 3

// placesText is "n decimal places" in words for the page.
func placesText(n int) string {
	switch n {
	case 0:
		return "no decimal places"
	case 1:
		return "one decimal place"
	case 2:
		return "two decimal places"
	case 3:
		return "three decimal places"
	}
	return fmt.Sprintf("%d decimal places", n)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func createSalesOrder(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[createSalesOrderArgs](call)
	if err != nil {
		return nil, err
	}
	company, err := requireCompany(call, a.Company, "a sales order belongs to one company and this site has no default company")
	if err != nil {
		return nil, err
	}
	if approved, ok := call.ApprovedField("company"); ok && approved.After != "" {
		// The approved company, not the site's default now: the operator
		// may have changed it since the preview.
		company = approved.After
	}
	body := map[string]any{"customer": a.Customer, "company": company, "delivery_date": a.DeliveryDate, "docstatus": 0}
	if a.TransactionDate != "" {
		body["transaction_date"] = a.TransactionDate
	}
	if a.PONo != "" {
		body["po_no"] = a.PONo
	}
	units := call.ApprovedColumn(itemsTitle, unitColumn, len(a.Items))
	items := make([]map[string]any, len(a.Items))
	for i, l := range a.Items {
		row := map[string]any{"item_code": l.ItemCode, "qty": l.Qty, "delivery_date": a.DeliveryDate}
		if units[i] != "" {
			// The unit the person approved the qty in (the stock unit):
			// a line without uom would be in the item's sales unit.
			row["uom"] = units[i]
		}
		if l.Rate != nil {
			row["rate"] = *l.Rate
		}
		items[i] = row
	}
	body["items"] = items
	approved, _ := call.ApprovedField("currency")
	currency := approved.After
	if currency != "" {
		// The approved currency, not the ERP's choice: the preview may
		// not have seen the customer's (a field above the user's
		// permission level reads as absent).
		body["currency"] = currency
	}
	c := callClient(call)
	doc, err := c.sendDoc(ctx, http.MethodPost, resourcePath("Sales Order", ""), "data", body)
	if err != nil {
		return nil, err
	}
	if diffs, people := salesOrderDiffers(a, currency, units, doc); len(diffs) > 0 {
		name := str(doc["name"])
		return nil, toolerr.Wrap(toolerr.InvalidArgument, connector.ErrNotAsApproved,
			"the ERP created draft Sales Order %s (%s), but not as approved: %s. It is a draft: check it in the ERP, and correct or delete it",
			name, c.deskURL("Sales Order", name), strings.Join(diffs, "; ")).
			SaidByERP("draft Sales Order " + name + " with " + strings.Join(people, "; "))
	}
	return writtenResult(c, "Sales Order", doc, "docstatus", "status", "grand_total", "currency"), nil
}

// itemsTitle and unitColumn name the preview's table of lines and its
// column of units.
const (
	itemsTitle = "Items"
	unitColumn = "Unit"
)

// salesOrderDiffers lists what the order the ERP created differs in from
// the approved one: its currency, each line's unit, each qty (ERPNext
// rounds a qty to the float precision) and each given rate (ERPNext
// rounds a rate to the currency's precision); diffs for the model, people
// the same for the approval page ("line 1's rate 10.01 where you approved
// 10.005").
func salesOrderDiffers(a createSalesOrderArgs, currency string, units []string, doc map[string]any) (diffs, people []string) {
	differ := func(what, forPeople, got, approved string) {
		diffs = append(diffs, fmt.Sprintf("%s %s, approved %s", what, got, approved))
		people = append(people, fmt.Sprintf("%s %s where you approved %s", forPeople, got, approved))
	}
	if got := str(doc["currency"]); currency != "" && got != currency {
		differ("currency", "the currency", got, currency)
	}
	lines, _ := doc["items"].([]any)
	for i, l := range a.Items {
		if i >= len(lines) {
			continue
		}
		row, _ := lines[i].(map[string]any)
		line := func(what string) (string, string) {
			return fmt.Sprintf("line %d %s", i+1, what), fmt.Sprintf("line %d's %s", i+1, what)
		}
		if got := str(row["uom"]); units[i] != "" && got != "" && got != units[i] {
			m, p := line("unit")
			differ(m, p, got, units[i])
		}
		want, okW := decimalText(l.Qty)
		got, okG := decimalText(row["qty"])
		if !okW || !okG || want.Cmp(got) != 0 {
			m, p := line("qty")
			differ(m, p, text(canonicalNumber(row["qty"])), l.Qty.String())
		}
		if l.Rate == nil {
			continue
		}
		want, okW = decimalText(*l.Rate)
		got, okG = decimalText(row["rate"])
		if !okW || !okG || want.Cmp(got) != 0 {
			m, p := line("rate")
			differ(m, p, text(row["rate"]), l.Rate.String())
		}
	}
	return diffs, people
}

// writtenResult is the output of a write: the document's key and the
// named fields as the ERP answered them.
func writtenResult(c *client, doctype string, doc map[string]any, fields ...string) map[string]any {
	name := str(doc["name"])
	out := map[string]any{"doctype": doctype, "name": name, "url": c.deskURL(doctype, name), "modified": str(doc["modified"])}
	for _, f := range fields {
		key := f
		if f == "status" {
			key = "erp_status" // "status" is the engine's error envelope's
		}
		out[key] = doc[f]
		if doc[f] == nil {
			switch f {
			case "grand_total", "docstatus":
				out[key] = json.Number("0")
			default:
				out[key] = ""
			}
		}
	}
	return out
}

// ---- update_customer ----

type updateCustomerArgs struct {
	Customer    string       `json:"customer"`
	EmailID     *string      `json:"email_id"`
	MobileNo    *string      `json:"mobile_no"`
	CreditLimit *json.Number `json:"credit_limit"`
	Company     string       `json:"company"`
}

func updateCustomerTool() connector.Tool {
	return connector.Tool{
		Name:  "update_customer",
		Title: "Update a customer",
		Description: "Change a customer's e-mail address, mobile number or credit limit for one company. " +
			"In ERPNext the e-mail and mobile on a Customer come from its primary Contact: for a customer without one they are set on the customer and ERPNext makes the primary Contact from them; " +
			"a customer that has a primary Contact is refused (change the Contact in the ERP). Phone numbers other than mobile live only on Contacts. " +
			"The credit limit is the Customer's row for the company in its credit limits; ERPNext refuses a limit below what the customer owes that company." + approvalNote +
			" Idempotent: repeating an approved call sets the same values. If the customer changes in the ERP after approval, the ERP refuses the write and the call fails with APPROVAL_EXPIRED.",
		Input: schema.Object(
			schema.Prop("customer", schema.String("Exact customer name (the Customer record's name).").Len(1, 140)).Required(),
			schema.Prop("email_id", schema.String("New e-mail address.").Match(`^[^@\s]+@[^@\s]+\.[^@\s]+$`).Len(3, 140)),
			schema.Prop("mobile_no", schema.String("New mobile number.").Match(`^\+?[0-9 ()./-]{3,30}$`)),
			schema.Prop("credit_limit", money("New credit limit in the company's currency; 0 means no limit.").Min(0).Max(1e13)),
			companyProp("Company the credit limit is for."),
		),
		Output: writtenProps(
			schema.Prop("email_id", schema.String("E-mail address after the write.")).Required(),
			schema.Prop("mobile_no", schema.String("Mobile number after the write.")).Required(),
			schema.Prop("credit_limits", schema.Array(schema.Object(
				schema.Prop("company", schema.String("Company.")).Required(),
				schema.Prop("credit_limit", money("Credit limit in the company's currency.")).Required(),
			), "Credit limits after the write, one per company.")).Required(),
		),
		Effect:     connector.Write,
		Idempotent: true,
		Overwrites: true,
		Preview:    previewUpdateCustomer,
		Handler:    unlessSent(updateCustomer),
	}
}

func (a updateCustomerArgs) creditCompany(call *connector.Call) (string, error) {
	if a.CreditLimit == nil {
		return "", nil
	}
	return requireCompany(call, a.Company, "a credit limit is set per company and this site has no default company")
}

func previewUpdateCustomer(ctx context.Context, call *connector.Call) (*connector.Preview, error) {
	a, err := args[updateCustomerArgs](call)
	if err != nil {
		return nil, err
	}
	if a.EmailID == nil && a.MobileNo == nil && a.CreditLimit == nil {
		return nil, toolerr.New(toolerr.InvalidArgument, "nothing to change: give email_id, mobile_no or credit_limit")
	}
	if a.CreditLimit == nil && a.Company != "" {
		return nil, toolerr.New(toolerr.InvalidArgument, "company only says which company a credit_limit is for; add credit_limit or leave company out")
	}
	company, err := a.creditCompany(call)
	if err != nil {
		return nil, err
	}
	c := callClient(call)
	if company != "" {
		comp, err := c.company(ctx, company)
		if err != nil {
			return nil, err
		}
		company = comp.Name
	}
	cust, err := readAsCaller(ctx, c, "Customer", a.Customer)
	if err != nil {
		return nil, err
	}
	var fields []connector.PreviewField
	var warnings []string
	if a.EmailID != nil || a.MobileNo != nil {
		if contact := str(cust["customer_primary_contact"]); contact != "" {
			return nil, toolerr.New(toolerr.InvalidArgument, "customer %q takes its e-mail and mobile from its primary Contact %q, and ERPNext would overwrite them from it on save; change that Contact in the ERP instead", a.Customer, contact)
		}
		if str(cust["lead_name"]) == "" {
			warnings = append(warnings, "The customer has no primary Contact: ERPNext creates one from these details when it saves the customer, and from then on takes them from that Contact.")
		}
	}
	if a.EmailID != nil {
		fields = append(fields, connector.PreviewField{Name: "email_id", Label: "E-mail", Before: str(cust["email_id"]), HasBefore: true, After: *a.EmailID})
	}
	if a.MobileNo != nil {
		fields = append(fields, connector.PreviewField{Name: "mobile_no", Label: "Mobile", Before: str(cust["mobile_no"]), HasBefore: true, After: *a.MobileNo})
	}
	if a.CreditLimit != nil {
		before := ""
		if row := creditRow(cust, company); row != nil {
			before = text(row["credit_limit"])
		}
		fields = append(fields, connector.PreviewField{Name: "credit_limits", Label: creditLabel(company), Before: before, HasBefore: true, After: a.CreditLimit.String()})
	}
	var changes []string
	for _, f := range fields {
		changes = append(changes, f.Label)
	}
	return &connector.Preview{
		Operation: "update", DocType: "Customer", DocName: str(cust["name"]),
		Summary:  fmt.Sprintf("Update customer %s (%s): %s.", str(cust["customer_name"]), str(cust["name"]), strings.Join(changes, ", ")),
		Fields:   fields,
		Warnings: warnings,
		Version:  str(cust["modified"]),
	}, nil
}

// creditLabel is the label of the credit limit field for company.
func creditLabel(company string) string { return "Credit limit (" + company + ")" }

// creditRow returns the customer's credit limit row for company, or nil.
func creditRow(cust map[string]any, company string) map[string]any {
	rows, _ := cust["credit_limits"].([]any)
	for _, r := range rows {
		if m, ok := r.(map[string]any); ok && strings.EqualFold(str(m["company"]), company) {
			return m
		}
	}
	return nil
}

func updateCustomer(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[updateCustomerArgs](call)
	if err != nil {
		return nil, err
	}
	version, err := approvedVersion(call)
	if err != nil {
		return nil, err
	}
	company, err := a.creditCompany(call)
	if err != nil {
		return nil, err
	}
	c := callClient(call)
	name := call.Approved.Preview.DocName
	if name == "" {
		name = a.Customer
	}
	// modified is what the person approved: Frappe's check_if_latest
	// refuses the save (TimestampMismatchError) if the customer changed.
	body := map[string]any{"modified": version}
	if a.EmailID != nil {
		body["email_id"] = *a.EmailID
	}
	if a.MobileNo != nil {
		body["mobile_no"] = *a.MobileNo
	}
	if a.CreditLimit != nil {
		if f, ok := call.ApprovedField("credit_limits"); ok && !strings.EqualFold(f.Label, creditLabel(company)) {
			// The site's default company changed since the preview.
			return nil, toolerr.New(toolerr.ApprovalExpired, "the credit limit was approved as %q, but this call would set it for company %s (the site's default company changed), so nothing was written; call the tool again to see a new preview and ask for a new approval", f.Label, company)
		}
		cust, err := readAsCaller(ctx, c, "Customer", name)
		if err != nil {
			return nil, err
		}
		if str(cust["modified"]) != version {
			return nil, toolerr.New(toolerr.ApprovalExpired, "customer %s changed in the ERP after the change was approved (modified %s, approved %s), so nothing was written; call the tool again to see a new preview and ask for a new approval", name, str(cust["modified"]), version)
		}
		body["credit_limits"] = withCreditLimit(cust, company, *a.CreditLimit)
	}
	doc, err := c.sendDoc(ctx, http.MethodPut, resourcePath("Customer", name), "data", body)
	if err != nil {
		return nil, err
	}
	out := writtenResult(c, "Customer", doc, "email_id", "mobile_no")
	limits := []map[string]any{}
	rows, _ := doc["credit_limits"].([]any)
	for _, r := range rows {
		if m, ok := r.(map[string]any); ok {
			limits = append(limits, map[string]any{"company": str(m["company"]), "credit_limit": orZero(m["credit_limit"])})
		}
	}
	out["credit_limits"] = limits
	return out, nil
}

func orZero(v any) any {
	if v == nil {
		return json.Number("0")
	}
	return v
}

// withCreditLimit returns the customer's credit limit table with company's
// row set to limit: Frappe replaces a child table with the rows sent, so
// every row is sent, existing ones with their name.
func withCreditLimit(cust map[string]any, company string, limit json.Number) []map[string]any {
	var out []map[string]any
	found := false
	rows, _ := cust["credit_limits"].([]any)
	for _, r := range rows {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		row := map[string]any{"name": m["name"], "company": m["company"], "credit_limit": orZero(m["credit_limit"]), "bypass_credit_limit_check": orZero(m["bypass_credit_limit_check"])}
		if strings.EqualFold(str(m["company"]), company) {
			row["credit_limit"], found = limit, true
		}
		out = append(out, row)
	}
	if !found {
		out = append(out, map[string]any{"company": company, "credit_limit": limit})
	}
	return out
}

// ---- add_comment ----

// commentDoctypes are the document types add_comment may comment on.
var commentDoctypes = []string{"Sales Order", "Sales Invoice", "Customer", "Quotation", "Delivery Note", "Purchase Order", "Supplier"}

type addCommentArgs struct {
	Doctype string `json:"doctype"`
	Name    string `json:"name"`
	Text    string `json:"text"`
}

func addCommentTool() connector.Tool {
	return connector.Tool{
		Name:  "add_comment",
		Title: "Add a comment to a document",
		Description: "Add a comment to the timeline of a document (" + joinOr(commentDoctypes) + "), as the ERP user, the way a comment typed in the ERP's form is added. " +
			"The text is stored as plain text. Anyone who may read the document may comment on it in the ERP." + approvalNote +
			" Not idempotent: every approved call adds another comment.",
		Input: schema.Object(
			schema.Prop("doctype", schema.String("Document type.").OneOf(commentDoctypes...)).Required(),
			schema.Prop("name", schema.String("Exact document name, e.g. SAL-ORD-2026-00012.").Len(1, 140)).Required(),
			schema.Prop("text", schema.String("The comment, as plain text.").Len(1, 5000)).Required(),
		),
		Output: writtenProps(
			schema.Prop("reference_doctype", schema.String("Type of the document commented on.")).Required(),
			schema.Prop("reference_name", schema.String("Name of the document commented on.")).Required(),
			schema.Prop("comment_email", schema.String("The ERP user the comment is from.")).Required(),
		),
		Effect:  connector.Write,
		Preview: previewComment,
		Handler: unlessSent(addComment),
	}
}

func commentArgs(call *connector.Call) (addCommentArgs, error) {
	a, err := args[addCommentArgs](call)
	if err != nil {
		return a, err
	}
	if !slices.Contains(commentDoctypes, a.Doctype) {
		return a, toolerr.New(toolerr.InvalidArgument, "comments can be added only to %s, not to %q", joinOr(commentDoctypes), a.Doctype)
	}
	if strings.TrimSpace(a.Text) == "" {
		return a, toolerr.New(toolerr.InvalidArgument, "text is empty")
	}
	return a, nil
}

func previewComment(ctx context.Context, call *connector.Call) (*connector.Preview, error) {
	a, err := commentArgs(call)
	if err != nil {
		return nil, err
	}
	c := callClient(call)
	doc, err := readAsCaller(ctx, c, a.Doctype, a.Name)
	if err != nil {
		return nil, err
	}
	user, err := c.loggedUser(ctx)
	if err != nil {
		return nil, err
	}
	name := str(doc["name"])
	label := a.Doctype + " " + name
	if t := orDefault(str(doc["title"]), orDefault(str(doc["customer_name"]), str(doc["supplier_name"]))); t != "" && t != name {
		label += " (" + t + ")"
	}
	return &connector.Preview{
		Operation: "comment", DocType: a.Doctype, DocName: name,
		Summary: "Add a comment to " + label + " as " + user + ".",
		Fields: []connector.PreviewField{
			{Name: "comment_email", Label: "From", After: user},
			{Name: "content", Label: "Comment", After: a.Text},
		},
	}, nil
}

// addComment calls frappe.desk.form.utils.add_comment, which the ERP's
// form timeline uses: it checks that the user may read the document and
// inserts the Comment. POST /api/resource/Comment would instead need
// create permission on Comment itself (not what people have) and skip
// the check on the document.
func addComment(ctx context.Context, call *connector.Call) (any, error) {
	a, err := commentArgs(call)
	if err != nil {
		return nil, err
	}
	c := callClient(call)
	user, err := c.loggedUser(ctx)
	if err != nil {
		return nil, err
	}
	name := a.Name
	if call.Approved != nil && call.Approved.Preview.DocName != "" {
		name = call.Approved.Preview.DocName
	}
	body := map[string]any{
		"reference_doctype": a.Doctype, "reference_name": name,
		"content":       plainHTML(a.Text),
		"comment_email": user, "comment_by": user,
	}
	doc, err := c.sendDoc(ctx, http.MethodPost, "/api/method/frappe.desk.form.utils.add_comment", "message", body)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"doctype": "Comment", "name": str(doc["name"]), "url": c.deskURL(a.Doctype, name), "modified": str(doc["modified"]),
		"reference_doctype": str(doc["reference_doctype"]), "reference_name": str(doc["reference_name"]), "comment_email": str(doc["comment_email"]),
	}, nil
}

// plainHTML stores text as text: Frappe keeps comment content as HTML,
// so the text is escaped and its line breaks kept.
func plainHTML(s string) string {
	return strings.ReplaceAll(html.EscapeString(strings.ReplaceAll(s, "\r\n", "\n")), "\n", "<br>")
}

// ---- submit_document ----

var submitDoctypes = []string{"Sales Order", "Sales Invoice"}

type submitArgs struct {
	Doctype string `json:"doctype"`
	Name    string `json:"name"`
}

func submitDocumentTool() connector.Tool {
	return connector.Tool{
		Name:  "submit_document",
		Title: "Submit a draft document",
		Description: "Submit a draft Sales Order or Sales Invoice (docstatus 0 to 1). Submission cannot be undone: a submitted document can only be cancelled and amended in the ERP, and a submitted invoice is posted to the ledgers. " +
			"Only drafts can be submitted; a submitted or cancelled document is refused with INVALID_ARGUMENT." + approvalNote +
			" If the document changes in the ERP after approval, the ERP refuses and the call fails with APPROVAL_EXPIRED.",
		Input: schema.Object(
			schema.Prop("doctype", schema.String("Document type.").OneOf(submitDoctypes...)).Required(),
			schema.Prop("name", schema.String("Exact name of the draft, e.g. SAL-ORD-2026-00012.").Len(1, 140)).Required(),
		),
		Output: writtenProps(
			schema.Prop("docstatus", schema.Integer("1: submitted.")).Required(),
			schema.Prop("erp_status", schema.String("The ERP's status field after submission.")).Required(),
			schema.Prop("grand_total", money("Grand total, in the document's currency.")).Required(),
		),
		Effect:  connector.Destructive,
		Preview: previewSubmit,
		Handler: unlessSent(submitDocument),
	}
}

func previewSubmit(ctx context.Context, call *connector.Call) (*connector.Preview, error) {
	a, err := args[submitArgs](call)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(submitDoctypes, a.Doctype) {
		return nil, toolerr.New(toolerr.InvalidArgument, "only %s can be submitted, not %q", joinOr(submitDoctypes), a.Doctype)
	}
	c := callClient(call)
	doc, err := readAsCaller(ctx, c, a.Doctype, a.Name)
	if err != nil {
		return nil, err
	}
	if err := mustBeDraft(a.Doctype, doc); err != nil {
		return nil, err
	}
	name := str(doc["name"])
	date := str(doc["transaction_date"])
	if a.Doctype == "Sales Invoice" {
		date = str(doc["posting_date"])
	}
	warnings := []string{"Submitting cannot be undone: a submitted document can only be cancelled and amended, never edited or deleted."}
	if a.Doctype == "Sales Invoice" {
		warnings = append(warnings, "Submitting the invoice posts it to the general ledger and to the customer's receivable.")
	}
	return &connector.Preview{
		Operation: "submit", DocType: a.Doctype, DocName: name,
		Summary: fmt.Sprintf("Submit %s %s for %s (%s), grand total %s %s.", a.Doctype, name, str(doc["customer_name"]), str(doc["customer"]), text(doc["grand_total"]), str(doc["currency"])),
		Fields: []connector.PreviewField{
			{Name: "docstatus", Label: "State", Before: "Draft", HasBefore: true, After: "Submitted"},
			{Name: "customer", Label: "Customer", Before: str(doc["customer"]), HasBefore: true, After: str(doc["customer"])},
			{Name: "date", Label: "Date", Before: date, HasBefore: true, After: date},
			{Name: "grand_total", Label: "Grand total", Before: text(doc["grand_total"]) + " " + str(doc["currency"]), HasBefore: true, After: text(doc["grand_total"]) + " " + str(doc["currency"])},
		},
		Warnings: warnings,
		Version:  str(doc["modified"]),
	}, nil
}

func mustBeDraft(doctype string, doc map[string]any) error {
	switch text(doc["docstatus"]) {
	case "0":
		return nil
	case "1":
		return toolerr.New(toolerr.InvalidArgument, "%s %s is already submitted (status %s); only drafts can be submitted", doctype, str(doc["name"]), str(doc["status"]))
	case "2":
		return toolerr.New(toolerr.InvalidArgument, "%s %s is cancelled; a cancelled document cannot be submitted, only amended in the ERP", doctype, str(doc["name"]))
	}
	return toolerr.New(toolerr.UpstreamInvalidResponse, "%s %s has no docstatus the connector knows (%s)", doctype, str(doc["name"]), text(doc["docstatus"]))
}

// submitDocument submits the way the ERP's form does: the document as
// read, with the approved modified, to frappe.client.submit (the form's
// Submit button sends the same document to savedocs). Frappe checks the
// modified stamp itself, so a document changed after approval is
// refused with TimestampMismatchError.
func submitDocument(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[submitArgs](call)
	if err != nil {
		return nil, err
	}
	version, err := approvedVersion(call)
	if err != nil {
		return nil, err
	}
	c := callClient(call)
	doc, err := readAsCaller(ctx, c, a.Doctype, a.Name)
	if err != nil {
		return nil, err
	}
	if str(doc["modified"]) != version {
		return nil, toolerr.New(toolerr.ApprovalExpired, "%s %s changed in the ERP after the submission was approved (modified %s, approved %s), so it was not submitted; call the tool again to see a new preview and ask for a new approval", a.Doctype, a.Name, str(doc["modified"]), version)
	}
	if err := mustBeDraft(a.Doctype, doc); err != nil {
		return nil, err
	}
	doc["doctype"] = a.Doctype
	out, err := c.sendDoc(ctx, http.MethodPost, "/api/method/frappe.client.submit", "message", map[string]any{"doc": doc})
	if err != nil {
		return nil, err
	}
	return writtenResult(c, a.Doctype, out, "docstatus", "status", "grand_total"), nil
}
