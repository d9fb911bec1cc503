package config

import (
	"math"
	"time"
)

// setting describes one configuration key: where it is read from, its
// default, and how its text becomes a Config field.
type setting struct {
	// key is the YAML path, dotted for nested sections.
	key string
	// env is the environment variable that overrides the file.
	env string
	// fallback is the default, in the same text form as env; "" means
	// none. Defaults go through apply like any other value.
	fallback string
	// list settings read a YAML sequence or a comma-separated string.
	list bool
	// secret settings never have their value echoed in problems.
	secret bool
	// required is the Requirement bit that makes a missing value a
	// problem; 0 for settings that are optional or have a default.
	required Requirement
	// apply validates v and stores it in c. Its error message is the
	// problem text, without the setting's name; errors.Join yields several.
	apply func(c *Config, v value) error
}

// settings lists every configuration key. Order matters twice: problems are
// reported in this order, and dev_hosts must come before public_base_url,
// whose validation reads Config.DevHosts.
var settings = []setting{
	{key: "listen_addr", env: "ERPGATE_LISTEN_ADDR", fallback: "127.0.0.1:8080",
		apply: applyListenAddr},
	{key: "dev_hosts", env: "ERPGATE_DEV_HOSTS", list: true,
		apply: applyDevHosts},
	{key: "trusted_proxies", env: "ERPGATE_TRUSTED_PROXIES", list: true,
		apply: applyTrustedProxies},
	{key: "erp_private_hosts", env: "ERPGATE_ERP_PRIVATE_HOSTS", list: true,
		apply: applyERPPrivateHosts},
	{key: "public_base_url", env: "ERPGATE_PUBLIC_BASE_URL", required: RequirePublicBaseURL,
		apply: applyPublicBaseURL},
	{key: "database_url", env: "DATABASE_URL", secret: true, required: RequireDatabaseURL,
		apply: applyDatabaseURL},
	{key: "admin_token", env: "ERPGATE_ADMIN_TOKEN", secret: true, required: RequireAdminToken,
		apply: applyAdminToken},
	{key: "encryption_keys", env: "ERPGATE_ENCRYPTION_KEYS", secret: true, required: RequireEncryptionKeys,
		apply: applyEncryptionKeys},
	{key: "log_level", env: "ERPGATE_LOG_LEVEL", fallback: "info",
		apply: applyLogLevel},

	{key: "upstream.budget", env: "ERPGATE_UPSTREAM_BUDGET", fallback: "50s",
		apply: durationIn(time.Second, 10*time.Minute, func(c *Config) *time.Duration { return &c.Upstream.Budget })},
	{key: "upstream.max_response_bytes", env: "ERPGATE_UPSTREAM_MAX_RESPONSE_BYTES", fallback: "8388608",
		apply: intIn(64<<10, 256<<20, func(c *Config) *int64 { return &c.Upstream.MaxResponseBytes })},
	{key: "upstream.retry", env: "ERPGATE_UPSTREAM_RETRY", fallback: "true",
		apply: boolean(func(c *Config) *bool { return &c.Upstream.Retry })},

	{key: "limits.max_records", env: "ERPGATE_MAX_RECORDS", fallback: "1000",
		apply: intIn(1, 100_000, func(c *Config) *int { return &c.Limits.MaxRecords })},
	{key: "limits.user_concurrency", env: "ERPGATE_LIMIT_USER_CONCURRENCY", fallback: "3",
		apply: intIn(1, math.MaxInt32, func(c *Config) *int { return &c.Limits.UserConcurrency })},
	{key: "limits.user_per_minute", env: "ERPGATE_LIMIT_USER_PER_MINUTE", fallback: "40",
		apply: intIn(1, math.MaxInt32, func(c *Config) *int { return &c.Limits.UserPerMinute })},
	{key: "limits.site_concurrency", env: "ERPGATE_LIMIT_SITE_CONCURRENCY", fallback: "10",
		apply: intIn(1, math.MaxInt32, func(c *Config) *int { return &c.Limits.SiteConcurrency })},
	{key: "limits.site_per_minute", env: "ERPGATE_LIMIT_SITE_PER_MINUTE", fallback: "300",
		apply: intIn(1, math.MaxInt32, func(c *Config) *int { return &c.Limits.SitePerMinute })},
	{key: "limits.replica_calls", env: "ERPGATE_LIMIT_REPLICA_CALLS", fallback: "0",
		apply: intIn(0, math.MaxInt32, func(c *Config) *int { return &c.Limits.ReplicaCalls })},
	{key: "limits.replica_answer_bytes", env: "ERPGATE_LIMIT_REPLICA_ANSWER_BYTES", fallback: "67108864",
		apply: intIn(1<<20, 1<<40, func(c *Config) *int64 { return &c.Limits.ReplicaAnswerBytes })},

	{key: "limits.caller_share", env: "ERPGATE_LIMIT_CALLER_SHARE", fallback: "25",
		apply: intIn(1, 100, func(c *Config) *int { return &c.Limits.CallerShare })},
	{key: "limits.site_share", env: "ERPGATE_LIMIT_SITE_SHARE", fallback: "0",
		apply: intIn(0, 100, func(c *Config) *int { return &c.Limits.SiteShare })},
	{key: "limits.service_tokens_per_site", env: "ERPGATE_LIMIT_SERVICE_TOKENS_PER_SITE", fallback: "100",
		apply: intIn(1, 100_000, func(c *Config) *int { return &c.Limits.ServiceTokensPerSite })},
	{key: "limits.service_token_retention_days", env: "ERPGATE_SERVICE_TOKEN_RETENTION_DAYS", fallback: "400",
		apply: intIn(0, 36_500, func(c *Config) *int { return &c.Limits.ServiceTokenRetentionDays })},

	{key: "http.read_header_timeout", env: "ERPGATE_HTTP_READ_HEADER_TIMEOUT", fallback: "10s",
		apply: durationIn(time.Second, 5*time.Minute, func(c *Config) *time.Duration { return &c.HTTP.ReadHeaderTimeout })},
	{key: "http.body_timeout", env: "ERPGATE_HTTP_BODY_TIMEOUT", fallback: "30s",
		apply: durationIn(time.Second, 10*time.Minute, func(c *Config) *time.Duration { return &c.HTTP.BodyTimeout })},
	{key: "http.idle_timeout", env: "ERPGATE_HTTP_IDLE_TIMEOUT", fallback: "2m",
		apply: durationIn(time.Second, time.Hour, func(c *Config) *time.Duration { return &c.HTTP.IdleTimeout })},

	{key: "redaction.patterns", env: "ERPGATE_REDACT_PATTERNS", list: true,
		apply: fieldPatterns(func(c *Config) *[]string { return &c.Redaction.Patterns })},
	{key: "redaction.skip", env: "ERPGATE_REDACT_SKIP", list: true,
		apply: fieldPatterns(func(c *Config) *[]string { return &c.Redaction.Skip })},

	{key: "usage.flush_interval", env: "ERPGATE_USAGE_FLUSH_INTERVAL", fallback: "500ms",
		apply: durationIn(10*time.Millisecond, time.Minute, func(c *Config) *time.Duration { return &c.Usage.FlushInterval })},
	{key: "usage.batch_size", env: "ERPGATE_USAGE_BATCH_SIZE", fallback: "200",
		apply: intIn(1, 10_000, func(c *Config) *int { return &c.Usage.BatchSize })},
	{key: "usage.retention_days", env: "ERPGATE_USAGE_RETENTION_DAYS", fallback: "400",
		apply: intIn(0, 36_500, func(c *Config) *int { return &c.Usage.RetentionDays })},
	{key: "audit.retention_days", env: "ERPGATE_AUDIT_RETENTION_DAYS", fallback: "0",
		apply: intIn(0, 36_500, func(c *Config) *int { return &c.Audit.RetentionDays })},

	{key: "shutdown_timeout", env: "ERPGATE_SHUTDOWN_TIMEOUT", fallback: "30s",
		apply: durationIn(time.Second, 10*time.Minute, func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
	{key: "gc_slack_bytes", env: "ERPGATE_GC_SLACK_BYTES", fallback: "33554432",
		apply: intIn(0, 1<<40, func(c *Config) *int64 { return &c.GCSlackBytes })},

	{key: "mcp.allowed_origins", env: "ERPGATE_ALLOWED_ORIGINS", list: true,
		apply: applyAllowedOrigins},

	{key: "oauth.access_token_lifespan", env: "ERPGATE_OAUTH_ACCESS_TOKEN_LIFESPAN", fallback: "15m",
		apply: durationIn(time.Minute, 24*time.Hour, func(c *Config) *time.Duration { return &c.OAuth.AccessTokenLifespan })},
	{key: "oauth.refresh_token_lifespan", env: "ERPGATE_OAUTH_REFRESH_TOKEN_LIFESPAN", fallback: "720h",
		apply: durationIn(time.Hour, 8760*time.Hour, func(c *Config) *time.Duration { return &c.OAuth.RefreshTokenLifespan })},
	{key: "oauth.refresh_grace", env: "ERPGATE_OAUTH_REFRESH_GRACE", fallback: "10s",
		apply: durationIn(0, time.Minute, func(c *Config) *time.Duration { return &c.OAuth.RefreshGrace })},
	{key: "oauth.sign_in_timeout", env: "ERPGATE_OAUTH_SIGN_IN_TIMEOUT", fallback: "10m",
		apply: durationIn(time.Minute, time.Hour, func(c *Config) *time.Duration { return &c.OAuth.SignInTimeout })},
	{key: "metrics.listen_addr", env: "ERPGATE_METRICS_ADDR",
		apply: applyMetricsAddr},
	{key: "metrics.site_label", env: "ERPGATE_METRICS_SITE_LABEL", fallback: "false",
		apply: boolean(func(c *Config) *bool { return &c.Metrics.SiteLabel })},
	{key: "tracing.otlp_endpoint", env: "ERPGATE_OTLP_ENDPOINT",
		apply: applyOTLPEndpoint},
	{key: "tracing.sample_percent", env: "ERPGATE_TRACE_SAMPLE_PERCENT", fallback: "100",
		apply: intIn(0, 100, func(c *Config) *int { return &c.Tracing.SamplePercent })},

	{key: "oauth.access_gate_interval", env: "ERPGATE_OAUTH_ACCESS_GATE_INTERVAL", fallback: "5m",
		apply: durationIn(time.Minute, 24*time.Hour, func(c *Config) *time.Duration { return &c.OAuth.AccessGateInterval })},

	{key: "registration.enabled", env: "ERPGATE_REGISTRATION_ENABLED", fallback: "true",
		apply: boolean(func(c *Config) *bool { return &c.Registration.Enabled })},
	{key: "registration.pending_ttl", env: "ERPGATE_REGISTRATION_PENDING_TTL", fallback: "30m",
		apply: durationIn(5*time.Minute, 24*time.Hour, func(c *Config) *time.Duration { return &c.Registration.PendingTTL })},
	{key: "registration.max_pending", env: "ERPGATE_REGISTRATION_MAX_PENDING", fallback: "200",
		apply: intIn(1, 100_000, func(c *Config) *int { return &c.Registration.MaxPending })},
	{key: "registration.max_pending_per_network", env: "ERPGATE_REGISTRATION_MAX_PENDING_PER_NETWORK", fallback: "5",
		apply: intIn(1, 100_000, func(c *Config) *int { return &c.Registration.MaxPendingPerNetwork })},
}

// lookupSetting returns the setting with the given YAML key.
func lookupSetting(key string) (*setting, bool) {
	for i := range settings {
		if settings[i].key == key {
			return &settings[i], true
		}
	}
	return nil, false
}
