package outbound

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// A prefetched answer gives its connection back at once: the next request
// reuses it although the first answer has not been read by its caller.
func TestPrefetchFreesTheConnection(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"data":[1,2,3]}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := NewFactory(DefaultOptions()).Client(siteFor(t, srv.URL), nil)

	var held []*http.Response
	for range 3 {
		resp, err := c.Get(srv.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		Prefetch(resp)
		held = append(held, resp) // not read yet, as by a call waiting for its turn
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for three prefetched answers held at once, want 1", n)
	}
	for _, resp := range held {
		if body, err := ReadBody(resp); err != nil || string(body) != `{"data":[1,2,3]}` {
			t.Errorf("body = %q, %v", body, err)
		}
	}
}

// What ended the read is what the reader sees after the bytes, and ReadBody
// classifies it as it would have classified it while reading.
func TestPrefetchReplaysBytesThenTheError(t *testing.T) {
	broken := errors.New("connection reset by peer")
	newResp := func() *http.Response {
		req := httptest.NewRequest(http.MethodGet, "http://erp.example/x", nil)
		return &http.Response{Request: req, ContentLength: 10,
			Body: io.NopCloser(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(broken)))}
	}
	resp := newResp()
	Prefetch(resp)
	got, err := io.ReadAll(resp.Body)
	if string(got) != "abc" || !errors.Is(err, broken) {
		t.Errorf("replay = %q, %v; want abc and the read error", got, err)
	}
	resp = newResp()
	Prefetch(resp)
	if _, err := ReadBody(resp); codeOf(err) != toolerr.UpstreamUnavailable || !errors.Is(err, broken) {
		t.Errorf("ReadBody after Prefetch: %v, want UPSTREAM_UNAVAILABLE wrapping the read error", err)
	}

	tooLarge := &http.Response{Request: httptest.NewRequest(http.MethodGet, "http://erp.example/x", nil), ContentLength: -1,
		Body: &boundedBody{rc: io.NopCloser(strings.NewReader(strings.Repeat("x", 2048))), remaining: 1024, limit: 1024}}
	Prefetch(tooLarge)
	if _, err := ReadBody(tooLarge); codeOf(err) != toolerr.ResponseTooLarge {
		t.Errorf("a body over the bound: %v, want RESPONSE_TOO_LARGE", err)
	}
}

// ReadBody takes a prefetched body over without copying it.
func TestReadBodyTakesAPrefetchedBodyWithoutCopying(t *testing.T) {
	body := bytes.Repeat([]byte("z"), 1<<20)
	req := httptest.NewRequest(http.MethodGet, "http://erp.example/x", nil)
	resp := &http.Response{Request: req, ContentLength: int64(len(body)), Body: io.NopCloser(bytes.NewReader(body))}
	Prefetch(resp)
	allocs := testing.AllocsPerRun(1, func() {
		pb := resp.Body.(*prefetchedBody)
		pb.off = 0
		if got, err := ReadBody(resp); err != nil || len(got) != len(body) {
			t.Fatalf("%d bytes, %v", len(got), err)
		}
	})
	if allocs > 0 {
		t.Errorf("%v allocations to take a prefetched body", allocs)
	}
}
