//go:build erpgate_pprof

package main

// A profiling build: `go build -tags erpgate_pprof ./cmd/erpgate` gives a
// binary that, when ERPGATE_PPROF_ADDR is set, serves net/http/pprof on that
// address (loopback only), for `go tool pprof` against a replica under load
// and for the benchmark's goroutine counts. Release builds do not contain
// it: the profiler exposes memory contents and must never face a network.

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

func init() {
	addr := os.Getenv("ERPGATE_PPROF_ADDR")
	if addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fmt.Fprintf(os.Stderr, "ERPGATE_PPROF_ADDR must be a loopback host:port, not %q\n", addr)
		os.Exit(2)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil {
			fmt.Fprintln(os.Stderr, "pprof listener:", err)
		}
	}()
}
