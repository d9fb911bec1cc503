package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
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

// runProxy is `erpgate-bench proxy -backends URL,URL`.
func runProxy(args []string) int {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	list := fs.String("backends", "", "comma-separated backend base URLs")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 2048,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	var backends []*httputil.ReverseProxy
	for _, raw := range strings.Split(*list, ",") {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			fmt.Fprintf(os.Stderr, "proxy: bad backend %q\n", raw)
			return 2
		}
		rp := httputil.NewSingleHostReverseProxy(u)
		rp.Transport = transport
		backends = append(backends, rp)
	}
	var next atomic.Uint64
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		backends[(next.Add(1)-1)%uint64(len(backends))].ServeHTTP(w, r)
	})
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

// proxyProcess is a running proxy.
type proxyProcess struct {
	proxyHello
	*helperProc
}

func startProxy(ctx context.Context, backends []string) (*proxyProcess, error) {
	p := &proxyProcess{}
	h, err := startHelper(ctx, &p.proxyHello, "proxy", "-backends="+strings.Join(backends, ","))
	if err != nil {
		return nil, fmt.Errorf("start proxy: %w", err)
	}
	p.helperProc = h
	return p, nil
}
