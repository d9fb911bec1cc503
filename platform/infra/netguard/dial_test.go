package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestGuardRefusesToDialLoopback: a real server on 127.0.0.1 is reachable
// with a plain dialer and refused by a guarded one, both by its address and
// by a name (localhost) that resolves to it.
func TestGuardRefusesToDialLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	plain := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := plain.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	for _, host := range []string{"127.0.0.1", "localhost"} {
		_, err := Guard(plain).DialContext(ctx, "tcp", net.JoinHostPort(host, port))
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("guarded dial of %s: err = %v, want ErrForbiddenAddress", host, err)
		}
	}
}

// TestPolicyExemptsOnlyListedHosts: with the operator's list, a listed host
// is dialled wherever it is; every other host is guarded; a nil policy
// (development) guards nothing.
func TestPolicyExemptsOnlyListedHosts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := &net.Dialer{Timeout: 5 * time.Second}
	p := NewPolicy([]string{"LocalHost.:" + port})
	// A host listed without a port is exempt on 443 only: listing the
	// company's ERP must not open every other port of that host.
	bare := NewPolicy([]string{"localhost", "127.0.0.1"})
	for _, tc := range []struct {
		policy  *Policy
		host    string
		allowed bool
	}{
		{p, "localhost", true},
		{p, "127.0.0.1", false},
		{bare, "localhost", false},
		{bare, "127.0.0.1", false},
		{nil, "127.0.0.1", true},
	} {
		conn, err := tc.policy.DialContext(d)(ctx, "tcp", net.JoinHostPort(tc.host, port))
		if tc.allowed && err != nil {
			t.Errorf("policy %v, %s: %v", tc.policy, tc.host, err)
		}
		if !tc.allowed && !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("policy %v, %s: err = %v, want ErrForbiddenAddress", tc.policy, tc.host, err)
		}
		if conn != nil {
			conn.Close()
		}
	}
}

func TestPolicyCheckHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := NewPolicy([]string{"erp.internal.example", "10.0.0.7", "10.0.0.8:8443"})
	for host, want := range map[string]string{
		"127.0.0.1:443":            "127.0.0.1 is a loopback address",
		"169.254.169.254:80":       "169.254.169.254 is a link-local address",
		"[::1]:5432":               "::1 is a loopback address",
		"localhost:443":            "localhost resolves to 127.0.0.1, a loopback address",
		"erp.internal.example:443": "",
		"10.0.0.7:443":             "",
		"10.0.0.8:8443":            "",
		"8.8.8.8:443":              "",
		// Another port of a listed host is not listed.
		"10.0.0.7:22":   "10.0.0.7 is a private address",
		"10.0.0.8:443":  "10.0.0.8 is a private address",
		"10.0.0.7:8443": "10.0.0.7 is a private address",
	} {
		err := p.CheckHost(ctx, nil, host)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want && !(host == "localhost:443" && got == "localhost resolves to ::1, a loopback address") {
			t.Errorf("CheckHost(%s) = %q, want %q", host, got, want)
		}
	}
	if err := p.CheckHost(ctx, nil, "no-such-host.invalid:443"); !errors.Is(err, ErrUnresolved) {
		t.Errorf("CheckHost of an unresolvable name = %v, want ErrUnresolved", err)
	}
}
