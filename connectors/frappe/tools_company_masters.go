package frappe

import (
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// Company-scoped masters: warehouses, ledger accounts and cost centres.
// Their names end with the company abbreviation ("Stores - DHNZ").

func listWarehousesTool() connector.Tool {
	return dirSpec{
		tool:    "list_warehouses",
		title:   "Warehouses",
		doctype: "Warehouse",
		description: "List a company's warehouses, or count them with summary. Group warehouses (is_group 1) only hold other warehouses. " +
			"Use a warehouse's name as the warehouse filter of the stock reports.",
		fields: []string{"name", "warehouse_name", "company", "is_group", "parent_warehouse", "warehouse_type", "disabled"},
		row: schema.OpenObject(
			schema.Prop("name", schema.String("Warehouse id, e.g. Stores - DHNZ.")),
			schema.Prop("warehouse_name", schema.String("Warehouse name.")),
			schema.Prop("company", schema.String("Company.")),
			schema.Prop("is_group", schema.Integer("1 for a group of warehouses.")),
			schema.Prop("parent_warehouse", schema.String("Parent group.").Nullable()),
			schema.Prop("warehouse_type", schema.String("Warehouse type.").Nullable()),
			schema.Prop("disabled", schema.Integer("1 when disabled.")),
		),
		order:         ordering{fields: []string{"name", "warehouse_name"}, defaultField: "name", defaultDir: "asc"},
		searchFields:  []string{"name", "warehouse_name"},
		companyScoped: true,
		filters: []dirFilter{
			{arg: "is_group", field: "is_group", schema: schema.Boolean("true: only groups; false: only warehouses that hold stock.")},
		},
		disabledField: "disabled",
	}.build()
}

var accountTypes = []string{
	"Accumulated Depreciation", "Asset Received But Not Billed", "Bank", "Cash", "Chargeable", "Capital Work in Progress",
	"Cost of Goods Sold", "Current Asset", "Current Liability", "Depreciation", "Direct Expense", "Direct Income", "Equity",
	"Expense Account", "Expenses Included In Asset Valuation", "Expenses Included In Valuation", "Fixed Asset", "Income Account",
	"Indirect Expense", "Indirect Income", "Liability", "Payable", "Receivable", "Round Off", "Round Off for Opening", "Stock",
	"Stock Adjustment", "Stock Received But Not Billed", "Service Received But Not Billed", "Tax", "Temporary",
}

func listAccountsTool() connector.Tool {
	return dirSpec{
		tool:    "list_accounts",
		title:   "Ledger accounts",
		doctype: "Account",
		description: "List a company's chart of accounts (ledger accounts), or count them with summary. Group accounts (is_group 1) only sum their children. " +
			"account_currency is the currency the account is kept in; it can differ from the company currency (e.g. a USD bank account). " +
			"Use an account's name as the account filter of the ledger reports; account_type Bank or Cash finds accounts for get_bank_reconciliation_statement.",
		fields: []string{"name", "account_name", "account_number", "parent_account", "root_type", "report_type", "account_type", "account_currency", "is_group", "disabled"},
		row: schema.OpenObject(
			schema.Prop("name", schema.String("Account id, e.g. Debtors - DHNZ.")),
			schema.Prop("account_name", schema.String("Account name.")),
			schema.Prop("account_number", schema.String("Account number.").Nullable()),
			schema.Prop("parent_account", schema.String("Parent group account.").Nullable()),
			schema.Prop("root_type", schema.String("Asset, Liability, Income, Expense or Equity.").Nullable()),
			schema.Prop("report_type", schema.String("Balance Sheet or Profit and Loss.").Nullable()),
			schema.Prop("account_type", schema.String("Bank, Cash, Receivable, Payable, Tax, ...").Nullable()),
			schema.Prop("account_currency", schema.String("Currency the account is kept in.").Nullable()),
			schema.Prop("is_group", schema.Integer("1 for a group account.")),
			schema.Prop("disabled", schema.Integer("1 when disabled.")),
		),
		order:         ordering{fields: []string{"name", "account_number", "account_name", "lft"}, defaultField: "lft", defaultDir: "asc"},
		searchFields:  []string{"name", "account_name", "account_number"},
		companyScoped: true,
		filters: []dirFilter{
			{arg: "root_type", field: "root_type", schema: schema.String("Root type.").OneOf("Asset", "Liability", "Income", "Expense", "Equity")},
			{arg: "account_type", field: "account_type", schema: schema.String("Account type.").OneOf(accountTypes...)},
			{arg: "is_group", field: "is_group", schema: schema.Boolean("true: only group accounts; false: only ledger (posting) accounts.")},
			{arg: "account_currency", field: "account_currency", schema: currencyCode("Exact account currency.")},
		},
		disabledField: "disabled",
	}.build()
}

func listCostCentresTool() connector.Tool {
	return dirSpec{
		tool:    "list_cost_centres",
		title:   "Cost centres",
		doctype: "Cost Center",
		description: "List a company's cost centres, or count them with summary. Group cost centres (is_group 1) only hold others. " +
			"Use a cost centre's name as the cost_center filter of the accounting reports.",
		fields: []string{"name", "cost_center_name", "cost_center_number", "parent_cost_center", "company", "is_group", "disabled"},
		row: schema.OpenObject(
			schema.Prop("name", schema.String("Cost centre id, e.g. Main - DHNZ.")),
			schema.Prop("cost_center_name", schema.String("Cost centre name.")),
			schema.Prop("cost_center_number", schema.String("Number.").Nullable()),
			schema.Prop("parent_cost_center", schema.String("Parent group.").Nullable()),
			schema.Prop("company", schema.String("Company.")),
			schema.Prop("is_group", schema.Integer("1 for a group.")),
			schema.Prop("disabled", schema.Integer("1 when disabled.")),
		),
		order:         ordering{fields: []string{"name", "cost_center_name", "lft"}, defaultField: "lft", defaultDir: "asc"},
		searchFields:  []string{"name", "cost_center_name"},
		companyScoped: true,
		filters: []dirFilter{
			{arg: "is_group", field: "is_group", schema: schema.Boolean("true: only groups; false: only cost centres that take postings.")},
		},
		disabledField: "disabled",
	}.build()
}
