package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
)

func TestLoadDefaults(t *testing.T) {
	cfg := mustLoad(t, validEnv(), "")
	want := Config{
		ListenAddr:      "127.0.0.1:8080",
		PublicBaseURL:   "https://erpgate.example.com",
		LogLevel:        zapcore.InfoLevel,
		Upstream:        Upstream{Budget: 50 * time.Second, MaxResponseBytes: 8 << 20, Retry: true},
		Limits:          Limits{MaxRecords: 1000, UserConcurrency: 3, UserPerMinute: 40, SiteConcurrency: 10, SitePerMinute: 300, ReplicaAnswerBytes: 64 << 20, CallerShare: 25, ServiceTokensPerSite: 100, ServiceTokenRetentionDays: 400},
		HTTP:            HTTP{ReadHeaderTimeout: 10 * time.Second, BodyTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute},
		Usage:           Usage{FlushInterval: 500 * time.Millisecond, BatchSize: 200, RetentionDays: 400},
		Audit:           Audit{RetentionDays: 0},
		ShutdownTimeout: 30 * time.Second,
		GCSlackBytes:    32 << 20,
		OAuth: OAuth{AccessTokenLifespan: 15 * time.Minute, RefreshTokenLifespan: 720 * time.Hour, RefreshGrace: 10 * time.Second, SignInTimeout: 10 * time.Minute,
			AccessGateInterval: 5 * time.Minute},
		Registration: Registration{Enabled: true, PendingTTL: 30 * time.Minute, MaxPending: 200, MaxPendingPerNetwork: 5},
		Tracing:      Tracing{SamplePercent: 100},
	}
	if cfg.DatabaseURL.Reveal() != testDatabaseURL || cfg.AdminToken.Reveal() != testAdminToken {
		t.Error("secrets were not loaded")
	}
	if cfg.Keyring == nil || cfg.Keyring.PrimaryKeyID() != "k1" {
		t.Fatalf("Keyring = %v, want primary k1", cfg.Keyring)
	}
	cfg.DatabaseURL, cfg.AdminToken, cfg.Keyring = "", "", nil
	assertConfigEqual(t, *cfg, want)
}

func assertConfigEqual(t *testing.T, got, want Config) {
	t.Helper()
	// Compare through LogFields' shape rather than reflect.DeepEqual so nil
	// and empty slices count as equal.
	g, w := fieldMap(got.LogFields()), fieldMap(want.LogFields())
	for k, wv := range w {
		if gv := g[k]; gv != wv {
			t.Errorf("%s = %s, want %s", k, gv, wv)
		}
	}
}

func TestLoadReportsEveryProblemInOneError(t *testing.T) {
	e := env{
		"ERPGATE_LISTEN_ADDR":      "8080",
		"ERPGATE_LOG_LEVEL":        "verbose",
		"ERPGATE_UPSTREAM_BUDGET":  "2h",
		"ERPGATE_MAX_RECORDS":      "0",
		"ERPGATE_USAGE_BATCH_SIZE": "many",
	}
	_, err := Load(e.lookup, "")
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("Load error = %v, want *config.Error", err)
	}
	wantOrder := []string{
		"ERPGATE_LISTEN_ADDR: must be host:port",
		"ERPGATE_PUBLIC_BASE_URL is required (or public_base_url in the config file)",
		"DATABASE_URL is required",
		"ERPGATE_ADMIN_TOKEN is required",
		"ERPGATE_ENCRYPTION_KEYS is required",
		`ERPGATE_LOG_LEVEL: must be one of debug, info, warn, error; got "verbose"`,
		`ERPGATE_UPSTREAM_BUDGET: must be between 1s and 10m0s; got "2h"`,
		`ERPGATE_MAX_RECORDS: must be a whole number from 1 to 100000; got "0"`,
		`ERPGATE_USAGE_BATCH_SIZE: must be a whole number from 1 to 10000; got "many"`,
	}
	if len(cerr.Problems) != len(wantOrder) {
		t.Fatalf("got %d problems, want %d:\n%s", len(cerr.Problems), len(wantOrder), err)
	}
	for i, want := range wantOrder {
		if !strings.HasPrefix(cerr.Problems[i], want) {
			t.Errorf("problem %d = %q, want prefix %q", i, cerr.Problems[i], want)
		}
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "invalid configuration:\n  - ERPGATE_LISTEN_ADDR: ") || strings.Count(msg, "\n  - ") != len(wantOrder) {
		t.Errorf("Error() is not one problem per line:\n%s", msg)
	}
}

