package database

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ApplicationName identifies erpgate's sessions in pg_stat_activity.
const ApplicationName = "erpgate"

// Defaults for Open. Each applies only when neither an Option nor the
// connection URL sets it.
const (
	DefaultMaxConns          = 10
	DefaultConnectTimeout    = 5 * time.Second
	DefaultStatementTimeout  = 30 * time.Second
	DefaultIdleInTxTimeout   = time.Minute
	defaultMaxConnLifetime   = 30 * time.Minute
	defaultLifetimeJitter    = 5 * time.Minute
	defaultMaxConnIdleTime   = 5 * time.Minute
	defaultHealthCheckPeriod = 30 * time.Second
)

// Option changes one setting of Open; options win over the URL.
type Option func(*pgxpool.Config)

// WithMaxConns caps the pool size.
func WithMaxConns(n int32) Option {
	return func(c *pgxpool.Config) { c.MaxConns = n }
}

// WithMinConns keeps at least n connections open.
func WithMinConns(n int32) Option {
	return func(c *pgxpool.Config) { c.MinConns = n }
}

// WithConnectTimeout bounds establishing one connection.
func WithConnectTimeout(d time.Duration) Option {
	return func(c *pgxpool.Config) { c.ConnConfig.ConnectTimeout = d }
}

// WithStatementTimeout sets the server-side statement_timeout of every
// connection; 0 disables it.
func WithStatementTimeout(d time.Duration) Option {
	return func(c *pgxpool.Config) {
		c.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(d.Milliseconds(), 10)
	}
}

// Open creates a connection pool for url and checks that the server answers.
//
// Defaults: at most DefaultMaxConns connections, DefaultConnectTimeout per
// connection attempt, statement_timeout DefaultStatementTimeout,
// idle_in_transaction_session_timeout DefaultIdleInTxTimeout (a transaction
// a bug leaves open must not hold locks forever), application_name
// ApplicationName, and connections recycled every 30 minutes (with jitter)
// so that a database fail-over or credential rotation is picked up. Settings
// present in url (pool_max_conns, connect_timeout, statement_timeout, ...)
// win over these defaults, and opts win over both.
//
// A server that cannot be reached yields an error wrapping ErrUnavailable.
func Open(ctx context.Context, url string, opts ...Option) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database: parse connection URL: %w", err)
	}
	applyDefaults(cfg, url)
	for _, opt := range opts {
		opt(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database: create pool: %w", Classify(err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database: connect to %s/%s: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Database, Classify(err))
	}
	return pool, nil
}

// applyDefaults fills in every setting that url leaves unset.
func applyDefaults(cfg *pgxpool.Config, url string) {
	sets := func(key string) bool { return strings.Contains(url, key+"=") }
	if !sets("pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	if !sets("pool_max_conn_lifetime") {
		cfg.MaxConnLifetime = defaultMaxConnLifetime
	}
	if !sets("pool_max_conn_lifetime_jitter") {
		cfg.MaxConnLifetimeJitter = defaultLifetimeJitter
	}
	if !sets("pool_max_conn_idle_time") {
		cfg.MaxConnIdleTime = defaultMaxConnIdleTime
	}
	if !sets("pool_health_check_period") {
		cfg.HealthCheckPeriod = defaultHealthCheckPeriod
	}
	if !sets("connect_timeout") {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	params := cfg.ConnConfig.RuntimeParams
	setParam := func(name, value string) {
		if _, ok := params[name]; !ok {
			params[name] = value
		}
	}
	setParam("application_name", ApplicationName)
	setParam("statement_timeout", strconv.FormatInt(DefaultStatementTimeout.Milliseconds(), 10))
	setParam("idle_in_transaction_session_timeout", strconv.FormatInt(DefaultIdleInTxTimeout.Milliseconds(), 10))
}
