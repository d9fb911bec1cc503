package frappe

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// get_stock_risk compares stock with the per-warehouse reorder levels kept
// on items (Item Reorder), the way ERPNext's reorder job does: a rule is at
// risk when the warehouse's projected quantity (Bin.projected_qty: actual
// plus ordered minus reserved ...) is at or below its reorder level. It is
// deliberately a partial check and says so: items without a reorder level,
// rules for warehouse groups and item/warehouse pairs without a Bin are
// counted and reported, never assumed safe.

const (
	stockRiskBound     = 20000
	defaultStockRisks  = 50
	maxStockRisksShown = 200
)

type stockRiskArgs struct {
	Company   string `json:"company"`
	Warehouse string `json:"warehouse"`
	ItemCode  string `json:"item_code"`
	Top       *int   `json:"top"`
}

// stockRisk is one item/warehouse at or below its reorder level.
type stockRisk struct {
	ItemCode            string      `json:"item_code"`
	Warehouse           string      `json:"warehouse"`
	StockUOM            string      `json:"stock_uom,omitempty"`
	ActualQty           json.Number `json:"actual_qty"`
	ProjectedQty        json.Number `json:"projected_qty"`
	ReorderLevel        json.Number `json:"reorder_level"`
	ReorderQty          json.Number `json:"reorder_qty"`
	Shortfall           json.Number `json:"shortfall"`
	SuggestedOrderQty   json.Number `json:"suggested_order_qty"`
	MaterialRequestType string      `json:"material_request_type,omitempty"`
	cover               *big.Rat
}

// stockCoverage says how much of the stock the check could judge.
type stockCoverage struct {
	RulesTotal        int  `json:"rules_total"`
	RulesEvaluated    int  `json:"rules_evaluated"`
	RulesWithoutBin   int  `json:"rules_without_bin"`
	GroupRulesSkipped int  `json:"group_rules_skipped"`
	RulesWithoutLevel int  `json:"rules_without_level"`
	StockRowsWithRule int  `json:"stock_rows_with_rule"`
	StockRowsWithout  int  `json:"stock_rows_without_rule"`
	BinsScanned       int  `json:"bins_scanned"`
	ReadComplete      bool `json:"read_complete"`
}

type stockRiskResult struct {
	Company    string        `json:"company"`
	Assessment string        `json:"assessment"`
	RiskCount  int           `json:"risk_count"`
	Risks      []stockRisk   `json:"risks"`
	Coverage   stockCoverage `json:"coverage"`
	Warnings   []string      `json:"warnings"`
	// readBound is how many rows each of the check's reads took at most
	// (walkBound): fewer than stockRiskBound on a site with a low row cap.
	readBound int
}

func getStockRiskTool() connector.Tool {
	risk := schema.Object(
		schema.Prop("item_code", schema.String("Item code.")).Required(),
		schema.Prop("warehouse", schema.String("Warehouse.")).Required(),
		schema.Prop("stock_uom", schema.String("Unit of the quantities.")),
		schema.Prop("actual_qty", schema.Number("Quantity on hand.")).Required(),
		schema.Prop("projected_qty", schema.Number("Projected quantity (on hand plus ordered, minus reserved), which the rule compares.")).Required(),
		schema.Prop("reorder_level", schema.Number("Reorder level of the rule.")).Required(),
		schema.Prop("reorder_qty", schema.Number("Reorder quantity of the rule.")).Required(),
		schema.Prop("shortfall", schema.Number("reorder_level minus projected_qty (0 when exactly at the level).")).Required(),
		schema.Prop("suggested_order_qty", schema.Number("What ERPNext's reorder job would request: the larger of reorder_qty and the shortfall.")).Required(),
		schema.Prop("material_request_type", schema.String("Purchase, Transfer, Material Issue or Manufacture.")),
	)
	return connector.Tool{
		Name:  "get_stock_risk",
		Title: "Stock risk",
		Description: "Check one company's stock against the per-warehouse reorder levels set on items: lists item/warehouse pairs whose projected quantity is at or below the reorder level, with the shortfall and the quantity ERPNext would reorder. " +
			"This is a partial check: only pairs with a reorder level and an existing stock record (Bin) are judged; coverage counts what was not judged (no level set, warehouse-group rules, no Bin). " +
			"risk_count 0 is NOT evidence that all stock is safe, and there are no demand or lead-time forecasts. Quantities are in each item's stock unit.",
		Input: schema.Object(
			companyProp("The company whose warehouses to check."),
			schema.Prop("warehouse", schema.String("Only this warehouse (exact name).").Len(1, 140)),
			schema.Prop("item_code", schema.String("Only this item (exact item code).").Len(1, 140)),
			schema.Prop("top", schema.Integer("How many risks to list, lowest cover first.").Min(1).Max(maxStockRisksShown).WithDefault(defaultStockRisks)),
		),
		Output: schema.Object(
			schema.Prop("company", schema.String("Company.")).Required(),
			schema.Prop("assessment", schema.String("Always partial: see coverage and warnings.").OneOf("partial")).Required(),
			schema.Prop("risk_count", schema.Integer("Pairs at or below their reorder level among those judged.")).Required(),
			schema.Prop("risks", schema.Array(risk, "The riskiest pairs first (lowest projected quantity relative to the level).")).Required(),
			schema.Prop("coverage", schema.Object(
				schema.Prop("rules_total", schema.Integer("Reorder rules found for this company's warehouses.")).Required(),
				schema.Prop("rules_evaluated", schema.Integer("Rules judged against stock.")).Required(),
				schema.Prop("rules_without_bin", schema.Integer("Rules whose item has no stock record in the warehouse; not judged.")).Required(),
				schema.Prop("group_rules_skipped", schema.Integer("Rules set on a warehouse group; not judged.")).Required(),
				schema.Prop("rules_without_level", schema.Integer("Rules with neither a level nor a quantity; not judged.")).Required(),
				schema.Prop("stock_rows_with_rule", schema.Integer("Stock records (item in a warehouse) that have a rule.")).Required(),
				schema.Prop("stock_rows_without_rule", schema.Integer("Stock records without any reorder rule; never judged.")).Required(),
				schema.Prop("bins_scanned", schema.Integer("Stock records read.")).Required(),
				schema.Prop("read_complete", schema.Boolean("False when a bound stopped erpgate reading every rule or stock record.")).Required(),
			)).Required(),
			warningsProp().Required(),
		),
		Effect:  connector.Read,
		Handler: getStockRisk,
	}
}

