package authserver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// errForbiddenAddress means a fetch was about to connect to an address a
// public document can never legitimately live at.
var errForbiddenAddress = errors.New("authserver: address is not public")

// cgnat is the RFC 6598 shared address space, not publicly routable.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// publicAddress reports whether ip may be fetched from: not private,
// loopback, link-local, multicast, unspecified or shared (CGNAT).
func publicAddress(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsValid() && !ip.IsPrivate() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() &&
		!ip.IsLinkLocalMulticast() && !ip.IsInterfaceLocalMulticast() && !ip.IsMulticast() &&
		!ip.IsUnspecified() && !cgnat.Contains(ip)
}

// guardedDialer connects only to public addresses. The check runs on the
// address actually dialled, after DNS resolution, so a name that resolves
// to 127.0.0.1 or 169.254.169.254 (DNS rebinding included) is refused too.
func guardedDialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout: timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				host = address
			}
			ip, err := netip.ParseAddr(host)
			if err != nil || !publicAddress(ip) {
				return fmt.Errorf("%w: %s", errForbiddenAddress, host)
			}
			return nil
		},
	}
}
