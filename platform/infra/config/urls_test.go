package config

import "testing"

func TestPublicURL(t *testing.T) {
	for _, base := range []string{"https://gw.example.com", "https://gw.example.com/"} {
		c := &Config{PublicBaseURL: base}
		cases := map[string]string{
			"":                    "https://gw.example.com",
			"/":                   "https://gw.example.com/",
			"/mcp":                "https://gw.example.com/mcp",
			"mcp":                 "https://gw.example.com/mcp",
			"//sites/acme/mcp":    "https://gw.example.com/sites/acme/mcp",
			"/oauth/cb?x=1":       "https://gw.example.com/oauth/cb?x=1",
			".well-known/openid-": "https://gw.example.com/.well-known/openid-",
		}
		for path, want := range cases {
			if got := c.PublicURL(path); got != want {
				t.Errorf("base %q: PublicURL(%q) = %q, want %q", base, path, got, want)
			}
		}
	}
	c := &Config{PublicBaseURL: "https://example.com/erpgate"}
	if got := c.PublicURL("/sites/a/mcp"); got != "https://example.com/erpgate/sites/a/mcp" {
		t.Errorf("base with path: PublicURL = %q", got)
	}
}

func TestIsDevHost(t *testing.T) {
	c := &Config{DevHosts: []string{"erp.test", "10.1.2.3"}}
	cases := map[string]bool{
		"localhost":         true,
		"LOCALHOST:8000":    true,
		"site1.localhost":   true,
		"127.0.0.1":         true,
		"127.9.9.9:80":      true,
		"[::1]:8080":        true,
		"::1":               true,
		"erp.test":          true,
		"ERP.test.":         true,
		"erp.test:8000":     true,
		"10.1.2.3":          true,
		"sub.erp.test":      false,
		"localhost.example": false,
		"example.com":       false,
		"10.1.2.4":          false,
		"":                  false,
	}
	for host, want := range cases {
		if got := c.IsDevHost(host); got != want {
			t.Errorf("IsDevHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestAcceptsOrigin(t *testing.T) {
	c := &Config{
		PublicBaseURL: "https://GW.example.com/erpgate",
		MCP:           MCP{AllowedOrigins: []string{"https://app.example.com"}},
	}
	if got := c.PublicOrigin(); got != "https://gw.example.com" {
		t.Errorf("PublicOrigin() = %q", got)
	}
	cases := map[string]bool{
		"https://gw.example.com":      true,
		"https://GW.example.com/":     true,
		"https://app.example.com":     true,
		"http://gw.example.com":       false,
		"https://gw.example.com:8443": false,
		"https://evil.example.com":    false,
		"null":                        false,
		"":                            false,
	}
	for origin, want := range cases {
		if got := c.AcceptsOrigin(origin); got != want {
			t.Errorf("AcceptsOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
	// A browser leaves the scheme's default port out of Origin.
	for base, origin := range map[string]string{
		"https://gw.example.com:443/erpgate": "https://gw.example.com",
		"http://gw.example.com:80":           "http://gw.example.com",
		"https://[2001:db8::1]:443":          "https://[2001:db8::1]",
		"http://127.0.0.1:8080":              "http://127.0.0.1:8080",
	} {
		c := &Config{PublicBaseURL: base}
		if !c.AcceptsOrigin(origin) {
			t.Errorf("base URL %s refuses its browsers' Origin %s", base, origin)
		}
	}
	if (&Config{}).PublicOrigin() != "" || (&Config{}).AcceptsOrigin("null") {
		t.Error("an unset base URL must accept nothing")
	}
}