func getStockRisk(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[stockRiskArgs](call)
	if err != nil {
		return nil, err
	}
	top := defaultStockRisks
	if a.Top != nil {
		top = *a.Top
	}
	c := callClient(call)
	name, err := requireCompany(call, a.Company, "warehouses belong to a company")
	if err != nil {
		return nil, err
	}
	company, err := c.company(ctx, name)
	if err != nil {
		return nil, err
	}
	out := stockRiskResult{Company: company.Name, Assessment: "partial", Risks: []stockRisk{}, Warnings: []string{}}
	out.Coverage.ReadComplete = true
	pageSize := min(walkPageSize, max(call.MaxRecords, 1))
	out.readBound = walkBound(pageSize, stockRiskBound)

	// The company's warehouses.
	wq := listQuery{Fields: []string{"name", "is_group"}, OrderBy: "name asc"}
	wq.Filters.add("company", "=", company.Name)
	if a.Warehouse != "" {
		wq.Filters.add("name", "=", a.Warehouse)
	}
	whRows, truncated, err := walkRows(ctx, c, "Warehouse", wq, nil, pageSize, stockRiskBound)
	if err != nil {
		return nil, err
	}
	out.Coverage.ReadComplete = out.Coverage.ReadComplete && !truncated
	warehouses := map[string]bool{}
	for _, w := range whRows {
		warehouses[str(w["name"])] = true
	}
	if a.Warehouse != "" && len(warehouses) == 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("Warehouse %q is not a warehouse of %s that this user can see; nothing was checked.", a.Warehouse, company.Name))
		return out, nil
	}

	// Disabled items are left out, as ERPNext's reorder job does.
	dq := listQuery{Fields: []string{"name"}, OrderBy: "name asc"}
	dq.Filters.add("disabled", "=", 1)
	disabledRows, truncated, err := walkRows(ctx, c, "Item", dq, nil, pageSize, stockRiskBound)
	if err != nil {
		return nil, err
	}
	out.Coverage.ReadComplete = out.Coverage.ReadComplete && !truncated
	disabled := map[string]bool{}
	for _, r := range disabledRows {
		disabled[str(r["name"])] = true
	}

	// Reorder rules (child rows of Item, read through their parent).
	rq := listQuery{Fields: []string{"name", "parent", "warehouse", "warehouse_group", "warehouse_reorder_level", "warehouse_reorder_qty", "material_request_type"}, OrderBy: "parent asc, name asc"}
	if a.ItemCode != "" {
		rq.Filters.add("parent", "=", a.ItemCode)
	}
	rules, truncated, err := walkChildRows(ctx, c, "Item Reorder", "Item", rq, pageSize, stockRiskBound)
	if err != nil {
		return nil, err
	}
	out.Coverage.ReadComplete = out.Coverage.ReadComplete && !truncated

	// Stock records.
	bq := listQuery{Fields: []string{"name", "item_code", "warehouse", "actual_qty", "projected_qty", "stock_uom"}, OrderBy: "name asc"}
	if a.ItemCode != "" {
		bq.Filters.add("item_code", "=", a.ItemCode)
	}
	if a.Warehouse != "" {
		bq.Filters.add("warehouse", "=", a.Warehouse)
	}
	bins, truncated, err := walkRows(ctx, c, "Bin", bq, nil, pageSize, stockRiskBound)
	if err != nil {
		return nil, err
	}
	out.Coverage.ReadComplete = out.Coverage.ReadComplete && !truncated
	type pair struct{ item, warehouse string }
	binOf := map[pair]map[string]any{}
	for _, b := range bins {
		if !warehouses[str(b["warehouse"])] {
			continue
		}
		out.Coverage.BinsScanned++
		binOf[pair{str(b["item_code"]), str(b["warehouse"])}] = b
	}

	ruled := map[pair]bool{}
	for _, r := range rules {
		item := str(r["parent"])
		wh, group := str(r["warehouse"]), str(r["warehouse_group"])
		if disabled[item] || !warehouses[wh] && !warehouses[group] {
			continue
		}
		out.Coverage.RulesTotal++
		if group != "" {
			out.Coverage.GroupRulesSkipped++
			continue
		}
		level, ok1 := decimalText(r["warehouse_reorder_level"])
		qty, ok2 := decimalText(r["warehouse_reorder_qty"])
		if !ok1 || !ok2 {
			return nil, invalidResponse("a reorder rule of %s has a level or quantity that is not a number", item)
		}
		if level.Sign() == 0 && qty.Sign() == 0 {
			out.Coverage.RulesWithoutLevel++
			continue
		}
		p := pair{item, wh}
		ruled[p] = true
		bin := binOf[p]
		if bin == nil {
			out.Coverage.RulesWithoutBin++
			continue
		}
		out.Coverage.RulesEvaluated++
		projected, ok := decimalText(bin["projected_qty"])
		actual, ok3 := decimalText(bin["actual_qty"])
		if !ok || !ok3 {
			return nil, invalidResponse("the stock record of %s in %s has a quantity that is not a number", item, wh)
		}
		if projected.Cmp(level) > 0 {
			continue
		}
		shortfall := new(big.Rat).Sub(level, projected)
		suggested := new(big.Rat).Set(qty)
		if shortfall.Cmp(suggested) > 0 {
			suggested.Set(shortfall)
		}
		cover := new(big.Rat)
		if level.Sign() > 0 {
			cover.Quo(projected, level)
		} else {
			cover.Set(projected)
		}
		out.Risks = append(out.Risks, stockRisk{
			ItemCode: item, Warehouse: wh, StockUOM: str(bin["stock_uom"]),
			ActualQty: decimalNumber(actual), ProjectedQty: decimalNumber(projected),
			ReorderLevel: decimalNumber(level), ReorderQty: decimalNumber(qty),
			Shortfall: decimalNumber(shortfall), SuggestedOrderQty: decimalNumber(suggested),
			MaterialRequestType: str(r["material_request_type"]), cover: cover,
		})
	}
	for p := range binOf {
		if ruled[p] {
			out.Coverage.StockRowsWithRule++
		} else if !disabled[p.item] {
			out.Coverage.StockRowsWithout++
		}
	}
	sort.SliceStable(out.Risks, func(i, j int) bool {
		if c := out.Risks[i].cover.Cmp(out.Risks[j].cover); c != 0 {
			return c < 0
		}
		if out.Risks[i].ItemCode != out.Risks[j].ItemCode {
			return out.Risks[i].ItemCode < out.Risks[j].ItemCode
		}
		return out.Risks[i].Warehouse < out.Risks[j].Warehouse
	})
	out.RiskCount = len(out.Risks)
	if len(out.Risks) > top {
		out.Warnings = append(out.Warnings, fmt.Sprintf("risks lists %d of %d pairs at risk.", top, len(out.Risks)))
		out.Risks = out.Risks[:top]
	}
	out.Warnings = append(out.Warnings, stockRiskWarnings(out)...)
	return out, nil
}

