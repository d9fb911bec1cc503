package authserver

import (
	"net"
	"time"

	"github.com/erpgate/erpgate/platform/infra/netguard"
)

// errForbiddenAddress means a fetch was about to connect to an address a
// public document can never legitimately live at.
var errForbiddenAddress = netguard.ErrForbiddenAddress

// guardedDialer connects only to public addresses, by the shared policy of
// platform/infra/netguard (the IANA special-purpose registries; IPv4-mapped and
// NAT64 forms judged by the IPv4 address they carry). The check runs on
// the address actually dialled, after DNS resolution, so a name that
// resolves to 127.0.0.1 or 169.254.169.254 (DNS rebinding included) is
// refused too.
func guardedDialer(timeout time.Duration) *net.Dialer {
	return netguard.Guard(&net.Dialer{Timeout: timeout})
}
