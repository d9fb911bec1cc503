package frappe

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

var _ connector.KindProbe = (*Connector)(nil)

// ProbeKind asks the address for Frappe's OAuth discovery document
// (frappe.integrations.oauth2.openid_configuration, allow_guest on every
// Frappe v15 site), which must name the authorize and token endpoints.
func (*Connector) ProbeKind(ctx context.Context, site connector.Site, hc *http.Client) error {
	status, named, err := oauthDiscovery(ctx, site, hc)
	switch {
	case err != nil:
		return err
	case !named:
		return toolerr.New(toolerr.UpstreamInvalidResponse, "openid_configuration answered HTTP %d without the authorize and token endpoints", status)
	}
	return nil
}

// oauthDiscovery reads Frappe's OAuth discovery document without
// credentials and without following a redirect: the answer's status, and
// whether it names the authorize and token endpoints.
func oauthDiscovery(ctx context.Context, site connector.Site, hc *http.Client) (status int, named bool, err error) {
	resp, body, err := connector.PreflightGet(ctx, hc, site.URL(oauthMethodPrefix+"openid_configuration", nil))
	if err != nil {
		return 0, false, err
	}
	var doc struct {
		Authorization string `json:"authorization_endpoint"`
		Token         string `json:"token_endpoint"`
	}
	named = resp.StatusCode == http.StatusOK && json.Unmarshal(body, &doc) == nil && doc.Authorization != "" && doc.Token != ""
	return resp.StatusCode, named, nil
}