// stockRiskWarnings says what the check did not cover. A zero risk count
// always gets the sentence that it is not evidence of safety.
func stockRiskWarnings(r stockRiskResult) []string {
	cv := r.Coverage
	var w []string
	if r.RiskCount == 0 {
		w = append(w, fmt.Sprintf("No pair is at or below its reorder level among the %d judged. This is not evidence that all stock is safe: only pairs with a reorder level and a stock record were checked.", cv.RulesEvaluated))
	}
	if cv.StockRowsWithout > 0 {
		w = append(w, fmt.Sprintf("%d stock records have no reorder level and were not judged.", cv.StockRowsWithout))
	}
	if cv.RulesWithoutBin > 0 {
		w = append(w, fmt.Sprintf("%d reorder rules have no stock record in their warehouse (nothing received or ordered there yet) and were not judged.", cv.RulesWithoutBin))
	}
	if cv.GroupRulesSkipped > 0 {
		w = append(w, fmt.Sprintf("%d reorder rules are set on warehouse groups, which this check does not evaluate.", cv.GroupRulesSkipped))
	}
	if cv.RulesWithoutLevel > 0 {
		w = append(w, fmt.Sprintf("%d reorder rules have neither a level nor a quantity and were not judged.", cv.RulesWithoutLevel))
	}
	if !cv.ReadComplete {
		w = append(w, fmt.Sprintf("More than %d rules or stock records exist; only the first %d were read, so the check is incomplete.", r.readBound, r.readBound))
	}
	return w
}
