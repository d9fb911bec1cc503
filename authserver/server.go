package authserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/token/hmac"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/mcpengine"
	"github.com/erpgate/erpgate/platform/infra/invalidate"
	"github.com/erpgate/erpgate/platform/infra/metrics"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

// Deps is what the authorization server needs from the rest of erpgate.
type Deps struct {
	Store    *storage.Store
	Sites    *sites.Store
	Registry *connector.Registry
	// Engine serves MCP once a request is authenticated.
	Engine *mcpengine.Engine
	// HTTPClient returns the outbound client for site, authorised with
	// auth (nil for none). Every ERP request goes through it.
	HTTPClient func(site connector.Site, auth connector.Authorizer) *http.Client
	// PublicBaseURL is erpgate's public base URL: the issuer, and the base
	// of every advertised URL.
	PublicBaseURL string
	// IsDevHost reports whether plain http is acceptable for a typed ERP
	// URL's host (besides loopback). It may be nil.
	IsDevHost func(host string) bool
	Logger    *zap.Logger

	// AccessTokenLifespan, RefreshTokenLifespan and SignInTimeout default to
	// 15m, 720h and 10m.
	AccessTokenLifespan  time.Duration
	RefreshTokenLifespan time.Duration
	SignInTimeout        time.Duration
	// AccessGateInterval is how long a passed access gate holds before an
	// ERP token refresh reads it again; it defaults to 5m.
	AccessGateInterval time.Duration
	// CIMD configures Client ID Metadata Document fetches.
	CIMD CIMDOptions
	// ClientIP returns the address a request comes from, for the limits
	// on unauthenticated endpoints. nil: the connection's remote address.
	// Only the caller knows which proxies may be believed.
	ClientIP func(*http.Request) string
	// SourceLimits bound unauthenticated requests per source; zero fields
	// take their defaults.
	SourceLimits SourceLimits
	// Lookups bounds the access tokens that are not valid one source may
	// have looked up, shared with the other doors that take tokens. nil:
	// a bound of the authserver's own, at sourcelimit.DefaultLookups.
	Lookups *sourcelimit.Lookups
	// Metrics, when set, counts sign-ins and ERP token refreshes.
	Metrics *metrics.Metrics
	// Invalidations, when set, lets each replica cache for CacheTTL what
	// a warm MCP call needs (the access token's grant, the site, the
	// user's ERP token), dropped on every replica as soon as any of them
	// changes. nil: every call reads them from the database.
	Invalidations invalidate.Source
	CacheTTL      time.Duration
}

// Server is the authorization server and the OAuth MCP endpoints. It is an
// http.Handler for the paths Paths lists.
type Server struct {
	deps     Deps
	log      *zap.Logger
	provider fosite.OAuth2Provider
	config   *fosite.Config
	issuer   string
	// devMode is true when erpgate is served over plain http (only possible
	// on loopback or configured development hosts): cookies cannot be
	// Secure, and Client ID Metadata Documents may live on private hosts.
	devMode bool
	cimd    *cimdResolver
	// kit renders every page; pages are the sign-in's own.
	kit      *pagekit.Kit
	pages    signInPages
	upstream *upstreamTokens
	grants   *invalidate.Cache[grant]
	// signer checks that a bearer token is one erpgate signed, which the
	// per-source bound on lookups lets through (grantOf); signedFailed
	// holds the hashes of such tokens that failed, bounded again.
	signer       *hmac.HMACStrategy
	signedFailed sourcelimit.TokenSet
	// flowKey makes and checks the check values of sign-in flow ids
	// (newFlowID), derived from the token-signing key so that every
	// replica has it; failedFlows holds the hashes of such ids that
	// failed a step, bounded again (admitFlowLookup).
	flowKey     []byte
	failedFlows sourcelimit.TokenSet
	mux         *http.ServeMux
	// Per-source limits of the endpoints that need no authentication.
	registerLimit, authorizeLimit, chooseSiteLimit *sourceLimiter
	lookups                                        *sourcelimit.Lookups
}

