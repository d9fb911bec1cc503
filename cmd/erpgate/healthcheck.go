package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/erpgate/erpgate/platform/infra/config"
)

// healthcheckTimeout bounds `erpgate healthcheck` as a whole.
const healthcheckTimeout = 5 * time.Second

// runHealthcheck asks the gateway running on this machine, at the configured
// listen address, for /healthz, and fails unless it answers 200. It is the
// container image's HEALTHCHECK: the image has no shell and no curl.
func runHealthcheck(ctx context.Context, configPath string, args []string) error {
	if len(args) != 0 {
		return usageError{"healthcheck takes no arguments"}
	}
	cfg, err := config.LoadRequiring(os.LookupEnv, configPath, 0)
	if err != nil {
		return err
	}
	target, err := healthcheckURL(cfg.ListenAddr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: cannot build the request for %s", target)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("healthcheck: %s did not answer within %s", target, healthcheckTimeout)
		}
		return fmt.Errorf("healthcheck: nothing answers at %s", target)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d", target, resp.StatusCode)
	}
	return nil
}

// healthcheckURL is the /healthz URL on this machine for a listen address:
// an unspecified host (":8080", "0.0.0.0:8080", "[::]:8080") is reached on
// loopback.
func healthcheckURL(listenAddr string) (string, error) {
	host, port, err := net.SplitHostPort(listenAddr)
	if err != nil {
		return "", fmt.Errorf("healthcheck: the listen address %q is not host:port", listenAddr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return "", fmt.Errorf("healthcheck: the listen address %q has no port number", listenAddr)
	}
	if host == "" {
		host = "127.0.0.1"
	} else if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.Is6() && !ip.Is4In6() {
			host = "::1"
		}
	}
	target := "http://" + net.JoinHostPort(host, port) + "/healthz"
	if u, err := url.Parse(target); err != nil || u.Hostname() != host {
		return "", fmt.Errorf("healthcheck: the listen address %q has no usable host", listenAddr)
	}
	return target, nil
}
