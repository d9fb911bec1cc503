// Package authserver is erpgate's own OAuth 2.1 authorization server and
// the OAuth MCP endpoints it protects (docs/architecture.md).
//
// MCP clients (Claude, ChatGPT, Codex, VS Code) discover it through
// protected resource metadata (RFC 9728) and authorization server metadata
// (RFC 8414), register with dynamic client registration (RFC 7591) or a
// Client ID Metadata Document, and run the authorization code flow with
// PKCE S256. The resource indicator (RFC 8707) picks the site and becomes
// the token's audience, so a token for one site is refused at another.
//
// Between the authorization request and the code, the user signs in to
// their own ERP (the connector's connector.UpstreamOAuth), passes the
// connector's access gate if it has one, and consents. Their ERP tokens
// are kept, sealed, per (site, ERP user), and refreshed under a row lock
// that holds across replicas, so every tool call runs as them.
//
// fosite does the OAuth protocol work; its storage is authserver/storage
// (Postgres). Nothing here is held only in one process's memory.
package authserver
