package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"github.com/erpgate/erpgate/authserver"
	authstorage "github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/connectors/acumatica"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/adminapi"
	"github.com/erpgate/erpgate/platform/front/mcpengine"
	"github.com/erpgate/erpgate/platform/front/servicemcp"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/config"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/gctune"
	"github.com/erpgate/erpgate/platform/infra/invalidate"
	"github.com/erpgate/erpgate/platform/infra/metrics"
	"github.com/erpgate/erpgate/platform/infra/netguard"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/ratelimit"
	"github.com/erpgate/erpgate/platform/infra/redact"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/infra/tracing"
	"github.com/erpgate/erpgate/platform/store/activity"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/platform/store/consolesession"
	"github.com/erpgate/erpgate/platform/store/erpmeta"
	"github.com/erpgate/erpgate/platform/store/erptokens"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/platform/store/usage"
	"github.com/erpgate/erpgate/web"
	"github.com/erpgate/erpgate/web/console"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/register"
	"github.com/erpgate/erpgate/web/viewer"
)

// App is one running gateway replica. Everything it keeps in memory is a
// cache or a buffer: any replica can serve any request.
type App struct {
	cfg      *config.Config
	log      *zap.Logger
	pool     *pgxpool.Pool
	usage    *usage.Recorder
	echo     *echo.Echo
	server   *http.Server
	draining atomic.Bool
	// handling counts the requests being handled (drainGuard).
	handling atomic.Int64
	// readiness keeps the database's readiness for a moment (ready).
	readiness readiness
	// stopJanitor ends the background work: the limiter's purge and the
	// invalidation listener.
	stopJanitor context.CancelFunc
	// limiter's queued lease releases are flushed at shutdown.
	limiter *ratelimit.Limiter
	// live is the operator's live settings.
	live *livesettings.Store
	// metrics are this replica's Prometheus series; metricsServer serves
	// them on ERPGATE_METRICS_ADDR when it is set.
	metrics       *metrics.Metrics
	metricsServer *http.Server
	// tracing exports traces when ERPGATE_OTLP_ENDPOINT is set.
	tracing *tracing.Provider
	// approvals keeps the writes waiting for a person's approval; nil
	// when the deployment has no encryption keys (no writes then).
	approvals *approval.Store
}

// connectorDeps is what connectors need from the platform at run time.
// The zero value gives connectors that can list their catalogue (docs,
// tests) but whose service connections cannot sign in.
type connectorDeps struct {
	HTTPClient    func(connector.Site, connector.Authorizer) *http.Client
	ServiceTokens connector.ServiceTokenStore
	// CanaryInquiry is the live Acumatica canary inquiry.
	CanaryInquiry func() string
}

