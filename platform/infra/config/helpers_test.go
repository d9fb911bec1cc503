package config

import (
	"encoding/base64"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Secret test values, searched for in error text and logs.
const (
	testAdminToken  = "admin-token-0123456789-abcdefghijklmnop"
	testDBPassword  = "db-pa55w0rd-secret"
	testDatabaseURL = "postgres://erpgate:" + testDBPassword + "@db.internal:5432/erpgate?sslmode=require"
)

var testKeyMaterial = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

// env is a fake environment for Load's lookupEnv.
type env map[string]string

func (e env) lookup(name string) (string, bool) {
	v, ok := e[name]
	return v, ok
}

// with returns a copy of e with the given name/value pairs set.
func (e env) with(kv ...string) env {
	out := maps.Clone(e)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// validEnv sets exactly the required settings, validly.
func validEnv() env {
	return env{
		"ERPGATE_PUBLIC_BASE_URL": "https://erpgate.example.com/",
		"DATABASE_URL":            testDatabaseURL,
		"ERPGATE_ADMIN_TOKEN":     testAdminToken,
		"ERPGATE_ENCRYPTION_KEYS": "k1:" + testKeyMaterial,
	}
}

func writeYAML(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "erpgate.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatalf("write config file: %v", err)
	}
	return path
}

func mustLoad(t *testing.T, e env, yamlPath string) *Config {
	t.Helper()
	cfg, err := Load(e.lookup, yamlPath)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

// loadProblems loads and returns the problems, failing if loading succeeded
// or the error is not a *Error.
func loadProblems(t *testing.T, e env, yamlPath string) []string {
	t.Helper()
	cfg, err := Load(e.lookup, yamlPath)
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("Load error = %v, want *config.Error", err)
	}
	if cfg != nil {
		t.Error("Load returned a Config together with an error")
	}
	return cerr.Problems
}

// assertProblem checks that exactly one problem contains every fragment.
func assertProblem(t *testing.T, problems []string, fragments ...string) {
	t.Helper()
	matches := 0
	for _, p := range problems {
		all := true
		for _, f := range fragments {
			all = all && strings.Contains(p, f)
		}
		if all {
			matches++
		}
	}
	if matches != 1 {
		t.Errorf("want exactly one problem containing %q, found %d in:\n%s", fragments, matches, strings.Join(problems, "\n"))
	}
}
