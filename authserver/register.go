package authserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/secrets"
)

// Bounds on a registration: open registration must not be a way to fill
// the database.
const (
	maxRegistrationBytes = 16 << 10
	maxRedirectURIs      = 10
	maxClientNameLength  = 200
)

// registrationRequest is the part of RFC 7591 client metadata erpgate uses.
type registrationRequest struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name"`
	Scope                   string   `json:"scope"`
}

// registrationResponse is RFC 7591 §3.2.1.
type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name,omitempty"`
	Scope                   string   `json:"scope"`
}

// errInvalidMetadata is a registration the server refuses (RFC 7591 §3.2.2).
type errInvalidMetadata struct{ code, description string }

func (e *errInvalidMetadata) Error() string { return e.code + ": " + e.description }

func invalidMetadata(format string, args ...any) error {
	return &errInvalidMetadata{code: "invalid_client_metadata", description: fmt.Sprintf(format, args...)}
}

func invalidRedirect(format string, args ...any) error {
	return &errInvalidMetadata{code: "invalid_redirect_uri", description: fmt.Sprintf(format, args...)}
}

// serveRegister is dynamic client registration (RFC 7591). Registration is
// open, as MCP clients expect; a registered client can do nothing until a
// user signs in to their ERP and consents.
func (s *Server) serveRegister(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRegistrationBytes))
	if err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "the registration request is unreadable or larger than 16 KiB")
		return
	}
	var req registrationRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "the registration request is not a JSON object of client metadata")
		return
	}
	client, err := s.registeredClient(req, body)
	if err != nil {
		var im *errInvalidMetadata
		if errors.As(err, &im) {
			writeOAuthError(w, http.StatusBadRequest, im.code, im.description)
			return
		}
		s.internalError(w, "register client", err)
		return
	}
	var secret secrets.Secret
	if client.TokenEndpointAuthMethod != "none" {
		tok, err := secrets.NewToken("egcs")
		if err != nil {
			s.internalError(w, "register client", err)
			return
		}
		secret = tok.Value
		client.SecretHash = tok.Hash[:]
	}
	if err := s.deps.Store.CreateClient(r.Context(), client); err != nil {
		s.internalError(w, "register client", err)
		return
	}
	s.log.Info("oauth client registered", zap.String("client_id", client.ID),
		zap.String("token_endpoint_auth_method", client.TokenEndpointAuthMethod))
	resp := registrationResponse{
		ClientID:                client.ID,
		ClientSecret:            secret.Reveal(),
		ClientIDIssuedAt:        client.CreatedAt.Unix(),
		RedirectURIs:            client.RedirectURIs,
		TokenEndpointAuthMethod: client.TokenEndpointAuthMethod,
		GrantTypes:              client.GrantTypes,
		ResponseTypes:           client.ResponseTypes,
		ClientName:              client.Name,
		Scope:                   client.Scope,
	}
	if secret.IsSet() {
		never := int64(0)
		resp.ClientSecretExpiresAt = &never
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusCreated, resp)
}

// registeredClient validates a registration request and returns the client
// to store (without its secret).
func (s *Server) registeredClient(req registrationRequest, raw []byte) (storage.RegisteredClient, error) {
	if len(req.RedirectURIs) == 0 {
		return storage.RegisteredClient{}, invalidRedirect("redirect_uris is required")
	}
	if len(req.RedirectURIs) > maxRedirectURIs {
		return storage.RegisteredClient{}, invalidRedirect("at most %d redirect_uris may be registered", maxRedirectURIs)
	}
	for _, u := range req.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return storage.RegisteredClient{}, err
		}
	}
	method := req.TokenEndpointAuthMethod
	if method == "" {
		method = "client_secret_basic" // RFC 7591 §2
	}
	if !slices.Contains(clientAuthMethods, method) {
		return storage.RegisteredClient{}, invalidMetadata("token_endpoint_auth_method must be one of %s", strings.Join(clientAuthMethods, ", "))
	}
	for _, g := range req.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return storage.RegisteredClient{}, invalidMetadata("grant type %q is not supported; use authorization_code and refresh_token", g)
		}
	}
	for _, rt := range req.ResponseTypes {
		if rt != "code" {
			return storage.RegisteredClient{}, invalidMetadata("response type %q is not supported; use code", rt)
		}
	}
	if len([]rune(req.ClientName)) > maxClientNameLength {
		return storage.RegisteredClient{}, invalidMetadata("client_name is longer than %d characters", maxClientNameLength)
	}
	id, err := secrets.NewToken("egc")
	if err != nil {
		return storage.RegisteredClient{}, err
	}
	return storage.RegisteredClient{
		// The client id is not a secret; the token generator just gives an
		// unguessable, prefixed identifier.
		ID:           id.Value.Reveal(),
		Name:         strings.TrimSpace(req.ClientName),
		RedirectURIs: req.RedirectURIs,
		// Every client may refresh: erpgate issues refresh tokens with every
		// grant, and rotation plus reuse detection keeps them safe.
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		Scope:                   strings.Join(supportedScopes, " "),
		TokenEndpointAuthMethod: method,
		Metadata:                raw,
		CreatedAt:               time.Now().UTC().Truncate(time.Second),
	}, nil
}

// internalError answers 500 with an OAuth error body and logs the cause.
func (s *Server) internalError(w http.ResponseWriter, step string, err error) {
	s.log.Error("authorization server failure", zap.String("step", step), zap.Error(err))
	writeOAuthError(w, http.StatusInternalServerError, "server_error", "erpgate could not complete this request; the operator's logs have details")
}