// NewApp connects to Postgres, applies migrations and builds the handlers.
func NewApp(ctx context.Context, cfg *config.Config, log *zap.Logger) (*App, error) {
	dbURL := cfg.DatabaseURL.Reveal()
	if err := database.MigrateUp(ctx, dbURL); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	pool, err := database.Open(ctx, dbURL)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	a := &App{cfg: cfg, log: log, pool: pool, metrics: metrics.New(metrics.Options{SiteLabel: cfg.Metrics.SiteLabel})}
	a.metrics.Pool(pool)
	if dropped, ok := droppedLogLines(log); ok {
		a.metrics.LogDrops(dropped)
	}
	if cfg.Tracing.OTLPEndpoint != "" {
		if a.tracing, err = tracing.Start(ctx, tracing.Options{
			Endpoint: cfg.Tracing.OTLPEndpoint, SamplePercent: cfg.Tracing.SamplePercent, Version: version,
		}); err != nil {
			pool.Close()
			return nil, err
		}
	}
	if err := a.build(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if cfg.Metrics.ListenAddr != "" {
		a.metricsServer = &http.Server{Handler: metricsOnly(a.metrics.Handler()), ReadHeaderTimeout: cfg.HTTP.ReadHeaderTimeout, MaxHeaderBytes: maxHeaderBytes}
	}
	// The server exists before Serve runs, so a Shutdown that comes first
	// (a replica stopped as it starts) still stops it: Serve then returns
	// at once.
	a.server = &http.Server{
		Handler:           bodyDeadline(a.echo, cfg.HTTP.BodyTimeout),
		ReadHeaderTimeout: cfg.HTTP.ReadHeaderTimeout,
		IdleTimeout:       cfg.HTTP.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// No ReadTimeout: it would stay on the connection while the
		// handler runs, and cancel a long call's context when it fires;
		// bodyDeadline bounds the body instead. No WriteTimeout: a tool
		// call may legitimately run for the whole upstream budget; the
		// engine bounds it.
	}
	return a, nil
}

func (a *App) build(ctx context.Context) error {
	cfg := a.cfg
	store := sites.NewStore(a.pool, cfg.Keyring)
	store.SetMaxActiveServiceTokens(cfg.Limits.ServiceTokensPerSite)
	// In production ERPs must be at public addresses, except the hosts the
	// operator lists; in development they are simulators on loopback.
	var erpAddresses *netguard.Policy
	if cfg.Production() {
		erpAddresses = netguard.NewPolicy(cfg.ERPPrivateHosts)
	}
	out := outbound.NewFactory(outbound.Options{
		MaxResponseBytes: cfg.Upstream.MaxResponseBytes,
		Retry:            cfg.Upstream.Retry,
		AddressPolicy:    erpAddresses,
		Metrics:          a.metrics,
	})
	// The operator's live settings; the environment gives the defaults.
	live := livesettings.New(a.pool, livesettings.Defaults{
		RedactionAdd: cfg.Redaction.Patterns, RedactionSkip: cfg.Redaction.Skip,
		MaxRecords: cfg.Limits.MaxRecords, UserConcurrency: cfg.Limits.UserConcurrency, UserPerMinute: cfg.Limits.UserPerMinute,
		SiteConcurrency: cfg.Limits.SiteConcurrency, SitePerMinute: cfg.Limits.SitePerMinute,
		CanaryInquiry: acumatica.DefaultCanaryInquiry,
	}, a.log)
	a.live = live
	reg, err := newRegistryWith(connectorDeps{
		HTTPClient:    out.Client,
		CanaryInquiry: func() string { return live.Current().Deployment.CanaryInquiry },
		ServiceTokens: erptokens.New(a.pool, cfg.Keyring, erptokens.Options{Logger: a.log, Metrics: a.metrics}),
	})
	if err != nil {
		return err
	}
	if err := syncSiteIdentities(ctx, store, reg, a.log); err != nil {
		return err
	}
	// The usage line of every call needs no caller field; capturing it
	// (runtime.Callers) was a twentieth of the CPU per call at low load.
	a.usage = usage.NewRecorder(a.pool, a.log.WithOptions(zap.WithCaller(false)), usage.Options{
		FlushInterval: cfg.Usage.FlushInterval,
		BatchSize:     cfg.Usage.BatchSize,
	})
	a.metrics.UsageBuffer(a.usage.Pending, a.usage.Dropped)
	limiter := ratelimit.New(a.pool, ratelimit.Limits{
		UserConcurrency: cfg.Limits.UserConcurrency,
		UserPerMinute:   cfg.Limits.UserPerMinute,
		SiteConcurrency: cfg.Limits.SiteConcurrency,
		SitePerMinute:   cfg.Limits.SitePerMinute,
		// Leases a replica keeps warm are reused for at most WarmFor, so
		// no lease in use gets older than WarmFor plus the call budget,
		// which stays well under the TTL.
		LeaseTTL: cfg.Upstream.Budget + 30*time.Second,
		Linger:   500 * time.Millisecond,
		WarmFor:  10 * time.Second,
	}, a.log)
	a.limiter = limiter
	janitorCtx, stopJanitor := context.WithCancel(context.Background())
	a.stopJanitor = stopJanitor
	go limiter.Janitor(janitorCtx, 10*time.Second)
	origins := append([]string{cfg.PublicOrigin()}, cfg.MCP.AllowedOrigins...)
	// Writes need a key to seal their approval state; without encryption
	// keys the engine offers no write tool.
	var (
		stateKeys [][]byte
		linkKey   []byte
	)
	if cfg.Keyring != nil {
		a.approvals = approval.NewStore(a.pool, a.log)
		stateKeys = cfg.Keyring.DeriveKeys(mcpengine.StateKeyPurpose)
		linkKey = cfg.Keyring.DeriveKey(approval.LinkKeyPurpose)
	}
	engine, err := mcpengine.New(mcpengine.Options{
		Approvals:      a.approvals,
		StateKeys:      stateKeys,
		LinkKey:        linkKey,
		PublicBaseURL:  cfg.PublicBaseURL,
		Registry:       reg,
		Outbound:       out,
		Usage:          a.usage,
		Logger:         a.log,
		Limiter:        limiter,
		Budget:         cfg.Upstream.Budget,
		MaxResultBytes: int(cfg.Upstream.MaxResponseBytes),
		MaxRecords:     cfg.Limits.MaxRecords,
		MaxCalls:       cfg.Limits.ReplicaCalls,
		MaxAnswerBytes: cfg.Limits.ReplicaAnswerBytes,
		CallerShare:    cfg.Limits.CallerShare,
		SiteShare:      cfg.Limits.SiteShare,
		BodyTimeout:    cfg.HTTP.BodyTimeout,
		Redaction:      redact.Rules{Add: cfg.Redaction.Patterns, Skip: cfg.Redaction.Skip},
		Storage:        erpmeta.New(a.pool),
		AllowedOrigins: origins,
		Version:        version,
		Metrics:        a.metrics,
		Tracer:         a.tracer(),
	})
	if err != nil {
		return err
	}

	live.OnChange(func(snap *livesettings.Snapshot) {
		applyLiveSettings(snap, engine, limiter)
	})
	if err := live.Load(ctx); err != nil {
		return err
	}
	go every(janitorCtx, settingsPoll, settingsPollBound, live.Load, func(err error) { a.log.Warn("poll the live settings", zap.Error(err)) })

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// Where a request's source matters, note forwarding headers from a
	// peer that is not a trusted proxy: the sign of a proxy in front that
	// ERPGATE_TRUSTED_PROXIES misses, which makes every visitor one source.
	untrusted := sourcelimit.NewUntrustedProxies(cfg.TrustedProxies, a.log, nil)
	e.IPExtractor = untrusted.Wrap(clientIPExtractor(cfg.TrustedProxies))
	e.Use(a.drainGuard, a.accessLog)
	web.Register(e, web.Deps{Ready: a.ready, PublicURL: cfg.PublicURL, Version: version, Registration: cfg.Registration.Enabled, Tools: toolDocs(reg)})
	// One site-administration layer for the admin API and the site pages.
	siteAdmin := siteadmin.New(siteadmin.Deps{
		Store:        store,
		Registry:     reg,
		IsDevHost:    cfg.IsDevHost,
		HTTPClient:   out.Client,
		ERPAddresses: erpAddresses,
		Settings:     live,
		PublicURL:    cfg.PublicURL,
		Logger:       a.log,
	})
	events := activity.NewStore(a.pool)
	// Every minute one replica adds the closed hours to the chart rollup,
	// and deletes the events past their retention that the rollup counts.
	go every(janitorCtx, time.Minute, janitorBound, func(ctx context.Context) error {
		now := time.Now()
		if _, err := events.RollUp(ctx, now); err != nil {
			return err
		}
		if days := cfg.Usage.RetentionDays; days > 0 {
			n, err := events.Prune(ctx, now.AddDate(0, 0, -days))
			if n > 0 {
				a.log.Info("usage events past their retention deleted", zap.Int64("deleted", n), zap.Int("retention_days", days))
			}
			return err
		}
		return nil
	}, func(err error) { a.log.Warn("roll up or prune usage events", zap.Error(err)) })
	// And one replica deletes the audit events past their retention.
	if days := cfg.Audit.RetentionDays; days > 0 {
		go every(janitorCtx, time.Minute, janitorBound, func(ctx context.Context) error {
			n, err := events.PruneAudit(ctx, time.Now().AddDate(0, 0, -days))
			if n > 0 {
				a.log.Info("audit events past their retention deleted", zap.Int64("deleted", n), zap.Int("retention_days", days))
			}
			return err
		}, func(err error) { a.log.Warn("prune audit events", zap.Error(err)) })
	}
	// And one replica deletes the service tokens that ended (revoked or
	// expired) before their retention.
	if days := cfg.Limits.ServiceTokenRetentionDays; days > 0 {
		go every(janitorCtx, time.Minute, janitorBound, func(ctx context.Context) error {
			n, err := store.PruneServiceTokens(ctx, time.Now().AddDate(0, 0, -days))
			if n > 0 {
				a.log.Info("ended service tokens past their retention deleted", zap.Int64("deleted", n), zap.Int("retention_days", days))
			}
			return err
		}, func(err error) { a.log.Warn("prune ended service tokens", zap.Error(err)) })
	}
	adminapi.New(adminapi.Deps{
		Store:        store,
		Registry:     reg,
		AdminToken:   cfg.AdminToken,
		PublicURL:    cfg.PublicURL,
		IsDevHost:    cfg.IsDevHost,
		HTTPClient:   out.Client,
		ERPAddresses: erpAddresses,
		Logger:       a.log,
		Admin:        siteAdmin,
		Settings:     live,
		Activity:     events,
	}).Register(e.Group("/api/v1"))
	if cfg.Keyring != nil {
		sessions := consolesession.New(a.pool)
		go every(janitorCtx, time.Hour, janitorBound, sessions.Purge, func(err error) { a.log.Warn("purge expired console sessions", zap.Error(err)) })
		cons := console.New(console.Deps{
			PublicBaseURL:  cfg.PublicBaseURL,
			AdminToken:     cfg.AdminToken,
			SessionKey:     cfg.Keyring.DeriveKey(console.KeyPurpose),
			Sessions:       sessions,
			Admin:          siteAdmin,
			Store:          store,
			Settings:       live,
			ClientIP:       e.IPExtractor,
			ProxySightings: untrusted.Sightings,
			Logger:         a.log,
		})
		viewer.New(viewer.Deps{Shell: cons, Events: events, Sites: store, Logger: a.log}).Register(e)
		cons.Register(e)
	}
	listener := invalidate.NewListener(cfg.DatabaseURL.Reveal(), a.log)
	listener.OnMessage(ratelimit.NotifyPrefix, limiter.ReclaimMessage)
	listener.OnMessage(livesettings.NotifyPrefix, live.Notified)
	go listener.Run(janitorCtx)
	resolver := servicemcp.NewResolver(store, reg, listener, cacheTTL)
	// One bound per replica on the tokens that are not valid, for every
	// door that takes tokens.
	lookups := sourcelimit.NewLookups(sourcelimit.Limit{}, e.IPExtractor)
	service := echo.WrapHandler(&servicemcp.Handler{Resolver: resolver, Engine: engine, Logger: a.log, Lookups: lookups})
	e.Any("/service/mcp", service)
	if cfg.Metrics.ListenAddr == "" {
		// No address of its own: /metrics is the operator's, like the
		// admin API.
		e.GET(metricsPath, echo.WrapHandler(a.metrics.Handler()), adminapi.RequireAdminToken(cfg.AdminToken))
	}

	auth, err := authserver.New(ctx, authserver.Deps{
		Store: authstorage.New(a.pool, cfg.Keyring, authstorage.Options{RefreshGrace: cfg.OAuth.RefreshGrace}),
		Sites: store, Registry: reg, Engine: engine, HTTPClient: out.Client,
		PublicBaseURL: cfg.PublicBaseURL, IsDevHost: cfg.IsDevHost, Logger: a.log,
		AccessTokenLifespan: cfg.OAuth.AccessTokenLifespan, RefreshTokenLifespan: cfg.OAuth.RefreshTokenLifespan,
		SignInTimeout: cfg.OAuth.SignInTimeout, AccessGateInterval: cfg.OAuth.AccessGateInterval, ClientIP: e.IPExtractor,
		Metrics:       a.metrics,
		Invalidations: listener, CacheTTL: cacheTTL, Lookups: lookups,
	})
	if err != nil {
		return err
	}
	// A site changed through this replica is forgotten here before the
	// change is acknowledged; the others hear of it from its NOTIFY.
	store.OnChange(func(id uuid.UUID) {
		resolver.Forget(id)
		auth.ForgetSite(id.String())
	})
	// Every minute, so that expired sign-in flows go promptly.
	go auth.Janitor(janitorCtx, time.Minute)
	// ERP-administrator proofs (registration, the owner's page) share the
	// one redirect URI with people's sign-ins.
	proofs := erpadmin.New(erpadmin.Deps{
		Pool: a.pool, Keyring: cfg.Keyring, Registry: reg, HTTPClient: out.Client,
		PublicBaseURL: cfg.PublicBaseURL, Logger: a.log, Lookups: lookups,
	})
	sweeps := []sweep{{"erpadmin proofs", proofs.Sweep}}
	// The ERP tokens owner sessions signed in with (and registrants, for
	// the registration's last step): kept until they expire.
	ownerTokens := pagesession.NewTokens(a.pool, cfg.Keyring)
	if cfg.Registration.Enabled {
		registration := register.New(register.Deps{
			Admin: siteAdmin, Proofs: proofs, Sites: store, Registry: reg, Pool: a.pool, Keyring: cfg.Keyring, Tokens: ownerTokens,
			PublicBaseURL: cfg.PublicBaseURL, Logger: a.log, ClientIP: e.IPExtractor, TTL: cfg.Registration.PendingTTL, Lookups: lookups,
			MaxPending: cfg.Registration.MaxPending, MaxPendingPerNetwork: cfg.Registration.MaxPendingPerNetwork,
		})
		sweeps = append(sweeps, sweep{"pending registrations", registration.Sweep})
		pages := echo.WrapHandler(registration)
		for _, path := range register.Paths() {
			e.Any(path, pages)
		}
	}
	sweeps = append(sweeps, sweep{"owner changes", store.SweepOwnerChanges})
	// Owner and approval sessions signed out: kept until they expire.
	ends := pagesession.New(a.pool)
	sweeps = append(sweeps, sweep{"ended page sessions", ends.Purge})
	sweeps = append(sweeps, sweep{"owner session ERP tokens", ownerTokens.Purge})
	if a.approvals != nil {
		sweeps = append(sweeps, sweep{"pending actions", a.approvals.Sweep})
	}
	// Every minute, so that expired proofs and registrations go promptly.
	go every(janitorCtx, time.Minute, janitorBound, func(ctx context.Context) error {
		a.sweepAll(ctx, sweeps)
		return nil
	}, nil)
	if err := mountOwnerPages(e, cfg, siteAdmin, store, reg, proofs, live, ends, ownerTokens, lookups, a.log); err != nil {
		return err
	}
	if a.approvals != nil {
		if err := mountApprovalPages(e, cfg, a.approvals, siteAdmin, store, reg, proofs, a.usage, ends, lookups, a.log); err != nil {
			return err
		}
	}
	oauth := echo.WrapHandler(auth)
	for _, path := range authserver.Paths() {
		if path == sites.SharedCallbackPath || path == sites.SiteCallbackPath(":slug") {
			e.Any(path, echo.WrapHandler(callbackRouter(proofs, auth)))
			continue
		}
		e.Any(path, oauth)
	}
	a.echo = e
	return nil
}

// sweep removes expired rows of one kind and says how many.
type sweep struct {
	what string
	run  func(context.Context) (int64, error)
}

// sweepAll runs every sweep once, logging what each removed. Expired rows
// are refused when read anyway; this keeps their tables small.
func (a *App) sweepAll(ctx context.Context, sweeps []sweep) {
	for _, s := range sweeps {
		if n, err := s.run(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("sweep expired rows", zap.String("what", s.what), zap.Error(err))
		} else if n > 0 {
			a.log.Info("expired rows removed", zap.String("what", s.what), zap.Int64("count", n))
		}
	}
}

// settingsPoll is how often a replica checks the live settings' version,
// in case it missed a notification: a change is in force everywhere within
// it. settingsPollBound bounds one check.
const (
	settingsPoll      = 500 * time.Millisecond
	settingsPollBound = 5 * time.Second
)

// janitorBound bounds one run of the housekeeping (roll-up and pruning,
// sweeps): far above what a run takes, it only ends a run stuck on a dead
// connection.
const janitorBound = 10 * time.Minute

// applyLiveSettings puts a snapshot of the live settings in force in the
// engine and the limiter.
func applyLiveSettings(snap *livesettings.Snapshot, engine *mcpengine.Engine, limiter *ratelimit.Limiter) {
	d := snap.Deployment
	l := mcpengine.Live{MaxRecords: d.MaxRecords, Redaction: redact.Rules{Add: d.RedactionAdd, Skip: d.RedactionSkip}, Sites: map[uuid.UUID]mcpengine.SiteLive{}}
	for id, s := range snap.Sites {
		l.Sites[id] = mcpengine.SiteLive{MaxRecords: s.MaxRecords, Redaction: redact.Rules{Add: s.RedactionAdd, Skip: s.RedactionSkip}, Tools: s.Tools, ReadOnly: s.ReadOnly,
			WriteTools: s.WriteTools, ServiceWrites: s.ServiceWrites, ServiceWriteApprover: s.ServiceWriteApprover}
	}
	engine.SetLive(l)
	limiter.SetNumbers(d.UserConcurrency, d.UserPerMinute, d.SiteConcurrency, d.SitePerMinute)
	ceilings := map[uuid.UUID]ratelimit.SiteCeiling{}
	for id, s := range snap.Sites {
		if s.SiteConcurrency > 0 || s.SitePerMinute > 0 {
			ceilings[id] = ratelimit.SiteCeiling{Concurrency: s.SiteConcurrency, PerMinute: s.SitePerMinute}
		}
	}
	limiter.SetSiteCeilings(ceilings)
}

// every runs fn every interval until ctx ends, each run within bound,
// handing failures to failed. The bound is what frees the loop from a
// pooled connection gone silent (a partition that dropped the flow
// without a reset), on which a statement would otherwise wait for as long
// as the kernel takes to give up, a quarter of an hour.
func every(ctx context.Context, interval, bound time.Duration, fn func(context.Context) error, failed func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			rctx, cancel := context.WithTimeout(ctx, bound)
			err := fn(rctx)
			cancel()
			if err != nil && ctx.Err() == nil && failed != nil {
				failed(err)
			}
		}
	}
}

