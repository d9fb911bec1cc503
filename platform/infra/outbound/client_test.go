package outbound

import (
	"context"
	"errors"
	"io"
	"math"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

func siteFor(t *testing.T, rawURL string) connector.Site {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return connector.Site{Slug: "demo", BaseURL: u}
}

var bearer = connector.AuthorizerFunc(func(r *http.Request) error {
	r.Header.Set("Authorization", "token key:secret")
	return nil
})

func codeOf(err error) toolerr.Code {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return ""
}

func TestCredentialsOnlyToSiteOrigin(t *testing.T) {
	var foreignAuth atomic.Value
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreignAuth.Store(r.Header.Get("Authorization"))
	}))
	defer foreign.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect-away":
			http.Redirect(w, r, foreign.URL+"/x", http.StatusFound)
		case "/redirect-home":
			http.Redirect(w, r, "/echo", http.StatusFound)
		case "/echo":
			_, _ = io.WriteString(w, r.Header.Get("Authorization"))
		}
	}))
	defer site.Close()

	c := NewFactory(DefaultOptions()).Client(siteFor(t, site.URL), bearer)
	ctx := context.Background()

	resp, err := c.Get(site.URL + "/redirect-home")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := ReadBody(resp)
	if string(body) != "token key:secret" {
		t.Errorf("same-origin redirect lost auth: %q", body)
	}

	_, err = c.Get(site.URL + "/redirect-away")
	if codeOf(err) != toolerr.UpstreamInvalidResponse {
		t.Errorf("redirect to another host: err = %v", err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, foreign.URL+"/direct", nil)
	if _, err := c.Do(req); codeOf(err) != toolerr.Internal {
		t.Errorf("direct request to another host: err = %v", err)
	}
	if v := foreignAuth.Load(); v != nil {
		t.Errorf("foreign host was contacted (Authorization %q)", v)
	}
}

// TestUnreadableRedirectQuotesNothing: an ERP that answers with a
// Location no client can read (here quoting the credential it was sent)
// fails the request as an unusable answer. The error is not INTERNAL,
// whose text the engine logs, and does not quote the Location, which net/
// http's own error would.
func TestUnreadableRedirectQuotesNothing(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/%zz/collect?t="+url.QueryEscape(r.Header.Get("Authorization")))
		w.WriteHeader(http.StatusFound)
	}))
	defer site.Close()
	for _, c := range []*http.Client{
		NewFactory(DefaultOptions()).Client(siteFor(t, site.URL), bearer),
		NewFactory(DefaultOptions()).ToolClient(siteFor(t, site.URL), bearer, connector.Read, nil),
	} {
		_, err := c.Get(site.URL + "/anything")
		if codeOf(err) != toolerr.UpstreamInvalidResponse || strings.Contains(err.Error(), "secret") {
			t.Errorf("unreadable Location: err = %v", err)
		}
	}
}

func TestRetriesRetryableReadOnce(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	opts := DefaultOptions()
	opts.RetryBackoff = time.Millisecond
	c := NewFactory(opts).Client(siteFor(t, srv.URL), nil)
	resp, err := c.Get(srv.URL + "/x")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("resp=%v err=%v", resp, err)
	}
	_ = resp.Body.Close()
	if calls.Load() != 2 {
		t.Errorf("calls = %d, want 2", calls.Load())
	}
}

func TestNoSecondRetryAndNoRetryForPost(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	opts := DefaultOptions()
	opts.RetryBackoff = time.Millisecond
	c := NewFactory(opts).Client(siteFor(t, srv.URL), nil)
	resp, err := c.Get(srv.URL)
	if err != nil || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("resp=%v err=%v", resp, err)
	}
	_ = resp.Body.Close()
	if calls.Load() != 2 {
		t.Errorf("GET calls = %d, want 2", calls.Load())
	}
	calls.Store(0)
	resp, err = c.Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if calls.Load() != 1 {
		t.Errorf("POST calls = %d, want 1", calls.Load())
	}
}

func TestRetryAfterBeyondBudgetIsNotAwaited(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	c := NewFactory(DefaultOptions()).Client(siteFor(t, srv.URL), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("resp=%v err=%v", resp, err)
	}
	_ = resp.Body.Close()
	if calls.Load() != 1 {
		t.Errorf("calls = %d, want 1", calls.Load())
	}
}

// TestHeaderBound: an ERP's answer headers are bounded like its body. A
// hostile ERP's megabyte of tiny header lines (each one a string and a
// map entry once parsed: some 33 MiB of heap for Go's default bound of
// 10 MiB) is refused before they are all read; a large but real set of
// headers (cookies of some 40 KiB) still goes.
func TestHeaderBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lines, value := 200_000, "b"
		if r.URL.Path == "/real" {
			lines, value = 40, strings.Repeat("c", 1000)
		}
		for i := range lines {
			w.Header().Add("X-"+strconv.Itoa(i%50), value)
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c := NewFactory(DefaultOptions()).Client(siteFor(t, srv.URL), nil)
	if resp, err := c.Get(srv.URL + "/hostile"); err == nil {
		_ = resp.Body.Close()
		t.Fatal("an answer with 200,000 header lines was read")
	}
	resp, err := c.Get(srv.URL + "/real")
	if err != nil {
		t.Fatalf("an answer with 40 KiB of headers: %v", err)
	}
	_ = resp.Body.Close()
}

func TestBodyBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 2048
		if r.URL.Path == "/exact" {
			n = 1024
		}
		if r.URL.Path == "/stream" {
			w.Header().Set("Transfer-Encoding", "chunked")
			for i := 0; i < 4; i++ {
				_, _ = w.Write([]byte(strings.Repeat("x", 512)))
				w.(http.Flusher).Flush()
			}
			return
		}
		_, _ = w.Write([]byte(strings.Repeat("x", n)))
	}))
	defer srv.Close()
	opts := DefaultOptions()
	opts.MaxResponseBytes = 1024
	c := NewFactory(opts).Client(siteFor(t, srv.URL), nil)

	if _, err := c.Get(srv.URL + "/declared"); codeOf(err) != toolerr.ResponseTooLarge {
		t.Errorf("declared length: err = %v", err)
	}
	resp, err := c.Get(srv.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBody(resp); codeOf(err) != toolerr.ResponseTooLarge {
		t.Errorf("streamed body: err = %v", err)
	}
	resp, err = c.Get(srv.URL + "/exact")
	if err != nil {
		t.Fatal(err)
	}
	if body, err := ReadBody(resp); err != nil || len(body) != 1024 {
		t.Errorf("exact-size body: len=%d err=%v", len(body), err)
	}
}

func TestTimeoutAndUnreachable(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c := NewFactory(DefaultOptions()).Client(siteFor(t, srv.URL), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	_, err := c.Do(req)
	if toolerr.Classify(err).Code != toolerr.UpstreamTimeout {
		t.Errorf("hang: err = %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	opts := DefaultOptions()
	opts.RetryBackoff = time.Millisecond
	c = NewFactory(opts).Client(siteFor(t, "http://"+addr), nil)
	if _, err := c.Get("http://" + addr + "/"); codeOf(err) != toolerr.UpstreamUnavailable {
		t.Errorf("refused: err = %v", err)
	}
}

func TestDecodeJSONNeverCallsEmptyBodyNoRecords(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			_, _ = io.WriteString(w, `{"data":[`)
		}
	}))
	defer srv.Close()
	c := NewFactory(DefaultOptions()).Client(siteFor(t, srv.URL), nil)
	for _, path := range []string{"/empty", "/bad"} {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := DecodeJSON(resp, &v); codeOf(err) != toolerr.UpstreamInvalidResponse {
			t.Errorf("%s: err = %v", path, err)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"7":                             7 * time.Second,
		"-1":                            0,
		"soon":                          0,
		"Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second,
	}
	for in, want := range cases {
		if got := ParseRetryAfter(in, now); got != want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzParseRetryAfter: whatever an ERP's Retry-After says, the wait is
// not negative, and a number of seconds is that many seconds, or the
// longest wait when it is beyond what a Duration holds: it never wraps
// round to a wait the ERP did not ask for.
func FuzzParseRetryAfter(f *testing.F) {
	for _, seed := range []string{"", "7", "-1", "soon", "120", "Thu, 01 Jan 2026 00:00:30 GMT", "Wed, 21 Oct 2015 07:28:00 GMT", "0"} {
		f.Add(seed)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		got := ParseRetryAfter(v, now)
		if got < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v", v, got)
		}
		digits := strings.TrimSpace(v)
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			return
		}
		want, ok := new(big.Int).SetString(digits, 10)
		if !ok {
			return
		}
		want.Mul(want, big.NewInt(int64(time.Second)))
		if want.IsInt64() && got != time.Duration(want.Int64()) || !want.IsInt64() && got != time.Duration(math.MaxInt64) {
			t.Fatalf("ParseRetryAfter(%q) = %v, want %s ns", v, got, want)
		}
	})
}

// renewing is a RenewableAuthorizer whose token the test can refuse.
type renewing struct {
	mu       sync.Mutex
	current  string
	next     string
	rejected int
}

func (r *renewing) Authorize(req *http.Request) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	req.Header.Set("Authorization", "Bearer "+r.current)
	return nil
}

func (r *renewing) RejectAuthorization(req *http.Request) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Header.Get("Authorization") != "Bearer "+r.current || r.next == "" {
		return false
	}
	r.rejected++
	r.current, r.next = r.next, ""
	return true
}

