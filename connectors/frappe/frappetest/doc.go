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
//
// Writes (POST/PUT/DELETE on /api/resource) are refused with 403: the
// simulator is read-only.
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
//	mcp.bot@demo.example       service        demobotkey001  demobotsecret01   demo-bot-pw
//
// The one-company user has a User Permission on Company "Demo Holdings NZ
// Ltd": rows of every doctype with a Company link are silently filtered
// from lists and counts (except frappe.client.get_count), and GETting
// another company's document is a 403. The no-accounting user has only the
// Sales User role: Customer, Item, Company, Sales Order are readable, while
// accounting doctypes (Sales Invoice, Account, Cost Center, GL Entry,
// Payment Entry, Bank Transaction, ...) answer 403. Bearer tokens come from
// Simulator.IssueAccessToken.
//
// # Data
//
// Data is generated from a fixed seed when the simulator is created: three
// companies (NZD, AUD, USD) with charts of accounts, cost centres and
// warehouses, fiscal years 2025 and 2026, 60 customers, 42 items, 400 sales
// invoices (drafts, cancellations with amendments, returns, multi-currency,
// partly paid and overdue) and 120 sales orders. Options.Now only changes
// derived invoice statuses. Simulator.Data exposes everything so tests can
// compute expected values.
//
// # Faithful quirks
//
// Lists have no default ORDER BY in v15 (rows come in name order here);
// limit_page_length=0 returns everything and ignores limit_start; child
// table filters duplicate parents; string comparison is case- and
// accent-insensitive; a backslash in a "like" value is a literal backslash
// (Frappe doubles it), so "%" and "_" cannot be escaped; count(*) is
// rejected; unknown order_by columns are MariaDB errors (500).
package frappetest
