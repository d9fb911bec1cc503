package connector

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/google/uuid"
)

// Site is what a connector knows about the ERP instance it is calling.
type Site struct {
	ID          uuid.UUID
	Slug        string
	Kind        string
	DisplayName string
	// BaseURL is the site's origin (scheme://host[:port]), followed by the
	// path of its virtual directory when the connector accepts one
	// (https://erp.example.com/AcumaticaERP), never with a trailing slash.
	BaseURL *url.URL
	// Settings are the connector's own settings, as normalised by
	// Connector.NormalizeSettings.
	Settings json.RawMessage
}

// URL resolves an escaped absolute path (for example
// "/api/resource/Sales%20Invoice", built with url.PathEscape per segment)
// under the site's base URL (its origin, and its virtual directory when it
// has one), with query q (which may be nil).
func (s Site) URL(escapedPath string, q url.Values) string {
	u := *s.BaseURL
	base := strings.TrimSuffix(u.EscapedPath(), "/")
	escaped := base + escapedPath
	path, err := url.PathUnescape(escaped)
	if err != nil {
		path = escaped
	}
	u.Path, u.RawPath = path, escaped
	u.RawQuery = q.Encode()
	return u.String()
}
