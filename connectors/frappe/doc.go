// Package frappe is erpgate's connector for Frappe and ERPNext (v15). It
// reads the ERP through its REST API (/api/resource, /api/method and query
// reports) as the calling user, so Frappe's own role and user permissions
// decide what every tool returns: a user limited to one company sees only
// that company in every list, count, total and report, and a refusal by the
// ERP stays PERMISSION_DENIED, never an empty success.
//
// The catalogue (catalogue.go) is declared as data, one file per area:
//
//   - tools_user.go, tools_masters.go, tools_parties.go,
//     tools_company_masters.go, tools_fiscal_years.go: connection and master
//     data, built on directory.go;
//   - tools_selling.go, tools_buying.go, tools_payments.go: the six
//     transaction lists, built on transactions.go; tools_document.go:
//     get_document;
//   - tools_reports_*.go: query reports, built on reports.go (and ageing.go
//     for receivables and payables);
//   - tools_summaries_parties.go, tools_sales_summary.go,
//     tools_stock_risk.go: summaries;
//   - tools_search.go: the ChatGPT-compatible search and fetch pair.
//
// Shared rules live beside them: paging.go and ordering.go (stable pages
// with a name tie-breaker), filters.go (literal text search), summary.go
// (permission-aware counts and totals under currency rules), dates.go
// (explicit ranges or period presets, fiscal years per company),
// parties.go and normalize.go (names people say), company.go, and
// decimal.go (exact amounts: Frappe's number text is kept, and every sum is
// computed with math/big, never float64).
package frappe
