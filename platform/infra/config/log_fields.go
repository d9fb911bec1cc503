package config

import "go.uber.org/zap"

// LogFields describes the effective configuration for a start-up log line,
// one field per setting, named by its YAML key. Secrets appear only as
// "is set" or "not set"; encryption key ids (not keys) are listed so key
// rotation can be checked.
func (c *Config) LogFields() []zap.Field {
	keyIDs := []string{}
	if c.Keyring != nil {
		keyIDs = c.Keyring.KeyIDs()
	}
	return []zap.Field{
		zap.String("listen_addr", c.ListenAddr),
		zap.String("public_base_url", c.PublicBaseURL),
		zap.String("database_url", setOrNot(c.DatabaseURL.IsSet())),
		zap.String("admin_token", setOrNot(c.AdminToken.IsSet())),
		zap.String("encryption_keys", setOrNot(c.Keyring != nil)),
		zap.Strings("encryption_key_ids", keyIDs),
		zap.Strings("dev_hosts", c.DevHosts),
		zap.Strings("erp_private_hosts", c.ERPPrivateHosts),
		zap.Stringer("log_level", c.LogLevel),
		zap.Stringer("upstream.budget", c.Upstream.Budget),
		zap.Int64("upstream.max_response_bytes", c.Upstream.MaxResponseBytes),
		zap.Bool("upstream.retry", c.Upstream.Retry),
		zap.Int("limits.max_records", c.Limits.MaxRecords),
		zap.Int("limits.user_concurrency", c.Limits.UserConcurrency),
		zap.Int("limits.user_per_minute", c.Limits.UserPerMinute),
		zap.Int("limits.site_concurrency", c.Limits.SiteConcurrency),
		zap.Int("limits.site_per_minute", c.Limits.SitePerMinute),
		zap.Int("limits.replica_calls", c.Limits.ReplicaCalls),
		zap.Int64("limits.replica_answer_bytes", c.Limits.ReplicaAnswerBytes),
		zap.Int("limits.caller_share", c.Limits.CallerShare),
		zap.Int("limits.site_share", c.Limits.SiteShare),
		zap.Int("limits.service_tokens_per_site", c.Limits.ServiceTokensPerSite),
		zap.Int("limits.service_token_retention_days", c.Limits.ServiceTokenRetentionDays),
		zap.Stringer("http.read_header_timeout", c.HTTP.ReadHeaderTimeout),
		zap.Stringer("http.body_timeout", c.HTTP.BodyTimeout),
		zap.Stringer("http.idle_timeout", c.HTTP.IdleTimeout),
		zap.Strings("redaction.patterns", c.Redaction.Patterns),
		zap.Strings("redaction.skip", c.Redaction.Skip),
		zap.Stringer("usage.flush_interval", c.Usage.FlushInterval),
		zap.Int("usage.batch_size", c.Usage.BatchSize),
		zap.Int("usage.retention_days", c.Usage.RetentionDays),
		zap.Int("audit.retention_days", c.Audit.RetentionDays),
		zap.Stringer("shutdown_timeout", c.ShutdownTimeout),
		zap.Int64("gc_slack_bytes", c.GCSlackBytes),
		zap.Strings("mcp.allowed_origins", c.MCP.AllowedOrigins),
		zap.Stringers("trusted_proxies", c.TrustedProxies),
		zap.Stringer("oauth.access_token_lifespan", c.OAuth.AccessTokenLifespan),
		zap.Stringer("oauth.refresh_token_lifespan", c.OAuth.RefreshTokenLifespan),
		zap.Stringer("oauth.refresh_grace", c.OAuth.RefreshGrace),
		zap.Stringer("oauth.sign_in_timeout", c.OAuth.SignInTimeout),
		zap.Stringer("oauth.access_gate_interval", c.OAuth.AccessGateInterval),
		zap.Bool("registration.enabled", c.Registration.Enabled),
		zap.Stringer("registration.pending_ttl", c.Registration.PendingTTL),
		zap.Int("registration.max_pending", c.Registration.MaxPending),
		zap.Int("registration.max_pending_per_network", c.Registration.MaxPendingPerNetwork),
		zap.String("metrics.listen_addr", c.Metrics.ListenAddr),
		zap.Bool("metrics.site_label", c.Metrics.SiteLabel),
		zap.String("tracing.otlp_endpoint", c.Tracing.OTLPEndpoint),
		zap.Int("tracing.sample_percent", c.Tracing.SamplePercent),
	}
}

func setOrNot(set bool) string {
	if set {
		return "is set"
	}
	return "not set"
}