// callbackRouter serves the redirect URIs (each site's and the shared
// one): a state made by erpadmin goes to its proofs, every other one to
// the authorization server.
func callbackRouter(proofs *erpadmin.Service, auth http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Query().Get("state"), erpadmin.StatePrefix) {
			proofs.ServeCallback(w, r)
			return
		}
		auth.ServeHTTP(w, r)
	})
}

// cacheTTL bounds how long a replica uses what it cached of a token (the
// service and the OAuth paths) without hearing of a change: a backstop in
// case a notification were lost.
const cacheTTL = 30 * time.Second

// clientIPExtractor tells where a request comes from: the connection's
// address, or, when it is one of the trusted proxies, the nearest address
// in X-Forwarded-For that is not. Without trusted proxies the header is
// ignored, so a client cannot choose its own address.
func clientIPExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	// echo trusts loopback, link-local and private addresses by default;
	// only the configured proxies are trusted here.
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		bits := p.Addr().BitLen()
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), bits)}))
	}
	forwarded := echo.ExtractIPFromXFFHeader(opts...)
	return func(r *http.Request) string {
		entries, ported := withoutPorts(r.Header.Values(echo.HeaderXForwardedFor))
		if !ported {
			return forwarded(r)
		}
		bare := r.WithContext(r.Context())
		bare.Header = r.Header.Clone()
		bare.Header[echo.HeaderXForwardedFor] = []string{strings.Join(entries, ", ")}
		return forwarded(bare)
	}
}