func TestRefusedCredentialIsRenewedOnce(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer fresh" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	auth := &renewing{current: "revoked-early", next: "fresh"}
	c := NewFactory(DefaultOptions()).Client(siteFor(t, srv.URL), auth)
	resp, err := c.Get(srv.URL + "/x")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("resp=%v err=%v", resp, err)
	}
	_ = resp.Body.Close()
	if calls.Load() != 2 || auth.rejected != 1 {
		t.Errorf("calls=%d rejected=%d, want 2 and 1", calls.Load(), auth.rejected)
	}
	// A credential that cannot be renewed: the 401 comes back, sent once.
	calls.Store(0)
	auth.current, auth.next = "refused", ""
	resp, err = c.Get(srv.URL + "/x")
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("resp=%v err=%v", resp, err)
	}
	_ = resp.Body.Close()
	if calls.Load() != 1 {
		t.Errorf("an unrenewable credential was sent %d times", calls.Load())
	}
}

// TestHTTPSSitesGetHTTP2 checks that the shared transport speaks HTTP/2 to
// an ERP that offers it over TLS, as ERPs behind HTTPS do (one connection
// then carries a site's concurrent calls), with the site's credential and
// a read of the whole body as over HTTP/1.1.
func TestHTTPSSitesGetHTTP2(t *testing.T) {
	var proto atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(r.Proto)
		if r.Header.Get("Authorization") != "token key:secret" {
			http.Error(w, "no credential", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":[{"name":"CUST-1"}]}`)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	base := NewBaseTransport()
	// Trust the test server's certificate, as SSL_CERT_FILE would.
	base.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	f := NewFactory(Options{Base: base})
	c := f.Client(siteFor(t, srv.URL), bearer)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/resource/Customer", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := ReadBody(resp)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 || proto.Load() != "HTTP/2.0" {
		t.Errorf("the ERP offered HTTP/2, the gateway used %s (server saw %v)", resp.Proto, proto.Load())
	}
	if string(body) != `{"data":[{"name":"CUST-1"}]}` {
		t.Errorf("body %q", body)
	}
}

// ownWhen is a connector's judge of its ERP's own 401: the body says so.
type ownWhen string

func (o ownWhen) OwnUnauthorized(_ http.Header, body []byte) bool { return string(body) == string(o) }

// TestAWriteToolsRequestIsSentAgainAfterA401OnlyInTheERPsShape: after a
// 401 the transport renews the credential and sends the request again. A
// write tool's request is sent again only when its connector says the
// 401 is the ERP's own, which it sends before running anything: a proxy
// or an SSO layer may answer 401 after forwarding the write, and sending
// it again would make the change twice. The 401 then reaches the
// connector whole. A read tool's request is sent again after any 401.
func TestAWriteToolsRequestIsSentAgainAfterA401OnlyInTheERPsShape(t *testing.T) {
	const erps, proxys = `{"exc_type":"AuthenticationError"}`, `{"message":"Unauthorized"}`
	for _, c := range []struct {
		name   string
		effect connector.Effect
		own    connector.OwnUnauthorized
		body   string
		sent   int32
	}{
		{"a write answered the ERP's own 401", connector.Write, ownWhen(erps), erps, 2},
		{"a write answered a proxy's 401", connector.Write, ownWhen(erps), proxys, 1},
		{"a destructive write answered a proxy's 401", connector.Destructive, ownWhen(erps), proxys, 1},
		{"a write whose connector cannot tell", connector.Write, nil, erps, 1},
		{"a read answered a proxy's 401", connector.Read, ownWhen(erps), proxys, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sent atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sent.Add(1)
				if r.Header.Get("Authorization") != "Bearer fresh" {
					w.WriteHeader(http.StatusUnauthorized)
					_, _ = io.WriteString(w, c.body)
					return
				}
				_, _ = io.WriteString(w, "ok")
			}))
			defer srv.Close()
			auth := &renewing{current: "revoked-early", next: "fresh"}
			hc := NewFactory(DefaultOptions()).ToolClient(siteFor(t, srv.URL), auth, c.effect, c.own)
			resp, err := hc.Post(srv.URL+"/api/resource/Comment", "application/json", strings.NewReader(`{"x":1}`))
			if err != nil {
				t.Fatal(err)
			}
			body, err := ReadBody(resp)
			if err != nil {
				t.Fatal(err)
			}
			if sent.Load() != c.sent {
				t.Fatalf("sent %d times, want %d", sent.Load(), c.sent)
			}
			if c.sent == 1 && (resp.StatusCode != http.StatusUnauthorized || string(body) != c.body || auth.rejected != 0) {
				t.Errorf("the 401 reached the connector as %d %q (credential refused %d times), want it whole and the credential kept", resp.StatusCode, body, auth.rejected)
			}
			if c.sent == 2 && (resp.StatusCode != http.StatusOK || string(body) != "ok") {
				t.Errorf("after renewal: %d %q", resp.StatusCode, body)
			}
		})
	}
}
