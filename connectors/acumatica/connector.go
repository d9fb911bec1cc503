package acumatica

import (
	"net/http"

	"golang.org/x/sync/singleflight"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/inmemory"
)

// Layout: connector.go, settings.go and service_auth.go implement the
// connector contract; client.go, contract.go, gi_*.go, openapi.go and
// cache.go read Acumatica; failure.go, contract_errors.go and
// filterguide.go turn its failures into errors a model can act on;
// unwrap.go and envelope.go shape results. Each tool is declared in the
// tools_*.go file of its area (the per-entity getters as data in
// getters.go), and catalogue.go lists them all.

// Kind is the site kind this connector serves.
const Kind = "acumatica"

// Options are what the connector needs at run time from the platform. The
// zero value gives a connector that can list its catalogue and run tool
// calls, but whose service connections keep their tokens in this process
// only and cannot sign in (no HTTPClient).
type Options struct {
	// HTTPClient returns the outbound client for a site (the platform's one
	// transport). Service connections use it, without authorisation, to
	// reach the site's token endpoint.
	HTTPClient func(site connector.Site, auth connector.Authorizer) *http.Client
	// ServiceTokens keeps service connections' tokens, shared by every
	// replica and renewed under a per-(site, user) lock. Default: in this
	// process only.
	ServiceTokens connector.ServiceTokenStore
	// CanaryInquiry returns the canary inquiry of sites whose settings
	// name none (the operator's live setting); nil or "" is
	// DefaultCanaryInquiry.
	CanaryInquiry func() string
}

// Connector implements connector.Connector for Acumatica ERP. Users sign in
// through the embedded OAuth (connector.UpstreamOAuth and
// connector.UpstreamAccessGate); bots use service connections (an OAuth
// client plus a dedicated API user).
type Connector struct {
	OAuth
	service *serviceAuth
	tools   []connector.Tool
	// fetches shares downloads of large metadata documents between
	// concurrent calls on one site.
	fetches singleflight.Group
}

var (
	_ connector.Connector          = (*Connector)(nil)
	_ connector.UpstreamOAuth      = (*Connector)(nil)
	_ connector.UpstreamAccessGate = (*Connector)(nil)
)

// New returns the Acumatica connector.
func New(opts Options) *Connector {
	if opts.ServiceTokens == nil {
		opts.ServiceTokens = inmemory.NewServiceTokens(nil)
	}
	c := &Connector{OAuth: OAuth{canary: opts.CanaryInquiry}, service: newServiceAuth(opts.HTTPClient, opts.ServiceTokens)}
	c.tools = catalogue(c)
	return c
}

// Kind returns "acumatica".
func (*Connector) Kind() string { return Kind }

// Tools returns the catalogue.
func (c *Connector) Tools() []connector.Tool { return c.tools }