func TestEnvOverridesYAML(t *testing.T) {
	path := writeYAML(t, `
listen_addr: 0.0.0.0:9000
log_level: debug
dev_hosts: [erp.test]
upstream:
  budget: 20s
  retry: false
limits:
  max_records: 50
redaction:
  patterns: [FromFile]
`)
	e := validEnv().with(
		"ERPGATE_LOG_LEVEL", "warn",
		"ERPGATE_UPSTREAM_BUDGET", "40s",
		"ERPGATE_REDACT_PATTERNS", "FromEnv, Other ,",
		"ERPGATE_MAX_RECORDS", "", // empty counts as unset: the file wins
	)
	cfg := mustLoad(t, e, path)
	if cfg.ListenAddr != "0.0.0.0:9000" {
		t.Errorf("ListenAddr = %q, want the file's value", cfg.ListenAddr)
	}
	if cfg.LogLevel != zapcore.WarnLevel {
		t.Errorf("LogLevel = %v, want the env value warn", cfg.LogLevel)
	}
	if cfg.Upstream.Budget != 40*time.Second || cfg.Upstream.Retry {
		t.Errorf("Upstream = %+v, want budget from env and retry from file", cfg.Upstream)
	}
	if cfg.Limits.MaxRecords != 50 {
		t.Errorf("MaxRecords = %d, want the file's 50 (empty env is unset)", cfg.Limits.MaxRecords)
	}
	if got := strings.Join(cfg.Redaction.Patterns, "|"); got != "FromEnv|Other" {
		t.Errorf("Redaction.Patterns = %q, want FromEnv|Other", got)
	}
	if got := strings.Join(cfg.DevHosts, "|"); got != "erp.test" {
		t.Errorf("DevHosts = %q, want erp.test", got)
	}
}

func TestYAMLAloneSuppliesRequiredSettings(t *testing.T) {
	path := writeYAML(t, `
public_base_url: https://gw.example.com
database_url: "`+testDatabaseURL+`"
admin_token: "`+testAdminToken+`"
encryption_keys: "k9:`+testKeyMaterial+`"
`)
	cfg := mustLoad(t, env{}, path)
	if cfg.PublicBaseURL != "https://gw.example.com" || cfg.Keyring.PrimaryKeyID() != "k9" {
		t.Errorf("file values not applied: %q, %v", cfg.PublicBaseURL, cfg.Keyring)
	}
}

func TestConfigPathFromEnvAndFlag(t *testing.T) {
	fromEnv := writeYAML(t, "log_level: debug\n")
	fromFlag := writeYAML(t, "log_level: error\n")

	cfg := mustLoad(t, validEnv().with("ERPGATE_CONFIG", fromEnv), "")
	if cfg.LogLevel != zapcore.DebugLevel {
		t.Errorf("ERPGATE_CONFIG file not read: LogLevel = %v", cfg.LogLevel)
	}
	cfg = mustLoad(t, validEnv().with("ERPGATE_CONFIG", fromEnv), fromFlag)
	if cfg.LogLevel != zapcore.ErrorLevel {
		t.Errorf("--config path should win over ERPGATE_CONFIG: LogLevel = %v", cfg.LogLevel)
	}
}

