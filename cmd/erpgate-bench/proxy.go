package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The two-replica scenario puts a small round-robin reverse proxy, in its
// own process, in front of the replicas, as a load balancer would be. The
// one-replica baseline goes through the same proxy, so the ratio compares
// like with like.

type proxyHello struct {
	URL string `json:"url"`
}

// runProxy is `erpgate-bench proxy -backends URL,URL [-timing]`.
func runProxy(args []string) int {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	list := fs.String("backends", "", "comma-separated backend base URLs")
	timing := fs.Bool("timing", false, "read each answer whole and say, as erpgate does, how long the backend had the request (Server-Timing)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var backends []*url.URL
	for _, raw := range strings.Split(*list, ",") {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			fmt.Fprintf(os.Stderr, "proxy: bad backend %q\n", raw)
			return 2
		}
		backends = append(backends, u)
	}
	handler := proxyHandler(backends, *timing)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		return 1
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	if err := json.NewEncoder(os.Stdout).Encode(proxyHello{URL: "http://" + ln.Addr().String()}); err != nil {
		return 1
	}
	waitForParent()
	_ = srv.Close()
	return 0
}

type proxyStartKey struct{}

// timedTransport reads each answer whole, as erpgate does, and adds a
// Server-Timing header in erpgate's shape: erp is from sending the request
// to having read the answer, total from having read the request to then.
// The load generator then measures per call what a do-nothing hop adds,
// as it does for the gateway.
type timedTransport struct{ next http.RoundTripper }

func (t timedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	sent := time.Now()
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	total := now.Sub(sent)
	if start, ok := req.Context().Value(proxyStartKey{}).(time.Time); ok {
		total = now.Sub(start)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Transfer-Encoding")
	resp.TransferEncoding = nil
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Set("Server-Timing", fmt.Sprintf("erp;dur=%.3f, total;dur=%.3f", float64(now.Sub(sent).Microseconds())/1e3, float64(total.Microseconds())/1e3))
	return resp, nil
}

// proxyHandler sends each request to the next of backends in turn.
func proxyHandler(backends []*url.URL, timing bool) http.Handler {
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 2048,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	var proxies []*httputil.ReverseProxy
	for _, u := range backends {
		rp := httputil.NewSingleHostReverseProxy(u)
		rp.Transport = transport
		if timing {
			rp.Transport = timedTransport{transport}
		}
		proxies = append(proxies, rp)
	}
	var next atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if timing {
			r = r.WithContext(context.WithValue(r.Context(), proxyStartKey{}, time.Now()))
		}
		// Without full duplex, net/http's server drains and closes the
		// request's body as the backend's answer starts to go out, while
		// the transport may still be reading that body (after the last
		// byte, to see its end). Its read then fails, the transport closes
		// the backend connection under the answer being copied, and the
		// client gets a connection closed mid-answer (golang/go#40747;
		// two_replicas met it about once in ten runs).
		_ = http.NewResponseController(w).EnableFullDuplex()
		proxies[(next.Add(1)-1)%uint64(len(proxies))].ServeHTTP(w, r)
	})
}

// proxyProcess is a running proxy.
type proxyProcess struct {
	proxyHello
	*helperProc
}

func startProxy(ctx context.Context, backends []string, timing bool) (*proxyProcess, error) {
	p := &proxyProcess{}
	h, err := startHelper(ctx, &p.proxyHello, "proxy", "-backends="+strings.Join(backends, ","), fmt.Sprintf("-timing=%t", timing))
	if err != nil {
		return nil, fmt.Errorf("start proxy: %w", err)
	}
	p.helperProc = h
	return p, nil
}
