// Package mcpengine is erpgate's shared MCP engine. It turns each
// connector's catalogue into mcp-go tools and runs every tool call through
// one chain (docs/architecture.md): principal and site, input validation, limits,
// the upstream budget, the outbound transport (retry and response bound),
// redaction, a structured result, a usage event and error mapping.
//
// mcp-go types stay inside this package (servicemcp uses only its JSON-RPC
// error codes), so a library change touches one place. Front doors (/service/mcp, the OAuth MCP endpoints) authenticate
// the caller and hand the engine a Session; the engine never reads
// credentials from storage itself.
package mcpengine

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/metrics"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/redact"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/platform/store/usage"
)

// UsageSink receives one event per terminal reply.
type UsageSink interface {
	Record(usage.Event)
}

// Options configure an Engine.
type Options struct {
	Registry *connector.Registry
	Outbound *outbound.Factory
	Usage    UsageSink
	Logger   *zap.Logger
	// Limiter, when set, bounds concurrent and per-minute calls.
	Limiter Limiter
	// Budget bounds a whole request from its arrival: its waits at the
	// door and for a work slot, and its tool call, lookups and retries
	// included.
	Budget time.Duration
	// MaxResultBytes bounds the JSON a tool may return to the client.
	MaxResultBytes int
	// MaxRecords is the deployment's row cap per upstream query.
	MaxRecords int
	// Redaction adds to and skips from the built-in redaction patterns.
	Redaction redact.Rules
	// Storage, when set, gives each call its site's shared metadata cache
	// and schema index (connector.Call.Cache and Call.Index).
	Storage connector.SiteStorage
	// MaxActive bounds the MCP requests this replica works on at once
	// (admission.go); more wait, until their arrival plus Budget. Calls
	// waiting on the ERP do not count. Default 8 per CPU, at least 16.
	MaxActive int
	// MaxCalls bounds the MCP requests this replica holds at once, calls
	// waiting on the ERP included (admission.go); more wait at the door,
	// until their arrival plus Budget. Default 128 per CPU, at least 256.
	MaxCalls int
	// MaxAnswerBytes bounds the bytes of large ERP answers (64 KiB or more)
	// the calls of this replica hold at once (admission.go). Default 64 MiB.
	MaxAnswerBytes int64
	// MaxRequestBytes bounds an incoming JSON-RPC message. Default 1 MiB.
	MaxRequestBytes int64
	// BodyTimeout bounds how long a request's body may take to arrive
	// (a slower one is answered 408), and how long the client may take to
	// take in a JSON reply once the work is done, or each write of an
	// event stream (past it the connection is closed). Default 30 s.
	BodyTimeout time.Duration
	// CallerShare is the percentage of the replica's call slots and work
	// slots one caller (Session.LimitKey) may hold at once (admission.go).
	// Default 25.
	CallerShare int
	// SiteShare is the percentage of them, and of the answer budget, the
	// callers of one site may hold at once together (admission.go): a
	// site's owner makes as many callers as they like. Default twice
	// CallerShare, at most 100.
	SiteShare int
	// CallerRequests bounds, per caller (Session.LimitKey) on this
	// replica, the MCP requests other than tools/call (initialize, ping,
	// tools/list, notifications, GET and DELETE), and separately the tool
	// calls refused before the Limiter (unknown tools, invalid
	// arguments), which the Limiter does not count, or by it
	// (RATE_LIMITED). Zero fields take
	// DefaultCallerRequests. A site's callers share a budget of the
	// former and of the latter too, SiteShare over CallerShare times as
	// large (siteRequestsLimit).
	CallerRequests sourcelimit.Limit
	// Version is reported in serverInfo.
	Version string
	// Metrics, when set, receives the tool-call and admission series.
	Metrics *metrics.Metrics
	// Tracer, when set, makes each MCP request a trace (trace.go).
	Tracer trace.Tracer
	// AllowedOrigins are the browser origins (scheme://host[:port]) that may
	// call MCP endpoints. Requests without an Origin header (non-browser
	// clients) are always accepted; any other Origin gets 403, which guards
	// against DNS rebinding and cross-site use of a browser's network.
	AllowedOrigins []string
	// Approvals, when set, enables write tools (writes.go): a write is
	// proposed, approved by a person on erpgate's page, then run once.
	// Without it no Write or Destructive tool is offered anywhere.
	Approvals *approval.Store
	// StateKeys seal approval request states and capability session ids
	// (seal.go): secrets.Keyring.DeriveKeys(StateKeyPurpose), the first
	// sealing. Required with Approvals.
	StateKeys [][]byte
	// PublicBaseURL is the one configured public base URL; an action's
	// approval page is ApprovalURL(PublicBaseURL, id, LinkKey). Required
	// with Approvals.
	PublicBaseURL string
	// LinkKey tags the ids of approval links:
	// secrets.Keyring.DeriveKey(approval.LinkKeyPurpose), which the page
	// checks under DeriveKeys. Nil: bare ids, which the page looks up
	// within the source's bound on links that lead nowhere.
	LinkKey []byte
}

