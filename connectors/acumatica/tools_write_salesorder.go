package acumatica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// acumatica_create_sales_order enters a sales order on hold: PUT
// SalesOrder without OrderNbr inserts one and Acumatica numbers it. Hold
// is sent as true, so the order waits for a person to release it in
// Acumatica, whatever the order type's "Hold Document on Entry" says.

type salesOrderLine struct {
	InventoryID string       `json:"InventoryID"`
	OrderQty    json.Number  `json:"OrderQty"`
	UnitPrice   *json.Number `json:"UnitPrice"`
}

type createSalesOrderArgs struct {
	OrderType   string           `json:"OrderType"`
	CustomerID  string           `json:"CustomerID"`
	Date        string           `json:"Date"`
	Description string           `json:"Description"`
	Details     []salesOrderLine `json:"Details"`
}

// salesOrderArgs decodes and checks the arguments beyond the schema.
func salesOrderArgs(call *connector.Call) (createSalesOrderArgs, error) {
	a, err := args[createSalesOrderArgs](call)
	if err != nil {
		return a, err
	}
	if a.OrderType == "" {
		a.OrderType = "SO"
	}
	a.CustomerID = strings.TrimSpace(a.CustomerID)
	if a.CustomerID == "" {
		return a, toolerr.New(toolerr.InvalidArgument, "CustomerID must not be empty")
	}
	for i, l := range a.Details {
		a.Details[i].InventoryID = strings.TrimSpace(l.InventoryID)
		q, ok := decimal(l.OrderQty)
		if !ok || q.Sign() <= 0 {
			return a, toolerr.New(toolerr.InvalidArgument, "Details line %d: OrderQty must be a number above 0", i+1)
		}
		if l.UnitPrice != nil {
			if p, ok := decimal(*l.UnitPrice); !ok || p.Sign() < 0 {
				return a, toolerr.New(toolerr.InvalidArgument, "Details line %d: UnitPrice must be a number of 0 or more", i+1)
			}
		}
	}
	return a, nil
}

func createSalesOrderTool(conn *Connector) connector.Tool {
	line := schema.Object(
		schema.Prop("InventoryID", schema.String("The stock item's inventory id, as Acumatica shows it.").Len(1, 30)).Required(),
		schema.Prop("OrderQty", schema.Number("Quantity in the item's sales unit, above 0.").Min(0).Max(1e9)).Required(),
		schema.Prop("UnitPrice", schema.Number("Unit price in the customer's currency; leave out to let Acumatica price the line from its price lists.").Min(0).Max(1e12)),
	)
	return connector.Tool{
		Name:  "acumatica_create_sales_order",
		Title: "Create an Acumatica sales order (on hold)",
		Description: "Enter a sales order in Acumatica as the signed-in user, on hold: the customer, lines of stock items with quantities and optional unit prices, an optional date and description. " +
			"Acumatica numbers the order; it stays On Hold until someone releases it in Acumatica, so nothing is shipped or invoiced by this call. " +
			"Returns OrderType, OrderNbr, Status, Hold, OrderTotal and CustomerID as Acumatica saved them. " +
			"A customer or item that does not exist is NOT_FOUND; a user whose Acumatica roles may not enter sales orders gets PERMISSION_DENIED." + approvalHint,
		Input: schema.Object(
			schema.Prop("OrderType", schema.String("The order type's two-character code; default SO.").Match(`^[A-Z0-9]{2}$`).WithDefault("SO")),
			schema.Prop("CustomerID", schema.String("The customer id, e.g. C000001; acumatica_list_customers finds it.").Len(1, 30)).Required(),
			schema.Prop("Date", schema.Date("The order date, YYYY-MM-DD; default Acumatica's business date (today).")),
			schema.Prop("Description", schema.String("The order's description.").Len(1, 256)),
			schema.Prop("Details", schema.Array(line, "The order lines, in order.").Count(1, 100)).Required(),
		),
		Output: schema.Object(
			schema.Prop("id", schema.String("Acumatica's id of the new order (its NoteID).")).Required(),
			schema.Prop("OrderType", schema.String("The order type.")).Required(),
			schema.Prop("OrderNbr", schema.String("The number Acumatica gave the order; acumatica_get_sales_order reads it with OrderType.")).Required(),
			schema.Prop("Status", schema.String("The order's status: On Hold.")).Required(),
			schema.Prop("Hold", schema.Boolean("Whether the order is on hold: true.")).Required(),
			schema.Prop("OrderTotal", schema.Number("The order total Acumatica computed, taxes included.").Nullable()).Required(),
			schema.Prop("CurrencyID", schema.String("The order's currency.").Nullable()),
			schema.Prop("CustomerID", schema.String("The customer.")).Required(),
			schema.Prop("Date", schema.String("The order date.").Nullable()),
			schema.Prop("Description", schema.String("The description.").Nullable()),
			schema.Prop("Details", schema.Array(schema.OpenObject(
				schema.Prop("LineNbr", schema.Integer("The line number.").Nullable()),
				schema.Prop("InventoryID", schema.String("The item.").Nullable()),
				schema.Prop("OrderQty", schema.Number("The quantity.").Nullable()),
				schema.Prop("UnitPrice", schema.Number("The unit price Acumatica used.").Nullable()),
				schema.Prop("Amount", schema.Number("The line amount.").Nullable()),
			), "The saved lines.")).Required(),
			endpointProp(),
		),
		Effect: connector.Write,
		Preview: func(ctx context.Context, call *connector.Call) (*connector.Preview, error) {
			a, err := salesOrderArgs(call)
			if err != nil {
				return nil, err
			}
			return previewSalesOrder(ctx, newClient(conn, call), a)
		},
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := salesOrderArgs(call)
			if err != nil {
				return nil, err
			}
			currency, _ := call.ApprovedField(currencyField)
			c := newClient(conn, call)
			return c.unlessPut(createSalesOrder(ctx, c, a, call.ApprovedColumn(linesTitle, unitColumn, len(a.Details)), currency.After))
		},
	}
}

