package authserver

import (
	"net/http"
	"testing"
)

func TestRequestSourceGroupsIPv6By64(t *testing.T) {
	s := &Server{deps: Deps{ClientIP: directClientIP}}
	source := func(remote string) string {
		return s.requestSource(&http.Request{RemoteAddr: remote})
	}
	if a, b := source("[2001:db8:1:2::1]:5000"), source("[2001:db8:1:2:ffff::9]:6000"); a != b || a != "2001:db8:1:2::/64" {
		t.Errorf("one /64 gave %q and %q", a, b)
	}
	if a, b := source("[2001:db8:1:2::1]:5000"), source("[2001:db8:1:3::1]:5000"); a == b {
		t.Errorf("two /64s share %q", a)
	}
	if got := source("192.0.2.10:4000"); got != "192.0.2.10" {
		t.Errorf("IPv4 source %q", got)
	}
	if got := source("[::ffff:192.0.2.10]:4000"); got != "192.0.2.10" {
		t.Errorf("IPv4-mapped source %q", got)
	}
}