func TestYAMLFileProblems(t *testing.T) {
	path := writeYAML(t, `
listen_addr: 127.0.0.1:8080
lisen_addr: typo
upstream:
  budgt: 10s
  budget: [10s]
  retry: maybe
limits: 5
redaction:
  patterns:
    - ok
    - {nested: map}
mcp:
  allowed_origins: https://a.example.com, https://b.example.com
log_level: info
log_level: debug
`)
	problems := loadProblems(t, validEnv(), path)
	assertProblem(t, problems, "line 3", `unknown key "lisen_addr"`)
	assertProblem(t, problems, "line 5", `unknown key "upstream.budgt"`)
	assertProblem(t, problems, "upstream.budget (", "line 6", "must be a single value")
	assertProblem(t, problems, "upstream.retry (", "line 7", `must be true or false; got "maybe"`)
	assertProblem(t, problems, "limits (", "line 8", "must be a mapping")
	assertProblem(t, problems, "redaction.patterns (", "line 12", "list entries must be plain values")
	assertProblem(t, problems, "log_level (", "line 16", "set twice (first on line 15)")
	if len(problems) != 7 {
		t.Errorf("got %d problems, want 7:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}

func TestYAMLCommaSeparatedListAndAliases(t *testing.T) {
	path := writeYAML(t, `
x-origin: &origin https://b.example.com
mcp:
  allowed_origins: [https://A.example.com/, *origin]
dev_hosts: "erp.test, other.test"
`)
	// x-origin is not a setting, so it is reported; that is the price of
	// strict decoding, and anchors can live on real keys instead.
	problems := loadProblems(t, validEnv(), path)
	assertProblem(t, problems, `unknown key "x-origin"`)

	path = writeYAML(t, `
mcp:
  allowed_origins: [https://A.example.com/, &o https://b.example.com, *o]
dev_hosts: "erp.test, other.test"
`)
	cfg := mustLoad(t, validEnv(), path)
	if got := strings.Join(cfg.MCP.AllowedOrigins, "|"); got != "https://a.example.com|https://b.example.com|https://b.example.com" {
		t.Errorf("AllowedOrigins = %q", got)
	}
	if got := strings.Join(cfg.DevHosts, "|"); got != "erp.test|other.test" {
		t.Errorf("DevHosts = %q", got)
	}
}

func TestUnreadableOrBrokenFile(t *testing.T) {
	// A missing file is one problem; required settings are not reported
	// because the file might have held them, but env values are validated.
	problems := loadProblems(t, env{"ERPGATE_LOG_LEVEL": "loud"}, "/nonexistent/erpgate.yaml")
	assertProblem(t, problems, "config file:", "/nonexistent/erpgate.yaml")
	assertProblem(t, problems, "ERPGATE_LOG_LEVEL")
	if len(problems) != 2 {
		t.Errorf("got %d problems, want 2:\n%s", len(problems), strings.Join(problems, "\n"))
	}

	problems = loadProblems(t, validEnv(), writeYAML(t, "listen_addr: [unclosed\n"))
	if len(problems) != 1 || !strings.Contains(problems[0], "config file ") {
		t.Errorf("broken YAML: got %q, want one config file problem", problems)
	}

	problems = loadProblems(t, validEnv(), writeYAML(t, "- a\n- b\n"))
	assertProblem(t, problems, "top level must be a mapping")
}

func TestEmptyFileIsFine(t *testing.T) {
	for _, content := range []string{"", "# only a comment\n", "~\n"} {
		mustLoad(t, validEnv(), writeYAML(t, content))
	}
}

func TestRequirements(t *testing.T) {
	dbOnly := env{"DATABASE_URL": testDatabaseURL}
	cfg, err := LoadDatabaseOnly(dbOnly.lookup, "")
	if err != nil {
		t.Fatalf("LoadDatabaseOnly: %v", err)
	}
	if cfg.DatabaseURL.Reveal() != testDatabaseURL || cfg.Keyring != nil || cfg.AdminToken.IsSet() || cfg.PublicBaseURL != "" {
		t.Errorf("LoadDatabaseOnly config = %+v", cfg)
	}
	if cfg.Upstream.Budget != 50*time.Second {
		t.Error("defaults not applied under LoadDatabaseOnly")
	}

	// Still one message listing every problem, and present values are still
	// validated.
	_, err = LoadDatabaseOnly(env{"ERPGATE_ADMIN_TOKEN": "short", "ERPGATE_LOG_LEVEL": "x"}.lookup, "")
	var cerr *Error
	if !errors.As(err, &cerr) || len(cerr.Problems) != 3 {
		t.Fatalf("LoadDatabaseOnly error = %v, want 3 problems", err)
	}
	assertProblem(t, cerr.Problems, "DATABASE_URL is required")
	assertProblem(t, cerr.Problems, "ERPGATE_ADMIN_TOKEN: must be at least 32 characters")

	reencrypt := RequireDatabaseURL | RequireEncryptionKeys
	_, err = LoadRequiring(dbOnly.lookup, "", reencrypt)
	if !errors.As(err, &cerr) || len(cerr.Problems) != 1 || !strings.HasPrefix(cerr.Problems[0], "ERPGATE_ENCRYPTION_KEYS is required") {
		t.Errorf("LoadRequiring(db|keys) error = %v", err)
	}
}

func TestNilLookupEnvUsesProcessEnvironment(t *testing.T) {
	for k, v := range validEnv() {
		t.Setenv(k, v)
	}
	t.Setenv("ERPGATE_LOG_LEVEL", "error")
	t.Setenv("ERPGATE_CONFIG", "")
	cfg, err := Load(nil, "")
	if err != nil {
		t.Fatalf("Load(nil): %v", err)
	}
	if cfg.LogLevel != zapcore.ErrorLevel {
		t.Errorf("LogLevel = %v, want error from the process environment", cfg.LogLevel)
	}
}