// previewSalesOrder reads the customer and every item as the caller.
func previewSalesOrder(ctx context.Context, c *client, a createSalesOrderArgs) (*connector.Preview, error) {
	cust, err := c.getRecord(ctx, contractOp{entity: "Customer", keyNames: []string{"CustomerID"}, keys: []string{a.CustomerID},
		sel: "CustomerID,CustomerName,Status,CurrencyID"})
	if err != nil {
		return nil, err
	}
	currency := fieldText(cust, "CurrencyID")
	items, err := readStockItems(ctx, c, a.Details)
	if err != nil {
		return nil, err
	}
	decimals, decimalsWarning := currencyPlaces(ctx, c, currency)
	// An item's default price is in the base currency: a line priced
	// from it is an estimate in the order's currency only when the order
	// is in the base currency. In another, Acumatica converts the price at
	// the order's rate, which the Default endpoint does not give, so the
	// line's estimate is shown in the base currency and left out of the
	// order's total.
	var base, baseWarning string
	basePlaces := decimals
	foreignLines := 0
	if currency != "" && slices.ContainsFunc(a.Details, func(l salesOrderLine) bool { return l.UnitPrice == nil }) {
		base, baseWarning = baseCurrency(ctx, c)
		if base != "" && base != currency {
			basePlaces, _ = currencyPlaces(ctx, c, base)
		} else if base == "" {
			basePlaces = defaultPlaces
		}
	}
	total := new(big.Rat)
	priced := true
	table := connector.PreviewTable{Title: linesTitle, Columns: []string{"Inventory ID", "Description", "Quantity", unitColumn, "Unit price", "Amount"}}
	for _, l := range a.Details {
		item := items[itemKey(l.InventoryID)]
		qty, _ := decimal(l.OrderQty)
		priceText, amountText := "", ""
		// Acumatica rounds each line's amount to the currency's places and
		// adds the rounded amounts up: the total is the sum of the
		// amounts shown.
		if l.UnitPrice != nil {
			price, _ := decimal(*l.UnitPrice)
			amount := lineAmount(qty, price, decimals)
			total.Add(total, amount)
			priceText, amountText = l.UnitPrice.String(), money(amount, decimals)
		} else if base == currency || currency == "" {
			priced = false
			priceText = "from Acumatica's price list (item default " + orDash(fieldText(item, "DefaultPrice")) + ")"
			if p, ok := connector.ExactNumber(fieldText(item, "DefaultPrice")); ok {
				amount := lineAmount(qty, p, decimals)
				total.Add(total, amount)
				amountText = "about " + money(amount, decimals)
			}
		} else {
			foreignLines++
			in := " " + base
			if base == "" {
				in = " in the base currency"
			}
			priceText = "from Acumatica's price list (item default " + orDash(fieldText(item, "DefaultPrice")) + in + ")"
			if p, ok := connector.ExactNumber(fieldText(item, "DefaultPrice")); ok {
				amountText = "about " + money(lineAmount(qty, p, basePlaces), basePlaces) + in
			}
		}
		table.Rows = append(table.Rows, []string{fieldText(item, "InventoryID"), fieldText(item, "Description"), l.OrderQty.String(), fieldText(item, "SalesUOM"), priceText, amountText})
	}
	date := a.Date
	if date == "" {
		date = "Acumatica's business date (today)"
	}
	fields := []connector.PreviewField{
		{Name: "OrderType", Label: "Order type", After: a.OrderType},
		{Name: "CustomerID", Label: "Customer", After: fieldText(cust, "CustomerID") + " (" + fieldText(cust, "CustomerName") + ")"},
		{Name: "Date", Label: "Date", After: date},
	}
	if currency != "" {
		// The currency the amounts are in: a new order takes the
		// customer's, which may change before the approved call runs.
		fields = append(fields, connector.PreviewField{Name: currencyField, Label: "Currency", After: currency})
	}
	if a.Description != "" {
		fields = append(fields, connector.PreviewField{Name: "Description", Label: "Description", After: a.Description})
	}
	fields = append(fields, connector.PreviewField{Name: "Hold", Label: "Hold", After: "true (the order is created On Hold)"})
	about := ""
	if !priced {
		about = "about "
	}
	without := ""
	if foreignLines > 0 {
		without = fmt.Sprintf(", without the %d %s Acumatica prices in %s when it saves the order", foreignLines, plural(foreignLines, "line", "lines"), currency)
	}
	p := &connector.Preview{
		Operation: "create",
		DocType:   "Sales Order",
		Summary: fmt.Sprintf("Create a sales order of type %s, on hold, for %s (%s): %d %s, %s%s %s before taxes and discounts%s.",
			a.OrderType, fieldText(cust, "CustomerName"), fieldText(cust, "CustomerID"), len(a.Details), plural(len(a.Details), "line", "lines"),
			about, money(total, decimals), currency, without),
		Fields:   fields,
		Tables:   []connector.PreviewTable{table},
		Warnings: []string{"Acumatica numbers the order when it is saved. It stays On Hold until someone releases it in Acumatica."},
	}
	if decimalsWarning != "" {
		p.Warnings = append(p.Warnings, decimalsWarning)
	}
	if !priced {
		p.Warnings = append(p.Warnings, "Lines without a unit price are priced by Acumatica's price lists when saved; the amounts shown use the items' default prices and may differ.")
	}
	if foreignLines > 0 {
		in := "the base currency, " + base
		if base == "" {
			in = "the company's base currency"
		}
		w := fmt.Sprintf("The items' default prices are in %s, and the order is in %s: Acumatica prices the lines without a unit price in %s when it saves the order, from its price lists or the default price at the order's exchange rate. Their amounts are shown in %s and are not in the order's total.", in, currency, currency, in)
		if baseWarning != "" {
			w = baseWarning + " " + w
		}
		p.Warnings = append(p.Warnings, w)
	}
	for i, l := range a.Details {
		for _, v := range []struct {
			name string
			n    *json.Number
		}{{"OrderQty", &l.OrderQty}, {"UnitPrice", l.UnitPrice}} {
			if v.n != nil && places(*v.n) > savedPlaces {
				p.Warnings = append(p.Warnings, fmt.Sprintf("Line %d's %s %s has more than six decimal places: Acumatica saves it rounded, and then the order is made but the call fails and names the difference.", i+1, v.name, v.n.String()))
			}
		}
	}
	if st := fieldText(cust, "Status"); st != "" && st != "Active" {
		p.Warnings = append(p.Warnings, fmt.Sprintf("The customer's status in Acumatica is %s.", st))
	}
	for _, item := range items {
		if st := fieldText(item, "ItemStatus"); st != "" && st != "Active" {
			p.Warnings = append(p.Warnings, fmt.Sprintf("The item %s has status %s in Acumatica.", fieldText(item, "InventoryID"), st))
		}
	}
	return p, nil
}

// itemBatch is how many inventory ids one list request asks for.
const itemBatch = 20

// itemKey matches inventory ids as Acumatica's SQL does: case- and
// trailing-space-insensitive.
func itemKey(id string) string { return strings.ToUpper(strings.TrimRight(id, " ")) }

// readStockItems reads the lines' stock items, itemBatch per list request
// instead of one request each; an id the lists do not return is read by
// key, so that a missing item is NOT_FOUND in Acumatica's words.
func readStockItems(ctx context.Context, c *client, lines []salesOrderLine) (map[string]map[string]any, error) {
	const fields = "InventoryID,Description,DefaultPrice,ItemStatus,SalesUOM"
	var ids []string
	seen := map[string]bool{}
	for _, l := range lines {
		if k := itemKey(l.InventoryID); !seen[k] {
			seen[k] = true
			ids = append(ids, l.InventoryID)
		}
	}
	items := map[string]map[string]any{}
	for start := 0; start < len(ids); start += itemBatch {
		batch := ids[start:min(start+itemBatch, len(ids))]
		conds := make([]string, len(batch))
		for i, id := range batch {
			conds[i] = "InventoryID eq " + odataV3Literal(keyText, id)
		}
		rows, err := c.listRecords(ctx, contractOp{entity: "StockItem", filter: strings.Join(conds, " or "), sel: fields}, len(batch)+1)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			items[itemKey(fieldText(r, "InventoryID"))] = r
		}
	}
	for _, id := range ids {
		if items[itemKey(id)] != nil {
			continue
		}
		item, err := c.getRecord(ctx, contractOp{entity: "StockItem", keyNames: []string{"InventoryID"}, keys: []string{id}, sel: fields})
		if err != nil {
			return nil, err
		}
		items[itemKey(id)] = item
	}
	return items, nil
}

