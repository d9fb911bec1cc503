// Package adminapi is erpgate's operator API, mounted at /api/v1: JSON in and
// out, authenticated with the deployment's ADMIN_TOKEN, described by the
// OpenAPI 3.1 document it serves at /api/v1/openapi.json.
//
// It owns the HTTP surface only. Sites, connections and service tokens live
// in package sites; ERP-specific rules (settings, credential fields, how a
// credential is verified) come from the connector of the site's kind. A
// credential is verified against the ERP before it is saved, and no response
// or log line ever carries a credential, a token value or a request body.
package adminapi
