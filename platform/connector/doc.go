// Package connector is the contract between erpgate's platform and each ERP
// connector. A connector hands over its catalogue of tools as data and a few
// hooks (settings, credential checks, request authorisation); the MCP engine
// does everything else — validation, budgets, limits, redaction, usage events
// and error mapping — once, for every connector.
//
// A connector receives a Site, an authenticated *http.Client and arguments,
// and returns data. It never sees the database, the MCP library, the OAuth
// server or the web layer.
package connector
