package sourcelimit

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// A request from an address that is not a trusted proxy but carrying a
// forwarding header is noted and warned of, at most once every WarnEvery,
// naming the peer and the header but none of the header's addresses; a
// request from a trusted proxy, or without such a header, is not. The
// source stays the connection's: the header is not believed.
func TestUntrustedProxiesAreNoticed(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	clock := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	u := NewUntrustedProxies([]netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}, zap.New(core), func() time.Time { return clock })
	extract := u.Wrap(func(r *http.Request) string { return DirectIP(r) })
	send := func(remote, header, value string) string {
		r := httptest.NewRequest(http.MethodPost, "/register", nil)
		r.RemoteAddr = remote
		if header != "" {
			r.Header.Set(header, value)
		}
		return extract(r)
	}

	for _, tc := range []struct{ remote, header, value string }{
		{"192.0.2.9:4000", "", ""},
		{"10.1.2.3:4000", "X-Forwarded-For", "203.0.113.7"},
		{"10.1.2.3:4000", "Forwarded", "for=203.0.113.7"},
		{"[::ffff:10.1.2.3]:4000", "X-Real-IP", "203.0.113.7"},
	} {
		send(tc.remote, tc.header, tc.value)
	}
	if s := u.Sightings(); len(s) != 0 || logs.Len() != 0 {
		t.Fatalf("noticed %+v and logged %d lines with no untrusted proxy", s, logs.Len())
	}

	for _, tc := range []struct{ remote, header, peer string }{
		{"10.0.0.5:4000", "X-Forwarded-For", "10.0.0.5"},
		{"10.0.0.6:4000", "Forwarded", "10.0.0.6"},
		{"[2001:db8::5]:4000", "X-Real-IP", "2001:db8::5"},
	} {
		if got := send(tc.remote, tc.header, "203.0.113.7"); got != tc.peer {
			t.Errorf("%s from %s: the source is %q, want the peer %q", tc.header, tc.remote, got, tc.peer)
		}
		s := u.Sightings()
		if len(s) != 1 || s[0].Kind != Untrusted || s[0].Peer != tc.peer || s[0].Header != tc.header || !s[0].At.Equal(clock) {
			t.Errorf("%s from %s: sightings %+v", tc.header, tc.remote, s)
		}
		clock = clock.Add(time.Minute)
	}
	if s := u.Sightings(); len(s) != 1 || s[0].Requests != 3 {
		t.Errorf("sightings %+v, want 3 requests counted", s)
	}
	if logs.Len() != 1 {
		t.Fatalf("%d warnings within %v, want 1", logs.Len(), WarnEvery)
	}
	clock = clock.Add(WarnEvery)
	send("10.0.0.5:4000", "X-Forwarded-For", "203.0.113.7, 198.51.100.1")
	all := logs.All()
	if len(all) != 2 {
		t.Fatalf("%d warnings after %v more, want 2", len(all), WarnEvery)
	}
	for _, e := range all {
		f := e.ContextMap()
		if f["peer"] == "" || f["header"] == "" || !strings.Contains(e.Message, "ERPGATE_TRUSTED_PROXIES") {
			t.Errorf("warning %q %v does not name the peer, the header and the setting", e.Message, f)
		}
		for _, v := range f {
			if s, ok := v.(string); ok && (strings.Contains(s, "203.0.113.7") || strings.Contains(s, "198.51.100.1")) {
				t.Errorf("warning %q carries the forwarded addresses: %v", e.Message, f)
			}
		}
	}
	if f := all[0].ContextMap(); f["peer"] != "10.0.0.5" || f["header"] != "X-Forwarded-For" {
		t.Errorf("first warning %v, want peer 10.0.0.5 and header X-Forwarded-For", f)
	}
}
