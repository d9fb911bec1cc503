package authserver

import (
	"strings"

	"github.com/ory/fosite"

	"github.com/erpgate/erpgate/platform/store/sites"
)

// Scopes erpgate issues. ScopeRead is what every tool needs; offline_access
// is accepted for clients that ask for refresh tokens explicitly (erpgate
// issues one either way).
const (
	ScopeRead          = "erp:read"
	scopeOfflineAccess = "offline_access"
)

var supportedScopes = []string{ScopeRead, scopeOfflineAccess}

// resource is an MCP URL erpgate serves: one site's, or the generic one
// where the site is chosen during sign-in.
type resource struct {
	// URL is the MCP URL exactly as advertised (the RFC 8707 resource and
	// the token audience).
	URL string
	// Slug names the site; empty for the generic endpoint.
	Slug string
}

func (r resource) generic() bool { return r.Slug == "" }

// siteResource returns the resource of a site's MCP endpoint.
func (s *Server) siteResource(slug string) resource {
	return resource{URL: s.publicURL("/sites/" + slug + "/mcp"), Slug: slug}
}

// genericResource returns the resource of /mcp.
func (s *Server) genericResource() resource {
	return resource{URL: s.publicURL("/mcp")}
}

// parseResource recognises an MCP URL of this deployment. Matching is exact
// (after dropping one trailing slash), on the configured public base URL:
// a resource indicator is an identifier, not a location to be normalised.
func (s *Server) parseResource(raw string) (resource, bool) {
	raw = strings.TrimSuffix(raw, "/")
	if raw == s.genericResource().URL {
		return s.genericResource(), true
	}
	prefix := s.publicURL("/sites/")
	if !strings.HasPrefix(raw, prefix) || !strings.HasSuffix(raw, "/mcp") {
		return resource{}, false
	}
	slug := strings.TrimSuffix(strings.TrimPrefix(raw, prefix), "/mcp")
	if sites.ValidateSlug(slug) != nil {
		return resource{}, false
	}
	return s.siteResource(slug), true
}

// audienceStrategy accepts audiences that are MCP URLs of this deployment.
// Clients never register audiences: the audience comes from the resource
// indicator, checked when the authorization request is made.
func (s *Server) audienceStrategy(_ []string, needle []string) error {
	for _, aud := range needle {
		if _, ok := s.parseResource(aud); !ok {
			return fosite.ErrInvalidRequest.WithHintf("The audience %q is not an MCP endpoint of this server.", aud)
		}
	}
	return nil
}