// withoutPorts is the entries of X-Forwarded-For values, each address
// written with a port ("203.0.113.7:51234", "[2001:db8::1]:51234", as
// Azure Application Gateway and IIS ARR write the client's) without it;
// ported reports whether any was. echo reads such an entry as no address
// and answers with the connection's, the proxy's: every client behind it
// would be one source and one network. Which entries are believed is
// unchanged: the port is dropped, the address is trusted or not as before.
func withoutPorts(values []string) (entries []string, ported bool) {
	for _, v := range values {
		for _, e := range strings.Split(v, ",") {
			e = strings.TrimSpace(e)
			if ap, err := netip.ParseAddrPort(e); err == nil {
				e, ported = ap.Addr().String(), true
			}
			entries = append(entries, e)
		}
	}
	return entries, ported
}

// ready is the /readyz check: not draining, database reachable, migrations
// current.
func (a *App) ready(ctx context.Context) error {
	if a.draining.Load() {
		return &web.ReadinessError{Reason: "shutting down", Err: errors.New("draining")}
	}
	return a.readiness.check(ctx, func(ctx context.Context) error {
		if err := database.CheckReady(ctx, a.pool); err != nil {
			reason := "database unavailable"
			if !database.IsUnavailable(err) {
				reason = "migrations not current"
			}
			return &web.ReadinessError{Reason: reason, Err: err}
		}
		return nil
	})
}

