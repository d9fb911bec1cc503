package config

import (
	"strings"
	"testing"
)

func TestTrustedProxies(t *testing.T) {
	cfg := mustLoad(t, validEnv().with("ERPGATE_TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.7, 2001:db8::/32, 10.1.2.3/16"), "")
	var got []string
	for _, p := range cfg.TrustedProxies {
		got = append(got, p.String())
	}
	if strings.Join(got, " ") != "10.0.0.0/8 192.0.2.7/32 2001:db8::/32 10.1.0.0/16" {
		t.Errorf("TrustedProxies = %v", got)
	}
	if cfg := mustLoad(t, validEnv(), ""); len(cfg.TrustedProxies) != 0 {
		t.Errorf("default TrustedProxies = %v", cfg.TrustedProxies)
	}
	_, err := Load(validEnv().with("ERPGATE_TRUSTED_PROXIES", "proxy.internal, 10.0.0.0/33").lookup, "")
	if err == nil || !strings.Contains(err.Error(), `"proxy.internal" is not an IP address or CIDR prefix`) || !strings.Contains(err.Error(), `"10.0.0.0/33"`) {
		t.Errorf("bad proxies: %v", err)
	}
}
