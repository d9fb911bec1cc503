package adminapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/netguard"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/activity"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// Deps is what the admin API needs from the rest of erpgate.
type Deps struct {
	// Store is the site registry.
	Store *sites.Store
	// Registry holds the connectors this deployment serves.
	Registry *connector.Registry
	// AdminToken is the operator's bearer token. When it is not set, every
	// authenticated route answers 401.
	AdminToken secrets.Secret
	// PublicURL turns an absolute path into erpgate's public URL.
	PublicURL func(path string) string
	// IsDevHost reports whether plain http is acceptable for host (besides
	// loopback, which always is). It may be nil.
	IsDevHost func(host string) bool
	// HTTPClient returns the outbound client for site, authorised with auth.
	// It is used to verify credentials before they are saved.
	HTTPClient func(site connector.Site, auth connector.Authorizer) *http.Client
	// ERPAddresses is the address policy for ERPs: a site is registered
	// (or moved) only if its host is exempt or resolves to public
	// addresses only. Nil (development) allows every address.
	ERPAddresses *netguard.Policy
	// Logger receives one line per admin action. It may be nil.
	Logger *zap.Logger
	// Settings holds the live settings; nil leaves their routes out.
	Settings *livesettings.Store
	// Admin is the site-administration layer the handlers call. When nil,
	// New builds one from the fields above.
	Admin *siteadmin.Service
	// Activity reads the usage and audit events.
	Activity *activity.Store
}

// API serves /api/v1.
type API struct {
	deps  Deps
	layer *siteadmin.Service
	log   *zap.Logger
	// routes are the authenticated and public routes Register added, as
	// full echo path templates by method, for telling 405 from 404.
	routes []registeredRoute
}

type registeredRoute struct {
	method string
	path   string
}

// New returns the admin API. It panics if a required dependency is missing,
// since that is a wiring mistake found at start-up.
func New(deps Deps) *API {
	switch {
	case deps.Store == nil:
		panic("adminapi: New: Store is nil")
	case deps.Registry == nil:
		panic("adminapi: New: Registry is nil")
	case deps.PublicURL == nil:
		panic("adminapi: New: PublicURL is nil")
	case deps.HTTPClient == nil:
		panic("adminapi: New: HTTPClient is nil")
	case deps.Activity == nil:
		panic("adminapi: New: Activity is nil")
	}
	log := deps.Logger
	if log == nil {
		log = zap.NewNop()
	}
	admin := deps.Admin
	if admin == nil {
		admin = siteadmin.New(siteadmin.Deps{
			Store: deps.Store, Registry: deps.Registry, IsDevHost: deps.IsDevHost,
			HTTPClient: deps.HTTPClient, ERPAddresses: deps.ERPAddresses, Settings: deps.Settings, Logger: log,
			PublicURL: deps.PublicURL,
		})
	}
	return &API{deps: deps, layer: admin, log: log.Named("adminapi")}
}

// Register adds the API's routes to g, which the caller mounts at /api/v1.
// Call it once. Unknown paths and methods under g get the API's own JSON
// errors rather than the server's default pages.
func (a *API) Register(g *echo.Group) {
	// Public: clients fetch the description before they have a token.
	a.add(g, http.MethodGet, "/openapi.json", a.serveOpenAPI)

	a.admin(g, http.MethodGet, "/sites", "list_sites", a.listSites)
	a.admin(g, http.MethodPost, "/sites", "create_site", a.createSite)
	a.admin(g, http.MethodGet, "/sites/:id", "get_site", a.getSite)
	a.admin(g, http.MethodPatch, "/sites/:id", "update_site", a.updateSite)
	a.admin(g, http.MethodDelete, "/sites/:id", "delete_site", a.deleteSite)

	a.admin(g, http.MethodPut, "/sites/:id/connections/:type", "put_connection", a.putConnection)
	a.admin(g, http.MethodDelete, "/sites/:id/connections/:type", "delete_connection", a.deleteConnection)

	a.admin(g, http.MethodGet, "/sites/:id/service-tokens", "list_service_tokens", a.listServiceTokens)
	a.admin(g, http.MethodPost, "/sites/:id/service-tokens", "issue_service_token", a.issueServiceToken)
	a.admin(g, http.MethodDelete, "/sites/:id/service-tokens/:token_id", "revoke_service_token", a.revokeServiceToken)

	a.admin(g, http.MethodGet, "/sites/:id/preflight", "get_preflight", a.getPreflight)
	a.admin(g, http.MethodPost, "/sites/:id/preflight", "run_preflight", a.runPreflight)

	a.admin(g, http.MethodGet, "/sites/:id/people", "list_people", a.listPeople)
	a.admin(g, http.MethodDelete, "/sites/:id/people/:erp_user", "revoke_person", a.revokePerson)

	a.admin(g, http.MethodGet, "/usage-events", "list_usage_events", a.listUsageEvents)
	a.admin(g, http.MethodGet, "/audit-events", "list_audit_events", a.listAuditEvents)
	if a.deps.Settings != nil {
		a.admin(g, http.MethodGet, "/settings", "list_settings", a.listSettings)
		a.admin(g, http.MethodPut, "/settings/:name", "change_setting", a.putSetting)
		a.admin(g, http.MethodDelete, "/settings/:name", "reset_setting", a.resetSetting)
		a.admin(g, http.MethodGet, "/sites/:id/settings", "list_site_settings", a.listSiteSettings)
		a.admin(g, http.MethodPut, "/sites/:id/settings/:name", "change_site_setting", a.putSiteSetting)
		a.admin(g, http.MethodDelete, "/sites/:id/settings/:name", "reset_site_setting", a.resetSiteSetting)
	}

	g.RouteNotFound("", a.routeNotFound, a.envelope)
	g.RouteNotFound("/*", a.routeNotFound, a.envelope)
}

// admin adds an authenticated route whose every use is logged as action.
func (a *API) admin(g *echo.Group, method, path, action string, h echo.HandlerFunc) {
	a.add(g, method, path, h, a.audit(action), a.requireAdmin)
}

// add adds a route wrapped in the API's error envelope.
func (a *API) add(g *echo.Group, method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	r := g.Add(method, path, h, append([]echo.MiddlewareFunc{a.envelope}, m...)...)
	a.routes = append(a.routes, registeredRoute{method: method, path: r.Path})
}
