package connector

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// KindProbe is implemented by a connector that can tell, without
// credentials, whether an address answers as an ERP of its kind. erpgate
// asks before it sends a person to sign in at an address, so that their
// sign-in goes only to what answers as the ERP it claims to be.
type KindProbe interface {
	// ProbeKind asks the ERP at site, with hc (the outbound transport, no
	// credentials), for what only an ERP of the kind serves (its OAuth
	// discovery document, naming its authorize and token endpoints). It
	// returns nil when the answer is the kind's; a failure to reach the
	// address as the transport reported it; and for any other answer a
	// *toolerr.Error with code UPSTREAM_INVALID_RESPONSE saying what
	// answered, with no ERP body in it.
	ProbeKind(ctx context.Context, site Site, hc *http.Client) error
}

// OAuthDiscovery is what erpgate reads of an ERP's OAuth discovery
// document.
type OAuthDiscovery struct {
	Authorization string   `json:"authorization_endpoint"`
	Token         string   `json:"token_endpoint"`
	PKCE          []string `json:"code_challenge_methods_supported"`
}

// Named reports whether the document was read and names the authorize and
// token endpoints.
func (d OAuthDiscovery) Named() bool { return d.Authorization != "" && d.Token != "" }

// ReadOAuthDiscovery reads the discovery document at target without
// credentials and without following a redirect (PreflightGet): the
// answer's status, and the document, empty unless the answer was 200 with
// one.
func ReadOAuthDiscovery(ctx context.Context, hc *http.Client, target string) (int, OAuthDiscovery, error) {
	resp, body, err := PreflightGet(ctx, hc, target)
	if err != nil {
		return 0, OAuthDiscovery{}, err
	}
	var doc OAuthDiscovery
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &doc) != nil {
		return resp.StatusCode, OAuthDiscovery{}, nil
	}
	return resp.StatusCode, doc, nil
}

// ProbeOAuthDiscovery is a KindProbe's answer for a kind whose ERPs serve
// their discovery document at target, which name calls in the error: nil
// when it names the authorize and token endpoints.
func ProbeOAuthDiscovery(ctx context.Context, hc *http.Client, target, name string) error {
	status, doc, err := ReadOAuthDiscovery(ctx, hc, target)
	switch {
	case err != nil:
		return err
	case !doc.Named():
		return toolerr.New(toolerr.UpstreamInvalidResponse, "%s answered HTTP %d without the authorize and token endpoints", name, status)
	}
	return nil
}
