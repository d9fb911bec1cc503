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
	"unicode"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// Bounds on a registration: open registration must not be a way to fill
// the database (issue 14). Every field erpgate keeps is bounded, fields it
// does not use are dropped, and the whole document is at most
// maxRegistrationBytes.
const (
	maxRegistrationBytes = 8 << 10
	maxRedirectURIs      = 10
	maxClientNameLength  = 200
	// client_uri, logo_uri, tos_uri and policy_uri.
	maxMetadataURILength = 1024
	// software_id, software_version and scope.
	maxShortFieldLength = 200
	maxContacts         = 5
	maxContactLength    = 254
	// grant_types and response_types.
	maxListEntries = 4
)

// registrationRequest is the part of RFC 7591 client metadata erpgate
// reads; anything else in a registration is ignored and not stored.
type registrationRequest struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name"`
	Scope                   string   `json:"scope"`
	storedMetadata
}

// storedMetadata is the informational client metadata erpgate keeps in
// oauth_clients.metadata.
type storedMetadata struct {
	ClientURI       string   `json:"client_uri,omitempty"`
	LogoURI         string   `json:"logo_uri,omitempty"`
	TOSURI          string   `json:"tos_uri,omitempty"`
	PolicyURI       string   `json:"policy_uri,omitempty"`
	SoftwareID      string   `json:"software_id,omitempty"`
	SoftwareVersion string   `json:"software_version,omitempty"`
	Contacts        []string `json:"contacts,omitempty"`
}

// check bounds every field of the stored metadata.
func (m storedMetadata) check() error {
	for _, f := range []struct{ name, value string }{
		{"client_uri", m.ClientURI}, {"logo_uri", m.LogoURI}, {"tos_uri", m.TOSURI}, {"policy_uri", m.PolicyURI},
	} {
		if len(f.value) > maxMetadataURILength {
			return invalidMetadata("%s is longer than %d bytes", f.name, maxMetadataURILength)
		}
	}
	for _, f := range []struct{ name, value string }{{"software_id", m.SoftwareID}, {"software_version", m.SoftwareVersion}} {
		if len(f.value) > maxShortFieldLength {
			return invalidMetadata("%s is longer than %d bytes", f.name, maxShortFieldLength)
		}
	}
	if len(m.Contacts) > maxContacts {
		return invalidMetadata("contacts may list at most %d addresses", maxContacts)
	}
	for _, c := range m.Contacts {
		if len(c) > maxContactLength {
			return invalidMetadata("an address in contacts is longer than %d bytes", maxContactLength)
		}
	}
	for _, v := range append([]string{m.ClientURI, m.LogoURI, m.TOSURI, m.PolicyURI, m.SoftwareID, m.SoftwareVersion}, m.Contacts...) {
		if strings.ContainsRune(v, 0) {
			return errNULInMetadata
		}
	}
	return nil
}

// errNULInMetadata refuses a NUL character, which PostgreSQL cannot
// store: sent on, it would fail the registration as a server error.
var errNULInMetadata = invalidMetadata("client metadata must not contain NUL characters")

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
	if secs, ok := s.limited(w, r, s.registerLimit, "register"); !ok {
		writeOAuthError(w, http.StatusTooManyRequests, "temporarily_unavailable",
			"too many client registrations from your network; try again "+inSeconds(secs))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRegistrationBytes))
	if err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "the registration request is unreadable or larger than 8 KiB")
		return
	}
	var req registrationRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "the registration request is not a JSON object of client metadata with the types RFC 7591 gives them")
		return
	}
	client, err := s.registeredClient(req)
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
func (s *Server) registeredClient(req registrationRequest) (storage.RegisteredClient, error) {
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
	if len(req.GrantTypes) > maxListEntries || len(req.ResponseTypes) > maxListEntries {
		return storage.RegisteredClient{}, invalidMetadata("grant_types and response_types may list at most %d values each", maxListEntries)
	}
	if len(req.Scope) > maxShortFieldLength {
		return storage.RegisteredClient{}, invalidMetadata("scope is longer than %d bytes", maxShortFieldLength)
	}
	if err := req.storedMetadata.check(); err != nil {
		return storage.RegisteredClient{}, err
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
	if strings.ContainsRune(req.ClientName, 0) {
		return storage.RegisteredClient{}, errNULInMetadata
	}
	meta, err := json.Marshal(req.storedMetadata)
	if err != nil {
		return storage.RegisteredClient{}, err
	}
	id, err := secrets.NewToken("egc")
	if err != nil {
		return storage.RegisteredClient{}, err
	}
	return storage.RegisteredClient{
		// The client id is not a secret; the token generator just gives an
		// unguessable, prefixed identifier.
		ID:           id.Value.Reveal(),
		Name:         plainName(req.ClientName),
		RedirectURIs: req.RedirectURIs,
		// Every client may refresh: erpgate issues refresh tokens with every
		// grant, and rotation plus reuse detection keeps them safe.
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		Scope:                   strings.Join(supportedScopes, " "),
		TokenEndpointAuthMethod: method,
		Metadata:                meta,
		CreatedAt:               time.Now().UTC().Truncate(time.Second),
	}, nil
}

// internalError answers 500 with an OAuth error body and logs the cause.
func (s *Server) internalError(w http.ResponseWriter, step string, err error) {
	s.log.Error("authorization server failure", zap.String("step", step), zap.Error(err))
	writeOAuthError(w, http.StatusInternalServerError, "server_error", "erpgate could not complete this request; the operator's logs have details")
}

// plainName is a name given by a client (or an ERP) as erpgate shows it
// and keeps it: without control characters and without the Unicode
// controls that change the direction of text (U+061C, U+200E, U+200F,
// U+202A to U+202E, U+2066 to U+2069). An override in a client's name
// would run on through the consent sentence and show the redirect host
// after it reversed (ia.edualc.xyz reading "zyx.claude.ai").
func plainName(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r), r == '\u061c', r == '\u200e', r == '\u200f',
			r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
			return -1
		}
		return r
	}, s))
}
