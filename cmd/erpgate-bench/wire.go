package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"
)

// wireCaller is a light load generator's caller: one keep-alive HTTP/1.1
// connection per host, each request's bytes written as they are, each
// answer read with http.ReadResponse, and no transport goroutines. It spends
// a fraction of net/http's client CPU per call, so that with the gateway on
// a core of its own the gateway, not the load generator, bounds the rate.
type wireCaller struct {
	conns map[string]*wireConn
	buf   bytes.Buffer
}

type wireConn struct {
	c  net.Conn
	br *bufio.Reader
}

func newWireCaller() *wireCaller { return &wireCaller{conns: map[string]*wireConn{}} }

func (w *wireCaller) close() {
	for _, c := range w.conns {
		_ = c.c.Close()
	}
}

// send sends s and returns the answer's status, header and body.
func (w *wireCaller) send(ctx context.Context, s step) (int, http.Header, []byte, error) {
	u, err := url.Parse(s.url)
	if err != nil {
		return 0, nil, nil, badStep{err}
	}
	if u.Scheme != "http" {
		return 0, nil, nil, badStep{fmt.Errorf("wire caller: %s is not plain HTTP", s.url)}
	}
	c := w.conns[u.Host]
	if c == nil {
		d := net.Dialer{Timeout: 5 * time.Second}
		nc, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return 0, nil, nil, err
		}
		c = &wireConn{c: nc, br: bufio.NewReaderSize(nc, 32<<10)}
		w.conns[u.Host] = c
	}
	w.buf.Reset()
	fmt.Fprintf(&w.buf, "%s %s HTTP/1.1\r\nHost: %s\r\n", s.method, u.RequestURI(), u.Host)
	for k, vs := range s.header {
		for _, v := range vs {
			fmt.Fprintf(&w.buf, "%s: %s\r\n", k, v)
		}
	}
	if s.body != nil {
		fmt.Fprintf(&w.buf, "Content-Length: %d\r\n", len(s.body))
	}
	w.buf.WriteString("\r\n")
	w.buf.Write(s.body)
	if _, err := c.c.Write(w.buf.Bytes()); err != nil {
		w.drop(u.Host)
		return 0, nil, nil, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		w.drop(u.Host)
		return 0, nil, nil, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || resp.Close {
		w.drop(u.Host)
	}
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, body, nil
}

func (w *wireCaller) drop(host string) {
	if c := w.conns[host]; c != nil {
		_ = c.c.Close()
		delete(w.conns, host)
	}
}

// sampledCheck is check on the first answer and every nth after it, and
// a cheaper look at the others: a 200 answer of JSON-RPC with a result
// that is not a tool error. Decoding every 10 KiB reply cost the light
// load generator more CPU than the rest of its work, on the core that
// must keep up with the gateway's.
func sampledCheck(check checkFunc, n int64) checkFunc {
	var seen atomic.Int64
	return func(status int, header http.Header, body []byte) string {
		if (seen.Add(1)-1)%n == 0 {
			return check(status, header, body)
		}
		switch {
		case status != http.StatusOK:
			return fmt.Sprintf("http_%d", status)
		case !bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0",`)):
			return "invalid_json"
		case !bytes.Contains(body, []byte(`"result":{`)):
			return "no_result"
		case bytes.Contains(body, []byte(`"isError":true`)):
			return "tool_error"
		}
		return ""
	}
}
