package acumatica

// The per-entity lookups, declared as data: one row per entity, with its
// key fields in the order Acumatica wants them in the URL and the detail
// collections and linked entities a caller may expand. getterTool turns
// each row into an acumatica_get_* tool. A test checks every row against
// the Default endpoint's catalogue (key order, collection names).

// keyKind is how a key field is written.
type keyKind int

const (
	keyText keyKind = iota
	keyInteger
	keyGUID
)

// keySpec is one key field.
type keySpec struct {
	Name string
	Kind keyKind
	// Hint tells a model what the value looks like.
	Hint string
	// Default, when set, is the value used when the caller leaves the key
	// out: the usual document type, so that a number alone finds the
	// common document (as MCP4Acumatica's getters did).
	Default string
}

// getterSpec is one entity lookup.
type getterSpec struct {
	Entity string
	// Tool is the tool name's suffix (acumatica_get_<Tool>).
	Tool   string
	Module string
	// Label names one record in prose ("AR invoice").
	Label string
	// Holds says what the record answers, for the description.
	Holds  string
	Keys   []keySpec
	Expand []string
}

// Module labels, for descriptions and the catalogue tests.
const (
	moduleFinance      = "finance"
	moduleReceivables  = "receivables"
	modulePayables     = "payables"
	moduleSales        = "sales"
	modulePurchasing   = "purchasing"
	moduleInventory    = "inventory"
	moduleCRM          = "CRM"
	moduleProjects     = "projects"
	moduleTimeExpenses = "time and expenses"
	moduleOrganisation = "organisation"
	moduleFieldService = "field services"
)

func text(name, hint string) keySpec { return keySpec{Name: name, Kind: keyText, Hint: hint} }

// docType is a document-type key whose usual value def is used when the
// caller leaves it out.
func docType(name, hint, def string) keySpec {
	return keySpec{Name: name, Kind: keyText, Hint: hint, Default: def}
}