// DefaultCallerRequests is the bound when Options.CallerRequests is zero:
// 100 requests other than tool calls at once, then ten a second, per
// caller and replica. A client connecting (initialize, the initialized
// notification, tools/list) and pinging, even one that connects again
// for every tool call at many times the per-minute call limit, stays far
// below it; a caller sending them in a loop is answered 429 instead of
// having each one served, and its usage event written, as fast as it
// likes.
var DefaultCallerRequests = sourcelimit.Limit{Burst: 100, Every: 100 * time.Millisecond}

// siteRequestsLimit is the budget of requests other than tool calls one
// site's callers share, on a replica: a caller's (caller) times the site's
// share over a caller's (twice by default), as for the replica's slots: a
// site's owner makes as many callers as they like, and each has the
// caller's budget of its own.
func siteRequestsLimit(caller sourcelimit.Limit, callerShare, siteShare int) sourcelimit.Limit {
	return sourcelimit.Limit{
		Burst: max(caller.Burst, caller.Burst*siteShare/callerShare),
		Every: max(time.Nanosecond, min(caller.Every, caller.Every*time.Duration(callerShare)/time.Duration(siteShare))),
	}
}

// Engine serves MCP for every registered connector kind.
type Engine struct {
	opts Options
	log  *zap.Logger
	// mcpLog is erpgate's log as mcp-go's logger: without it mcp-go
	// writes plain lines to standard error through Go's default logger
	// (one for each response a caller posts unasked).
	mcpLog  *slog.Logger
	kinds   map[string]*kindServer
	origins map[string]bool
	// admission bounds the requests worked on at once (admission.go).
	admission *admission
	// requests bounds each caller's requests other than tool calls, and
	// refusedCalls its tool calls refused before the limits or by them
	// (Options.CallerRequests).
	requests, refusedCalls *sourcelimit.Limiter
	// siteRequests bounds each site's callers' requests other than tool
	// calls together, and siteRefusedCalls their refused tool calls
	// (siteRequestsLimit); nil with a site share of 100.
	siteRequests, siteRefusedCalls *sourcelimit.Limiter
	// exempt is each kind's field names the connector exempts from
	// redaction.
	exempt map[string][]string
	// own is each kind's judge of its ERP's own 401, for write tools'
	// requests (connector.OwnUnauthorized); absent when it has none.
	own map[string]connector.OwnUnauthorized
	// live is the operator's settings in force (live.go).
	live atomic.Pointer[liveState]
	// states and sessions seal approval request states and capability
	// session ids (seal.go); nil without Approvals.
	states, sessions *sealer
}

type kindServer struct {
	mcp   *server.MCPServer
	http  *server.StreamableHTTPServer
	tools map[string]*compiledTool
	// modern is what a 2026-07-28 result carries (modern.go).
	modern modernResult
	// metas are the 2026-07-28 _meta members that passed (modern.go).
	metas metaVerdicts
	// writes says whether the kind has Write or Destructive tools.
	writes bool
}

type compiledTool struct {
	kind string
	tool connector.Tool
	// advertised is the tool as mcp-go has it; headerBound says whether
	// any of its parameters travel in headers too (x-mcp-header), which
	// leaves its 2026-07-28 calls to mcp-go (modern.go).
	advertised  mcp.Tool
	headerBound bool
	input       *jsonschema.Schema
	// handler is the tool's call chain (toolHandler), as registered with
	// mcp-go.
	handler server.ToolHandlerFunc
	// metrics are the tool's series.
	metrics *metrics.Tool
	// routes is the connector's connector.RouteShaper, nil without one:
	// a traced call's ERP request spans carry the routes it names.
	routes func(escapedPath string) string
}

