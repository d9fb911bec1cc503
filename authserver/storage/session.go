package storage

import (
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/ory/fosite"
)

// Session is what erpgate keeps with every grant: which site and which ERP
// user the tokens act for. It is stored as JSON with each code and token.
type Session struct {
	// SiteID is the site the grant is for; its MCP URL is the audience.
	SiteID uuid.UUID `json:"site_id"`
	// Subject is the ERP user id (connector.UpstreamUser.ID).
	Subject string `json:"subject"`
	// DisplayName is the user's name in the ERP.
	DisplayName string `json:"display_name,omitempty"`
	// ExpiresAt holds each token type's expiry, as fosite sets it.
	ExpiresAt map[fosite.TokenType]time.Time `json:"expires_at,omitempty"`
}

var _ fosite.Session = (*Session)(nil)

// SetExpiresAt sets the expiry of a token type.
func (s *Session) SetExpiresAt(key fosite.TokenType, exp time.Time) {
	if s.ExpiresAt == nil {
		s.ExpiresAt = map[fosite.TokenType]time.Time{}
	}
	s.ExpiresAt[key] = exp
}

// GetExpiresAt returns the expiry of a token type; zero means none.
func (s *Session) GetExpiresAt(key fosite.TokenType) time.Time {
	return s.ExpiresAt[key]
}

// GetUsername returns the ERP user id.
func (s *Session) GetUsername() string { return s.Subject }

// GetSubject returns the ERP user id.
func (s *Session) GetSubject() string { return s.Subject }

// Clone returns a deep copy.
func (s *Session) Clone() fosite.Session {
	if s == nil {
		return nil
	}
	c := *s
	c.ExpiresAt = maps.Clone(s.ExpiresAt)
	return &c
}