// linesTitle and unitColumn name the preview's table of lines and its
// column of units; currencyField the preview's field of the order's
// currency.
const (
	linesTitle    = "Lines"
	unitColumn    = "Unit"
	currencyField = "CurrencyID"
)

// createSalesOrder inserts the order, each line in the unit the person
// approved its quantity in (units; a line without UOM would take the
// item's sales unit now). If-None-Match: * makes the PUT an insert only:
// it can never update an existing order.
//
// A new order takes the customer's currency: when currency, the one the
// person approved the amounts in, is no longer the customer's, nothing
// is written (APPROVAL_EXPIRED); an order saved in another all the same
// (the customer changed between that read and the PUT) is told as made,
// not as approved.
func createSalesOrder(ctx context.Context, c *client, a createSalesOrderArgs, units []string, currency string) (any, error) {
	if currency != "" {
		cust, err := c.getRecord(ctx, contractOp{entity: "Customer", keyNames: []string{"CustomerID"}, keys: []string{a.CustomerID},
			sel: "CustomerID,CurrencyID"})
		if err != nil {
			return nil, err
		}
		if now := fieldText(cust, "CurrencyID"); now != currency {
			return nil, toolerr.New(toolerr.ApprovalExpired,
				"the customer %s's currency changed in Acumatica after the order was approved (%s now, approved in %s), and a new order takes it; nothing was written. Call the tool again to propose the order afresh",
				a.CustomerID, orDash(now), currency)
		}
	}
	body := map[string]any{"OrderType": wrap(a.OrderType), "CustomerID": wrap(a.CustomerID), "Hold": wrap(true)}
	if a.Date != "" {
		body["Date"] = wrap(a.Date)
	}
	if a.Description != "" {
		body["Description"] = wrap(a.Description)
	}
	lines := make([]map[string]any, len(a.Details))
	for i, l := range a.Details {
		line := map[string]any{"InventoryID": wrap(l.InventoryID), "OrderQty": wrap(l.OrderQty)}
		if units[i] != "" {
			line["UOM"] = wrap(units[i])
		}
		if l.UnitPrice != nil {
			line["UnitPrice"] = wrap(*l.UnitPrice)
		}
		lines[i] = line
	}
	body["Details"] = lines
	rec, err := c.put(ctx, contractOp{entity: "SalesOrder", expand: "Details"}, body, putHeaders(true, false))
	if err != nil {
		return nil, err
	}
	plain := unwrapRecord(rec)
	if diffs, people := salesOrderDiffers(a, units, currency, plain); len(diffs) > 0 {
		return nil, toolerr.Wrap(toolerr.InvalidArgument, connector.ErrNotAsApproved,
			"Acumatica created sales order %s %s, on hold, but not as approved: %s. It is on hold: check it in Acumatica, and correct or delete it",
			valueText(plain["OrderType"]), valueText(plain["OrderNbr"]), strings.Join(diffs, "; ")).
			SaidByERP("sales order " + valueText(plain["OrderNbr"]) + ", on hold, with " + strings.Join(people, "; "))
	}
	out := pick(plain, "id", "OrderType", "OrderNbr", "Status", "Hold", "OrderTotal", "CurrencyID", "CustomerID", "Date", "Description")
	details := []any{}
	if ls, ok := plain["Details"].([]any); ok {
		for _, l := range ls {
			if m, ok := l.(map[string]any); ok {
				details = append(details, pick(m, "LineNbr", "InventoryID", "OrderQty", "UnitPrice", "Amount"))
			}
		}
	}
	out["Details"] = details
	out["endpoint"] = c.set.endpoint()
	if _, ok := out["OrderNbr"].(string); !ok {
		return nil, invalidResponse("Acumatica saved the sales order but its answer has no OrderNbr")
	}
	return out, nil
}

