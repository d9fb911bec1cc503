// Package freeport finds a loopback address for a server that a test, or
// the benchmark suite, starts in another process.
//
// A port the kernel gives to a listener on port 0 comes from its range of
// ephemeral ports, which also serves every other listener on port 0 and
// every outgoing connection. Closed and handed to a process that listens
// on it only after starting (or after go run has built it), such a port
// can be taken in between by a test running in parallel; a CI run once
// failed so. Loopback chooses below that range, where only a listener
// that names its port can land.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// span is how many ports below the ephemeral range Addr chooses from.
const span = 10000

// Addr returns "127.0.0.1:port" for a port that is free now, below the
// kernel's range of ephemeral ports.
func Addr() (string, error) {
	low := ephemeralLow()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(low-span+rand.IntN(span)))
		if err != nil {
			continue // taken
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		return addr, nil
	}
	return "", fmt.Errorf("freeport: no free port among the %d below %d", span, low)
}

// Loopback is Addr for a test, which fails when there is none.
func Loopback(t testing.TB) string {
	t.Helper()
	addr, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// ephemeralLow is the first port of the kernel's ephemeral range
// (Linux's default when it cannot be read).
func ephemeralLow() int {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > span+1024 {
				return n
			}
		}
	}
	return 32768
}

// Refusing returns "127.0.0.1:port" for a port where nothing listens for
// the rest of the test, so a connection to it is refused: a TCP socket
// bound to it and never listening, closed when the test ends. A listener
// closed at once instead frees its port, which another test's server, in
// this process or another, can take meanwhile (a console test was answered
// HTTP 400 by one). The socket is bound without SO_REUSEADDR, so no one
// else can bind the port while it is open.
func Refusing(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
}
