// Package storage is the authorization server's persistence in Postgres:
// the fosite storage interfaces (clients, authorization codes, PKCE
// sessions, access and refresh tokens with rotation, reuse detection and
// revocation), registered clients and the Client ID Metadata Document cache,
// sign-in flows in progress, consents, sign-in audit events, and each user's
// ERP tokens, sealed with the deployment keyring.
//
// Tokens are found by the SHA-256 of their fosite signature; no token or
// signature is ever stored. Driver errors are converted to fosite's
// sentinels at this boundary (no rows becomes fosite.ErrNotFound), so the
// fosite handlers react to them as the fosite contract documents.
package storage