// savedPlaces is the scale of Acumatica's quantity and unit price
// columns (api-facts.md §2.2): a value with more places is saved rounded.
// The site's decimal places settings may round to fewer.
const savedPlaces = 6

// places is how many decimal places n has (31 for more than 30).
func places(n json.Number) int {
	r, ok := decimal(n)
	if !ok {
		return 0
	}
	ten := big.NewRat(10, 1)
	for p := 0; p <= 30; p++ {
		if r.IsInt() {
			return p
		}
		r.Mul(r, ten)
	}
	return 31
}

// lineAmount is qty × price rounded half away from zero to places, the
// decimal places of the order's currency, as Acumatica computes a line's
// amount.
func lineAmount(qty, price *big.Rat, places int) *big.Rat {
	r, _ := new(big.Rat).SetString(new(big.Rat).Mul(qty, price).FloatString(places))
	return r
}

// baseCurrency is the company's base currency, the one its items'
// default prices and costs are in: the currency of its actual ledger
// (Ledgers, GL201500; Ledger.Currency is the ledger's BaseCuryID), read
// as the caller. It is "" when it cannot be told: the ledgers cannot be
// read, or a tenant's companies have actual ledgers in different base
// currencies; the second result then says why, for the approval page.
func baseCurrency(ctx context.Context, c *client) (string, string) {
	rows, err := c.listRecords(ctx, contractOp{entity: "Ledger", filter: "Type eq 'Actual'", sel: "LedgerID,Type,Currency"}, 50)
	if err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) && te.Code == toolerr.PermissionDenied {
			return "", "erpgate could not read the company's base currency: Acumatica did not let you open the Ledgers form."
		}
		return "", "erpgate could not read the company's base currency from Acumatica."
	}
	base := ""
	for _, r := range rows {
		switch cur := fieldText(r, "Currency"); {
		case cur == "":
		case base == "":
			base = cur
		case cur != base:
			return "", "erpgate could not read the company's base currency: the companies in Acumatica have more than one."
		}
	}
	if base == "" {
		return "", "erpgate could not read the company's base currency: Acumatica has no actual ledger you may see."
	}
	return base, ""
}

