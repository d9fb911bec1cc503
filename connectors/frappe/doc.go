// Package frappe is erpgate's connector for Frappe and ERPNext (v15). It
// reads the ERP through its REST API (/api/resource, /api/method and query
// reports) as the calling user, so Frappe's own role and user permissions
// decide what every tool returns.
//
// The catalogue is declared as data in the tools_*.go files, one file per
// area; the shared request, filter and paging code lives beside it.
package frappe
