package connector

import (
	"context"
	"net/http"
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
