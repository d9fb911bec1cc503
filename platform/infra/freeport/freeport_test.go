package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestLoopbackBelowTheEphemeralRange: the address can be listened on,
// and its port is one that no listener on port 0 is given.
func TestLoopbackBelowTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	for range 20 {
		addr := Loopback(t)
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(p)
		if port < low-span || port >= low {
			t.Fatalf("port %d, want one in [%d, %d)", port, low-span, low)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("the address it gave is not free: %v", err)
		}
		_ = ln.Close()
	}
	// What it avoids: a listener on port 0 lands in the range.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if port := ln.Addr().(*net.TCPAddr).Port; port < low {
		t.Fatalf("a listener on port 0 got %d, below the range's %d: the range read is wrong", port, low)
	}
}

// TestRefusingHoldsItsPort: a connection to the address is refused, and no
// server can listen on it while the test runs (net.Listen sets
// SO_REUSEADDR, as Go servers do).
func TestRefusingHoldsItsPort(t *testing.T) {
	addr := Refusing(t)
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("a connection to %s was taken", addr)
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Fatalf("a server could listen on %s", addr)
	}
}
