package frappe

import (
	"context"
	"net/http"

	"github.com/erpgate/erpgate/platform/connector"
)

var _ connector.KindProbe = (*Connector)(nil)

// discoveryMethod is Frappe's OAuth discovery document, a method every
// Frappe v15 site serves to guests.
const discoveryMethod = "openid_configuration"

// ProbeKind asks the address for Frappe's OAuth discovery document
// (frappe.integrations.oauth2.openid_configuration, allow_guest on every
// Frappe v15 site), which must name the authorize and token endpoints.
func (*Connector) ProbeKind(ctx context.Context, site connector.Site, hc *http.Client) error {
	return connector.ProbeOAuthDiscovery(ctx, hc, site.URL(oauthMethodPrefix+discoveryMethod, nil), discoveryMethod)
}