// readyFor is how long the database's readiness is kept: /readyz is on
// the public address and needs no authentication, and its check is two
// queries on the pool every tenant's requests use.
const readyFor = time.Second

// readiness is the outcome of the last database check, and the check
// under way, which concurrent requests share.
type readiness struct {
	mu      sync.Mutex
	at      time.Time
	err     error
	running singleflight.Group
}

// check returns the outcome of a check run less than readyFor ago, else
// runs run (once for all requests waiting meanwhile, detached from any of
// them, within the probe's 2 s).
func (r *readiness) check(ctx context.Context, run func(context.Context) error) error {
	r.mu.Lock()
	if !r.at.IsZero() && time.Since(r.at) < readyFor {
		defer r.mu.Unlock()
		return r.err
	}
	r.mu.Unlock()
	ch := r.running.DoChan("", func() (any, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		err := run(cctx)
		r.mu.Lock()
		r.at, r.err = time.Now(), err
		r.mu.Unlock()
		return nil, err
	})
	select {
	case res := <-ch:
		return res.Err
	case <-ctx.Done():
		return &web.ReadinessError{Reason: "database unavailable", Err: ctx.Err()}
	}
}

// metricsPath is where the Prometheus series are served.
const metricsPath = "/metrics"

// metricsOnly serves h at metricsPath and 404 elsewhere, on the metrics
// address.
func metricsOnly(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+metricsPath, h)
	return mux
}

