// Package frappetest is a Frappe v15.55 / ERPNext v15 REST simulator: a real
// HTTP server (like net/http/httptest) serving deterministic demo data with
// Frappe's response shapes, error bodies and quirks, so the Frappe connector
// can be tested without a live site.
//
// # Endpoints
//
// Mounted under both /api and /api/v1 (trailing slash optional; doctype and
// name are percent-decoded; "+" is not a space):
//
//   - GET /api/resource/<doctype>: list (fields, filters, or_filters,
//     order_by, group_by, limit_start, limit_page_length, limit, as_dict)
//   - GET /api/resource/<doctype>/<name>: one document (nulls omitted)
//   - /api/method/frappe.client.get_list, frappe.client.get,
//     frappe.client.get_count (NOT permission-filtered, as in v15.55.1),
//     frappe.desk.reportview.get_count (permission-aware),
//     frappe.auth.get_logged_user, login, logout
//   - GET or POST /api/method/frappe.desk.query_report.run (report_name,
//     filters as a JSON string or, in a JSON body, an object,
//     ignore_prepared_report): the reports listed below
//
// Writes, as erpgate's write tools make them:
//
//   - POST /api/resource/Sales Order (create_doc: new_doc(**data).insert()):
//     link validation first ("Could not find Customer: X, Row #1: Item
//     Code: Y", LinkValidationError), then create permission (403
//     "Insufficient Permission for Sales Order"), MandatoryError, a
//     disabled customer (PartyDisabled), "Please enter Delivery Date",
//     "Expected Delivery Date should be after Sales Order Date"; a draft
//     named SAL-ORD-.YYYY.-.##### (the year of Options.Now), rates from
//     the item's price in the order currency when not sent, the company's
//     default sales tax (GST for the NZ and AU companies, on orders in
//     their currency; none for the US company); answer {"data": doc}
//     without nulls.
//   - PUT /api/resource/<doctype>/<name> (update_doc): doc.update(data)
//     then save: write permission, check_if_latest (a sent modified that
//     is not the stored one is a 417 TimestampMismatchError), docstatus
//     transitions (cancelled: "Cannot edit cancelled document"; submitted:
//     UpdateAfterSubmitError for any changed field), child tables replaced
//     by the rows sent (rows sent with their name keep it), Customer credit
//     limits checked as ERPNext does (one row per company, not below what
//     the customer owes the company); a Customer's email_id and mobile_no
//     are fetched from its primary Contact on save, and a Customer without
//     one that has either gets a Contact made from them, as ERPNext's
//     create_primary_contact does.
//   - POST /api/method/frappe.client.submit (doc as a dict or JSON
//     string): the document is the dict sent, so its modified is the one
//     checked; draft to submitted needs the submit right (Sales User for
//     Sales Order, Accounts User for Sales Invoice); a submitted document
//     is saved again as update-after-submit, as Frappe does; answer
//     {"message": doc} with nulls.
//   - POST /api/method/frappe.desk.form.utils.add_comment: 404 for a
//     missing document, 403 when the user may not read it, then a Comment
//     (comment_type Comment, comment_email and comment_by as sent) that
//     every user can list through /api/resource/Comment.
//
// Writes go to a copy of the seeded data owned by the simulator (Data
// stays the seeded, shared Dataset); every read of that simulator, by any
// user, sees them. DELETE, and writes to other DocTypes, are refused with
// 403. Deviations: submitting a Sales Invoice sets its status and
// outstanding_amount but posts no ledger entries; Contacts have no
// email_ids, phone_nos or links tables; comments do not update the
// document's _comments column.
//
// # Demo users
//
// All credentials are fixed. API key/secret work as
// "Authorization: token KEY:SECRET" or "Authorization: Basic
// base64(KEY:SECRET)"; the password works with POST /api/method/login.
//
//	email                      role           api key        api secret        password
//	accounts@demo.example      all-companies  demoacctkey01  demoacctsecret01  demo-accounts-pw
//	nz.accounts@demo.example   one-company    demonzkey0001  demonzsecret01    demo-nz-pw
//	sales.viewer@demo.example  no-accounting  demosaleskey1  demosalessecret1  demo-sales-pw
//	clerk@demo.example         field-limited  democlerkkey01 democlerksecret1  demo-clerk-pw
//	mcp.bot@demo.example       service        demobotkey001  demobotsecret01   demo-bot-pw
//	orders.viewer@demo.example order-viewer   demoviewkey01  demoviewsecret01  demo-viewer-pw
//	it.admin@demo.example      administrator  demoadminkey1  demoadminsecret1  demo-admin-pw
//
// The order viewer has only the Accounts User role: it reads Sales Orders,
// Sales Invoices and Customers but may not create Sales Orders or change
// Customers (the ERP's 403). Every user with the full set of business
// roles also has Sales Master Manager, which writes Customers.
//
// The administrator has the System Manager role (with every business role):
// openid_profile lists it, and only it may create OAuth Clients. Every
// other user is a non-administrator; the no-accounting user (only Sales
// User) is the one registration tests refuse.
//
// The one-company user has a User Permission on Company "Demo Holdings NZ
// Ltd": rows of every doctype with a Company link are silently filtered
// from lists and counts (except frappe.client.get_count), and GETting
// another company's document is a 403. The no-accounting user has only the
// Sales User role: Customer, Item, Warehouse, Bin, Company, Sales Order are
// readable, while accounting and buying doctypes (Sales Invoice, Purchase
// Order, Account, GL Entry, Payment Entry, Bank Transaction, ...) answer
// 403. The field-limited user reads what an accounts user reads but lacks
// the Accounts Manager role, which alone reads the fields at permlevel 1
// (Sales Invoice base_grand_total and base_net_total, Customer
// default_currency): list queries drop them silently, as v15's
// reportview.validate_fields does, and a document read with GET lacks
// them. Options.MissingFields makes a site
// whose schema lacks fields; naming one is a 417 "Field not permitted in
// query". Bearer tokens come from Simulator.IssueAccessToken.
//
// # Data
//
// Data is generated from a fixed seed: three companies (NZD, AUD, USD)
// with charts of accounts, cost centres and warehouses, fiscal years 2025
// and 2026, 60 customers, 36 suppliers in six supplier groups (legal
// suffixes, shared tokens, names that differ only by suffix), 52 items,
// 12 projects, one Bank and Bank Account per company, five Modes of
// Payment. Transactions run from 2025-01-01 to 2026-06-15: 400 sales
// invoices (drafts, cancellations with amendments, credit notes,
// multi-currency, partly paid and overdue), 120 sales orders, 96 purchase
// orders (received through purchase invoices with update_stock, so
// per_received and status follow the receipts; some Closed or On Hold),
// about 190 purchase invoices (goods receipts, service bills, debit
// notes, bill_no), about 450 Payment Entries (Receive and Pay, batched
// references, refunds of settled credit and debit notes as negative
// allocations, unallocated advances, over-payments, cancelled entries and
// drafts), about 490 Bank Transactions (reconciled against Payment Entries
// via payment_entries, bank fees and interest unreconciled, recent lines
// pending and, imported from a file without a currency column, without a
// currency; a reconciled entry's clearance_date is the statement date),
// opening and Material Issue Stock Entries, an opening Journal Entry per
// company, Bins, and Item Reorder levels per warehouse (some items and
// warehouses without levels, rules on warehouses without a Bin, two
// warehouse-group rules, one inert zero rule).
//
// Options.Now only changes derived invoice statuses and the report default
// "today". Options.ExtraSalesInvoices adds submitted, unpaid invoices for
// large-report benchmarks (about 3.5 GL Entries and one receivable row
// each; 30000 give a General Ledger of more than 50,000 rows for the NZ
// company); the seeded business documents are the same with or without
// them, ledger entry names are not. Options.ExtraCustomers adds customers
// newer than every seeded document (so "100% Pure Juice Co Pty Ltd" is no
// longer among the most recently modified), in NZD or in
// Options.ExtraCustomerCurrency (JPY: yen, the seeded currency without
// decimals, number format "#,###" as in frappe/geo/country_info.json).
//
// Per-site switches: Options.AccentSensitiveLike makes "like" compare
// accents, as Frappe on PostgreSQL (ILIKE) and accent-sensitive MariaDB
// collations do; Options.MissingDoctypes answers 404 "DocType X not found"
// for DocTypes the site does not have.
//
// # Ledgers
//
// GL Entries, Payment Ledger Entries and Stock Ledger Entries are posted
// from the vouchers the way ERPNext does (merged lines, negatives on the
// other side, round-off line, a cancelled voucher's entries and reversals
// all is_cancelled and its payment ledger delinked). They hold exactly:
// every voucher and every company's trial balance balances; an invoice's
// outstanding_amount is its total minus the allocations of submitted
// Payment Entries, and equals its live Payment Ledger balance; each
// receivable / payable account's balance is the outstanding of its
// invoices less unallocated payments; Stock Ledger balances run without
// going negative and end at the Bins; Stock In Hand equals the stock
// value (moving-average valuation in whole cents). The ledger tables are
// written on first use of those doctypes. All amounts are Decimals with
// nine decimal places; currency amounts are whole cents.
//
// Simulators with the same Now date, ExtraSalesInvoices and ExtraCustomers share one
// read-only Dataset; Simulator.Data exposes it so tests compute expected
// values from the documents (Data().List("GL Entry"), Get, Meta).
//
// # Reports
//
// query_report.run follows frappe/desk/query_report.py: the Report must
// exist (404), the user needs one of its roles ("You don't have access to
// Report: X") and report permission on its reference doctype ("You don't
// have permission to get a report on: Y"), both 403; Stock Balance is a
// prepared report (and so is any report in Options.PreparedReports)
// answering {"prepared_report":true,"doc":null,
// "add_total_row":true} unless ignore_prepared_report; the envelope is
// result, columns, message, chart, report_summary, skip_total_row, status,
// execution_time, add_total_row; rows of other companies are removed from
// reports with a Link-to-Company column (get_filtered_data); reports with
// add_total_row get a trailing JSON array total row; msgprint warnings come
// back in _server_messages. Each report reimplements ERPNext 15.110 with
// its real filters, column fieldnames, row keys and errors:
//
//   - General Ledger (GL Entry; Accounts User/Manager, Auditor): company,
//     from_date, to_date required; account, party_type, party, voucher_no,
//     against_voucher_no, cost_center, project, categorize_by (or legacy
//     group_by), include_dimensions, show_cancelled_entries,
//     show_opening_entries, add_values_in_transaction_currency, ...
//     'Opening' / 'Total' / 'Closing (Opening + Total)' rows with literal
//     quotes, running balance, presentation currency of a single account.
//   - Trial Balance (GL Entry): fiscal_year required ("Fiscal Year None is
//     required"), dates clamped into the year with _server_messages,
//     show_net_values, show_group_accounts, show_zero_values,
//     show_unclosed_fy_pl_balances, cost_center, project; 'Total' row.
//   - Profit and Loss Statement (GL Entry): filter_based_on, fiscal years or
//     period dates, periodicity (missing: KeyError 500), accumulated_values,
//     selected_view, cost_center, project; period columns like "mar_2025";
//     quoted total rows; report_summary, chart; the net profit is returned
//     in skip_total_row (6-tuple quirk).
//   - Accounts Receivable / Payable (+ Summary) (Sales / Purchase Invoice):
//     from the Payment Ledger; company (default company when missing),
//     report_date, ageing_based_on, calculate_ageing_with (absent = today),
//     range ("30, 60, 90, 120"; older range1..range4 also accepted), party,
//     party_type, party_account, customer_group, territory, supplier_group,
//     cost_center, project, group_by_party, in_party_currency,
//     show_gl_balance (summary); range1..rangeN columns, not-yet-due
//     amounts in no bucket, advances column in the summaries.
//   - Stock Balance (Stock Ledger Entry; prepared) and Stock Ledger: dates,
//     company, item_code, warehouse (with descendants), item_group, brand,
//     voucher_no, project; Stock Ledger's 'Opening' row with item_code and
//     warehouse, missing dates a 500 TypeError.
//   - Bank Reconciliation Statement (Journal Entry): company, account,
//     report_date; uncleared Journal and Payment Entries and the four
//     summary rows.
//
// User Permissions in reports behave as in ERPNext: General Ledger, Profit
// and Loss, Accounts Receivable / Payable and Trial Balance's period
// columns apply them as match conditions, so another company's report is
// empty (not an error); Trial Balance's opening balances do not (a real
// v15 leak, kept); Stock reports drop rows through their Company column;
// Bank Reconciliation Statement is refused with 403 because it reads the
// bank Account document.
//
// # Faithful quirks
//
// Lists have no default ORDER BY in v15 (rows come in name order here);
// limit_page_length=0 returns everything and ignores limit_start; child
// table filters duplicate parents; string comparison is case- and
// accent-insensitive, "like" per character ("_" matches "ß", "ss" does
// not, as in MariaDB); a backslash in a "like" value is a literal backslash
// (Frappe doubles it), so "%" and "_" cannot be escaped; count(*) is
// rejected; unknown order_by columns are MariaDB errors (500). In reports:
// Stock Balance rows carry "currency": 0.0 (flt of the currency code),
// P&L income rows have "opening_balance": -0.0, a Trial Balance's blank
// row survives only with show_zero_values, and AR credit notes that keep
// their own outstanding show under "paid".
//
// # Deliberate deviations
//
// Report amounts are exact (Frappe sums Python floats); GL and Payment
// Ledger "creation" stamps are the voucher's plus microseconds;
// lft/rgt of accounts, cost centres and warehouses are numbered per
// company; payments against foreign-currency invoices use the invoice's
// exchange rate (no exchange gain or loss journals); there are no Purchase
// Receipts, Delivery Notes, Period Closing Vouchers, finance books or
// accounting dimensions; AR/AP ignore based_on_payment_terms and
// show_future_payments; reports translate only the labels
// Options.Translations names (the quoted total rows of the General
// Ledger, Trial Balance and Profit and Loss Statement, the Stock Ledger's
// opening row, the Bank Reconciliation Statement's summary lines);
// execution_time is the real run time.
package frappetest
