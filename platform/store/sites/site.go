package sites

import (
	"crypto/sha256"
	"encoding/hex"
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

// Party is who changes a site: its operator (the admin API, the console)
// or its owner (an ERP administrator on the owner page). A disabled site
// records who disabled it: the owner may pause and resume their site, but
// may neither enable, change nor delete one the operator disabled.
type Party string

// The parties of the schema's sites_disabled_by_check.
const (
	ByOperator Party = "operator"
	ByOwner    Party = "owner"
)

// Site is one registered ERP instance: erpgate's unit of tenancy.
type Site struct {
	ID          uuid.UUID
	Slug        string
	Kind        string
	DisplayName string
	// BaseURL is the ERP's origin, with the path of its virtual directory
	// when it has one, as NormalizeBaseURL or NormalizeBaseURLPath return it.
	BaseURL string
	// Settings are the connector's settings, as its NormalizeSettings
	// returned them. Always a JSON object.
	Settings json.RawMessage
	// IdentityKey tells the site apart from others at the same base URL, as
	// the connector's SiteRules compute it from Settings ("" when a base URL
	// is one site).
	IdentityKey string
	Status      Status
	// DisabledBy is who disabled the site; "" when it is active.
	DisabledBy Party
	// SharedCallback: the site's ERP sends people back to the redirect URI
	// every site shared before sites had their own (CallbackPath).
	SharedCallback bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// SharedCallbackPath is the redirect URI path every site shared before
// sites had their own, kept by the sites registered then until their
// operator switches them.
const SharedCallbackPath = "/oauth/callback"

// CallbackPath is the path, under the public base URL, of the redirect
// URI the site's OAuth client on its ERP must have: the site's own, so
// that a code is only ever exchanged with the ERP that sent it back.
func (s Site) CallbackPath() string { return CallbackPathOf(s.Slug, s.SharedCallback) }

// CallbackPathOf is the redirect URI path of the site named slug: the
// shared one when shared, its own otherwise.
func CallbackPathOf(slug string, shared bool) string {
	if shared {
		return SharedCallbackPath
	}
	return SiteCallbackPath(slug)
}

// SiteCallbackPath is the path of the redirect URI of the site named slug.
func SiteCallbackPath(slug string) string { return "/sites/" + slug + "/oauth/callback" }

// SessionScope is what a session proven at the site's ERP is for: the
// site's id and, hashed, the ERP it reaches (base URL and identity key).
// A site moved to another ERP or tenant is another company's, where the
// same user id may be another person, so the sessions of the old one stop
// working there.
func (s Site) SessionScope() string {
	sum := sha256.Sum256([]byte(s.BaseURL + "\x00" + s.IdentityKey))
	return s.ID.String() + "." + hex.EncodeToString(sum[:16])
}

// Connector returns what a connector needs to know about the site.
func (s Site) Connector() (connector.Site, error) {
	u, err := checkBaseURL(s.BaseURL)
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
// NormalizeBaseURL (or NormalizeBaseURLPath, when the connector accepts a
// path), Settings with the connector's NormalizeSettings, and computed
// IdentityKey from them with the connector's SiteRules.
type NewSite struct {
	Slug        string
	Kind        string
	DisplayName string
	BaseURL     string
	// Settings must be a JSON object; nil means {}.
	Settings    json.RawMessage
	IdentityKey string
	// SharedCallback keeps the shared redirect URI: a registration begun
	// before sites had their own.
	SharedCallback bool
}

// SiteUpdate changes some of a site's attributes; nil fields are kept.
// Settings, when not nil, replaces the settings as a whole, and IdentityKey
// must then be set too (computed from the new settings).
type SiteUpdate struct {
	DisplayName *string
	BaseURL     *string
	Settings    json.RawMessage
	IdentityKey *string
	Status      *Status
	// By is who makes the change: ByOperator ("" is the operator too) or
	// ByOwner, who is refused ErrOperatorDisabled on a site the operator
	// disabled. A change to disabled records By as who did it.
	By Party
	// OwnCallback, when true, moves a site from the shared redirect URI to
	// its own. There is no way back.
	OwnCallback bool
}
