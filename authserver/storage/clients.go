package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ory/fosite"
)

// RegisteredClient is a client registered with dynamic client registration.
type RegisteredClient struct {
	ID string
	// SecretHash is the SHA-256 of the client secret; nil for public
	// clients (token_endpoint_auth_method "none").
	SecretHash              []byte
	Name                    string
	RedirectURIs            []string
	GrantTypes              []string
	ResponseTypes           []string
	Scope                   string
	TokenEndpointAuthMethod string
	// Metadata keeps the informational fields erpgate accepts (client_uri,
	// logo_uri, software_id, …), each bounded; other fields are not kept.
	Metadata  json.RawMessage
	CreatedAt time.Time
}

// CreateClient stores a registered client.
func (s *Store) CreateClient(ctx context.Context, c RegisteredClient) error {
	meta := c.Metadata
	if len(meta) == 0 {
		meta = json.RawMessage(`{}`)
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO oauth_clients (id, secret_hash, name, redirect_uris, grant_types, response_types, scope,
			token_endpoint_auth_method, metadata, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		c.ID, c.SecretHash, c.Name, c.RedirectURIs, c.GrantTypes, c.ResponseTypes, c.Scope,
		c.TokenEndpointAuthMethod, meta, c.CreatedAt)
	if err != nil {
		return fmt.Errorf("storage: register client: %w", notFound(err))
	}
	return nil
}

// Client returns a registered client, or fosite.ErrNotFound.
func (s *Store) Client(ctx context.Context, id string) (RegisteredClient, error) {
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		// Anyone's text (a request's client_id); no stored id holds what
		// PostgreSQL cannot, and asking would be an error, not a miss.
		return RegisteredClient{}, fmt.Errorf("storage: read client: %w", fosite.ErrNotFound)
	}
	c := RegisteredClient{ID: id}
	err := s.pool.QueryRow(ctx, `
		SELECT secret_hash, name, redirect_uris, grant_types, response_types, scope, token_endpoint_auth_method,
		       metadata, created_at
		FROM oauth_clients WHERE id = $1`, id).Scan(&c.SecretHash, &c.Name, &c.RedirectURIs, &c.GrantTypes,
		&c.ResponseTypes, &c.Scope, &c.TokenEndpointAuthMethod, &c.Metadata, &c.CreatedAt)
	if err != nil {
		return RegisteredClient{}, fmt.Errorf("storage: read client: %w", notFound(err))
	}
	return c, nil
}

// FositeClient converts a registered client for fosite. The secret hash is
// compared by the authorization server's SHA-256 hasher.
func (c RegisteredClient) FositeClient() *fosite.DefaultClient {
	return &fosite.DefaultClient{
		ID:            c.ID,
		Secret:        c.SecretHash,
		RedirectURIs:  c.RedirectURIs,
		GrantTypes:    c.GrantTypes,
		ResponseTypes: c.ResponseTypes,
		Scopes:        strings.Fields(c.Scope),
		Public:        c.TokenEndpointAuthMethod == "none",
	}
}

// GetClient loads a client for fosite: a registered client, or, for a URL
// client id, the client its metadata document describes.
func (s *Store) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	if strings.HasPrefix(id, "https://") || strings.HasPrefix(id, "http://") {
		if s.cimd == nil {
			return nil, fmt.Errorf("storage: client %q: %w", id, fosite.ErrNotFound)
		}
		return s.cimd.ResolveClient(ctx, id)
	}
	c, err := s.Client(ctx, id)
	if err != nil {
		return nil, err
	}
	return c.FositeClient(), nil
}

// ClientAssertionJWTValid is part of fosite.ClientManager. erpgate does not
// accept JWT client assertions, so no JTI is ever known.
func (s *Store) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT is part of fosite.ClientManager; JWT client
// assertions are not accepted, so there is nothing to remember.
func (s *Store) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }
