package netguard

import (
	"errors"
	"net/netip"
	"testing"
)

// forbidden lists every address issue 14 (item 7) found the dial check let
// through in production, and the well-known private ones it always refused.
var forbidden = []struct{ addr, why string }{
	{"127.0.0.1", "loopback"},
	{"::1", "IPv6 loopback"},
	{"10.1.2.3", "private"},
	{"172.16.0.1", "private"},
	{"192.168.1.1", "private"},
	{"169.254.169.254", "link-local: cloud metadata"},
	{"fe80::1", "IPv6 link-local"},
	{"fc00::1", "unique local"},
	{"100.64.0.1", "shared address space (CGNAT)"},
	{"0.0.0.0", "unspecified"},
	{"0.1.2.3", "0.0.0.0/8, this network"},
	{"::", "IPv6 unspecified"},
	{"::7f00:1", "IPv4-compatible IPv6 of 127.0.0.1"},
	{"::a9fe:a9fe", "IPv4-compatible IPv6 of 169.254.169.254"},
	{"::ffff:127.0.0.1", "IPv4-mapped loopback"},
	{"::ffff:169.254.169.254", "IPv4-mapped metadata"},
	{"64:ff9b::a9fe:a9fe", "NAT64 of 169.254.169.254"},
	{"64:ff9b::7f00:1", "NAT64 of 127.0.0.1"},
	{"64:ff9b::a00:1", "NAT64 of 10.0.0.1"},
	{"64:ff9b:1::a9fe:a9fe", "local-use NAT64 (RFC 8215)"},
	{"2002:a9fe:a9fe::1", "6to4 of 169.254.169.254"},
	{"2002:7f00:1::1", "6to4 of 127.0.0.1"},
	{"2002:808:808::1", "6to4, even of a public address (deprecated relay)"},
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"},
	{"2001:0:a9fe:a9fe::1", "Teredo with the metadata address as server"},
	{"fec0::1", "site-local (deprecated)"},
	{"198.18.0.1", "benchmarking"},
	{"198.19.255.255", "benchmarking"},
	{"240.0.0.1", "reserved"},
	{"255.255.255.255", "limited broadcast"},
	{"224.0.0.1", "multicast"},
	{"ff02::1", "IPv6 multicast"},
	{"192.0.2.1", "documentation"},
	{"2001:db8::1", "IPv6 documentation"},
	{"192.0.0.8", "IETF protocol assignments"},
	{"192.88.99.1", "6to4 relay anycast"},
}

// public are addresses erpgate must keep reaching.
var public = []string{
	"8.8.8.8",
	"1.1.1.1",
	"93.184.215.14",
	"151.101.1.69",
	"2606:4700:4700::1111",
	"2a00:1450:4001:82a::200e",
	"::ffff:8.8.8.8",     // mapped: the embedded address is public
	"64:ff9b::808:808",   // NAT64 (DNS64) of 8.8.8.8, for IPv6-only hosts
	"64:ff9b::5db8:d70e", // NAT64 of 93.184.215.14
}

func TestCheckRefusesEveryNonPublicAddress(t *testing.T) {
	for _, tc := range forbidden {
		ip := netip.MustParseAddr(tc.addr)
		if err := Check(ip); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%s (%s) was allowed: %v", tc.addr, tc.why, err)
		}
	}
}

func TestCheckAllowsPublicAddresses(t *testing.T) {
	for _, addr := range public {
		if err := Check(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("%s was refused: %v", addr, err)
		}
	}
}

// TestCheckNamesTheKindOfAddress: a refusal says in words what the address
// is, and for an address carrying an IPv4 address, which one.
func TestCheckNamesTheKindOfAddress(t *testing.T) {
	for addr, want := range map[string]string{
		"169.254.169.254":     "169.254.169.254 is a link-local address",
		"127.0.0.1":           "127.0.0.1 is a loopback address",
		"10.0.0.1":            "10.0.0.1 is a private address",
		"0.1.2.3":             "0.1.2.3 is an unspecified (this network) address",
		"255.255.255.255":     "255.255.255.255 is the broadcast address",
		"198.18.0.1":          "198.18.0.1 is a benchmarking address",
		"fec0::1":             "fec0::1 is a site-local address",
		"::7f00:1":            "::7f00:1 is an IPv4-compatible IPv6 address",
		"64:ff9b::a9fe:a9fe":  "64:ff9b::a9fe:a9fe is a form of 169.254.169.254, a link-local address",
		"2002:808:808::1":     "2002:808:808::1 is a 6to4 address",
		"2001:0:a9fe:a9fe::1": "2001:0:a9fe:a9fe::1 is a form of 169.254.169.254, a link-local address",
	} {
		err := Check(netip.MustParseAddr(addr))
		if err == nil || err.Error() != want {
			t.Errorf("Check(%s) = %v, want %q", addr, err, want)
		}
	}
}

// FuzzCheck holds the policy's invariants for any 16 bytes: an address in
// IPv4-mapped or NAT64 form is judged exactly as the IPv4 address it
// carries, and nothing loopback, private, link-local, multicast or
// unspecified is ever public.
func FuzzCheck(f *testing.F) {
	for _, tc := range forbidden {
		b := netip.MustParseAddr(tc.addr).As16()
		f.Add(b[:])
	}
	for _, addr := range public {
		b := netip.MustParseAddr(addr).As16()
		f.Add(b[:])
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) != 16 {
			return
		}
		ip := netip.AddrFrom16([16]byte(raw))
		err := Check(ip)
		if err != nil && !errors.Is(err, ErrForbiddenAddress) {
			t.Fatalf("Check(%s) = %v, not ErrForbiddenAddress", ip, err)
		}
		for _, a := range []netip.Addr{ip, ip.Unmap()} {
			if err == nil && (a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified()) {
				t.Fatalf("%s is public", ip)
			}
		}
		v4 := netip.AddrFrom4([4]byte(raw[12:16]))
		if ip.Is4In6() || nat64.Contains(ip) {
			if (err == nil) != (Check(v4) == nil) {
				t.Fatalf("Check(%s) = %v but Check(%s) = %v", ip, err, v4, Check(v4))
			}
		}
	})
}
