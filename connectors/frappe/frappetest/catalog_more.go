package frappetest

// More ERPNext v15 doctypes the shared catalogue does not cover but the
// purchasing, banking and stock data needs, in the same compact notation as
// erpnextCatalog. Field lists follow the v15 doctype JSON, reduced to the
// columns that matter for reads.

// buyingCatalog: supplier groups, banks, modes of payment and purchase
// taxes.
var buyingCatalog = []catalogEntry{
	{
		name:   "Supplier Group",
		attrs:  `autoname='field:supplier_group_name' is_submittable=0 istable=0 is_tree=1`,
		fields: `supplier_group_name:Data*, parent_supplier_group:Link(Supplier Group), is_group:Check=0, payment_terms:Link(Payment Terms Template), accounts:Table(Party Account), lft:Int, rgt:Int, old_parent:Link(Supplier Group)`,
	},
	{
		name:   "Bank",
		attrs:  `autoname='field:bank_name' is_submittable=0 istable=0 is_tree=0`,
		fields: `bank_name:Data*, swift_number:Data, website:Data, plaid_access_token:Data`,
	},
	{
		name:   "Mode of Payment",
		attrs:  `autoname='field:mode_of_payment' is_submittable=0 istable=0 is_tree=0`,
		fields: `mode_of_payment:Data*, enabled:Check=1, type:Select(Cash|Bank|General|Phone), accounts:Table(Mode of Payment Account)`,
	},
	{
		name:   "Mode of Payment Account",
		attrs:  `autoname=None is_submittable=0 istable=1 is_tree=0`,
		fields: `company:Link(Company), default_account:Link(Account)`,
	},
	{
		name:   "Purchase Taxes and Charges",
		attrs:  `autoname=None is_submittable=0 istable=1 is_tree=0`,
		fields: `category:Select(Valuation and Total|Valuation|Total)*=Total, add_deduct_tax:Select(Add|Deduct)*=Add, charge_type:Select(|Actual|On Net Total|On Previous Row Amount|On Previous Row Total|On Item Quantity)*=On Net Total, row_id:Data, included_in_print_rate:Check=0, included_in_paid_amount:Check=0, account_head:Link(Account)*, description:Small Text*, is_tax_withholding_account:Check=0, cost_center:Link(Cost Center), rate:Float, account_currency:Link(Currency), tax_amount:Currency(currency), tax_amount_after_discount_amount:Currency(currency), total:Currency(currency), base_tax_amount:Currency(Company:company:default_currency), base_total:Currency(Company:company:default_currency), base_tax_amount_after_discount_amount:Currency(Company:company:default_currency), item_wise_tax_detail:Code`,
	},
}

// ledgerCatalog: the vouchers behind opening balances and stock moves.
var ledgerCatalog = []catalogEntry{
	{
		name:   "Journal Entry",
		attrs:  `autoname='naming_series:' is_submittable=1 istable=0 is_tree=0 title_field='title' sort_field='modified' sort_order='DESC'`,
		fields: `title:Data, voucher_type:Select(Journal Entry|Inter Company Journal Entry|Bank Entry|Cash Entry|Credit Card Entry|Debit Note|Credit Note|Contra Entry|Excise Entry|Write Off Entry|Opening Entry|Depreciation Entry|Exchange Rate Revaluation|Exchange Gain Or Loss|Deferred Revenue|Deferred Expense)*=Journal Entry, naming_series:Select(ACC-JV-.YYYY.-)*, finance_book:Link(Finance Book), company:Link(Company)*, posting_date:Date*=Today, accounts:Table(Journal Entry Account)*, cheque_no:Data, cheque_date:Date, user_remark:Small Text, total_debit:Currency, total_credit:Currency, difference:Currency, multi_currency:Check=0, total_amount_currency:Link(Currency), total_amount:Currency(total_amount_currency), total_amount_in_words:Data, clearance_date:Date, remark:Small Text, bill_no:Data, bill_date:Date, due_date:Date, is_opening:Select(No|Yes)=No, amended_from:Link(Journal Entry), is_system_generated:Check=0`,
	},
	{
		name:   "Journal Entry Account",
		attrs:  `autoname=None is_submittable=0 istable=1 is_tree=0`,
		fields: `account:Link(Account)*, account_type:Data, bank_account:Link(Bank Account), party_type:Link(DocType), party:Dynamic Link(party_type), cost_center:Link(Cost Center), project:Link(Project), account_currency:Link(Currency), exchange_rate:Float, debit_in_account_currency:Currency(account_currency), debit:Currency(Company:company:default_currency), credit_in_account_currency:Currency(account_currency), credit:Currency(Company:company:default_currency), reference_type:Select(|Sales Invoice|Purchase Invoice|Journal Entry|Sales Order|Purchase Order|Payment Entry), reference_name:Dynamic Link(reference_type), reference_due_date:Date, is_advance:Select(No|Yes), user_remark:Small Text, against_account:Text`,
	},
	{
		name:   "Stock Entry",
		attrs:  `autoname='naming_series:' is_submittable=1 istable=0 is_tree=0 title_field='stock_entry_type' sort_field='modified' sort_order='DESC'`,
		fields: `naming_series:Select(MAT-STE-.YYYY.-)*, stock_entry_type:Link(Stock Entry Type)*, purpose:Select(Material Issue|Material Receipt|Material Transfer|Material Transfer for Manufacture|Material Consumption for Manufacture|Manufacture|Repack|Send to Subcontractor|Disassemble), company:Link(Company)*, posting_date:Date, posting_time:Time, set_posting_time:Check=0, from_warehouse:Link(Warehouse), to_warehouse:Link(Warehouse), items:Table(Stock Entry Detail)*, total_outgoing_value:Currency(Company:company:default_currency), total_incoming_value:Currency(Company:company:default_currency), value_difference:Currency(Company:company:default_currency), total_additional_costs:Currency(Company:company:default_currency), project:Link(Project), is_opening:Select(No|Yes), remarks:Text, per_transferred:Percent, total_amount:Currency(Company:company:default_currency), amended_from:Link(Stock Entry), is_return:Check=0`,
	},
	{
		name:   "Stock Entry Detail",
		attrs:  `autoname=None is_submittable=0 istable=1 is_tree=0`,
		fields: `s_warehouse:Link(Warehouse), t_warehouse:Link(Warehouse), item_code:Link(Item)*, item_name:Data, description:Text Editor, item_group:Data, qty:Float*, transfer_qty:Float*, uom:Link(UOM)*, stock_uom:Link(UOM)*, conversion_factor:Float*, basic_rate:Currency(Company:company:default_currency), additional_cost:Currency(Company:company:default_currency), valuation_rate:Currency(Company:company:default_currency), basic_amount:Currency(Company:company:default_currency), amount:Currency(Company:company:default_currency), expense_account:Link(Account), cost_center:Link(Cost Center), project:Link(Project), actual_qty:Float, transferred_qty:Float, serial_and_batch_bundle:Link(Serial and Batch Bundle), serial_no:Text, batch_no:Link(Batch)`,
	},
}

// fieldAdditions lists fields that later v15 releases added to catalogued
// doctypes and that the reports read (ERPNext 15.110 selects ple.project).
var fieldAdditions = map[string]string{
	"Payment Ledger Entry": `project:Link(Project)`,
}
