// Package authserver will hold erpgate's OAuth 2.1 authorization server
// (fosite, storage in Postgres) for the per-site MCP endpoints. It is empty
// until that work lands; see the OAuth issue.
package authserver
