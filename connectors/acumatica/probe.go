package acumatica

import (
	"context"
	"net/http"

	"github.com/erpgate/erpgate/platform/connector"
)

var _ connector.KindProbe = (*Connector)(nil)

// identityDiscoveryPath is the identity server's discovery document,
// served without sign-in.
const identityDiscoveryPath = "/identity/.well-known/openid-configuration"

// ProbeKind asks the address for the identity server's discovery document,
// which must name the authorize and token endpoints. The tenant is not
// asked: Acumatica documents no anonymous answer that tells whether a
// tenant exists.
func (*Connector) ProbeKind(ctx context.Context, site connector.Site, hc *http.Client) error {
	return connector.ProbeOAuthDiscovery(ctx, hc, site.URL(identityDiscoveryPath, nil), identityDiscoveryPath)
}
