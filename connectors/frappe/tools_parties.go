package frappe

import (
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// Party directories: customers and suppliers.

func listCustomersTool() connector.Tool {
	return dirSpec{
		tool:    "list_customers",
		title:   "Customers",
		doctype: "Customer",
		description: "Search customers by id or name, or count them with summary. The search is literal text, not a filter language; when no id or name contains it (among the records the other filters admit), it is compared as a name a person says and party_match gives the customer or the candidates to confirm (search_mode chooses). " +
			"Use a customer's name (its id) as the customer filter of other tools; to resolve a name as the user said it, pass customer_query to the invoice and order tools instead. " +
			"Results are pages in a stable order; repeat the same request with meta.next_offset for the next page.",
		fields: []string{"name", "customer_name", "customer_type", "customer_group", "territory", "default_currency", "disabled"},
		row: schema.OpenObject(
			schema.Prop("name", schema.String("Customer id: use it as the exact customer filter elsewhere.")),
			schema.Prop("customer_name", schema.String("Display name.")),
			schema.Prop("customer_type", schema.String("Company, Individual or Partnership.")),
			schema.Prop("customer_group", schema.String("Customer group.").Nullable()),
			schema.Prop("territory", schema.String("Territory.").Nullable()),
			schema.Prop("default_currency", schema.String("Billing currency, if set.").Nullable()),
			schema.Prop("disabled", schema.Integer("1 when disabled.")),
		),
		order:        ordering{fields: []string{"customer_name", "name", "creation"}, defaultField: "customer_name", defaultDir: "asc"},
		searchFields: []string{"name", "customer_name"},
		filters: []dirFilter{
			{arg: "customer_group", field: "customer_group", schema: exactText("customer group")},
			{arg: "territory", field: "territory", schema: exactText("territory")},
		},
		disabledField: "disabled",
		party:         &customerParty,
	}.build()
}

func listSuppliersTool() connector.Tool {
	return dirSpec{
		tool:    "list_suppliers",
		title:   "Suppliers",
		doctype: "Supplier",
		description: "Search suppliers by id or name, or count them with summary. The search is literal text, not a filter language; when no id or name contains it (among the records the other filters admit), it is compared as a name a person says and party_match gives the supplier or the candidates to confirm (search_mode chooses). " +
			"Use a supplier's name (its id) as the supplier filter of other tools; to resolve a name as the user said it, pass supplier_query to the purchase tools instead. " +
			"Results are pages in a stable order; repeat the same request with meta.next_offset for the next page.",
		fields: []string{"name", "supplier_name", "supplier_type", "supplier_group", "country", "default_currency", "on_hold", "disabled"},
		row: schema.OpenObject(
			schema.Prop("name", schema.String("Supplier id: use it as the exact supplier filter elsewhere.")),
			schema.Prop("supplier_name", schema.String("Display name.")),
			schema.Prop("supplier_type", schema.String("Company, Individual or Partnership.")),
			schema.Prop("supplier_group", schema.String("Supplier group.").Nullable()),
			schema.Prop("country", schema.String("Country.").Nullable()),
			schema.Prop("default_currency", schema.String("Billing currency, if set.").Nullable()),
			schema.Prop("on_hold", schema.Integer("1 when the supplier is on hold.")),
			schema.Prop("disabled", schema.Integer("1 when disabled.")),
		),
		order:        ordering{fields: []string{"supplier_name", "name", "creation"}, defaultField: "supplier_name", defaultDir: "asc"},
		searchFields: []string{"name", "supplier_name"},
		filters: []dirFilter{
			{arg: "supplier_group", field: "supplier_group", schema: exactText("supplier group")},
			{arg: "country", field: "country", schema: exactText("country")},
			{arg: "on_hold", field: "on_hold", schema: schema.Boolean("true: only suppliers on hold; false: only those not on hold.")},
		},
		disabledField: "disabled",
		party:         &supplierParty,
	}.build()
}
