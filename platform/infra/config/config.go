package config

import (
	"net/netip"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// Config is the validated start-up configuration.
//
// Each field's yaml tag names the configuration key it comes from, joined
// with dots for nested sections (upstream.budget); a test checks the tags
// against the settings table and configs/erpgate.example.yaml. Config is
// never decoded from YAML directly.
//
// Settings that the loading command did not require (see Requirement) and
// that were not given are left zero: an empty Secret, a nil Keyring, an empty
// PublicBaseURL.
type Config struct {
	// ListenAddr is the host:port the HTTP server listens on.
	ListenAddr string `yaml:"listen_addr"`
	// PublicBaseURL is the externally visible base URL, without a trailing
	// slash. Every advertised URL is built from it with PublicURL.
	PublicBaseURL string `yaml:"public_base_url"`
	// DatabaseURL is the Postgres connection URL. It usually holds a
	// password, hence a Secret.
	DatabaseURL secrets.Secret `yaml:"database_url"`
	// AdminToken authenticates the operator on the admin API and console.
	// Compare with secrets.ConstantTimeEqual.
	AdminToken secrets.Secret `yaml:"admin_token"`
	// Keyring encrypts stored credentials (ERPGATE_ENCRYPTION_KEYS).
	Keyring *secrets.Keyring `yaml:"encryption_keys"`
	// DevHosts are lower-case host names (beyond loopback) allowed to use
	// plain http, for the public base URL and for site URLs.
	DevHosts []string `yaml:"dev_hosts"`
	// TrustedProxies are the addresses of reverse proxies whose
	// X-Forwarded-For is believed when telling where a request comes from
	// (the per-source limits of the unauthenticated OAuth endpoints).
	// Empty: the connection's own address counts, and X-Forwarded-For is
	// ignored.
	TrustedProxies []netip.Prefix `yaml:"trusted_proxies"`
	// ERPPrivateHosts are lower-case ERP host names (or IP addresses), each
	// with a port or without (then 443), that erpgate may reach on that port
	// at non-public addresses (loopback, private, link-local) when it runs
	// in production (see Production). Every other ERP must be at public
	// addresses, checked at registration and at each dial.
	ERPPrivateHosts []string `yaml:"erp_private_hosts"`
	// LogLevel is one of debug, info, warn, error.
	LogLevel zapcore.Level `yaml:"log_level"`

	Upstream  Upstream  `yaml:"upstream"`
	Limits    Limits    `yaml:"limits"`
	Redaction Redaction `yaml:"redaction"`
	Usage     Usage     `yaml:"usage"`
	Audit     Audit     `yaml:"audit"`
	HTTP      HTTP      `yaml:"http"`

	// ShutdownTimeout bounds graceful shutdown: draining requests and
	// flushing usage events.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`

	// GCSlackBytes is how far the heap may grow between collections on
	// top of GOGC's share of the live heap (platform/infra/gctune): a replica
	// with little live memory then collects less often, for at most this
	// much more memory. 0 leaves the collector at GOGC alone.
	GCSlackBytes int64 `yaml:"gc_slack_bytes"`

	MCP MCP `yaml:"mcp"`

	OAuth OAuth `yaml:"oauth"`

	Registration Registration `yaml:"registration"`
	Metrics      Metrics      `yaml:"metrics"`
	Tracing      Tracing      `yaml:"tracing"`
}

// Registration governs self-service site registration (/register).
type Registration struct {
	// Enabled serves /register and links it from the landing page: an ERP
	// administrator registers their ERP after proving, by signing in to
	// it, that they administer it.
	Enabled bool `yaml:"enabled"`
	// PendingTTL is how long a registration may stay open; an expired one
	// leaves nothing active.
	PendingTTL time.Duration `yaml:"pending_ttl"`
	// MaxPending bounds the registrations waiting to be finished (begun,
	// neither registered nor expired) in the whole deployment: anyone may
	// begin one, each is a row and a request to an ERP address, and the
	// per-source limits do not hold against many addresses.
	MaxPending int `yaml:"max_pending"`
	// MaxPendingPerNetwork bounds, in the whole deployment, the
	// registrations waiting to be finished that were started from one
	// network (an IPv4 /24, an IPv6 /48), so that a handful of addresses
	// cannot fill MaxPending.
	MaxPendingPerNetwork int `yaml:"max_pending_per_network"`
}

// Metrics governs /metrics (Prometheus text format).
type Metrics struct {
	// ListenAddr is a host:port of its own for /metrics, without
	// authentication (reach it from the monitoring network only). Empty:
	// /metrics is served on the main address, behind the admin token.
	ListenAddr string `yaml:"listen_addr"`
	// SiteLabel adds each site's slug as a label of the tool-call and ERP
	// request series: those series are multiplied by the number of sites.
	SiteLabel bool `yaml:"site_label"`
}

// Tracing governs OpenTelemetry traces of MCP requests.
type Tracing struct {
	// OTLPEndpoint is the OTLP/HTTP collector's URL (such as
	// http://otel-collector:4318); traces go to its /v1/traces. Empty:
	// tracing is off.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// SamplePercent is the share of requests traced, from 0 to 100; a
	// request whose caller sent a sampled trace context is traced anyway.
	SamplePercent int `yaml:"sample_percent"`
}

// Upstream governs calls from tools to ERPs.
type Upstream struct {
	// Budget bounds a whole request from its arrival: its waits at the
	// door and for a work slot, and its tool call, lookups and retries.
	Budget time.Duration `yaml:"budget"`
	// MaxResponseBytes bounds one upstream response body.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// Retry enables one retry of retryable reads within the budget.
	Retry bool `yaml:"retry"`
}

// Limits are the deployment-wide defaults for call limits.
type Limits struct {
	// MaxRecords caps the records one query may return.
	MaxRecords int `yaml:"max_records"`
	// UserConcurrency caps concurrent calls per (site, user).
	UserConcurrency int `yaml:"user_concurrency"`
	// UserPerMinute caps calls per (site, user) per minute.
	UserPerMinute int `yaml:"user_per_minute"`
	// SiteConcurrency caps concurrent calls per site, across replicas.
	SiteConcurrency int `yaml:"site_concurrency"`
	// SitePerMinute caps calls per site per minute, across replicas.
	SitePerMinute int `yaml:"site_per_minute"`
	// ReplicaCalls caps the MCP requests one replica holds at once, calls
	// waiting on the ERP included; more wait at its door. 0: 128 per CPU,
	// at least 256.
	ReplicaCalls int `yaml:"replica_calls"`
	// ReplicaAnswerBytes bounds the bytes of large ERP answers (64 KiB or
	// more) one replica's calls hold at once; a call with a large answer
	// waits for room. Default 64 MiB.
	ReplicaAnswerBytes int64 `yaml:"replica_answer_bytes"`
	// CallerShare is the percentage of a replica's call slots and work
	// slots one caller (a service token, or a user of a site) may hold at
	// once. Default 25.
	CallerShare int `yaml:"caller_share"`
	// SiteShare is the percentage of the same bounds the callers of one
	// site may hold together. 0: twice CallerShare, at most 100. A
	// deployment that serves one site can set 100.
	SiteShare int `yaml:"site_share"`
	// ServiceTokensPerSite bounds the active (neither revoked nor expired)
	// service tokens one site may have, whoever issues them: each is a
	// caller with budgets of its own at the MCP doors and an entry in every
	// replica's token cache. Default 100.
	ServiceTokensPerSite int `yaml:"service_tokens_per_site"`
	// ServiceTokenRetentionDays is how long a revoked or expired service
	// token is kept after it ended, in days; 0 keeps it for ever. Default
	// 400, the usage events' default retention, so that a token id in a
	// stored usage event still names a listed token.
	ServiceTokenRetentionDays int `yaml:"service_token_retention_days"`
}

// HTTP bounds how long a client may take over the parts of a request.
type HTTP struct {
	// ReadHeaderTimeout bounds reading a request's line and headers.
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	// BodyTimeout bounds reading a request's body; a slower one is
	// answered 408 and its connection closed.
	BodyTimeout time.Duration `yaml:"body_timeout"`
	// IdleTimeout is how long a kept-alive connection may wait for its
	// next request.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
}

// Redaction adjusts the built-in sensitive field-name patterns for the whole
// deployment; sites can adjust them further at run time.
type Redaction struct {
	// Patterns are extra field-name rules to redact, matched by word parts
	// in any case style (platform/infra/redact): "EmployeeNotes" matches
	// employee_notes.
	Patterns []string `yaml:"patterns"`
	// Skip are field-name patterns exempted from redaction.
	Skip []string `yaml:"skip"`
}

// Usage governs how usage events are batched into Postgres.
type Usage struct {
	// FlushInterval is the longest an event waits before being written.
	FlushInterval time.Duration `yaml:"flush_interval"`
	// BatchSize is the most events written in one statement.
	BatchSize int `yaml:"batch_size"`
	// RetentionDays is how long usage events are kept, in days; 0 keeps
	// them for ever. The hourly chart rollup is kept regardless.
	RetentionDays int `yaml:"retention_days"`
}

// Audit governs the sign-in and administration events (auth_events,
// admin_events).
type Audit struct {
	// RetentionDays is how long they are kept, in days; 0 keeps them for
	// ever.
	RetentionDays int `yaml:"retention_days"`
}

// MCP governs the MCP endpoints.
type MCP struct {
	// AllowedOrigins are extra browser origins (scheme://host[:port])
	// accepted on MCP endpoints; the public base URL's origin is always
	// accepted.
	AllowedOrigins []string `yaml:"allowed_origins"`
}

// OAuth governs erpgate's authorization server for the OAuth MCP endpoints.
type OAuth struct {
	// AccessTokenLifespan is how long an access token issued to an MCP
	// client is valid. Short: clients refresh silently.
	AccessTokenLifespan time.Duration `yaml:"access_token_lifespan"`
	// RefreshTokenLifespan is how long a refresh token is valid; each
	// refresh rotates it.
	RefreshTokenLifespan time.Duration `yaml:"refresh_token_lifespan"`
	// RefreshGrace is how long a rotated refresh token still works, so that
	// concurrent refreshes with one token both succeed; use after that
	// revokes the whole token family.
	RefreshGrace time.Duration `yaml:"refresh_grace"`
	// SignInTimeout is how long a user has to finish signing in to the ERP
	// and consenting.
	SignInTimeout time.Duration `yaml:"sign_in_timeout"`
	// AccessGateInterval is how long a passed access gate (Acumatica's
	// canary inquiry) holds: when a user's ERP token is refreshed and the
	// gate was last passed longer ago, it is read again, and a refusal
	// ends the user's grants on the site.
	AccessGateInterval time.Duration `yaml:"access_gate_interval"`
}
