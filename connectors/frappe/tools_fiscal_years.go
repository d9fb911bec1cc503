package frappe

import (
	"context"
	"encoding/json"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

type listFiscalYearsArgs struct {
	pageArgs
	Company         string `json:"company"`
	IncludeDisabled bool   `json:"include_disabled"`
	Summary         string `json:"summary"`
}

func listFiscalYearsTool() connector.Tool {
	props := []schema.Property{
		schema.Prop("company", schema.String("Only fiscal years linked to this company (exact name). Years linked to no company apply to every company and are listed only without this filter.").Len(1, 140)),
		schema.Prop("include_disabled", schema.Boolean("Include disabled fiscal years.").WithDefault(false)),
		summaryProp(false, ""),
	}
	props = append(props, pageProps()...)
	row := schema.OpenObject(
		schema.Prop("name", schema.String("Fiscal year id, e.g. 2025 or 2025-2026; the fiscal_year of get_trial_balance.")),
		schema.Prop("year_start_date", schema.String("First day.")),
		schema.Prop("year_end_date", schema.String("Last day.")),
		schema.Prop("disabled", schema.Integer("1 when disabled.")),
		schema.Prop("is_short_year", schema.Integer("1 for a short year.")),
		schema.Prop("companies", schema.Array(schema.String(""), "Companies the year is linked to; empty means it applies to every company.")),
	)
	return connector.Tool{
		Name:  "list_fiscal_years",
		Title: "Fiscal years",
		Description: "List the enabled fiscal years, newest first, with the companies each applies to. " +
			"Use a year's name as fiscal_year of get_trial_balance; period current_fiscal_year resolves the same way, per company.",
		Input:   schema.Object(props...),
		Output:  dirResultSchema(row, dirSpec{}),
		Effect:  connector.Read,
		Handler: listFiscalYears,
	}
}

func listFiscalYears(ctx context.Context, call *connector.Call) (any, error) {
	a, err := args[listFiscalYearsArgs](call)
	if err != nil {
		return nil, err
	}
	c := callClient(call)
	var f filters
	if !a.IncludeDisabled {
		f.add("disabled", "=", 0)
	}
	if a.Company != "" {
		info, err := c.company(ctx, a.Company)
		if err != nil {
			return nil, err
		}
		f.addChild("Fiscal Year Company", "company", "=", info.Name)
	}
	if a.Summary == summaryCount {
		n, err := countMatches(ctx, c, "Fiscal Year", f, nil, call.MaxRecords)
		if err != nil {
			return nil, err
		}
		return dirResult{Summary: &listSummary{Kind: summaryCount, Count: n}}, nil
	}
	q := listQuery{
		Fields:  []string{"name", "year_start_date", "year_end_date", "disabled", "is_short_year"},
		Filters: f,
		OrderBy: "year_start_date desc, name desc",
	}
	page, err := fetchPage(ctx, c, "Fiscal Year", q, a.pageArgs, call.MaxRecords, nil)
	if err != nil {
		return nil, err
	}
	if len(page.Data) == 0 {
		return encodeWithRows(dirResult{Meta: &page.Meta}, page.Data)
	}
	// Each year gets the companies it is linked to: the page's rows are
	// decoded (a page of fiscal years is short), completed and encoded again.
	years := make([]map[string]any, len(page.Data))
	names := make([]string, len(page.Data))
	for i, raw := range page.Data {
		if years[i], err = decodeRow(raw); err != nil {
			return nil, err
		}
		names[i] = str(years[i]["name"])
	}
	cq := listQuery{Fields: []string{"name", "parent", "company"}, OrderBy: "parent asc, idx asc, name asc"}
	cq.Filters.add("parent", "in", names)
	pageSize := min(walkPageSize, max(call.MaxRecords, 1))
	rows, truncated, err := walkChildRows(ctx, c, "Fiscal Year Company", "Fiscal Year", cq, pageSize, literalWalkBound)
	if err != nil {
		return nil, err
	}
	if truncated {
		return nil, toolerr.New(toolerr.ResponseTooLarge, "the fiscal years of this page are linked to more than %d companies; ask for fewer with limit", walkBound(pageSize, literalWalkBound))
	}
	byYear := map[string][]string{}
	for _, r := range rows {
		byYear[str(r["parent"])] = append(byYear[str(r["parent"])], str(r["company"]))
	}
	for i, r := range years {
		companies := byYear[str(r["name"])]
		if companies == nil {
			companies = []string{}
		}
		r["companies"] = companies
		if page.Data[i], err = json.Marshal(r); err != nil {
			return nil, err
		}
	}
	return encodeWithRows(dirResult{Meta: &page.Meta}, page.Data)
}
