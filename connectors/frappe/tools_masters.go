package frappe

import (
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// Companies, items and projects.

func listCompaniesTool() connector.Tool {
	return dirSpec{
		tool:    "list_companies",
		title:   "Companies",
		doctype: "Company",
		description: "List the companies this user may see, or search them by name or abbreviation. The search is literal text, not a filter language; when no name or abbreviation contains it, it is compared as a name a person says and name_match gives the company or the candidates to confirm (search_mode chooses). " +
			"Use a company's name as the company filter of other tools; amounts in base_* fields and the accounting reports are in its default_currency. " +
			"A user restricted to some companies sees only those, here and in every other tool.",
		fields: []string{"name", "abbr", "default_currency", "country"},
		row: schema.OpenObject(
			schema.Prop("name", schema.String("Company name, used as the company filter elsewhere.")),
			schema.Prop("abbr", schema.String("Abbreviation, the suffix of account, warehouse and cost centre names.")),
			schema.Prop("default_currency", schema.String("Company (base) currency.")),
			schema.Prop("country", schema.String("Country.")),
		),
		order:        ordering{fields: []string{"name"}, defaultField: "name", defaultDir: "asc"},
		searchFields: []string{"name", "company_name", "abbr"},
		names:        &companyKind,
	}.build()
}

func listItemsTool() connector.Tool {
	return dirSpec{
		tool:    "list_items",
		title:   "Items",
		doctype: "Item",
		description: "Search items (products and services) by item code or name, or count them with summary. The search is literal text, not a filter language; when no code or name contains it (among the records the other filters admit), it is compared as a name a person says and name_match gives the item or the candidates to confirm (search_mode chooses). " +
			"standard_rate and valuation_rate are plain numbers without a currency of their own; prices for a customer come from invoices and orders. " +
			"Results are pages in a stable order; repeat the same request with meta.next_offset for the next page.",
		fields: []string{"name", "item_name", "item_group", "stock_uom", "brand", "is_stock_item", "has_variants", "standard_rate", "valuation_rate", "disabled"},
		row: schema.OpenObject(
			schema.Prop("name", schema.String("Item code: use it as the item filter elsewhere.")),
			schema.Prop("item_name", schema.String("Item name.").Nullable()),
			schema.Prop("item_group", schema.String("Item group.")),
			schema.Prop("stock_uom", schema.String("Stock unit of measure.")),
			schema.Prop("brand", schema.String("Brand.").Nullable()),
			schema.Prop("is_stock_item", schema.Integer("1 when stock is kept.")),
			schema.Prop("has_variants", schema.Integer("1 for a template with variants.")),
			schema.Prop("standard_rate", money("Standard selling rate.")),
			schema.Prop("valuation_rate", money("Valuation rate.")),
			schema.Prop("disabled", schema.Integer("1 when disabled.")),
		),
		order:        ordering{fields: []string{"item_name", "name", "item_group", "creation"}, defaultField: "name", defaultDir: "asc"},
		searchFields: []string{"name", "item_name"},
		filters: []dirFilter{
			{arg: "item_group", field: "item_group", schema: exactText("item group")},
			{arg: "brand", field: "brand", schema: exactText("brand")},
			{arg: "is_stock_item", field: "is_stock_item", schema: schema.Boolean("true: only stock items; false: only non-stock items such as services.")},
		},
		disabledField: "disabled",
		names:         &itemKind,
	}.build()
}

func listProjectsTool() connector.Tool {
	return dirSpec{
		tool:    "list_projects",
		title:   "Projects",
		doctype: "Project",
		description: "List a company's projects, or count them with summary. Costing and billing amounts are in the company currency. " +
			"Results are pages in a stable order; repeat the same request with meta.next_offset for the next page.",
		fields: []string{"name", "project_name", "status", "company", "customer", "expected_start_date", "expected_end_date", "percent_complete",
			"estimated_costing", "total_costing_amount", "total_billed_amount", "is_active"},
		row: schema.OpenObject(
			schema.Prop("name", schema.String("Project id: use it as the project filter of reports.")),
			schema.Prop("project_name", schema.String("Project name.")),
			schema.Prop("status", schema.String("Open, Completed or Cancelled.")),
			schema.Prop("company", schema.String("Company.")),
			schema.Prop("customer", schema.String("Customer, if any.").Nullable()),
			schema.Prop("expected_start_date", schema.String("Planned start.").Nullable()),
			schema.Prop("expected_end_date", schema.String("Planned end.").Nullable()),
			schema.Prop("percent_complete", schema.Number("Percent complete.")),
			schema.Prop("estimated_costing", money("Estimated cost, company currency.")),
			schema.Prop("total_costing_amount", money("Cost booked so far, company currency.")),
			schema.Prop("total_billed_amount", money("Billed so far, company currency.")),
			schema.Prop("is_active", schema.String("Yes or No.").Nullable()),
		),
		order:         ordering{fields: []string{"name", "project_name", "expected_end_date", "creation"}, defaultField: "name", defaultDir: "asc"},
		searchFields:  []string{"name", "project_name"},
		companyScoped: true,
		filters: []dirFilter{
			{arg: "status", field: "status", schema: schema.String("Project status.").OneOf("Open", "Completed", "Cancelled")},
			{arg: "customer", field: "customer", schema: exactText("customer id")},
		},
	}.build()
}
