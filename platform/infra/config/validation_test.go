package config

import (
	"strings"
	"testing"
	"time"
)

// TestValidation covers every setting's rules, one bad and (where useful)
// one edge-of-range good value at a time on top of a valid environment.
func TestValidation(t *testing.T) {
	cases := []struct {
		name    string
		env     string
		value   string
		problem string // "" means the value is accepted
	}{
		{"listen addr without port", "ERPGATE_LISTEN_ADDR", "localhost", "must be host:port"},
		{"listen addr bad port", "ERPGATE_LISTEN_ADDR", "localhost:http", "port must be a number"},
		{"listen addr port too big", "ERPGATE_LISTEN_ADDR", ":70000", "port must be a number"},
		{"listen addr all interfaces", "ERPGATE_LISTEN_ADDR", ":8080", ""},
		{"listen addr ipv6", "ERPGATE_LISTEN_ADDR", "[::1]:8080", ""},
		{"metrics addr without port", "ERPGATE_METRICS_ADDR", "0.0.0.0", "must be host:port"},
		{"metrics addr", "ERPGATE_METRICS_ADDR", ":9090", ""},
		{"metrics site label", "ERPGATE_METRICS_SITE_LABEL", "perhaps", "must be true or false"},
		{"otlp endpoint not a url", "ERPGATE_OTLP_ENDPOINT", "otel-collector:4318", "must be an http or https URL"},
		{"otlp endpoint grpc scheme", "ERPGATE_OTLP_ENDPOINT", "grpc://otel-collector:4317", "must be an http or https URL"},
		{"otlp endpoint user info", "ERPGATE_OTLP_ENDPOINT", "https://u:pw-secret@otel.example", "without user info"},
		{"otlp endpoint", "ERPGATE_OTLP_ENDPOINT", "http://otel-collector:4318/", ""},
		{"trace sample over 100", "ERPGATE_TRACE_SAMPLE_PERCENT", "101", "must be a whole number from 0 to 100"},
		{"trace sample none", "ERPGATE_TRACE_SAMPLE_PERCENT", "0", ""},
		{"erp private host with scheme", "ERPGATE_ERP_PRIVATE_HOSTS", "https://erp.lan", "is not a host name"},
		{"erp private host with port", "ERPGATE_ERP_PRIVATE_HOSTS", "erp.lan:8000, [fd00::7]:8443", ""},
		{"erp private host with a bad port", "ERPGATE_ERP_PRIVATE_HOSTS", "erp.lan:99999", "has no valid port"},
		{"erp private hosts", "ERPGATE_ERP_PRIVATE_HOSTS", "erp.lan, 10.0.0.7", ""},

		{"base url relative", "ERPGATE_PUBLIC_BASE_URL", "erpgate.example.com", "must be an absolute URL"},
		{"base url ftp", "ERPGATE_PUBLIC_BASE_URL", "ftp://erpgate.example.com", "must use http or https"},
		{"base url plain http", "ERPGATE_PUBLIC_BASE_URL", "http://erpgate.example.com", "must use https unless"},
		{"base url query", "ERPGATE_PUBLIC_BASE_URL", "https://erpgate.example.com/?a=b", "must not have a query or fragment"},
		{"base url empty query", "ERPGATE_PUBLIC_BASE_URL", "https://erpgate.example.com/?", "must not have a query or fragment"},
		{"base url fragment", "ERPGATE_PUBLIC_BASE_URL", "https://erpgate.example.com/#x", "must not have a query or fragment"},
		{"base url user info", "ERPGATE_PUBLIC_BASE_URL", "https://u:p@erpgate.example.com", "must not contain user info"},
		{"base url http loopback", "ERPGATE_PUBLIC_BASE_URL", "http://localhost:8080", ""},
		{"base url http 127", "ERPGATE_PUBLIC_BASE_URL", "http://127.0.0.1:8080/gw/", ""},
		{"base url http .localhost", "ERPGATE_PUBLIC_BASE_URL", "http://gw.localhost", ""},
		{"base url with path", "ERPGATE_PUBLIC_BASE_URL", "https://example.com/erpgate/", ""},

		{"database url mysql", "DATABASE_URL", "mysql://u:pw-secret@db/x", "must start with postgres:// or postgresql://"},
		{"database url garbage", "DATABASE_URL", "postgres://u:pw-secret@db:port/x", "must be a valid postgres:// URL"},
		{"database url postgresql", "DATABASE_URL", "postgresql://db/erpgate", ""},

		{"admin token short", "ERPGATE_ADMIN_TOKEN", strings.Repeat("x", 31), "must be at least 32 characters"},
		{"admin token exactly 32", "ERPGATE_ADMIN_TOKEN", strings.Repeat("x", 32), ""},

		{"keys bad length", "ERPGATE_ENCRYPTION_KEYS", "k1:c2hvcnQ=", `key 1 (id "k1"): key must be 32 bytes`},
		{"keys no id", "ERPGATE_ENCRYPTION_KEYS", testKeyMaterial, "key 1: expected id:base64key"},
		{"keys duplicate id", "ERPGATE_ENCRYPTION_KEYS", "a:" + testKeyMaterial + ",a:" + testKeyMaterial, `key 2 (id "a"): duplicate key id`},

		{"dev host with scheme", "ERPGATE_DEV_HOSTS", "http://erp.test", "is not a host name"},
		{"dev host with port", "ERPGATE_DEV_HOSTS", "erp.test:8000", "is not a host name"},
		{"dev host ip", "ERPGATE_DEV_HOSTS", "10.0.0.5, ERP.Test.", ""},

		{"log level", "ERPGATE_LOG_LEVEL", "trace", "must be one of debug, info, warn, error"},
		{"log level upper case", "ERPGATE_LOG_LEVEL", "DEBUG", ""},

		{"budget not a duration", "ERPGATE_UPSTREAM_BUDGET", "50", "must be a duration"},
		{"budget too short", "ERPGATE_UPSTREAM_BUDGET", "999ms", "must be between 1s and 10m0s"},
		{"budget too long", "ERPGATE_UPSTREAM_BUDGET", "10m1s", "must be between 1s and 10m0s"},
		{"budget at max", "ERPGATE_UPSTREAM_BUDGET", "10m", ""},
		{"budget at min", "ERPGATE_UPSTREAM_BUDGET", "1s", ""},

		{"max response too small", "ERPGATE_UPSTREAM_MAX_RESPONSE_BYTES", "65535", "from 65536 to 268435456"},
		{"max response too big", "ERPGATE_UPSTREAM_MAX_RESPONSE_BYTES", "268435457", "from 65536 to 268435456"},
		{"max response with unit", "ERPGATE_UPSTREAM_MAX_RESPONSE_BYTES", "8MiB", "must be a whole number"},
		{"max response at min", "ERPGATE_UPSTREAM_MAX_RESPONSE_BYTES", "65536", ""},
		{"max response at max", "ERPGATE_UPSTREAM_MAX_RESPONSE_BYTES", "268435456", ""},

		{"retry", "ERPGATE_UPSTREAM_RETRY", "yes", "must be true or false"},
		{"retry false", "ERPGATE_UPSTREAM_RETRY", "false", ""},

		{"max records zero", "ERPGATE_MAX_RECORDS", "0", "from 1 to 100000"},
		{"max records too big", "ERPGATE_MAX_RECORDS", "100001", "from 1 to 100000"},
		{"max records at max", "ERPGATE_MAX_RECORDS", "100000", ""},

		{"user concurrency zero", "ERPGATE_LIMIT_USER_CONCURRENCY", "0", "at least 1"},
		{"user per minute negative", "ERPGATE_LIMIT_USER_PER_MINUTE", "-1", "at least 1"},
		{"site concurrency zero", "ERPGATE_LIMIT_SITE_CONCURRENCY", "0", "at least 1"},
		{"site per minute float", "ERPGATE_LIMIT_SITE_PER_MINUTE", "1.5", "at least 1"},
		{"site per minute one", "ERPGATE_LIMIT_SITE_PER_MINUTE", "1", ""},
		{"replica calls negative", "ERPGATE_LIMIT_REPLICA_CALLS", "-1", "at least 0"},
		{"replica calls automatic", "ERPGATE_LIMIT_REPLICA_CALLS", "0", ""},
		{"replica calls set", "ERPGATE_LIMIT_REPLICA_CALLS", "1000", ""},
		{"replica answer bytes too small", "ERPGATE_LIMIT_REPLICA_ANSWER_BYTES", "1000", "from 1048576"},
		{"replica answer bytes", "ERPGATE_LIMIT_REPLICA_ANSWER_BYTES", "268435456", ""},
		{"caller share zero", "ERPGATE_LIMIT_CALLER_SHARE", "0", "from 1 to 100"},
		{"caller share over 100", "ERPGATE_LIMIT_CALLER_SHARE", "101", "from 1 to 100"},
		{"caller share whole replica", "ERPGATE_LIMIT_CALLER_SHARE", "100", ""},
		{"site share negative", "ERPGATE_LIMIT_SITE_SHARE", "-1", "from 0 to 100"},
		{"site share over 100", "ERPGATE_LIMIT_SITE_SHARE", "101", "from 0 to 100"},
		{"site share whole replica", "ERPGATE_LIMIT_SITE_SHARE", "100", ""},
		{"service tokens per site zero", "ERPGATE_LIMIT_SERVICE_TOKENS_PER_SITE", "0", "from 1 to 100000"},
		{"service tokens per site too many", "ERPGATE_LIMIT_SERVICE_TOKENS_PER_SITE", "100001", "from 1 to 100000"},
		{"service tokens per site", "ERPGATE_LIMIT_SERVICE_TOKENS_PER_SITE", "500", ""},
		{"ended service tokens kept for ever", "ERPGATE_SERVICE_TOKEN_RETENTION_DAYS", "0", ""},
		{"ended service tokens kept a year", "ERPGATE_SERVICE_TOKEN_RETENTION_DAYS", "365", ""},
		{"ended service tokens negative", "ERPGATE_SERVICE_TOKEN_RETENTION_DAYS", "-1", "from 0 to 36500"},
		{"ended service tokens too long", "ERPGATE_SERVICE_TOKEN_RETENTION_DAYS", "36501", "from 0 to 36500"},
		{"header timeout too short", "ERPGATE_HTTP_READ_HEADER_TIMEOUT", "500ms", "must be between 1s and 5m0s"},
		{"body timeout too long", "ERPGATE_HTTP_BODY_TIMEOUT", "11m", "must be between 1s and 10m0s"},
		{"body timeout", "ERPGATE_HTTP_BODY_TIMEOUT", "5s", ""},
		{"idle timeout words", "ERPGATE_HTTP_IDLE_TIMEOUT", "forever", "must be"},
		{"idle timeout", "ERPGATE_HTTP_IDLE_TIMEOUT", "30s", ""},
		{"gc slack negative", "ERPGATE_GC_SLACK_BYTES", "-1", "whole number from 0"},
		{"gc slack off", "ERPGATE_GC_SLACK_BYTES", "0", ""},
		{"gc slack words", "ERPGATE_GC_SLACK_BYTES", "32MiB", "got \"32MiB\""},

		{"redact pattern control char", "ERPGATE_REDACT_PATTERNS", "ok,bad\x01", "contains control characters"},
		{"redact skip control char", "ERPGATE_REDACT_SKIP", "bad\ttab", "contains control characters"},

		{"flush interval too short", "ERPGATE_USAGE_FLUSH_INTERVAL", "1ms", "must be between 10ms and 1m0s"},
		{"batch size zero", "ERPGATE_USAGE_BATCH_SIZE", "0", "from 1 to 10000"},
		{"retention for ever", "ERPGATE_USAGE_RETENTION_DAYS", "0", ""},
		{"retention negative", "ERPGATE_USAGE_RETENTION_DAYS", "-1", "from 0 to 36500"},
		{"retention in words", "ERPGATE_USAGE_RETENTION_DAYS", "a year", "got \"a year\""},
		{"audit retention for ever", "ERPGATE_AUDIT_RETENTION_DAYS", "0", ""},
		{"audit retention negative", "ERPGATE_AUDIT_RETENTION_DAYS", "-1", "from 0 to 36500"},
		{"audit retention too long", "ERPGATE_AUDIT_RETENTION_DAYS", "36501", "from 0 to 36500"},

		{"shutdown timeout zero", "ERPGATE_SHUTDOWN_TIMEOUT", "0s", "must be between 1s and 10m0s"},

		{"origin with path", "ERPGATE_ALLOWED_ORIGINS", "https://app.example.com/path", "is not an origin"},
		{"origin without scheme", "ERPGATE_ALLOWED_ORIGINS", "app.example.com", "is not an origin"},
		{"origin ok", "ERPGATE_ALLOWED_ORIGINS", "https://App.example.com:8443/, http://localhost:3000", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := validEnv().with(tc.env, tc.value)
			if tc.problem == "" {
				mustLoad(t, e, "")
				return
			}
			problems := loadProblems(t, e, "")
			assertProblem(t, problems, tc.env+": ", tc.problem)
			if len(problems) != 1 {
				t.Errorf("got %d problems, want 1:\n%s", len(problems), strings.Join(problems, "\n"))
			}
		})
	}
}

