package adminapi

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/store/sites"
)

// siteView is a site as the API shows it. It has no field that could hold
// a secret.
type siteView struct {
	ID            uuid.UUID       `json:"id"`
	Slug          string          `json:"slug"`
	Kind          string          `json:"kind"`
	DisplayName   string          `json:"display_name"`
	BaseURL       string          `json:"base_url"`
	Settings      json.RawMessage `json:"settings"`
	Status        sites.Status    `json:"status"`
	DisabledBy    *sites.Party    `json:"disabled_by"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
	MCPURL        string          `json:"mcp_url"`
	ServiceMCPURL string          `json:"service_mcp_url"`
	// OAuthRedirectURI is the redirect URI the site's OAuth client on the
	// ERP must have.
	OAuthRedirectURI string           `json:"oauth_redirect_uri"`
	SharedCallback   bool             `json:"shared_callback"`
	Connections      []connectionView `json:"connections"`
}

// connectionView is a connection as the API shows it: field names only.
type connectionView struct {
	Type             sites.ConnectionType `json:"type"`
	VerifiedIdentity string               `json:"verified_identity"`
	Fields           []string             `json:"fields"`
	CreatedAt        time.Time            `json:"created_at"`
	UpdatedAt        time.Time            `json:"updated_at"`
}

// serviceTokenView is a service token in listings: never its value or hash.
type serviceTokenView struct {
	ID         uuid.UUID  `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	Revoked    bool       `json:"revoked"`
	RevokedAt  *time.Time `json:"revoked_at"`
	// ExpiresAt is nil for a token that never expires.
	ExpiresAt *time.Time `json:"expires_at"`
	Expired   bool       `json:"expired"`
}

// issuedServiceTokenView is the one response that carries a token value.
type issuedServiceTokenView struct {
	ID        uuid.UUID  `json:"id"`
	Name      string     `json:"name"`
	Prefix    string     `json:"prefix"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
	Expired   bool       `json:"expired"`
	Token     string     `json:"token"`
}

func (a *API) siteView(s sites.Site, conns []sites.Connection) siteView {
	views := make([]connectionView, 0, len(conns))
	for _, c := range conns {
		views = append(views, connectionViewOf(c))
	}
	settings := s.Settings
	if len(settings) == 0 {
		settings = json.RawMessage(`{}`)
	}
	return siteView{
		ID:               s.ID,
		Slug:             s.Slug,
		Kind:             s.Kind,
		DisplayName:      s.DisplayName,
		BaseURL:          s.BaseURL,
		Settings:         settings,
		Status:           s.Status,
		DisabledBy:       disabledBy(s),
		CreatedAt:        s.CreatedAt.UTC(),
		UpdatedAt:        s.UpdatedAt.UTC(),
		MCPURL:           a.deps.PublicURL("/sites/" + s.Slug + "/mcp"),
		ServiceMCPURL:    a.deps.PublicURL("/service/mcp"),
		OAuthRedirectURI: a.deps.PublicURL(s.CallbackPath()),
		SharedCallback:   s.SharedCallback,
		Connections:      views,
	}
}

func connectionViewOf(c sites.Connection) connectionView {
	fields := c.Fields
	if fields == nil {
		fields = []string{}
	}
	return connectionView{
		Type:             c.Type,
		VerifiedIdentity: c.VerifiedIdentity,
		Fields:           fields,
		CreatedAt:        c.CreatedAt.UTC(),
		UpdatedAt:        c.UpdatedAt.UTC(),
	}
}

func serviceTokenViewOf(t sites.ServiceToken) serviceTokenView {
	return serviceTokenView{
		ID:         t.ID,
		Name:       t.Name,
		Prefix:     t.Prefix,
		CreatedAt:  t.CreatedAt.UTC(),
		LastUsedAt: utcPtr(t.LastUsedAt),
		Revoked:    t.Revoked,
		RevokedAt:  utcPtr(t.RevokedAt),
		ExpiresAt:  utcPtr(t.ExpiresAt),
		Expired:    t.Expired,
	}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// disabledBy is who disabled s, nil while it is active.
func disabledBy(s sites.Site) *sites.Party {
	if s.DisabledBy == "" {
		return nil
	}
	return &s.DisabledBy
}
