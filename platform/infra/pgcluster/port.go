package pgcluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// loopbackHost is the only address the server listens on.
const loopbackHost = "127.0.0.1"

// pickFreePort asks the kernel for an unused loopback port. Another process
// may take it before postgres binds it; Start retries with a new port when
// that happens.
func pickFreePort() (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(loopbackHost, "0"))
	if err != nil {
		return 0, fmt.Errorf("pgcluster: pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portIsFree reports whether port can be bound on the loopback address.
func portIsFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(loopbackHost, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// readPortFile returns the port recorded by the previous start, or 0.
func readPortFile(path string) (int, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("pgcluster: read port file: %w", err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || port <= 0 || port > 65535 {
		// A damaged file only loses the preference for the old port.
		return 0, nil
	}
	return port, nil
}

// choosePort returns the requested port, else the previous run's port when
// it is free, else a new free port.
func choosePort(requested int, portFile string) (int, error) {
	if requested != 0 {
		return requested, nil
	}
	previous, err := readPortFile(portFile)
	if err != nil {
		return 0, err
	}
	if previous != 0 && portIsFree(previous) {
		return previous, nil
	}
	return pickFreePort()
}
