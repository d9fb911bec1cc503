package deploy_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	unitFile   = "systemd/erpgate.service"
	envExample = "systemd/erpgate.env.example"
	// exposureThreshold is systemd-analyze security's overall exposure,
	// times ten, above which the unit fails the test (1.2 today).
	exposureThreshold = "15"
)

// unitKeys reads a systemd unit into section -> key -> values (a key may
// repeat).
func unitKeys(t *testing.T, path string) map[string]map[string][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string][]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			out[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s: %q is not key=value in a section", path, line)
			}
			out[section][k] = append(out[section][k], v)
		}
	}
	return out
}

// envFile reads KEY=value lines.
func envFile(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is not KEY=value", path, line)
		}
		out[k] = v
	}
	return out
}

// TestSystemdUnit checks the unit with systemd-analyze (verify, and the
// offline security exposure) and its hardening keys, and the example
// environment file against erpgate's configuration. .ci/run installs
// systemd when systemd-analyze is missing; the test fails without it.
func TestSystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze is not installed: the unit test needs it (apt-get install systemd; .ci/run installs it)")
	}
	keys := unitKeys(t, unitFile)
	svc := keys["Service"]
	want := map[string]string{
		"DynamicUser": "yes", "NoNewPrivileges": "yes", "CapabilityBoundingSet": "", "ProtectSystem": "strict",
		"ProtectHome": "yes", "PrivateTmp": "yes", "PrivateDevices": "yes", "MemoryDenyWriteExecute": "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX", "SystemCallArchitectures": "native",
		"ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectControlGroups": "yes",
		"RestrictNamespaces": "yes", "RestrictSUIDSGID": "yes", "LockPersonality": "yes",
		"EnvironmentFile": "/etc/erpgate/erpgate.env",
	}
	for k, v := range want {
		if got := svc[k]; len(got) != 1 || got[0] != v {
			t.Errorf("[Service] %s=%q, want %q", k, got, v)
		}
	}
	if !slices.Contains(svc["SystemCallFilter"], "@system-service") {
		t.Errorf("[Service] SystemCallFilter %q lacks @system-service", svc["SystemCallFilter"])
	}
	if exec := svc["ExecStart"]; len(exec) != 1 || !strings.HasSuffix(exec[0], "/erpgate serve") {
		t.Errorf("ExecStart %q, want …/erpgate serve", exec)
	}

	// Stopping waits for the shutdown timeout and a bit more.
	env := envFile(t, envExample)
	shutdown := duration(t, setting(env, "ERPGATE_SHUTDOWN_TIMEOUT"))
	budget := duration(t, setting(env, "ERPGATE_UPSTREAM_BUDGET"))
	stop := duration(t, strings.TrimSpace(strings.Join(svc["TimeoutStopSec"], "")))
	if shutdown < budget || stop <= shutdown+5*time.Second {
		t.Errorf("TimeoutStopSec %s must exceed ERPGATE_SHUTDOWN_TIMEOUT %s, itself at least the budget %s", stop, shutdown, budget)
	}

	// systemd-analyze verify on a copy whose ExecStart names an existing
	// executable (the unit's path exists only where erpgate is installed).
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "erpgate.service")
	copyData := strings.Replace(string(data), "ExecStart=/usr/local/bin/erpgate", "ExecStart="+self, 1)
	if err := os.WriteFile(copyPath, []byte(copyData), 0o644); err != nil {
		t.Fatal(err)
	}
	verify := exec.Command(analyze, "verify", copyPath)
	var stderr bytes.Buffer
	verify.Stderr = &stderr
	if err := verify.Run(); err != nil || stderr.Len() != 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, stderr.String())
	}
	sec, err := exec.Command(analyze, "security", "--offline=yes", "--threshold="+exposureThreshold, copyPath).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze security: exposure above %s/10 or failed: %v\n%s", exposureThreshold, err, sec)
	}
}

func TestSystemdEnvironmentFile(t *testing.T) {
	env := envFile(t, envExample)
	byEnv := settingsByEnv()
	for k, v := range env {
		s, ok := byEnv[k]
		if !ok && !slices.Contains(runtimeEnv, k) {
			t.Errorf("%s: %s is not an erpgate setting", envExample, k)
		}
		if s.Secret && v != "" {
			t.Errorf("%s: the secret %s has a value; leave it empty in the example", envExample, k)
		}
	}
	for _, k := range []string{"DATABASE_URL", "ERPGATE_PUBLIC_BASE_URL", "ERPGATE_ADMIN_TOKEN", "ERPGATE_ENCRYPTION_KEYS"} {
		if _, ok := env[k]; !ok {
			t.Errorf("%s does not list the required %s", envExample, k)
		}
	}
	if !strings.HasPrefix(env["ERPGATE_PUBLIC_BASE_URL"], "https://") {
		t.Errorf("ERPGATE_PUBLIC_BASE_URL %q: behind the TLS proxy it is https", env["ERPGATE_PUBLIC_BASE_URL"])
	}
}

// TestReverseProxyExamples checks that the proxies' timeouts are above the
// tool budget and that they forward to the example's listen address.
func TestReverseProxyExamples(t *testing.T) {
	env := envFile(t, envExample)
	budget := duration(t, setting(env, "ERPGATE_UPSTREAM_BUDGET"))
	listen := env["ERPGATE_LISTEN_ADDR"]
	for file, timeoutRE := range map[string]string{
		"systemd/Caddyfile.example":  `(?m)^\s*(?:response_header_timeout|read_timeout|write_timeout)\s+(\S+)`,
		"systemd/nginx.conf.example": `(?m)^\s*(?:proxy_read_timeout|proxy_send_timeout)\s+(\S+);`,
	} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		found := regexp.MustCompile(timeoutRE).FindAllStringSubmatch(text, -1)
		if len(found) < 2 {
			t.Errorf("%s: found %d timeouts, want the read and write ones", file, len(found))
		}
		for _, m := range found {
			if d := duration(t, m[1]); d <= budget+10*time.Second {
				t.Errorf("%s: timeout %s is not above the %s tool budget plus 10 s", file, m[1], budget)
			}
		}
		if !strings.Contains(text, listen) {
			t.Errorf("%s does not forward to %s, the example listen address", file, listen)
		}
	}
}