// New builds the server. It reads (or, on first start, creates) the token
// signing key, so it needs the database.
func New(ctx context.Context, deps Deps) (*Server, error) {
	switch {
	case deps.Store == nil || deps.Sites == nil || deps.Registry == nil || deps.Engine == nil || deps.HTTPClient == nil:
		return nil, errors.New("authserver: Store, Sites, Registry, Engine and HTTPClient are required")
	case deps.PublicBaseURL == "":
		return nil, errors.New("authserver: PublicBaseURL is required")
	}
	if deps.Logger == nil {
		deps.Logger = zap.NewNop()
	}
	if deps.AccessTokenLifespan <= 0 {
		deps.AccessTokenLifespan = 15 * time.Minute
	}
	if deps.RefreshTokenLifespan <= 0 {
		deps.RefreshTokenLifespan = 720 * time.Hour
	}
	if deps.SignInTimeout <= 0 {
		deps.SignInTimeout = 10 * time.Minute
	}
	if deps.AccessGateInterval <= 0 {
		deps.AccessGateInterval = 5 * time.Minute
	}
	if deps.ClientIP == nil {
		deps.ClientIP = directClientIP
	}
	deps.SourceLimits = deps.SourceLimits.withDefaults()
	key, err := deps.Store.TokenHMACKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("authserver: %w", err)
	}
	s := &Server{
		flowKey: flowKeyOf(key),
		deps:    deps,
		log:     deps.Logger.Named("authserver"),
		issuer:  strings.TrimRight(deps.PublicBaseURL, "/"),
		devMode: strings.HasPrefix(deps.PublicBaseURL, "http://"),
	}
	if s.kit, err = pagekit.New(deps.PublicBaseURL); err != nil {
		return nil, fmt.Errorf("authserver: %w", err)
	}
	if s.pages, err = parseSignInPages(s.kit); err != nil {
		return nil, err
	}
	s.registerLimit = newSourceLimiter(deps.SourceLimits.Register, time.Now)
	s.authorizeLimit = newSourceLimiter(deps.SourceLimits.Authorize, time.Now)
	s.chooseSiteLimit = newSourceLimiter(deps.SourceLimits.ChooseSite, time.Now)
	s.lookups = deps.Lookups
	if s.lookups == nil {
		s.lookups = sourcelimit.NewLookups(sourcelimit.Limit{}, deps.ClientIP)
	}
	s.cimd = newCIMDResolver(deps.Store, deps.CIMD, s.devMode)
	s.cimd.fetchLimit = newSourceLimiter(deps.SourceLimits.FetchDocument, time.Now)
	deps.Store.SetClientResolver(s.cimd)
	s.grants = invalidate.NewCache[grant](deps.Invalidations, deps.CacheTTL)
	s.upstream = newUpstreamTokens(s)
	// What this replica changes, it forgets at once; the others are told
	// by the rows' notifications.
	deps.Store.OnUserChange(func(site uuid.UUID, user string) { s.forgetUser(site.String(), user) })

	s.config = &fosite.Config{
		AccessTokenLifespan:   deps.AccessTokenLifespan,
		RefreshTokenLifespan:  deps.RefreshTokenLifespan,
		AuthorizeCodeLifespan: 5 * time.Minute,
		GlobalSecret:          key,
		// OAuth 2.1: PKCE for every client, S256 only.
		EnforcePKCE:                    true,
		EnablePKCEPlainChallengeMethod: false,
		// A refresh token with every grant, whether or not the client
		// asked for offline_access: MCP clients are long-lived.
		RefreshTokenScopes:       []string{},
		ScopeStrategy:            fosite.ExactScopeStrategy,
		AudienceMatchingStrategy: s.audienceStrategy,
		ClientSecretsHasher:      sha256Hasher{},
		RedirectSecureChecker:    redirectURISecure,
		TokenURL:                 s.publicURL("/oauth/token"),
		AccessTokenIssuer:        s.issuer,
		OmitRedirectScopeParam:   true,
		// Only access tokens authenticate an MCP request: fosite's
		// introspection would otherwise also accept a refresh token as a
		// bearer token, which never rotates when used that way, so reuse
		// detection would never see it (issue 14).
		DisableRefreshTokenValidation: true,
	}
	s.signer = &hmac.HMACStrategy{Config: s.config}
	strategy := oauth2.NewHMACSHAStrategyUnPrefixed(s.signer, s.config)
	s.provider = compose.Compose(s.config, deps.Store, strategy,
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenRevocationFactory,
		compose.OAuth2TokenIntrospectionFactory,
		compose.OAuth2PKCEFactory,
	)
	s.routes()
	return s, nil
}