// tracer is the engine's tracer: nil (no spans at all) unless tracing is
// configured.
func (a *App) tracer() trace.Tracer {
	if a.tracing == nil {
		return nil
	}
	return a.tracing.Tracer()
}

// Metrics returns this replica's series (tests read them).
func (a *App) Metrics() *metrics.Metrics { return a.metrics }

// ServeMetrics serves /metrics on ln until Shutdown, when
// ERPGATE_METRICS_ADDR is set.
func (a *App) ServeMetrics(ln net.Listener) error {
	if a.metricsServer == nil {
		return errors.New("metrics: no metrics address is configured")
	}
	err := a.metricsServer.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Handler returns the HTTP handler of this replica.
func (a *App) Handler() http.Handler { return a.echo }

// Serve accepts connections on ln until Shutdown.
func (a *App) Serve(ln net.Listener) error {
	err := a.server.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops taking new requests (they get 503), waits for in-flight
// calls (cutting off those still running when only shutdownReserve of ctx
// is left), flushes buffered usage events and closes the database pool.
func (a *App) Shutdown(ctx context.Context) error {
	a.draining.Store(true)
	var errs []error
	// The calls get the shutdown's time but for a reserve kept for what
	// follows: a call that outlasts them (a slow ERP, within a budget
	// longer than the timeout) must not cost the leases and usage events
	// of the calls that finished.
	drainCtx, cancel := reserveTail(ctx, shutdownReserve)
	err := a.server.Shutdown(drainCtx)
	cancel()
	if err != nil {
		errs = append(errs, fmt.Errorf("http shutdown: %w", err))
		// Cut the calls still running: their contexts end, and they
		// record their usage and release their leases while the first
		// half of the reserve lasts.
		_ = a.server.Close()
		waitCtx, cancel := reserveTail(ctx, shutdownReserve/2)
		a.waitHandlers(waitCtx)
		cancel()
	}
	// In-flight calls are done: give back their leases, and the warm
	// slots and reservations this replica holds, before the pool goes.
	if err := a.limiter.Drain(ctx); err != nil {
		errs = append(errs, fmt.Errorf("release call leases: %w", err))
	}
	a.stopJanitor()
	if err := a.usage.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("flush usage events: %w", err))
	}
	if a.tracing != nil {
		if err := a.tracing.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("send traces: %w", err))
		}
	}
	if a.metricsServer != nil {
		_ = a.metricsServer.Close()
	}
	a.pool.Close()
	return errors.Join(errs...)
}