// TestERPPrivateHostsAndProduction: the listed ERP hosts are normalised,
// and only an https public base URL is production.
func TestERPPrivateHostsAndProduction(t *testing.T) {
	cfg := mustLoad(t, validEnv().with("ERPGATE_ERP_PRIVATE_HOSTS", "ERP.lan., 10.0.0.7"), "")
	if got := strings.Join(cfg.ERPPrivateHosts, ","); got != "erp.lan,10.0.0.7" {
		t.Errorf("ERPPrivateHosts = %q, want erp.lan,10.0.0.7", got)
	}
	if !cfg.Production() {
		t.Errorf("%s is not production", cfg.PublicBaseURL)
	}
	dev := mustLoad(t, validEnv().with("ERPGATE_PUBLIC_BASE_URL", "http://127.0.0.1:8080"), "")
	if dev.Production() {
		t.Errorf("%s is production", dev.PublicBaseURL)
	}
}

func TestDevHostsAllowPlainHTTPBaseURL(t *testing.T) {
	e := validEnv().with("ERPGATE_PUBLIC_BASE_URL", "http://gw.dev.test:8080")
	assertProblem(t, loadProblems(t, e, ""), "must use https unless")

	cfg := mustLoad(t, e.with("ERPGATE_DEV_HOSTS", "GW.dev.test"), "")
	if cfg.PublicBaseURL != "http://gw.dev.test:8080" {
		t.Errorf("PublicBaseURL = %q", cfg.PublicBaseURL)
	}
	if got := strings.Join(cfg.DevHosts, ","); got != "gw.dev.test" {
		t.Errorf("DevHosts = %q, want normalized gw.dev.test", got)
	}
}

func TestValuesAreTrimmedAndNormalized(t *testing.T) {
	cfg := mustLoad(t, validEnv().with(
		"ERPGATE_UPSTREAM_BUDGET", "  20s\n",
		"ERPGATE_PUBLIC_BASE_URL", "https://example.com/gw///",
		"ERPGATE_ALLOWED_ORIGINS", "HTTPS://App.Example.com/",
	), "")
	if cfg.Upstream.Budget != 20*time.Second {
		t.Errorf("Budget = %v", cfg.Upstream.Budget)
	}
	if cfg.PublicBaseURL != "https://example.com/gw" {
		t.Errorf("PublicBaseURL = %q", cfg.PublicBaseURL)
	}
	if got := strings.Join(cfg.MCP.AllowedOrigins, ","); got != "https://app.example.com" {
		t.Errorf("AllowedOrigins = %q", got)
	}
}