// New builds an engine from the connectors in opts.Registry.
func New(opts Options) (*Engine, error) {
	if opts.Registry == nil || opts.Outbound == nil || opts.Usage == nil {
		return nil, fmt.Errorf("mcpengine: Registry, Outbound and Usage are required")
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Budget <= 0 {
		opts.Budget = 50 * time.Second
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = 8 << 20
	}
	if opts.MaxRecords <= 0 {
		opts.MaxRecords = 1000
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = 1 << 20
	}
	if opts.MaxActive <= 0 {
		opts.MaxActive = defaultMaxActive()
	}
	if opts.MaxCalls <= 0 {
		opts.MaxCalls = defaultMaxCalls()
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = 30 * time.Second
	}
	if opts.CallerShare <= 0 || opts.CallerShare > 100 {
		opts.CallerShare = defaultCallerShare
	}
	if opts.SiteShare <= 0 || opts.SiteShare > 100 {
		opts.SiteShare = defaultSiteShare(opts.CallerShare)
	}
	if opts.MaxAnswerBytes <= 0 {
		opts.MaxAnswerBytes = defaultMaxAnswerBytes
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	e := &Engine{
		opts: opts,
		log:  opts.Logger,
		mcpLog: slog.New(warnAtMost{zapslog.NewHandler(opts.Logger.Core(),
			zapslog.WithName("mcp-go"), zapslog.AddStacktraceAt(slog.LevelError+1))}),
		kinds:        map[string]*kindServer{},
		exempt:       map[string][]string{},
		own:          map[string]connector.OwnUnauthorized{},
		origins:      map[string]bool{},
		admission:    newFairAdmission(opts.MaxActive, opts.MaxCalls, opts.MaxAnswerBytes, opts.CallerShare, opts.SiteShare),
		requests:     sourcelimit.New(opts.CallerRequests.WithDefault(DefaultCallerRequests), time.Now),
		refusedCalls: sourcelimit.New(opts.CallerRequests.WithDefault(DefaultCallerRequests), time.Now),
	}
	if opts.SiteShare < 100 {
		site := siteRequestsLimit(opts.CallerRequests.WithDefault(DefaultCallerRequests), opts.CallerShare, opts.SiteShare)
		e.siteRequests = sourcelimit.New(site, time.Now)
		e.siteRefusedCalls = sourcelimit.New(site, time.Now)
	}
	if opts.Approvals != nil {
		if opts.PublicBaseURL == "" {
			return nil, fmt.Errorf("mcpengine: Approvals need PublicBaseURL, for the approval page's address")
		}
		var err error
		if e.states, err = newSealer(opts.StateKeys, "approval-state"); err != nil {
			return nil, err
		}
		if e.sessions, err = newSealer(opts.StateKeys, "capability-session"); err != nil {
			return nil, err
		}
	}
	for _, o := range opts.AllowedOrigins {
		e.origins[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	// The bounds in force, defaults computed from the CPUs included.
	e.log.Info("mcp_admission",
		zap.Int("work_slots", opts.MaxActive),
		zap.Int("call_slots", opts.MaxCalls),
		zap.Int64("answer_bytes", opts.MaxAnswerBytes),
		zap.Int64("caller_work_slots", e.admission.callers.workCap),
		zap.Int64("caller_call_slots", e.admission.callers.callsCap),
		zap.Int64("site_work_slots", e.admission.sites.workCap),
		zap.Int64("site_call_slots", e.admission.sites.callsCap))
	for _, kind := range opts.Registry.Kinds() {
		ks, err := e.buildKind(kind, opts.Registry.Tools(kind))
		if err != nil {
			return nil, err
		}
		e.kinds[kind] = ks
	}
	e.SetLive(Live{MaxRecords: opts.MaxRecords, Redaction: opts.Redaction})
	return e, nil
}

func (e *Engine) buildKind(kind string, tools []connector.Tool) (*kindServer, error) {
	hooks := &server.Hooks{}
	hooks.AddOnError(e.onProtocolError)
	hooks.AddAfterSubscriptionsListen(e.awaitAcknowledgement)
	hooks.AddAfterInitialize(answerSpokenVersion)
	hooks.AddAfterInitialize(e.issueSession)
	// A site lists only the tools it offers (live.go); a call of another
	// gets a tool error saying why, not "tool not found".
	hooks.AddAfterListTools(e.filterListed(kind))
	name := "erpgate-" + kind
	srv := server.NewMCPServer(name, e.opts.Version,
		server.WithToolCapabilities(false),
		server.WithHooks(hooks),
		server.WithRecovery(),
		// Tool lists differ per site: nothing may be shared between callers.
		server.WithMethodCacheHints(mcp.MethodToolsList, 0, mcp.CacheScopePrivate),
		server.WithInstructions(instructions(kind)),
		server.WithLogger(e.mcpLog),
	)
	// Redaction is per kind (and per site when it has rules of its own,
	// live.go): the deployment's rules plus the exact field names the
	// connector exempts.
	var routes func(string) string
	if c, ok := e.opts.Registry.Get(kind); ok {
		if ex, ok := c.(connector.RedactionExemptions); ok {
			e.exempt[kind] = ex.RedactionExempt()
		}
		if rs, ok := c.(connector.RouteShaper); ok {
			routes = rs.RouteShape
		}
		if own, ok := c.(connector.OwnUnauthorized); ok {
			e.own[kind] = own
		}
	}
	ks := &kindServer{mcp: srv, tools: map[string]*compiledTool{}, modern: newModernResult(name, e.opts.Version)}
	for _, t := range tools {
		ct, err := compileTool(kind, t)
		if err != nil {
			return nil, err
		}
		ct.metrics = e.opts.Metrics.Tool(kind, t.Name)
		ct.routes = routes
		ct.handler = e.toolHandler(ct)
		ks.tools[t.Name] = ct
		ks.writes = ks.writes || t.Effect != connector.Read
		ct.advertised = mcpTool(t)
		ct.headerBound = len(mcp.ExtractParamHeaderBindings(&ct.advertised)) > 0
		srv.AddTool(ct.advertised, ct.handler)
	}
	ks.http = server.NewStreamableHTTPServer(srv, server.WithStateLess(true),
		server.WithStreamableHTTPLogger(e.mcpLog),
		// server/discover and an unsupported-version error name only
		// the versions erpgate speaks.
		server.WithStreamableHTTPProtocolVersions(protocolVersions...))
	return ks, nil
}

// warnAtMost logs mcp-go's lines at warning level at most: its
// transport's errors are about callers (a response nobody asked for, a
// connection that went away), which any caller can cause at will, so they
// must not raise an operator's error alerts. A panic it recovered ("panic
// in …") is a bug on the server and keeps its level.
type warnAtMost struct{ slog.Handler }

func (h warnAtMost) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > slog.LevelWarn && !strings.HasPrefix(r.Message, "panic") {
		r.Level = slog.LevelWarn
	}
	return h.Handler.Handle(ctx, r)
}

func (h warnAtMost) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnAtMost{h.Handler.WithAttrs(attrs)}
}

func (h warnAtMost) WithGroup(name string) slog.Handler { return warnAtMost{h.Handler.WithGroup(name)} }

func instructions(kind string) string {
	return "erpgate gives access to one " + kind + " ERP site as the signed-in user; the ERP's own permissions decide what is visible. " +
		"A tool that changes data never changes it at once: the user approves each change on erpgate's page first (the tool's answer says how), and a change is made once. " +
		"Every tool returns JSON (structuredContent, and the same JSON as text). A failed call returns an error with a stable code and a message saying what to change; " +
		"a failure never means that no records exist. Check important figures in the ERP before acting on them."
}

// Kinds returns the connector kinds the engine serves.
func (e *Engine) Kinds() []string { return e.opts.Registry.Kinds() }

// protocolVersions are the MCP protocol versions erpgate speaks, newest
// first. mcp-go speaks 2024-11-05 and 2025-03-26 too, but erpgate does
// not: 2025-03-26 has servers take JSON-RPC batches, which erpgate
// refuses (http.go).
var protocolVersions = []string{mcp.ProtocolVersion20260728, mcp.ProtocolVersion20251125, mcp.ProtocolVersion20250618}

// speaks reports whether erpgate speaks protocol version v.
func speaks(v string) bool { return slices.Contains(protocolVersions, v) }

// answerSpokenVersion answers an initialize that asks for a version
// erpgate does not speak (an older one, or none) with the latest version
// that has initialize, as MCP has a server answer a version it does not
// support; the client then decides whether it can go on.
func answerSpokenVersion(_ context.Context, _ any, _ *mcp.InitializeRequest, result *mcp.InitializeResult) {
	if result != nil && !speaks(result.ProtocolVersion) {
		result.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	}
}
