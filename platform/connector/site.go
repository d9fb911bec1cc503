package connector

import (
	"encoding/json"
	"net/url"

	"github.com/google/uuid"
)

// Site is what a connector knows about the ERP instance it is calling.
type Site struct {
	ID          uuid.UUID
	Slug        string
	Kind        string
	DisplayName string
	// BaseURL is the site's origin (scheme://host[:port]), with no path.
	BaseURL *url.URL
	// Settings are the connector's own settings, as normalised by
	// Connector.NormalizeSettings.
	Settings json.RawMessage
}

// URL resolves an escaped absolute path (for example
// "/api/resource/Sales%20Invoice", built with url.PathEscape per segment)
// against the site's origin, with query q (which may be nil).
func (s Site) URL(escapedPath string, q url.Values) string {
	u := *s.BaseURL
	path, err := url.PathUnescape(escapedPath)
	if err != nil {
		path = escapedPath
	}
	u.Path, u.RawPath = path, escapedPath
	u.RawQuery = q.Encode()
	return u.String()
}
