package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

func applyListenAddr(c *Config, v value) error {
	if err := checkHostPort(v.text); err != nil {
		return err
	}
	c.ListenAddr = v.text
	return nil
}

func checkHostPort(text string) error {
	_, port, err := net.SplitHostPort(text)
	if err != nil {
		return fmt.Errorf("must be host:port, such as 127.0.0.1:8080 or :8080; got %q", text)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n > 65535 {
		return fmt.Errorf("port must be a number from 0 to 65535; got %q", text)
	}
	return nil
}

func applyMetricsAddr(c *Config, v value) error {
	if err := checkHostPort(v.text); err != nil {
		return err
	}
	c.Metrics.ListenAddr = v.text
	return nil
}

// applyOTLPEndpoint takes an http(s) URL with a host and nothing after
// the path: no user info, query or fragment. A refused value is quoted
// only when it parses and has none of those: otherwise it may hold a
// credential (a password, an API key), which must not reach the log.
func applyOTLPEndpoint(c *Config, v value) error {
	u, err := url.Parse(v.text)
	switch {
	case err != nil:
		return errors.New("must be an http or https URL such as http://otel-collector:4318; this value is not one, and is not repeated here since it may hold a credential")
	case u.User != nil || strings.Contains(v.text, "@"):
		// Without a scheme, "user:password@host" parses as an opaque URL.
		return errors.New("must be an http or https URL without user info; send credentials to the collector some other way")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("must be an http or https URL without a query or fragment; send credentials to the collector some other way")
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("must be an http or https URL such as http://otel-collector:4318; got %q", v.text)
	}
	c.Tracing.OTLPEndpoint = strings.TrimRight(v.text, "/")
	return nil
}

// hostnamePattern is an RFC 1123 host name in lower case.
var hostnamePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

func applyDevHosts(c *Config, v value) error {
	hosts, err := hostList(v, false)
	c.DevHosts = hosts
	return err
}

func applyERPPrivateHosts(c *Config, v value) error {
	hosts, err := hostList(v, true)
	c.ERPPrivateHosts = hosts
	return err
}

// hostList reads a list of host names or IP addresses, lower case and
// without a trailing dot; withPort allows each a port (host:port,
// [v6]:port).
func hostList(v value, withPort bool) ([]string, error) {
	var problems []error
	hosts := make([]string, 0, len(v.items))
	for _, item := range v.items {
		h, port := strings.ToLower(item), ""
		if host, p, err := net.SplitHostPort(h); err == nil && withPort && !strings.Contains(h, "/") {
			h, port = host, p
		}
		h = strings.TrimSuffix(h, ".")
		if !hostnamePattern.MatchString(h) && net.ParseIP(h) == nil {
			hint := "give the name only, without scheme or port"
			if withPort {
				hint = "give the name, or name:port, without scheme"
			}
			problems = append(problems, fmt.Errorf("%q is not a host name (%s)", item, hint))
			continue
		}
		if port != "" {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				problems = append(problems, fmt.Errorf("%q has no valid port (1 to 65535)", item))
				continue
			}
			h = net.JoinHostPort(h, port)
		}
		hosts = append(hosts, h)
	}
	return hosts, errors.Join(problems...)
}

func applyPublicBaseURL(c *Config, v value) error {
	u, err := url.Parse(v.text)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("must be an absolute URL such as https://erpgate.example.com; got %q", v.text)
	}
	var problems []error
	if u.Scheme != "http" && u.Scheme != "https" {
		problems = append(problems, fmt.Errorf("must use http or https; got %q", v.text))
	}
	if u.Scheme == "http" && !c.IsDevHost(u.Host) {
		problems = append(problems, fmt.Errorf("must use https unless the host is loopback or listed in dev_hosts; got %q", v.text))
	}
	if u.User != nil {
		// Not echoed: the user info may hold a password.
		problems = append(problems, errors.New("must not contain user info"))
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(v.text, "#") {
		problems = append(problems, fmt.Errorf("must not have a query or fragment; got %q", v.text))
	}
	if len(problems) > 0 {
		return errors.Join(problems...)
	}
	c.PublicBaseURL = strings.TrimRight(v.text, "/")
	return nil
}

func applyAllowedOrigins(c *Config, v value) error {
	var problems []error
	origins := make([]string, 0, len(v.items))
	for _, item := range v.items {
		origin, ok := normalizeOrigin(item)
		if !ok {
			problems = append(problems, fmt.Errorf("%q is not an origin such as https://app.example.com (scheme, host and optional port only)", item))
			continue
		}
		origins = append(origins, origin)
	}
	c.MCP.AllowedOrigins = origins
	return errors.Join(problems...)
}

// normalizeOrigin lower-cases a scheme://host[:port] origin, accepting one
// trailing slash and rejecting anything else after the host.
func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

// applyTrustedProxies reads proxy addresses: IP addresses or CIDR
// prefixes.
func applyTrustedProxies(c *Config, v value) error {
	var problems []error
	prefixes := make([]netip.Prefix, 0, len(v.items))
	for _, item := range v.items {
		p, err := netip.ParsePrefix(item)
		if err != nil {
			a, aerr := netip.ParseAddr(item)
			if aerr != nil || a.Zone() != "" {
				problems = append(problems, fmt.Errorf("%q is not an IP address or CIDR prefix such as 10.0.0.0/8", item))
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		prefixes = append(prefixes, p.Masked())
	}
	c.TrustedProxies = prefixes
	return errors.Join(problems...)
}
