package frappetest

// extraCatalog describes standard ERPNext v15 doctypes the shared catalogue
// does not cover but the seeded data links to (tree masters, UOM, Currency).
// Field lists are reduced to the columns that matter for reads.
var extraCatalog = []catalogEntry{
	{
		// frappe/core/doctype/comment/comment.json (autoname hash).
		name:   "Comment",
		attrs:  `autoname='hash' is_submittable=0 istable=0 is_tree=0`,
		fields: `comment_type:Select(Comment|Like|Info|Label|Workflow|Created|Submitted|Cancelled|Updated|Deleted|Assigned|Assignment Completed|Attachment|Attachment Removed|Shared|Unshared|Bot|Relinked|Edit)*=Comment, comment_email:Data, subject:Text, comment_by:Data, published:Check=0, seen:Check=0, reference_doctype:Link(DocType), reference_name:Dynamic Link(reference_doctype), reference_owner:Data, content:HTML Editor, ip_address:Data`,
	},
	{
		// frappe/contacts/doctype/contact, reduced to the header fields a
		// Customer's primary contact fills (no email_ids, phone_nos or
		// links tables).
		name:   "Contact",
		attrs:  `is_submittable=0 istable=0 is_tree=0`,
		fields: `first_name:Data, last_name:Data, full_name:Data, email_id:Data, phone:Data, mobile_no:Data, is_primary_contact:Check=0, status:Select(Passive|Open|Replied)=Passive`,
	},
	{
		// erpnext/selling/doctype/customer_credit_limit (child of Customer).
		name:   "Customer Credit Limit",
		attrs:  `istable=1`,
		fields: `company:Link(Company)*, credit_limit:Currency, bypass_credit_limit_check:Check=0`,
	},
	{
		name:   "Customer Group",
		attrs:  `autoname='field:customer_group_name' is_submittable=0 istable=0 is_tree=1`,
		fields: `customer_group_name:Data*, parent_customer_group:Link(Customer Group), is_group:Check=0, default_price_list:Link(Price List), payment_terms:Link(Payment Terms Template), lft:Int, rgt:Int, old_parent:Link(Customer Group), accounts:Table(Party Account)`,
	},
	{
		name:   "Territory",
		attrs:  `autoname='field:territory_name' is_submittable=0 istable=0 is_tree=1`,
		fields: `territory_name:Data*, parent_territory:Link(Territory), is_group:Check=0, territory_manager:Link(Sales Person), lft:Int, rgt:Int, old_parent:Link(Territory)`,
	},
	{
		name:   "Item Group",
		attrs:  `autoname='field:item_group_name' is_submittable=0 istable=0 is_tree=1`,
		fields: `item_group_name:Data*, parent_item_group:Link(Item Group), is_group:Check=0, image:Attach Image, item_group_defaults:Table(Item Default), lft:Int, rgt:Int, old_parent:Link(Item Group)`,
	},
	{
		name:   "UOM",
		attrs:  `autoname='field:uom_name' is_submittable=0 istable=0 is_tree=0`,
		fields: `enabled:Check=1, uom_name:Data*, must_be_whole_number:Check=0, common_code:Data, description:Small Text`,
	},
	{
		name:   "Currency",
		attrs:  `autoname='field:currency_name' is_submittable=0 istable=0 is_tree=0`,
		fields: `currency_name:Data*, enabled:Check=0, fraction:Data, fraction_units:Int, smallest_currency_fraction_value:Currency, symbol:Data, symbol_on_right:Check=0, number_format:Select(#,###.##|#.###,##|# ###.##|#,###.###|#,##,###.##|#.###|#,###)`,
	},
}
