package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestProxyForwardsABodyStillArrivingAsTheAnswerStarts: the proxy passes
// an answer on while the request's body is still being forwarded. Without
// full duplex, net/http's server drains the request's body as the answer
// starts out, competing with the transport that forwards it; here the
// drain waits for bytes the client sends only after the answer's header,
// and nothing moves. In two_replicas the same drain, finishing first,
// closed the body under the transport's last read: the transport closed
// the backend connection mid-answer, and a client got a connection closed
// (golang/go#40747), about one run in ten.
func TestProxyForwardsABodyStillArrivingAsTheAnswerStarts(t *testing.T) {
	head, tail := strings.Repeat("h", 10000), strings.Repeat("t", 2000)
	// The body's first bytes come with the request; the 200 KiB after
	// them arrives once the answer has started.
	first := "first|"
	sent := first + strings.Repeat("b", 200<<10)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if err := rc.EnableFullDuplex(); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(head)+len(tail)))
		_, _ = io.WriteString(w, head)
		_ = rc.Flush()
		body, err := io.ReadAll(r.Body) // all of it, as the proxy forwards it
		if err != nil || string(body) != sent {
			t.Errorf("the backend read %d of %d bytes: %v", len(body), len(sent), err)
		}
		_, _ = io.WriteString(w, tail)
	}))
	defer backend.Close()
	u, err := url.Parse(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(proxyHandler([]*url.URL{u}, false))
	defer proxy.Close()

	conn, err := net.Dial("tcp", strings.TrimPrefix(proxy.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(conn, "POST /service/mcp HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(sent), first); err != nil {
		t.Fatal(err)
	}
	// The rest of the body goes once the answer's header has come back.
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, sent[len(first):]); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil || string(got) != head+tail {
		t.Fatalf("the client got %d of %d bytes: %v", len(got), len(head)+len(tail), err)
	}
}
