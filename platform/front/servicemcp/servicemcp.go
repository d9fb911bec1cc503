// Package servicemcp is the front door for bots: /service/mcp. A generated
// service token (only its SHA-256 is stored) selects one site and that
// site's fixed API credential; the call then runs through the shared engine
// as that API user.
//
// Every request is authenticated: the Resolver caches a token's site and
// credential for at most 30 s and never past the token's expiry, which
// every call checks, and a revocation or any change of the site drops the
// entry on every replica at once (invalidate.Cache, LISTEN/NOTIFY).
package servicemcp

import (
	"errors"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/mcpengine"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// HeaderServiceToken carries the service token; Authorization: Bearer works too.
const HeaderServiceToken = "X-Erpgate-Service-Token"

// Handler serves /service/mcp.
type Handler struct {
	Resolver *Resolver
	Engine   *mcpengine.Engine
	Logger   *zap.Logger
	// Lookups bounds the unknown tokens one source may have looked up
	// (nil: unbounded).
	Lookups *sourcelimit.Lookups
}

// ServeHTTP refuses a browser origin the engine does not allow (403), then
// authenticates the service token and hands the request to the engine.
// Authentication failures are answered with 401 and a JSON-RPC error
// body, before any MCP dispatch, so they make no usage event.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.Engine.RefuseOrigin(w, r) {
		return
	}
	token, ok := presentedToken(r)
	if !ok {
		mcpengine.WriteJSONRPCError(w, http.StatusBadRequest, nil, mcp.INVALID_REQUEST,
			"the request carries two different service tokens (in X-Erpgate-Service-Token or as Authorization: Bearer); send one token")
		return
	}
	if token == "" {
		unauthorized(w, "a service token is required: send it in the X-Erpgate-Service-Token header or as Authorization: Bearer")
		return
	}
	res, err := h.Resolver.Resolve(r.Context(), token, h.Lookups.For(r))
	var refused *sourcelimit.LookupsRefused
	switch {
	case errors.As(err, &refused):
		mcpengine.WriteLookupsRefused(w, h.Logger, "service MCP: tokens that are not valid", refused)
		return
	case errors.Is(err, sites.ErrTokenInvalid):
		unauthorized(w, "the service token is not valid: it is unknown, has expired or has been revoked")
		return
	case errors.Is(err, sites.ErrSiteDisabled):
		mcpengine.WriteJSONRPCError(w, http.StatusForbidden, nil, mcp.INVALID_REQUEST, "the site of this service token is disabled")
		return
	case errors.Is(err, errNoCredential):
		mcpengine.WriteJSONRPCError(w, http.StatusForbidden, nil, mcp.INVALID_REQUEST, "the site of this service token has no API credential any more; ask the operator to add one")
		return
	case err != nil:
		h.unavailable(w, "resolve service token", err)
		return
	}
	h.Engine.ServeMCP(w, r, mcpengine.Session{
		Site:            res.site,
		Principal:       connector.Principal{AuthType: "service_token"},
		Authorizer:      res.auth,
		ErrorsAsResults: strings.EqualFold(r.Header.Get(mcpengine.HeaderErrorFormat), "result"),
		LimitKey:        "service:" + res.tokenID.String(),
		ClientID:        res.tokenID.String(),
	})
}

// presentedToken reads the token from the dedicated header or a Bearer
// Authorization header. Tokens in the query string are never read. Two
// different tokens (one in each header, or in two lines of one) are
// refused (ok false): which site the call runs as must not depend on
// which header or line is read first.
func presentedToken(r *http.Request) (token string, ok bool) {
	var found []string
	for _, v := range r.Header.Values(HeaderServiceToken) {
		if t := strings.TrimSpace(v); t != "" {
			found = append(found, t)
		}
	}
	for _, v := range r.Header.Values("Authorization") {
		if scheme, value, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
			if t := strings.TrimSpace(value); t != "" {
				found = append(found, t)
			}
		}
	}
	for _, t := range found[min(1, len(found)):] {
		if t != found[0] {
			return "", false
		}
	}
	if len(found) == 0 {
		return "", true
	}
	return found[0], true
}

func unauthorized(w http.ResponseWriter, message string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="erpgate-service"`)
	mcpengine.WriteJSONRPCError(w, http.StatusUnauthorized, nil, mcp.INVALID_REQUEST, message)
}

func (h *Handler) unavailable(w http.ResponseWriter, what string, err error) {
	status := http.StatusInternalServerError
	msg := "erpgate could not serve this request; the operator's logs have details"
	if errors.Is(err, database.ErrUnavailable) {
		status = http.StatusServiceUnavailable
		msg = "erpgate's database is unavailable; retry shortly"
		w.Header().Set("Retry-After", "5")
	}
	h.Logger.Error("service MCP request failed", zap.String("step", what), zap.Error(err))
	mcpengine.WriteJSONRPCError(w, status, nil, mcp.INTERNAL_ERROR, msg)
}