var getterSpecs = []getterSpec{
	// Finance.
	{Entity: "Account", Tool: "account", Module: moduleFinance, Label: "GL account",
		Holds: "its description, type (Asset, Liability, Income, Expense), account class, currency and whether it is active or a cash account",
		Keys:  []keySpec{text("AccountCD", "the account code, e.g. 10100")}},
	{Entity: "Subaccount", Tool: "subaccount", Module: moduleFinance, Label: "subaccount",
		Holds: "its description and whether it is active",
		Keys:  []keySpec{text("SubaccountCD", "the subaccount code with its segments")}},
	{Entity: "Ledger", Tool: "ledger", Module: moduleFinance, Label: "ledger",
		Holds: "its type (Actual, Budget, Statistical), currency and the branches and companies posting to it",
		Keys:  []keySpec{text("LedgerID", "the ledger id, e.g. ACTUAL")}, Expand: []string{"Branches", "Companies"}},
	{Entity: "JournalTransaction", Tool: "journal_transaction", Module: moduleFinance, Label: "GL journal batch",
		Holds: "its module, status, post period, ledger, totals and, with Details, every debit and credit line",
		Keys:  []keySpec{text("Module", "the module code: GL, AR, AP, CA, IN, PM…"), text("BatchNbr", "the batch number")}, Expand: []string{"Details"}},
	{Entity: "FinancialPeriod", Tool: "financial_period", Module: moduleFinance, Label: "financial year",
		Holds: "its start date, number of periods and, with Details, each period's dates and status",
		Keys:  []keySpec{text("FinancialYear", "the year, e.g. 2026")}, Expand: []string{"Details"}},
	{Entity: "Tax", Tool: "tax", Module: moduleFinance, Label: "tax",
		Holds: "its type, calculation rules, accounts and, with TaxSchedule, its rates",
		Keys:  []keySpec{text("TaxID", "the tax id")}, Expand: []string{"TaxSchedule", "Zones"}},
	{Entity: "TaxZone", Tool: "tax_zone", Module: moduleFinance, Label: "tax zone",
		Holds: "its description and, with ApplicableTaxes, the taxes it applies",
		Keys:  []keySpec{text("TaxZoneID", "the tax zone id")}, Expand: []string{"ApplicableTaxes"}},

	// Receivables.
	{Entity: "Customer", Tool: "customer", Module: moduleReceivables, Label: "customer",
		Holds: "name, status, class, terms, currency, credit limit, statement settings and, expanded, its contacts and attributes",
		Keys:  []keySpec{text("CustomerID", "the customer id, e.g. C000000001")},
		Expand: []string{"Attributes", "BillingContact", "Contacts", "CreditVerificationRules", "MainContact",
			"PaymentInstructions", "PrimaryContact", "Salespersons", "ShippingContact"}},
	{Entity: "Invoice", Tool: "invoice", Module: moduleReceivables, Label: "AR invoice or memo (Invoices and Memos, AR301000)",
		Holds: "customer, dates, status, amount, open balance, terms and, with Details, its lines; sales-order invoices are SalesInvoice",
		Keys:  []keySpec{docType("Type", "the document type's display name: Invoice, Debit Memo, Credit Memo, Prepayment Invoice", "Invoice"), text("ReferenceNbr", "the reference number")},
		Expand: []string{"ApplicationsCreditMemo", "ApplicationsDefault", "BillToContact", "Details", "DiscountDetails",
			"ShipToContact", "TaxDetails"}},
	{Entity: "Payment", Tool: "payment", Module: moduleReceivables, Label: "AR payment, prepayment, refund or credit memo application (AR302000)",
		Holds:  "customer, status, amounts, payment method and, expanded, the documents it applies to",
		Keys:   []keySpec{docType("Type", "the document type's display name: Payment, Prepayment, Refund, Credit Memo, Voided Payment", "Payment"), text("ReferenceNbr", "the reference number")},
		Expand: []string{"ApplicationHistory", "Charges", "DocumentsToApply", "OrdersToApply"}},
	{Entity: "CustomerClass", Tool: "customer_class", Module: moduleReceivables, Label: "customer class",
		Holds: "its default terms, currency, accounts and credit rules",
		Keys:  []keySpec{text("ClassID", "the class id")}, Expand: []string{"Attributes"}},
	{Entity: "CustomerLocation", Tool: "customer_location", Module: moduleReceivables, Label: "customer location",
		Holds:  "its address, contact, tax zone, ship-via and default settings",
		Keys:   []keySpec{text("Customer", "the customer id"), text("LocationID", "the location id, e.g. MAIN")},
		Expand: []string{"LocationContact", "RoleAssignments"}},

	// Payables.
	{Entity: "Vendor", Tool: "vendor", Module: modulePayables, Label: "vendor",
		Holds: "name, status, class, terms, currency, payment settings and, expanded, its contacts and attributes",
		Keys:  []keySpec{text("VendorID", "the vendor id")},
		Expand: []string{"Attributes", "Contacts", "MainContact", "PaymentInstructions", "PrimaryContact",
			"RemittanceContact", "ShippingContact"}},
	{Entity: "Bill", Tool: "bill", Module: modulePayables, Label: "AP bill or adjustment (AP301000)",
		Holds:  "vendor, dates, status, amount, open balance, terms and, with Details, its lines",
		Keys:   []keySpec{docType("Type", "the document type's display name: Bill, Debit Adj., Credit Adj., Prepayment", "Bill"), text("ReferenceNbr", "the reference number")},
		Expand: []string{"Applications", "Details", "TaxDetails"}},
	{Entity: "Check", Tool: "check", Module: modulePayables, Label: "AP payment (Checks and Payments, AP302000)",
		Holds:  "vendor, status, payment amount, method, cash account and, with Details, the bills it pays",
		Keys:   []keySpec{docType("Type", "the document type's display name: Payment, Prepayment, Refund, Voided Payment", "Payment"), text("ReferenceNbr", "the reference number")},
		Expand: []string{"Details", "History"}},
	{Entity: "VendorClass", Tool: "vendor_class", Module: modulePayables, Label: "vendor class",
		Holds: "its description and default settings",
		Keys:  []keySpec{text("ClassID", "the class id")}, Expand: []string{"Attributes"}},

	// Sales.
	{Entity: "SalesOrder", Tool: "sales_order", Module: moduleSales, Label: "sales order",
		Holds: "customer, dates, status, totals, currency and, with Details, its lines (OrderQty, UnitPrice, LineDescription)",
		Keys:  []keySpec{docType("OrderType", "the two-letter order type code: SO, RM, RC, CM, QT…", "SO"), text("OrderNbr", "the order number")},
		Expand: []string{"BillToAddress", "BillToContact", "Commissions", "Details", "DiscountDetails", "FinancialSettings",
			"OrderRisks", "Payments", "Relations", "ShipToAddress", "ShipToContact", "Shipments", "ShippingSettings", "TaxDetails", "Totals"}},
	{Entity: "SalesInvoice", Tool: "sales_invoice", Module: moduleSales, Label: "sales-order invoice (SO303000)",
		Holds: "customer, dates, status, amount, balance and, with Details, its lines; AR invoices entered directly are Invoice",
		Keys:  []keySpec{docType("Type", "the document type's display name: Invoice, Debit Memo, Credit Memo", "Invoice"), text("ReferenceNbr", "the reference number")},
		Expand: []string{"ApplicationsCreditMemo", "ApplicationsInvoice", "BillToAddress", "BillToContact", "BillingSettings",
			"Commissions", "Details", "DiscountDetails", "FinancialDetails", "FreightDetails", "ShipToAddress", "ShipToContact", "TaxDetails"}},
	{Entity: "Shipment", Tool: "shipment", Module: moduleSales, Label: "shipment",
		Holds: "customer, status, ship date, quantities and, expanded, its lines, orders and packages",
		Keys:  []keySpec{text("ShipmentNbr", "the shipment number")}, Expand: []string{"Details", "Orders", "Packages", "ShippingSettings"}},

	// Purchasing.
	{Entity: "PurchaseOrder", Tool: "purchase_order", Module: modulePurchasing, Label: "purchase order",
		Holds:  "vendor, dates, status, totals and, with Details, its lines (OrderQty, UnitCost, received quantities)",
		Keys:   []keySpec{docType("Type", "the order type's display name: Normal, Drop-Ship, Blanket, Standard", "Normal"), text("OrderNbr", "the order number")},
		Expand: []string{"Details", "ShippingInstructions", "TaxDetails"}},
	{Entity: "PurchaseReceipt", Tool: "purchase_receipt", Module: modulePurchasing, Label: "purchase receipt",
		Holds:  "vendor, date, status, quantities and, with Details, the received lines",
		Keys:   []keySpec{docType("Type", "the receipt type's display name: Receipt, Return, Transfer Receipt", "Receipt"), text("ReceiptNbr", "the receipt number")},
		Expand: []string{"Details"}},

	// Inventory.
	{Entity: "StockItem", Tool: "stock_item", Module: moduleInventory, Label: "stock item",
		Holds: "description, class, status, units, default price, costs and, with WarehouseDetails, quantities per warehouse",
		Keys:  []keySpec{text("InventoryID", "the inventory id")},
		Expand: []string{"Attributes", "Boxes", "Categories", "CrossReferences", "ReplenishmentParameters", "UOMConversions",
			"VendorDetails", "WarehouseDetails"}},
	{Entity: "NonStockItem", Tool: "non_stock_item", Module: moduleInventory, Label: "non-stock item (service, labour, charge)",
		Holds:  "description, class, status, price, cost and accounts",
		Keys:   []keySpec{text("InventoryID", "the inventory id")},
		Expand: []string{"Attributes", "Categories", "CrossReferences", "SalesCategories", "VendorDetails"}},
	{Entity: "ItemClass", Tool: "item_class", Module: moduleInventory, Label: "item class",
		Holds: "item type, default warehouse, units, posting and price classes",
		Keys:  []keySpec{text("ClassID", "the class id")}, Expand: []string{"Attributes"}},
	{Entity: "Warehouse", Tool: "warehouse", Module: moduleInventory, Label: "warehouse",
		Holds: "description, accounts and, with Locations, its storage locations",
		Keys:  []keySpec{text("WarehouseID", "the warehouse id, e.g. MAIN")}, Expand: []string{"Locations"}},
	{Entity: "ItemWarehouse", Tool: "item_warehouse", Module: moduleInventory, Label: "item-warehouse setting",
		Holds: "an item's replenishment settings, default locations and quantities in one warehouse",
		Keys:  []keySpec{text("InventoryID", "the inventory id"), text("WarehouseID", "the warehouse id")}},
	{Entity: "InventoryReceipt", Tool: "inventory_receipt", Module: moduleInventory, Label: "inventory receipt",
		Holds: "date, status, totals and, with Details, the received items",
		Keys:  []keySpec{text("ReferenceNbr", "the reference number")}, Expand: []string{"Details"}},
	{Entity: "InventoryIssue", Tool: "inventory_issue", Module: moduleInventory, Label: "inventory issue",
		Holds: "date, status, totals and, with Details, the issued items",
		Keys:  []keySpec{text("ReferenceNbr", "the reference number")}, Expand: []string{"Details"}},

	// CRM.
	{Entity: "BusinessAccount", Tool: "business_account", Module: moduleCRM, Label: "business account",
		Holds: "name, type (customer, vendor, prospect), status, owner, addresses and, expanded, contacts, opportunities and cases",
		Keys:  []keySpec{text("BusinessAccountID", "the business account id")},
		Expand: []string{"Activities", "Attributes", "Cases", "Contacts", "Contracts", "DefaultLocationSettings", "Locations",
			"MainAddress", "MainContact", "Opportunities", "Orders", "PrimaryContact", "Relations", "ShippingAddress", "ShippingContact"}},
	{Entity: "Contact", Tool: "contact", Module: moduleCRM, Label: "contact",
		Holds:  "name, company, e-mail, phones, status, owner and, expanded, address, activities and opportunities",
		Keys:   []keySpec{{Name: "ContactID", Kind: keyInteger, Hint: "the numeric contact id"}},
		Expand: []string{"Activities", "Address", "Attributes", "Campaigns", "Cases", "MarketingLists", "Opportunities", "Relations"}},
	{Entity: "Lead", Tool: "lead", Module: moduleCRM, Label: "lead",
		Holds:  "name, company, status, source, owner and, expanded, address and activities",
		Keys:   []keySpec{{Name: "LeadID", Kind: keyInteger, Hint: "the numeric lead id"}},
		Expand: []string{"Activities", "Address", "Attributes", "Campaigns", "MarketingLists", "Relations"}},
	{Entity: "Opportunity", Tool: "opportunity", Module: moduleCRM, Label: "opportunity",
		Holds:  "business account, stage, status, amount, probability, owner and, with Products, its lines",
		Keys:   []keySpec{text("OpportunityID", "the opportunity id")},
		Expand: []string{"Activities", "Address", "Attributes", "ContactInformation", "Discounts", "Products", "Relations", "TaxDetails"}},
	{Entity: "Case", Tool: "case", Module: moduleCRM, Label: "support case",
		Holds: "business account, subject, status, priority, owner, billable time and, expanded, activities",
		Keys:  []keySpec{text("CaseID", "the case id, e.g. 000004")}, Expand: []string{"Activities", "Attributes", "RelatedCases", "Relations"}},
	{Entity: "Activity", Tool: "activity", Module: moduleCRM, Label: "CRM activity (note, phone call, work item)",
		Holds: "its type, summary, body, date, owner, status and the record it is about (RelatedEntityDescription)",
		Keys:  []keySpec{{Name: "NoteID", Kind: keyGUID, Hint: "the activity's NoteID GUID"}}, Expand: []string{"TimeActivity"}},
	{Entity: "Email", Tool: "email", Module: moduleCRM, Label: "e-mail activity",
		Holds: "its subject, from, to, cc, body, mail status, whether it came in, owner and the record it is about",
		Keys:  []keySpec{{Name: "NoteID", Kind: keyGUID, Hint: "the e-mail's NoteID GUID"}}, Expand: []string{"TimeActivity"}},
	{Entity: "Event", Tool: "event", Module: moduleCRM, Label: "CRM event (meeting, appointment)",
		Holds:  "its summary, start and end, location, priority, status, the record it is about and, with Attendees, who attends",
		Keys:   []keySpec{{Name: "NoteID", Kind: keyGUID, Hint: "the event's NoteID GUID"}},
		Expand: []string{"Attendees", "RelatedActivities", "Reminder", "TimeActivity"}},
	{Entity: "Task", Tool: "task", Module: moduleCRM, Label: "CRM task",
		Holds:  "its summary, status, priority, start and due dates, completion percentage, owner and the record it is about",
		Keys:   []keySpec{{Name: "NoteID", Kind: keyGUID, Hint: "the task's NoteID GUID"}},
		Expand: []string{"RelatedActivities", "RelatedTasks", "Reminder", "TimeActivity"}},

	// Projects.
	{Entity: "Project", Tool: "project", Module: moduleProjects, Label: "project",
		Holds: "customer, status, template, income, expenses, assets, liabilities and, expanded, balances and invoices",
		Keys:  []keySpec{text("ProjectID", "the project id")},
		Expand: []string{"ActivityHistory", "ApprovalDetails", "Attributes", "Balances", "BillToSettings", "BillingAndAllocationSettings",
			"Employees", "Equipments", "GLAccounts", "Invoices", "ProjectAddress", "ProjectProperties", "Retainage", "VisibilitySettings"}},
	{Entity: "ProjectTask", Tool: "project_task", Module: moduleProjects, Label: "project task",
		Holds:  "description, status, dates and its billing and default settings",
		Keys:   []keySpec{text("ProjectID", "the project id"), text("ProjectTaskID", "the task id")},
		Expand: []string{"ActivityHistory", "Attributes", "BillingAndAllocationSettings", "CRMLink", "DefaultValues", "Properties", "VisibilitySettings"}},
	{Entity: "ProjectTransaction", Tool: "project_transaction", Module: moduleProjects, Label: "project transaction (PM304000)",
		Holds: "its module, status, description, total amount and quantities and, with Details, each line's project, task, account group, employee, quantity and amount",
		Keys:  []keySpec{text("Module", "the module code: PM, AR, AP, GL, IN, CA…"), text("ReferenceNbr", "the reference number")}, Expand: []string{"Details"}},

	// Time and expenses.
	{Entity: "TimeEntry", Tool: "time_entry", Module: moduleTimeExpenses, Label: "time entry",
		Holds: "employee, date, project, task, time spent, billable time and approval status",
		Keys:  []keySpec{{Name: "TimeEntryID", Kind: keyGUID, Hint: "the time entry's GUID"}}},
	{Entity: "ExpenseClaim", Tool: "expense_claim", Module: moduleTimeExpenses, Label: "expense claim",
		Holds: "employee, date, status, approval, total and, with Details, its receipts",
		Keys:  []keySpec{text("RefNbr", "the claim's reference number")}, Expand: []string{"ApprovalDetails", "Details", "FinancialDetails", "TaxDetails"}},
	{Entity: "ExpenseReceipt", Tool: "expense_receipt", Module: moduleTimeExpenses, Label: "expense receipt",
		Holds: "employee, date, expense item, amount, status and the claim it belongs to",
		Keys:  []keySpec{text("ReceiptID", "the receipt id")}, Expand: []string{"ReceiptDetails", "TaxDetails"}},

	// Field services.
	{Entity: "ServiceOrder", Tool: "service_order", Module: moduleFieldService, Label: "field-service order (FS300100)",
		Holds: "customer, date, description, status, priority, totals and, expanded, its service lines, appointments and contact",
		Keys:  []keySpec{text("ServiceOrderType", "the service order type code, e.g. MRO"), text("ServiceOrderNbr", "the service order number")},
		Expand: []string{"Address", "Appointments", "Attributes", "Contact", "ContractInfo", "DefaultStaff", "Details",
			"FinancialDetails", "OtherInformation", "Prepayments", "TaxDetails", "Totals"}},
	{Entity: "Appointment", Tool: "appointment", Module: moduleFieldService, Label: "field-service appointment (FS300200)",
		Holds: "its service order, customer, status, scheduled and actual dates, totals, cost and profit and, expanded, staff, services and logs",
		Keys:  []keySpec{text("ServiceOrderType", "the service order type code, e.g. MRO"), text("AppointmentNbr", "the appointment number")},
		Expand: []string{"Attributes", "Details", "FinancialSettings", "Logs", "OtherInformation", "Prepayments", "Profitability",
			"ResourceEquipment", "Staff", "TaxDetails", "Totals"}},

	// Organisation.
	{Entity: "Employee", Tool: "employee", Module: moduleOrganisation, Label: "employee",
		Holds:  "name, status, department, class, reporting line and, expanded, contact and employment details",
		Keys:   []keySpec{text("EmployeeID", "the employee id, e.g. EP00000001")},
		Expand: []string{"Attributes", "ContactInfo", "Delegates", "EmployeeSettings", "EmploymentHistory", "FinancialSettings"}},
	{Entity: "Salesperson", Tool: "salesperson", Module: moduleOrganisation, Label: "salesperson",
		Holds: "name, default commission percentage and sales subaccount",
		Keys:  []keySpec{text("SalespersonID", "the salesperson id")}},
	{Entity: "Currency", Tool: "currency", Module: moduleOrganisation, Label: "currency",
		Holds: "description, symbol, decimal precision and whether it is active and used for accounting",
		Keys:  []keySpec{text("CurrencyID", "the ISO code, e.g. USD")}},
}
