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

// watch is an UntrustedProxies trusting the proxies in some prefixes, its
// warnings kept in logs, its clock at now, which the test moves.
type watch struct {
	u       *UntrustedProxies
	logs    *observer.ObservedLogs
	now     time.Time
	extract func(*http.Request) string
}

func newWatch(trusted ...string) *watch {
	core, logs := observer.New(zapcore.WarnLevel)
	w := &watch{logs: logs, now: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	var prefixes []netip.Prefix
	for _, p := range trusted {
		prefixes = append(prefixes, netip.MustParsePrefix(p))
	}
	w.u = NewUntrustedProxies(prefixes, zap.New(core), func() time.Time { return w.now })
	w.extract = w.u.Wrap(func(r *http.Request) string { return DirectIP(r) })
	return w
}

// send makes a request from remote with headers, given as name and value
// in turn, and returns the source it counts as.
func (w *watch) send(remote string, headers ...string) string {
	r := httptest.NewRequest(http.MethodPost, "/register", nil)
	r.RemoteAddr = remote
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	return w.extract(r)
}

// proxied is a request from remote, a proxy, naming the client in header
// (as value); peer is the proxy's address.
type proxied struct{ remote, header, value, peer string }

// noticedOnceEach sends each request a minute after the one before and
// checks that each counts as its proxy's address, as the one sighting of
// kind, at that moment; then that the sighting counts them all and that
// they were warned of once.
func (w *watch) noticedOnceEach(t *testing.T, kind Kind, reqs []proxied) {
	t.Helper()
	for _, tc := range reqs {
		if got := w.send(tc.remote, tc.header, tc.value); got != tc.peer {
			t.Errorf("%s from %s: the source is %q, want the proxy %q", tc.header, tc.remote, got, tc.peer)
		}
		s := w.u.Sightings()
		if len(s) != 1 || s[0].Kind != kind || s[0].Peer != tc.peer || s[0].Header != tc.header || !s[0].At.Equal(w.now) {
			t.Errorf("%s from %s: sightings %+v, want one of the %s kind", tc.header, tc.remote, s, map[Kind]string{Untrusted: "untrusted", Unread: "unread"}[kind])
		}
		w.now = w.now.Add(time.Minute)
	}
	if s := w.u.Sightings(); len(s) != 1 || s[0].Requests != int64(len(reqs)) {
		t.Errorf("sightings %+v, want %d requests counted", s, len(reqs))
	}
	if w.logs.Len() != 1 {
		t.Fatalf("%d warnings within %v, want 1", w.logs.Len(), WarnEvery)
	}
}

// A request from an address that is not a trusted proxy but carrying a
// forwarding header is noted and warned of, at most once every WarnEvery,
// naming the peer and the header but none of the header's addresses; a
// request from a trusted proxy, or without such a header, is not. The
// source stays the connection's: the header is not believed.
func TestUntrustedProxiesAreNoticed(t *testing.T) {
	w := newWatch("10.1.0.0/16")
	w.send("192.0.2.9:4000")
	w.send("10.1.2.3:4000", "X-Forwarded-For", "203.0.113.7")
	w.send("[::ffff:10.1.2.3]:4000", "X-Forwarded-For", "203.0.113.7")
	if s := w.u.Sightings(); len(s) != 0 || w.logs.Len() != 0 {
		t.Fatalf("noticed %+v and logged %d lines with no untrusted proxy", s, w.logs.Len())
	}

	w.noticedOnceEach(t, Untrusted, []proxied{
		{"10.0.0.5:4000", "X-Forwarded-For", "203.0.113.7", "10.0.0.5"},
		{"10.0.0.6:4000", "Forwarded", "203.0.113.7", "10.0.0.6"},
		{"[2001:db8::5]:4000", "X-Real-IP", "203.0.113.7", "2001:db8::5"},
	})
	w.now = w.now.Add(WarnEvery)
	w.send("10.0.0.5:4000", "X-Forwarded-For", "203.0.113.7, 198.51.100.1")
	all := w.logs.All()
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

// TestTrustedProxyWithoutXForwardedForIsNoticed: erpgate reads only
// X-Forwarded-For, so a listed proxy that names the client only in
// Forwarded (RFC 7239) or X-Real-IP (nginx's common default) makes every
// visitor its own address, one source for everyone's limits. Such a
// request is noted and warned of, at most once every WarnEvery, naming the
// proxy and the header, saying that only X-Forwarded-For is read and that
// the proxy should send it. A listed proxy that sends X-Forwarded-For,
// with the others or not, and a client without any of the headers, are
// not noted. The other headers are still not believed.
func TestTrustedProxyWithoutXForwardedForIsNoticed(t *testing.T) {
	w := newWatch("10.1.0.0/16", "2001:db8:1::/48")
	w.send("198.51.100.20:4000")
	w.send("10.1.2.3:4000")
	w.send("10.1.2.3:4000", "X-Forwarded-For", "198.51.100.7")
	w.send("10.1.2.3:4000", "X-Forwarded-For", "198.51.100.7", "Forwarded", "for=198.51.100.7")
	w.send("[::ffff:10.1.2.3]:4000", "X-Real-IP", "198.51.100.7", "X-Forwarded-For", "198.51.100.7")
	if s := w.u.Sightings(); len(s) != 0 || w.logs.Len() != 0 {
		t.Fatalf("noticed %+v and logged %d lines from a proxy that sends X-Forwarded-For, or a client without the headers", s, w.logs.Len())
	}

	w.noticedOnceEach(t, Unread, []proxied{
		{"10.1.2.3:4000", "Forwarded", "for=198.51.100.7", "10.1.2.3"},
		{"10.1.2.4:4000", "X-Real-IP", "198.51.100.7", "10.1.2.4"},
		{"[2001:db8:1::5]:4000", "Forwarded", `for="[2001:db8:9::7]:4711"`, "2001:db8:1::5"},
	})
	// Both headers: the first is named.
	w.now = w.now.Add(WarnEvery)
	w.send("10.1.9.9:4000", "X-Real-IP", "198.51.100.8", "Forwarded", "for=198.51.100.8")
	all := w.logs.All()
	if len(all) != 2 {
		t.Fatalf("%d warnings after %v more, want 2", len(all), WarnEvery)
	}
	for i, want := range []map[string]any{{"peer": "10.1.2.3", "header": "Forwarded"}, {"peer": "10.1.9.9", "header": "Forwarded"}} {
		e := all[i]
		f := e.ContextMap()
		if f["peer"] != want["peer"] || f["header"] != want["header"] {
			t.Errorf("warning %d names %v, want %v", i, f, want)
		}
		if !strings.Contains(e.Message, "reads only X-Forwarded-For") || !strings.Contains(e.Message, "make the proxy send X-Forwarded-For") {
			t.Errorf("warning %q does not say that only X-Forwarded-For is read and that the proxy should send it", e.Message)
		}
		if strings.Contains(e.Message, "untrusted proxy") {
			t.Errorf("warning %q calls a listed proxy untrusted", e.Message)
		}
		for _, v := range f {
			if s, ok := v.(string); ok && strings.Contains(s, "198.51.100.") {
				t.Errorf("warning %q carries the forwarded addresses: %v", e.Message, f)
			}
		}
	}

	// An untrusted proxy is its own kind, its warning not held back by
	// the other's.
	w.send("192.0.2.9:4000", "Forwarded", "for=198.51.100.7")
	s := w.u.Sightings()
	if len(s) != 2 || s[0].Kind != Untrusted || s[0].Peer != "192.0.2.9" || s[1].Kind != Unread || s[1].Peer != "10.1.9.9" {
		t.Errorf("sightings %+v, want the untrusted proxy's, then the listed one's", s)
	}
	if w.logs.Len() != 3 {
		t.Errorf("%d warnings after an untrusted proxy's request, want 3", w.logs.Len())
	}
}
