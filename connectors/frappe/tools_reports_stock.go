package frappe

import (
	"context"
	"encoding/json"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// Stock reports: Stock Balance and Stock Ledger.

type stockReportArgs struct {
	reportPageArgs
	dateArgs
	Company               string `json:"company"`
	ItemCode              string `json:"item_code"`
	Warehouse             string `json:"warehouse"`
	ItemGroup             string `json:"item_group"`
	VoucherNo             string `json:"voucher_no"`
	IncludeZeroStockItems bool   `json:"include_zero_stock_items"`
}

func stockFilterProps() []schema.Property {
	return []schema.Property{
		schema.Prop("item_code", schema.String("Only this item (exact item code).").Len(1, 140)),
		schema.Prop("warehouse", schema.String("Only this warehouse (exact name from list_warehouses; a group warehouse includes its children).").Len(1, 140)),
		schema.Prop("item_group", schema.String("Only this item group (exact name).").Len(1, 140)),
	}
}

type stockReportResult struct {
	reportResult
	// Totals are exact sums of value columns over every row; quantities
	// are not added up because items have different units.
	Totals map[string]json.Number `json:"totals"`
	// Opening is the Stock Ledger's opening row, when the ERP sends one.
	Opening map[string]any `json:"opening,omitempty"`
}

var stockBalanceValues = []string{"opening_val", "in_val", "out_val", "bal_val"}

func getStockBalanceTool() connector.Tool {
	props := []schema.Property{companyProp("The company whose stock to read.")}
	props = append(props, dateRangeProps("date")...)
	props = append(props, stockFilterProps()...)
	props = append(props,
		schema.Prop("include_zero_stock_items", schema.Boolean("Include item/warehouse rows whose balance is zero.").WithDefault(false)),
	)
	props = append(props, reportPageProps()...)
	row := schema.OpenObject(
		schema.Prop("item_code", schema.String("Item code.")),
		schema.Prop("item_name", schema.String("Item name.")),
		schema.Prop("warehouse", schema.String("Warehouse.")),
		schema.Prop("stock_uom", schema.String("Unit of the quantities.")),
		schema.Prop("opening_qty", schema.Number("Quantity at the start of the range.")),
		schema.Prop("in_qty", schema.Number("Quantity received in the range.")),
		schema.Prop("out_qty", schema.Number("Quantity issued in the range.")),
		schema.Prop("bal_qty", schema.Number("Quantity at the end of the range.")),
		schema.Prop("bal_val", money("Stock value at the end of the range, company currency.")),
		schema.Prop("val_rate", money("Valuation rate.")),
	)
	return connector.Tool{
		Name:  "get_stock_balance",
		Title: "Stock Balance",
		Description: "Run ERPNext's Stock Balance report for one company over at most 366 days: per item and warehouse, the opening, received, issued and closing quantity and value. " +
			"Values are in the company currency; quantities are in each row's stock_uom, so totals add up values only. Rows are paged with offset/next_offset; totals cover every row. " +
			"Zero-balance rows are left out unless include_zero_stock_items is true. PERMISSION_DENIED means the user has no access to stock reports.",
		Input:   schema.Object(props...),
		Output:  reportOutput(row, schema.Prop("totals", withDesc(schema.Map(money("")), "Exact sums over every row of opening_val, in_val, out_val and bal_val.")).Required()),
		Effect:  connector.Read,
		Handler: getStockBalance,
	}
}

func getStockBalance(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[stockReportArgs](call)
	if err != nil {
		return nil, err
	}
	c := callClient(call)
	company, dr, err := reportScope(ctx, call, c, a.Company, a.dateArgs, "stock values are in the company's currency")
	if err != nil {
		return nil, err
	}
	f := map[string]any{
		"company": company.Name, "from_date": dr.From, "to_date": dr.To,
		"valuation_field_type":     "Currency",
		"include_zero_stock_items": boolInt(a.IncludeZeroStockItems),
	}
	setIf(f, "item_code", listFilter(a.ItemCode))
	setIf(f, "warehouse", listFilter(a.Warehouse))
	setIf(f, "item_group", a.ItemGroup)
	d, err := c.runReport(ctx, reportStockBalance, f)
	if err != nil {
		return nil, err
	}
	out := stockReportResult{reportResult: newReportResult(reportStockBalance, company, d)}
	out.DateRange = dr
	var rows []map[string]any
	for _, r := range d.rows {
		if str(r["item_code"]) != "" {
			rows = append(rows, r)
		}
	}
	if out.Totals, err = sumColumns(rows, d.presentColumns(stockBalanceValues...)); err != nil {
		return nil, err
	}
	out.setRows(d, rows, a.reportPageArgs, call.MaxRecords)
	return out, nil
}

func getStockLedgerTool() connector.Tool {
	props := []schema.Property{companyProp("The company whose stock moves to read.")}
	props = append(props, dateRangeProps("posting date")...)
	props = append(props, stockFilterProps()...)
	props = append(props, schema.Prop("voucher_no", schema.String("Only the moves of this document (exact name).").Len(1, 140)))
	props = append(props, reportPageProps()...)
	row := schema.OpenObject(
		schema.Prop("date", schema.String("Posting date and time.")),
		schema.Prop("item_code", schema.String("Item code.")),
		schema.Prop("warehouse", schema.String("Warehouse.")),
		schema.Prop("in_qty", schema.Number("Quantity in.")),
		schema.Prop("out_qty", schema.Number("Quantity out (negative).")),
		schema.Prop("qty_after_transaction", schema.Number("Balance quantity after the move.")),
		schema.Prop("stock_value_difference", money("Change in stock value, company currency.")),
		schema.Prop("voucher_type", schema.String("Document type.")),
		schema.Prop("voucher_no", schema.String("Document name.")),
	)
	return connector.Tool{
		Name:  "get_stock_ledger",
		Title: "Stock Ledger",
		Description: "Run ERPNext's Stock Ledger report for one company over at most 366 days: every stock move (receipt, delivery, transfer) with quantities, balance after the move and value change, oldest first. " +
			"Values are in the company currency. With both item_code and warehouse the ERP adds an opening row, returned as opening. Rows are paged with offset/next_offset; totals cover every row. " +
			"PERMISSION_DENIED means the user has no access to stock reports.",
		Input: schema.Object(props...),
		Output: reportOutput(row,
			schema.Prop("totals", withDesc(schema.Map(money("")), "Exact sum over every row of stock_value_difference.")).Required(),
			schema.Prop("opening", withDesc(schema.OpenObject(), "Opening quantity and value before from_date (only with item_code and warehouse).")),
		),
		Effect:  connector.Read,
		Handler: getStockLedger,
	}
}

func getStockLedger(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[stockReportArgs](call)
	if err != nil {
		return nil, err
	}
	c := callClient(call)
	company, dr, err := reportScope(ctx, call, c, a.Company, a.dateArgs, "the Stock Ledger is kept per company")
	if err != nil {
		return nil, err
	}
	f := map[string]any{
		"company": company.Name, "from_date": dr.From, "to_date": dr.To,
		"valuation_field_type": "Currency",
	}
	setIf(f, "item_code", listFilter(a.ItemCode))
	setIf(f, "warehouse", listFilter(a.Warehouse))
	setIf(f, "item_group", a.ItemGroup)
	setIf(f, "voucher_no", a.VoucherNo)
	d, err := c.runReport(ctx, reportStockLedger, f)
	if err != nil {
		return nil, err
	}
	out := stockReportResult{reportResult: newReportResult(reportStockLedger, company, d)}
	out.DateRange = dr
	var rows []map[string]any
	for _, r := range d.rows {
		// ERPNext's opening row is _("'Opening'") in item_code, translated
		// into the user's language; it is the one row that is no stock
		// move: no voucher, no date.
		if str(r["voucher_no"]) == "" && str(r["date"]) == "" {
			out.Opening = map[string]any{}
			for _, k := range []string{"qty_after_transaction", "valuation_rate", "stock_value"} {
				if v, ok := r[k]; ok {
					out.Opening[k] = cleanCell(v)
				}
			}
			continue
		}
		rows = append(rows, r)
	}
	if out.Totals, err = sumColumns(rows, d.presentColumns("stock_value_difference")); err != nil {
		return nil, err
	}
	out.setRows(d, rows, a.reportPageArgs, call.MaxRecords)
	return out, nil
}
