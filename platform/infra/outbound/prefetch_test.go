package outbound

import (
	"bytes"
	"errors"
	"fmt"
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

// countingBodies is a base transport whose answers count the bytes read
// from the connection, before the response bound sees them.
type countingBodies struct {
	next http.RoundTripper
	read *atomic.Int64
}

func (c countingBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, read: c.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	read *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read.Add(int64(n))
	return n, err
}

// PrefetchCharged charges a large answer before it holds more than it was
// charged for: an announced one for its length before any of it is read;
// one of unknown length (chunked) in two steps, for four times large once
// its first large bytes are read, and for the most it may be, the
// response bound, once those are read too, each before any more is read.
// A small answer is never charged; a refused charge ends the read there,
// and the caller reading the body sees the refusal.
func TestPrefetchChargedChargesBeforeHoldingMoreThanLarge(t *testing.T) {
	const large, size, long = 1 << 20, 3 << 20, 6 << 20
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := size
		switch r.URL.Path {
		case "/small": // chunked: more than the server buffers before it sends
			_, _ = w.Write(chunk[:4<<10])
			return
		case "/announced":
			w.Header().Set("Content-Length", "3145728")
		case "/long":
			n = long
		}
		for range n >> 20 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	var read atomic.Int64
	opts := DefaultOptions()
	opts.Base = countingBodies{next: NewBaseTransport(), read: &read}
	c := NewFactory(opts).Client(siteFor(t, srv.URL), nil)
	refused := toolerr.New(toolerr.RateLimited, "no room")
	// A charge: for most bytes, with read bytes read from the connection.
	type charge struct{ most, read int64 }
	bound := opts.MaxResponseBytes
	for _, tc := range []struct {
		path    string
		refuse  int // the charge refused, from 1; 0: none
		charges []charge
		want    int // bytes held after
	}{
		{"/small", 0, nil, 4 << 10},
		{"/chunked", 0, []charge{{4 * large, large}}, size},
		{"/long", 0, []charge{{4 * large, large}, {bound, 4 * large}}, long},
		{"/announced", 0, []charge{{size, 0}}, size},
		{"/chunked", 1, []charge{{4 * large, large}}, 0},
		{"/long", 2, []charge{{4 * large, large}, {bound, 4 * large}}, 0},
		{"/announced", 1, []charge{{size, 0}}, 0},
	} {
		read.Store(0)
		resp, err := c.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var charges []charge
		n, err := PrefetchCharged(resp, large, func(m int64) error {
			charges = append(charges, charge{m, read.Load()})
			if len(charges) == tc.refuse {
				return refused
			}
			return nil
		})
		if fmt.Sprint(charges) != fmt.Sprint(tc.charges) || n != tc.want {
			t.Errorf("%s (refusing charge %d): charged %v ({most read}), holds %d bytes; want charged %v, holding %d",
				tc.path, tc.refuse, charges, n, tc.charges, tc.want)
		}
		body, rerr := ReadBody(resp)
		if tc.refuse > 0 {
			if !errors.Is(err, refused) || !errors.Is(rerr, refused) {
				t.Errorf("%s refused: PrefetchCharged %v, ReadBody %v; want the refusal", tc.path, err, rerr)
			}
			continue
		}
		if err != nil || rerr != nil || len(body) != tc.want || !bytes.Equal(body[:4<<10], chunk[:4<<10]) {
			t.Errorf("%s: %d bytes, %v, %v", tc.path, len(body), err, rerr)
		}
	}
}

// BenchmarkPrefetchSmall compares Prefetch and PrefetchCharged on a
// 20-row list's answer (8 KiB), announced and not: charging costs a small
// answer nothing but a comparison or two.
func BenchmarkPrefetchSmall(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 8<<10)
	req := httptest.NewRequest(http.MethodGet, "http://erp.example/x", nil)
	charge := func(int64) error { return nil }
	for _, length := range []int64{int64(len(body)), -1} {
		for _, charged := range []bool{false, true} {
			b.Run(fmt.Sprintf("length=%d/charged=%v", length, charged), func(b *testing.B) {
				b.ReportAllocs()
				r := bytes.NewReader(body)
				bb := &boundedBody{rc: io.NopCloser(r), limit: 8 << 20}
				resp := &http.Response{Request: req, ContentLength: length}
				for b.Loop() {
					r.Reset(body)
					bb.remaining, bb.paused = bb.limit, 0
					resp.Body = bb
					if charged {
						_, _ = PrefetchCharged(resp, 1<<20, charge)
					} else {
						_, _ = Prefetch(resp)
					}
				}
			})
		}
	}
}

// A small answer costs PrefetchCharged no allocation that Prefetch does
// not make, announced or not.
func TestPrefetchChargedCostsASmallAnswerNothing(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 8<<10)
	req := httptest.NewRequest(http.MethodGet, "http://erp.example/x", nil)
	charge := func(int64) error { t.Fatal("a small answer charged"); return nil }
	for _, length := range []int64{int64(len(body)), -1} {
		allocs := map[bool]float64{}
		for _, charged := range []bool{false, true} {
			r := bytes.NewReader(body)
			bb := &boundedBody{rc: io.NopCloser(r), limit: 8 << 20}
			resp := &http.Response{Request: req, ContentLength: length}
			allocs[charged] = testing.AllocsPerRun(20, func() {
				r.Reset(body)
				bb.remaining, bb.paused = bb.limit, 0
				resp.Body = bb
				if charged {
					_, _ = PrefetchCharged(resp, 1<<20, charge)
				} else {
					_, _ = Prefetch(resp)
				}
			})
		}
		if allocs[true] > allocs[false] {
			t.Errorf("length %d: %v allocations charged, %v not", length, allocs[true], allocs[false])
		}
	}
}
