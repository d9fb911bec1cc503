package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// healthServer serves /healthz with the given status on a loopback port and
// returns the port.
func healthServer(t *testing.T, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func TestHealthcheckCommand(t *testing.T) {
	ctx := context.Background()

	t.Run("healthy on every interface", func(t *testing.T) {
		t.Setenv("ERPGATE_LISTEN_ADDR", "0.0.0.0:"+healthServer(t, http.StatusOK))
		if err := run(ctx, []string{"healthcheck"}); err != nil {
			t.Fatalf("healthcheck of a healthy server: %v", err)
		}
	})
	t.Run("healthy on an empty host", func(t *testing.T) {
		t.Setenv("ERPGATE_LISTEN_ADDR", ":"+healthServer(t, http.StatusOK))
		if err := run(ctx, []string{"healthcheck"}); err != nil {
			t.Fatalf("healthcheck of a healthy server: %v", err)
		}
	})
	t.Run("unhealthy", func(t *testing.T) {
		t.Setenv("ERPGATE_LISTEN_ADDR", "127.0.0.1:"+healthServer(t, http.StatusServiceUnavailable))
		err := run(ctx, []string{"healthcheck"})
		if err == nil || !strings.Contains(err.Error(), "answered 503") {
			t.Fatalf("healthcheck of a server answering 503: %v", err)
		}
	})
	t.Run("nothing listening", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		t.Setenv("ERPGATE_LISTEN_ADDR", addr)
		err = run(ctx, []string{"healthcheck"})
		if err == nil || !strings.Contains(err.Error(), "nothing answers at http://"+addr+"/healthz") {
			t.Fatalf("healthcheck with nothing listening: %v", err)
		}
	})
	t.Run("arguments", func(t *testing.T) {
		var usage usageError
		if err := run(ctx, []string{"healthcheck", "now"}); !errors.As(err, &usage) {
			t.Fatalf("healthcheck with an argument: %v", err)
		}
	})
}

// FuzzHealthcheckURL: any listen address gives an error or an http URL for
// /healthz on the address's port, never on an unspecified host.
func FuzzHealthcheckURL(f *testing.F) {
	for _, s := range []string{":8080", "0.0.0.0:8080", "[::]:8080", "127.0.0.1:1", "erpgate:80", "nonsense", "[::1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, listen string) {
		got, err := healthcheckURL(listen)
		if err != nil {
			// The address is quoted: its own "%!" is not a format error.
			if strings.Count(err.Error(), "%!") > strings.Count(listen, "%!") {
				t.Fatalf("malformed message %q", err)
			}
			return
		}
		u, perr := url.Parse(got)
		if perr != nil {
			t.Fatalf("healthcheckURL(%q) = %q, which does not parse: %v", listen, got, perr)
		}
		_, port, _ := net.SplitHostPort(listen)
		if u.Scheme != "http" || u.Path != "/healthz" || u.Port() != port {
			t.Fatalf("healthcheckURL(%q) = %q", listen, got)
		}
		if ip, err := netip.ParseAddr(u.Hostname()); u.Hostname() == "" || (err == nil && ip.IsUnspecified()) {
			t.Fatalf("healthcheckURL(%q) = %q: an unspecified host", listen, got)
		}
	})
}