// defaultPlaces are the decimal places of most currencies, the preview's
// when it cannot read the currency's own.
const defaultPlaces = 2

// currencyPlaces is how many decimal places Acumatica keeps of an amount
// in currency: the Currency's Decimal Precision (Currencies, CM202000;
// JPY has 0, KWD 3), read as the caller. When it cannot be read it is
// defaultPlaces, with a warning for the approval page saying so.
func currencyPlaces(ctx context.Context, c *client, currency string) (int, string) {
	if currency == "" {
		return defaultPlaces, ""
	}
	rec, err := c.getRecord(ctx, contractOp{entity: "Currency", keyNames: []string{"CurrencyID"}, keys: []string{currency},
		sel: "CurrencyID,DecimalPrecision"})
	if err == nil {
		if n, err := strconv.Atoi(fieldText(rec, "DecimalPrecision")); err == nil && n >= 0 && n <= 8 {
			return n, ""
		}
	}
	why := "erpgate could not read the decimal places of " + currency + " from Acumatica"
	var te *toolerr.Error
	if errors.As(err, &te) && te.Code == toolerr.PermissionDenied {
		why = "Acumatica did not let you read the decimal places of " + currency + " (the Currencies form)"
	}
	return defaultPlaces, why + ", so the amounts are shown to two places: Acumatica rounds them to the currency's own places, which may be fewer or more."
}

// salesOrderDiffers lists the order's currency when it is not the
// approved one, and the lines whose saved unit, quantity or unit price is
// not the approved one (Acumatica rounds them to its decimal places), in
// the values Acumatica answered with.
//
// diffs are for the model, by the API's field names; people the same for
// the approval page ("line 2's quantity 1.234568 where you approved
// 1.23456789").
func salesOrderDiffers(a createSalesOrderArgs, units []string, currency string, plain map[string]any) (diffs, people []string) {
	if got := valueText(plain["CurrencyID"]); currency != "" && got != "" && got != currency {
		// An answer without the field says nothing of it.
		diffs = append(diffs, fmt.Sprintf("CurrencyID %s, approved %s", got, currency))
		people = append(people, fmt.Sprintf("the currency %s where you approved %s", got, currency))
	}
	lines, _ := plain["Details"].([]any)
	for i, l := range a.Details {
		var saved map[string]any
		if i < len(lines) {
			saved, _ = lines[i].(map[string]any)
		}
		if got := valueText(saved["UOM"]); units[i] != "" && got != "" && !strings.EqualFold(got, units[i]) {
			diffs = append(diffs, fmt.Sprintf("line %d UOM %s, approved %s", i+1, got, units[i]))
			people = append(people, fmt.Sprintf("line %d's unit %s where you approved %s", i+1, got, units[i]))
		}
		for _, v := range []struct {
			name, label string
			n           *json.Number
		}{{"OrderQty", "quantity", &l.OrderQty}, {"UnitPrice", "unit price", l.UnitPrice}} {
			if v.n != nil && !sameValue(*v.n, saved[v.name]) {
				got := orDash(valueText(saved[v.name]))
				diffs = append(diffs, fmt.Sprintf("line %d %s %s, approved %s", i+1, v.name, got, v.n.String()))
				people = append(people, fmt.Sprintf("line %d's %s %s where you approved %s", i+1, v.label, got, v.n.String()))
			}
		}
	}
	return diffs, people
}

// pick copies the named members of an unwrapped record (null when
// absent).
func pick(rec map[string]any, names ...string) map[string]any {
	out := make(map[string]any, len(names))
	for _, n := range names {
		out[n] = rec[n]
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
