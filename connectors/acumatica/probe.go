package acumatica

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

var _ connector.KindProbe = (*Connector)(nil)

// ProbeKind asks the address for the identity server's discovery document
// (/identity/.well-known/openid-configuration, anonymous), which must name
// the authorize and token endpoints. The tenant is not asked: Acumatica
// documents no anonymous answer that tells whether a tenant exists.
func (*Connector) ProbeKind(ctx context.Context, site connector.Site, hc *http.Client) error {
	status, doc, err := identityDiscovery(ctx, site, hc)
	switch {
	case err != nil:
		return err
	case !doc.named():
		return toolerr.New(toolerr.UpstreamInvalidResponse, "/identity/.well-known/openid-configuration answered HTTP %d without the authorize and token endpoints", status)
	}
	return nil
}

// discoveryDoc is what erpgate reads of the identity server's discovery
// document.
type discoveryDoc struct {
	Authorization string   `json:"authorization_endpoint"`
	Token         string   `json:"token_endpoint"`
	PKCE          []string `json:"code_challenge_methods_supported"`
}

// named reports whether the document was read and names the authorize and
// token endpoints.
func (d discoveryDoc) named() bool { return d.Authorization != "" && d.Token != "" }

// identityDiscovery reads the identity server's discovery document without
// credentials and without following a redirect: the answer's status and
// the document, empty unless the answer was 200 with one.
func identityDiscovery(ctx context.Context, site connector.Site, hc *http.Client) (int, discoveryDoc, error) {
	resp, body, err := connector.PreflightGet(ctx, hc, site.URL("/identity/.well-known/openid-configuration", nil))
	if err != nil {
		return 0, discoveryDoc{}, err
	}
	var doc discoveryDoc
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &doc) != nil {
		return resp.StatusCode, discoveryDoc{}, nil
	}
	return resp.StatusCode, doc, nil
}
