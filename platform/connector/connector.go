package connector

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// Connector is one ERP kind.
type Connector interface {
	// Kind is the stable identifier stored with each site ("frappe").
	Kind() string
	// Tools returns the catalogue. It is called once, at registration.
	Tools() []Tool
	// NormalizeSettings validates a site's connector settings and returns
	// them in canonical form, with defaults filled in. An invalid setting is
	// reported as a *toolerr.Error with code INVALID_ARGUMENT.
	NormalizeSettings(raw json.RawMessage) (json.RawMessage, error)
	// APICredentialFields names the fields of an api_token connection, in
	// the order an operator enters them (for Frappe: api_key, api_secret).
	APICredentialFields() []CredentialField
	// APIAuthorizer turns the stored fields of an api_token connection into
	// request authorisation.
	APIAuthorizer(site Site, fields map[string]secrets.Secret) (Authorizer, error)
	// VerifyAPICredential checks that the credential behind client works,
	// and returns the ERP identity it authenticates as. It is called before a
	// connection is saved. A credential the ERP refuses is reported with code
	// AUTH_EXPIRED or PERMISSION_DENIED and a message an operator can act on.
	VerifyAPICredential(ctx context.Context, site Site, client *http.Client) (identity string, err error)
	// SiteRules says how the kind's sites are addressed and what makes two
	// of them the same.
	SiteRules() SiteRules
}

// SiteRules are a connector's rules for its sites' addresses.
//
// A base URL is one ERP instance. Several sites may share it when the
// instance serves several separate companies (Acumatica's tenants); the
// identity key tells them apart. The platform keeps one site per base URL
// and identity key (the sites_base_url_identity_key index), and the /mcp
// address page matches a typed address to a base URL, then asks for the
// identity when several sites share it.
type SiteRules struct {
	// BaseURLPath says a base URL may have a path: the instance lives under
	// a virtual directory (https://erp.example.com/AcumaticaERP). Without
	// it a site's base URL is its origin.
	BaseURLPath bool
	// IdentityName names the setting that tells sites at one base URL
	// apart, in the words an operator and a user know ("tenant"). "" when
	// a base URL is always one site.
	IdentityName string
	// Identity returns the identity key of a site from its settings as
	// NormalizeSettings returned them; "" when the site has none. Nil means
	// always "".
	Identity func(settings json.RawMessage) string
}

// IdentityOf returns the identity key of settings under r.
func (r SiteRules) IdentityOf(settings json.RawMessage) string {
	if r.Identity == nil {
		return ""
	}
	return r.Identity(settings)
}

// CredentialField describes one field of a stored credential.
type CredentialField struct {
	Name        string
	Description string
	// Secret fields are encrypted at rest and never returned by any API.
	Secret bool
}

// Authorizer adds credentials to an outbound request. The transport calls it
// only for requests under the site's base URL: its origin and, when it has
// one, its virtual directory.
type Authorizer interface {
	Authorize(req *http.Request) error
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(req *http.Request) error

// Authorize calls f.
func (f AuthorizerFunc) Authorize(req *http.Request) error { return f(req) }

// RedactionExemptions is implemented by a connector whose field names match
// the built-in redaction patterns although their values are not sensitive.
// The names are exact (compared case- and separator-insensitively); a field
// that merely contains one is still redacted.
type RedactionExemptions interface {
	RedactionExempt() []string
}

// RouteShaper is implemented by a connector that can name the route of a
// request path to its ERP, for trace spans: the path with every record
// key, document name, user or value of a call replaced by a placeholder
// ("/api/resource/Customer/{name}"), keeping only words of the ERP's API.
// escapedPath is the path as sent, relative to the site's base URL, and
// begins with "/". It returns "" for a path it does not know; the span
// then carries no part of it.
type RouteShaper interface {
	RouteShape(escapedPath string) string
}

// RenewableAuthorizer is an Authorizer whose credential can be renewed. When
// the ERP answers 401 to a request it authorised, the transport calls
// RejectAuthorization with that request; if it returns true, the credential
// was marked refused (so the next Authorize renews it) and the transport
// repeats the request once. An ERP may end a token before its stated expiry
// (revoked, restarted); this turns that into a renewal instead of an error.
type RenewableAuthorizer interface {
	Authorizer
	RejectAuthorization(req *http.Request) bool
}

// OwnUnauthorized is implemented by a connector that knows its ERP's own
// 401: the ERP refused the request's credential before doing anything
// with the request. The transport renews a refused credential and sends
// a write tool's request again only after such a 401: one in another
// shape (a proxy's or an SSO layer's, which may have answered after it
// forwarded the request) is returned as it is, since the change may have
// been made. Without this hook a write tool's request is never sent again
// after a 401. Reads are sent again after any 401, as before.
type OwnUnauthorized interface {
	OwnUnauthorized(header http.Header, body []byte) bool
}