// shutdownReserve is the most of the shutdown's time kept for releasing
// leases and storing usage events after the calls; a fifth of it when the
// timeout is short.
const shutdownReserve = 5 * time.Second

// reserveTail returns ctx with its deadline moved reserve earlier, or by a
// fifth of the time left when that is less; without a deadline, ctx.
func reserveTail(ctx context.Context, reserve time.Duration) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	reserve = min(reserve, time.Until(deadline)/5)
	return context.WithDeadline(ctx, deadline.Add(-reserve))
}

// waitHandlers waits until no request is being handled, or ctx ends.
func (a *App) waitHandlers(ctx context.Context) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for a.handling.Load() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// maxHeaderBytes bounds a request's line and headers, read from anyone
// before any authentication (Go's default is 1 MiB): tokens, cookies and a
// trace context take a few kilobytes. Beyond it the answer is 431.
const maxHeaderBytes = 64 << 10

// bodyDeadline gives every request with a body timeout to send it: a
// read deadline on the connection, lifted once the body has been read to
// its end, so that the handler's own work is not bounded by it. A body
// that arrives too slowly fails to read (the MCP endpoints answer 408),
// and its connection is closed. The MCP engine sets the same deadline
// itself.
func bodyDeadline(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
				// On a copy: the server still sees its own body, and
				// what of it was read.
				r = r.WithContext(r.Context())
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the connection's read deadline when its body has
// been read to the end.
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// drainGuard refuses new requests with 503 once shutdown has begun.
func (a *App) drainGuard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		a.handling.Add(1)
		defer a.handling.Add(-1)
		if a.draining.Load() {
			c.Response().Header().Set("Connection", "close")
			c.Response().Header().Set("Retry-After", "1")
			return c.JSON(http.StatusServiceUnavailable, map[string]any{"error": map[string]string{"code": "shutting_down", "message": "this replica is shutting down; retry"}})
		}
		return next(c)
	}
}