// publicURL joins the public base URL and path.
func (s *Server) publicURL(path string) string {
	return s.issuer + "/" + strings.TrimLeft(path, "/")
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /.well-known/oauth-authorization-server", s.serveServerMetadata)
	m.HandleFunc("GET /.well-known/openid-configuration", s.serveServerMetadata)
	m.HandleFunc("GET /.well-known/oauth-protected-resource/sites/{slug}/mcp", s.serveSiteResourceMetadata)
	m.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.serveGenericResourceMetadata)
	m.HandleFunc("POST /oauth/register", s.serveRegister)
	// Registration, token and revocation answer any origin, for MCP
	// clients that run in a browser; a browser asks first (a JSON
	// registration, or a request with an Authorization header).
	for _, path := range []string{"/oauth/register", "/oauth/token", "/oauth/revoke"} {
		m.HandleFunc("OPTIONS "+path, servePreflight)
	}
	m.HandleFunc("GET /oauth/authorize", s.serveAuthorize)
	m.HandleFunc("POST /oauth/authorize", s.serveAuthorize)
	m.HandleFunc("POST /oauth/site", s.serveChooseSite)
	m.HandleFunc("GET /oauth/site", s.serveChooseSiteOpened)
	m.HandleFunc("GET "+sites.SharedCallbackPath, s.serveCallback)
	m.HandleFunc("GET "+sites.SiteCallbackPath("{slug}"), s.serveCallback)
	m.HandleFunc("GET /oauth/consent", s.serveConsentPage)
	m.HandleFunc("POST /oauth/consent", s.serveConsent)
	m.HandleFunc("POST /oauth/token", s.serveToken)
	m.HandleFunc("POST /oauth/revoke", s.serveRevoke)
	m.HandleFunc("/sites/{slug}/mcp", s.serveSiteMCP)
	m.HandleFunc("/mcp", s.serveGenericMCP)
	s.mux = m
}

// servePreflight answers a CORS preflight of a back-channel endpoint: any
// origin, POST, the headers those requests carry. Never credentials:
// cookies play no part there.
func servePreflight(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// ServeHTTP serves the paths Paths lists. The OAuth endpoints learn the
// request's source, for the limits applied below them.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/oauth/") {
		r = r.WithContext(withSource(r.Context(), s.requestSource(r)))
	}
	s.mux.ServeHTTP(w, r)
}

// Paths lists the paths the server answers, in echo's route syntax, for
// the caller to mount (every method goes to ServeHTTP, which answers 405
// itself).
func Paths() []string {
	return []string{
		"/.well-known/oauth-authorization-server",
		"/.well-known/openid-configuration",
		"/.well-known/oauth-protected-resource/sites/:slug/mcp",
		"/.well-known/oauth-protected-resource/mcp",
		"/oauth/register",
		"/oauth/authorize",
		"/oauth/site",
		sites.SharedCallbackPath,
		sites.SiteCallbackPath(":slug"),
		"/oauth/consent",
		"/oauth/token",
		"/oauth/revoke",
		"/sites/:slug/mcp",
		"/mcp",
	}
}
