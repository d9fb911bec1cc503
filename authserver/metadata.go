package authserver

import (
	"encoding/json"
	"net/http"
)

// serverMetadata is the RFC 8414 document. The same document is served as
// OpenID discovery, which some MCP clients read instead.
type serverMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint"`
	TokenEndpoint                              string   `json:"token_endpoint"`
	RegistrationEndpoint                       string   `json:"registration_endpoint"`
	RevocationEndpoint                         string   `json:"revocation_endpoint"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	ResponseModesSupported                     []string `json:"response_modes_supported"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported     []string `json:"revocation_endpoint_auth_methods_supported"`
	ScopesSupported                            []string `json:"scopes_supported"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported"`
}

var clientAuthMethods = []string{"none", "client_secret_basic", "client_secret_post"}

func (s *Server) serveServerMetadata(w http.ResponseWriter, _ *http.Request) {
	writeMetadata(w, serverMetadata{
		Issuer:                                     s.issuer,
		AuthorizationEndpoint:                      s.publicURL("/oauth/authorize"),
		TokenEndpoint:                              s.publicURL("/oauth/token"),
		RegistrationEndpoint:                       s.publicURL("/oauth/register"),
		RevocationEndpoint:                         s.publicURL("/oauth/revoke"),
		ResponseTypesSupported:                     []string{"code"},
		ResponseModesSupported:                     []string{"query"},
		GrantTypesSupported:                        []string{"authorization_code", "refresh_token"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		TokenEndpointAuthMethodsSupported:          clientAuthMethods,
		RevocationEndpointAuthMethodsSupported:     clientAuthMethods,
		ScopesSupported:                            supportedScopes,
		ClientIDMetadataDocumentSupported:          true,
		AuthorizationResponseIssParameterSupported: true,
	})
}

// resourceMetadata is the RFC 9728 document of one MCP URL.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
}

func (s *Server) resourceMetadataOf(res resource) resourceMetadata {
	return resourceMetadata{
		Resource:               res.URL,
		AuthorizationServers:   []string{s.issuer},
		ScopesSupported:        []string{ScopeRead},
		BearerMethodsSupported: []string{"header"},
		// Deliberately generic: metadata is public, and naming the site
		// would let anyone probe which slugs exist.
		ResourceName: "erpgate ERP access",
	}
}

// resourceMetadataURL is where the metadata of res is published.
func (s *Server) resourceMetadataURL(res resource) string {
	if res.generic() {
		return s.publicURL("/.well-known/oauth-protected-resource/mcp")
	}
	return s.publicURL("/.well-known/oauth-protected-resource/sites/" + res.Slug + "/mcp")
}

func (s *Server) serveSiteResourceMetadata(w http.ResponseWriter, r *http.Request) {
	res, ok := s.parseResource(s.publicURL("/sites/" + r.PathValue("slug") + "/mcp"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	writeMetadata(w, s.resourceMetadataOf(res))
}

func (s *Server) serveGenericResourceMetadata(w http.ResponseWriter, _ *http.Request) {
	writeMetadata(w, s.resourceMetadataOf(s.genericResource()))
}

// writeMetadata answers with a public, cacheable JSON document that any
// origin may read (browser-based MCP clients fetch it cross-origin).
func writeMetadata(w http.ResponseWriter, v any) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// oauthError is an RFC 6749 §5.2 error body.
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// writeOAuthError answers a back-channel endpoint's error; never cached.
func writeOAuthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, status, oauthError{Error: code, Description: description})
}