// accessLog writes one line per request: method, the route it matched,
// status and duration. The route is echo's pattern (/approve/:id), never
// the path as sent: some paths carry a link's id and check value (an
// approval, a registration), and a path erpgate does not have is its
// sender's text. Nor the query string or headers, which may carry secrets.
func (a *App) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		// Off at the default level: build the line only when it is written.
		if ce := a.log.Check(zap.DebugLevel, "http_request"); ce != nil {
			req := c.Request()
			ce.Write(
				zap.String("method", req.Method),
				zap.String("path", routeOf(c)),
				zap.Int("status", c.Response().Status),
				zap.Int64("duration_ms", time.Since(start).Milliseconds()),
				zap.String("request_id", c.Response().Header().Get("X-Request-Id")))
		}
		return nil
	}
}

// routeOf is the route pattern c matched (a catch-all such as "/*" for an
// address erpgate does not have), or "unmatched" when it matched none.
func routeOf(c echo.Context) string {
	if p := c.Path(); p != "" {
		return p
	}
	return "unmatched"
}

// runServe is `erpgate serve`.
func runServe(ctx context.Context, configPath string) error {
	cfg, err := config.Load(os.LookupEnv, configPath)
	if err != nil {
		return err
	}
	log := newLogger(cfg.LogLevel, nil)
	defer syncLog(log, logSyncLimit)
	log.Info("starting erpgate", append([]zap.Field{zap.String("version", version)}, cfg.LogFields()...)...)
	return serveUntilDone(ctx, cfg, log, nil)
}

// defaultGCPercent is the garbage collector's target when GOGC is not set:
// the heap may grow by half its live size between collections, not by all
// of it. A replica's live heap is mostly the requests it holds (waiting for
// admission or for the ERP), so this keeps memory per in-flight call near
// 55 KiB instead of 72 KiB (docs/performance.md). GOGC, when set, wins.
const defaultGCPercent = 50

// tuneGC starts the collector's tuner: defaultGCPercent unless the
// operator set GOGC, plus the configured slack (gctune). The returned
// stop restores the percentage in force before.
func tuneGC(lookup func(string) (string, bool), slack int64) (stop func()) {
	percent := defaultGCPercent
	if _, set := lookup("GOGC"); set {
		// The runtime read GOGC at start; take its value ("off" is -1).
		percent = debug.SetGCPercent(defaultGCPercent)
	}
	return gctune.Start(percent, uint64(slack))
}

// serveUntilDone runs a replica until ctx ends, then shuts it down within
// the configured timeout. started, if set, is called once it listens.
func serveUntilDone(ctx context.Context, cfg *config.Config, log *zap.Logger, started func(addr string)) error {
	defer tuneGC(os.LookupEnv, cfg.GCSlackBytes)()
	app, err := NewApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		_ = app.Shutdown(context.Background())
		return fmt.Errorf("listen on %s: %w", cfg.ListenAddr, err)
	}
	log.Info("listening", zap.String("addr", ln.Addr().String()), zap.String("public_base_url", cfg.PublicBaseURL))
	if cfg.Metrics.ListenAddr != "" {
		mln, err := net.Listen("tcp", cfg.Metrics.ListenAddr)
		if err != nil {
			_ = ln.Close()
			_ = app.Shutdown(context.Background())
			return fmt.Errorf("listen on %s (ERPGATE_METRICS_ADDR): %w", cfg.Metrics.ListenAddr, err)
		}
		log.Info("serving metrics", zap.String("addr", mln.Addr().String()))
		go func() {
			if err := app.ServeMetrics(mln); err != nil {
				log.Error("metrics server", zap.Error(err))
			}
		}()
	}
	if started != nil {
		started(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- app.Serve(ln) }()
	select {
	case err := <-errc:
		_ = app.Shutdown(context.Background())
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	err = app.Shutdown(sctx)
	<-errc
	log.Info("stopped", zap.Error(err))
	return err
}
