package authserver

import (
	"errors"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/mcpengine"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// JSON-RPC error codes of the answers given before the engine sees a
// request (mcp-go stays inside platform/front/mcpengine).
const (
	jsonRPCInvalidRequest = -32600
	jsonRPCInternalError  = -32603
)

// serveSiteMCP is /sites/{slug}/mcp.
func (s *Server) serveSiteMCP(w http.ResponseWriter, r *http.Request) {
	// The route gives one path segment; parseResource would accept the
	// URL built from it exactly when the slug is valid.
	slug := r.PathValue("slug")
	if sites.ValidateSlug(slug) != nil {
		http.NotFound(w, r)
		return
	}
	s.serveMCP(w, r, s.siteResource(slug))
}

// serveGenericMCP is /mcp, whose tokens name their site in the grant.
func (s *Server) serveGenericMCP(w http.ResponseWriter, r *http.Request) {
	s.serveMCP(w, r, s.genericResource())
}

// serveMCP authenticates an OAuth MCP request and hands it to the engine.
// Only a Bearer token in the Authorization header counts: a token in the
// query string is ignored (RFC 6750 §2.3 is not supported: URLs end up in
// logs), and an MCP session id is never authentication.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request, res resource) {
	// A browser origin the engine does not allow is refused (403) before
	// any challenge, which would send its client through a sign-in only
	// for the engine to refuse it.
	if s.deps.Engine.RefuseOrigin(w, r) {
		return
	}
	ctx := r.Context()
	token, ok := bearerToken(r)
	if !ok {
		s.challenge(w, res, "", "this MCP endpoint needs an OAuth access token: sign in with your MCP client")
		return
	}
	g, err := s.grantOf(ctx, token, s.lookups.For(r))
	var refused *sourcelimit.LookupsRefused
	if errors.As(err, &refused) {
		w.Header().Set("Cache-Control", "no-store")
		mcpengine.WriteLookupsRefused(w, s.log, "MCP: access tokens that are not valid", refused)
		return
	}
	var siteErr *siteLoadError
	if errors.As(err, &siteErr) {
		if !siteErr.audience.Has(res.URL) {
			s.challenge(w, res, "invalid_token", "the access token was issued for another MCP URL")
			return
		}
		err = siteErr.err
		switch {
		case errors.Is(err, sites.ErrNotFound), errors.Is(err, errNoSignIn):
			s.challenge(w, res, "invalid_token", "the site of this token no longer offers sign-in")
		case database.IsUnavailable(err):
			s.unavailable(w, err)
		default:
			s.log.Error("load site for MCP request", zap.Error(err))
			mcpengine.WriteJSONRPCError(w, http.StatusInternalServerError, nil, jsonRPCInternalError, "erpgate could not serve this request; the operator's logs have details")
		}
		return
	}
	if err != nil {
		if database.IsUnavailable(err) {
			s.unavailable(w, err)
			return
		}
		s.challenge(w, res, "invalid_token", "the access token is invalid, expired or revoked")
		return
	}
	// The audience is the exact MCP URL the token was issued for: a token
	// for one site is refused at every other site and at /mcp.
	if !g.audience.Has(res.URL) {
		s.challenge(w, res, "invalid_token", "the access token was issued for another MCP URL")
		return
	}
	site := g.site
	if !res.generic() && site.site.Slug != res.Slug {
		s.challenge(w, res, "invalid_token", "the access token was issued for another site")
		return
	}
	s.deps.Engine.ServeMCP(w, r, mcpengine.Session{
		Site:       site.csite,
		Principal:  connector.Principal{AuthType: "oauth", Subject: g.subject},
		Authorizer: userAuthorizer{tokens: s.upstream, site: site, user: g.subject},
		LimitKey:   "user:" + site.site.ID.String() + ":" + g.subject,
		ClientID:   g.clientID,
	})
}

// bearerToken reads "Authorization: Bearer <token>".
func bearerToken(r *http.Request) (string, bool) {
	scheme, value, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	value = strings.TrimSpace(value)
	return value, value != ""
}

// challenge answers 401 with the WWW-Authenticate header MCP clients start
// discovery from (RFC 9728 §5.1, MCP authorization).
func (s *Server) challenge(w http.ResponseWriter, res resource, errCode, message string) {
	v := `Bearer resource_metadata="` + s.resourceMetadataURL(res) + `", scope="` + ScopeRead + `"`
	if errCode != "" {
		v += `, error="` + errCode + `"`
	}
	w.Header().Set("WWW-Authenticate", v)
	w.Header().Set("Cache-Control", "no-store")
	mcpengine.WriteJSONRPCError(w, http.StatusUnauthorized, nil, jsonRPCInvalidRequest, message)
}

func (s *Server) unavailable(w http.ResponseWriter, err error) {
	s.log.Error("MCP request: database unavailable", zap.Error(err))
	w.Header().Set("Retry-After", "5")
	mcpengine.WriteJSONRPCError(w, http.StatusServiceUnavailable, nil, jsonRPCInternalError, "erpgate's database is unavailable; retry shortly")
}
