package sites

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
)

// Status says whether a site serves requests.
type Status string

// The site statuses of the schema's sites_status_check.
const (
	StatusActive   Status = "active"
	StatusDisabled Status = "disabled"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return s == StatusActive || s == StatusDisabled }

// Site is one registered ERP instance: erpgate's unit of tenancy.
type Site struct {
	ID          uuid.UUID
	Slug        string
	Kind        string
	DisplayName string
	// BaseURL is the ERP's origin, as NormalizeBaseURL returns it.
	BaseURL string
	// Settings are the connector's settings, as its NormalizeSettings
	// returned them. Always a JSON object.
	Settings  json.RawMessage
	Status    Status
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Connector returns what a connector needs to know about the site.
func (s Site) Connector() (connector.Site, error) {
	u, err := checkOrigin(s.BaseURL)
	if err != nil {
		return connector.Site{}, fmt.Errorf("sites: site %s: %w", s.Slug, err)
	}
	return connector.Site{
		ID:          s.ID,
		Slug:        s.Slug,
		Kind:        s.Kind,
		DisplayName: s.DisplayName,
		BaseURL:     u,
		Settings:    s.Settings,
	}, nil
}

// NewSite is what CreateSite needs. The caller has normalised BaseURL with
// NormalizeBaseURL and Settings with the connector's NormalizeSettings.
type NewSite struct {
	Slug        string
	Kind        string
	DisplayName string
	BaseURL     string
	// Settings must be a JSON object; nil means {}.
	Settings json.RawMessage
}

// SiteUpdate changes some of a site's attributes; nil fields are kept.
// Settings, when not nil, replaces the settings as a whole.
type SiteUpdate struct {
	DisplayName *string
	BaseURL     *string
	Settings    json.RawMessage
	Status      *Status
}
