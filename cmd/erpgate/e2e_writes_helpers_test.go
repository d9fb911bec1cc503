package main

// What the end-to-end tests of writes with approval (docs/writes.md) share:
// an ERP under test (writeERP, one per connector), people's MCP clients
// over OAuth on each protocol path, the approval page driven as a person
// would (a cookie-keeping browser signing in at the ERP simulator), and
// readers of the pending actions, audit and usage tables.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e/signin"
)

// writesGatewayEnv is the gateway's environment for the writes suite:
// Alice, and the site, make more calls a minute than the default limits
// allow.
// Loopback is the gateway's trusted proxy, so that each person's browser
// comes from an address of its own (personBrowser).
var writesGatewayEnv = map[string]string{"ERPGATE_LIMIT_USER_PER_MINUTE": "10000", "ERPGATE_LIMIT_SITE_PER_MINUTE": "10000",
	"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"}

// writePerson is an ERP user: how erpgate names them (Frappe: e-mail;
// Acumatica: user@tenant) and what they type into the ERP's login form.
type writePerson struct {
	ERPUser string
	Login   map[string]string
}

// writeERP is one ERP under test: a gateway with the ERP's simulator
// registered as a site with OAuth, an API credential and a service token,
// its write tools enabled.
type writeERP struct {
	Kind string
	GW   *gateway
	Site devSite
	// Alice proposes and approves; Bob is another ERP user of the site;
	// Forbidden may read but the ERP does not let them create sales
	// orders.
	Alice, Bob, Forbidden writePerson
	// CreateTool creates a sales order; CreateArgs(n) are its arguments,
	// different for each n (seeded customer and item, n in a free-text
	// field), so each test has a proposal of its own.
	CreateTool string
	CreateArgs func(n int) map[string]any
	// RoundedArgs(n) create a sales order with RoundedPrice, a price the
	// ERP saves rounded to its decimal places: made, but not as approved.
	// It has more digits than a float64 holds: the error quotes it as
	// approved, exactly as the client sent it.
	RoundedArgs  func(n int) map[string]any
	RoundedPrice string
	// Orders counts the simulator's sales orders: every write the tests
	// expect, or expect not to happen, is one.
	Orders func() int
	// ERPRefusal is what the ERP's own refusal of Forbidden's write says,
	// which PERMISSION_DENIED must carry.
	ERPRefusal string
	// OrderWrites counts the requests that reached the ERP's sales order
	// endpoint (to tell the ERP's refusal from erpgate's).
	OrderWrites func() int
	// UpdateTool changes a seeded customer's e-mail address to the one
	// UpdateArgs is given; CustomerEmail reads it from the simulator.
	UpdateTool    string
	UpdateArgs    func(email string) map[string]any
	CustomerEmail func(t *testing.T) string
	// ReadBack checks, through a read tool as the caller and in the
	// simulator, the order a create returned.
	ReadBack func(t *testing.T, cs *mcp.ClientSession, created map[string]any, n int)
}

// enableWrites turns on every write tool of the site, without service
// writes, and waits until the gateway offers them.
func (e *writeERP) enableWrites(t *testing.T, serviceApprover string) {
	t.Helper()
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.GW.admin.enableWrites(context.Background(), e.Site.ID, writeToolNames(reg, e.Kind), serviceApprover); err != nil {
		t.Fatal(err)
	}
}

// offers reports whether cs is offered tool.
func offers(t *testing.T, cs *mcp.ClientSession, tool string) bool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name == tool {
			return true
		}
	}
	return false
}

// The ways a client meets an approval (docs/writes.md, "What the client
// sees").
const (
	// pathMRTR: protocol 2026-07-28, declaring URL elicitation; the SDK's
	// multi-round-trip middleware calls the elicitation handler and
	// retries.
	pathMRTR = "mrtr"
	// pathManualMRTR: the same protocol and capability with the SDK's
	// middleware off, so a test sees input_required and its requestState.
	pathManualMRTR = "mrtr-manual"
	// pathURLError: protocol 2025-11-25 declaring URL elicitation at
	// initialize: -32042.
	pathURLError = "url-elicitation-error"
	// pathPlain: a client that declares nothing: APPROVAL_REQUIRED.
	pathPlain = "plain"
	// pathPlainLegacy: the same on protocol 2025-11-25.
	pathPlainLegacy = "plain-2025-11-25"
)

// writeClient is a person's MCP client on one of the paths.
type writeClient struct {
	*oauthMCPClient
	mu sync.Mutex
	// onElicit answers the elicitations of pathMRTR; elicited records
	// them.
	onElicit func(*mcp.ElicitParams) *mcp.ElicitResult
	elicited []*mcp.ElicitParams
}

func (e *writeERP) connectWriter(t *testing.T, p writePerson, path string) *writeClient {
	t.Helper()
	wc := &writeClient{}
	opts := &mcp.ClientOptions{}
	var sopts *mcp.ClientSessionOptions
	declareURL := func() {
		opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			wc.mu.Lock()
			wc.elicited = append(wc.elicited, req.Params)
			answer := wc.onElicit
			wc.mu.Unlock()
			if answer == nil {
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}
			return answer(req.Params), nil
		}
	}
	switch path {
	case pathMRTR:
		declareURL()
	case pathManualMRTR:
		declareURL()
		opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	case pathURLError:
		declareURL()
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	case pathPlain:
	case pathPlainLegacy:
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	default:
		t.Fatalf("no client path %q", path)
	}
	wc.oauthMCPClient = connectOAuthWith(t, e.Site.MCPURL, p.Login, opts, sopts)
	waitFor(t, 10*time.Second, e.CreateTool+" offered to "+p.ERPUser, func() bool { return offers(t, wc.cs, e.CreateTool) })
	return wc
}

// callRaw calls a tool and returns the SDK's answer as it is.
func callRaw(cs *mcp.ClientSession, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	return cs.CallTool(ctx, params)
}

// approvalURLPattern finds an approval link in a message.
var approvalURLPattern = regexp.MustCompile(`https?://[^\s"'<>]+/approve/[0-9a-fA-F-]{36}(\.[A-Za-z0-9_-]{14})?`)

// approvalRequired checks that r is APPROVAL_REQUIRED whose message carries
// an approval link on the gateway, and returns the link.
func (e *writeERP) approvalRequired(t *testing.T, r toolResult) string {
	t.Helper()
	if !r.IsError || r.errorCode() != "APPROVAL_REQUIRED" {
		t.Fatalf("want APPROVAL_REQUIRED, got %s", r.Text)
	}
	link := approvalURLPattern.FindString(errorMessage(r))
	if !strings.HasPrefix(link, e.GW.URL+"/approve/") {
		t.Fatalf("APPROVAL_REQUIRED carries no approval link on %s: %s", e.GW.URL, r.Text)
	}
	return link
}

// urlElicitationRequired checks that err is the JSON-RPC error -32042 with
// one URL elicitation of the approval page, and returns it.
func (e *writeERP) urlElicitationRequired(t *testing.T, err error) *mcp.ElicitParams {
	t.Helper()
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("want JSON-RPC error %d, got %v", mcp.CodeURLElicitationRequired, err)
	}
	var data struct {
		Elicitations []*mcp.ElicitParams `json:"elicitations"`
	}
	if err := json.Unmarshal(rpcErr.Data, &data); err != nil || len(data.Elicitations) != 1 {
		t.Fatalf("-32042 data %s: %v", rpcErr.Data, err)
	}
	el := data.Elicitations[0]
	e.checkElicitation(t, el)
	return el
}

// checkElicitation: a URL-mode elicitation of the approval page whose id
// is the pending action's.
func (e *writeERP) checkElicitation(t *testing.T, el *mcp.ElicitParams) {
	t.Helper()
	if el.Mode != "url" || !strings.HasPrefix(el.URL, e.GW.URL+"/approve/") || el.Message == "" ||
		el.ElicitationID != actionID(t, el.URL) {
		t.Fatalf("elicitation %+v is not a URL elicitation of the approval page", el)
	}
}

// actionID is the pending action's id in an approval link, without the
// link's check value.
func actionID(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	id, _, _ := strings.Cut(u.Path[strings.LastIndexByte(u.Path, '/')+1:], ".")
	return id
}

// actionStatus is a pending action's status in the gateway's database.
func (e *writeERP) actionStatus(t *testing.T, link string) string {
	t.Helper()
	return queryString(t, e.GW.DBURL, `SELECT status FROM pending_actions WHERE id = $1`, actionID(t, link))
}

func queryString(t *testing.T, dbURL, sql string, args ...any) string {
	t.Helper()
	var s string
	queryRow(t, dbURL, sql, args, &s)
	return s
}

// decide signs in on the approval page at link as p, through the ERP's own
// login, and presses decision ("approve" or "reject"), as a person's
// browser would. It returns the last page shown.
func (e *writeERP) decide(t *testing.T, link string, p writePerson, decision string) signin.Page {
	t.Helper()
	return e.decideIn(t, e.browser(p), link, decision)
}

// browser is a person's browser, signed in nowhere yet, that never
// presses Withdraw approval unless told to (decideIn). Each comes from an
// address of its own, as people's browsers do: the suite signs in on the
// approval page more often than one source may (20 at once), and those
// limits have tests of their own.
func (e *writeERP) browser(p writePerson) *signin.Browser {
	b := signin.NewBrowser(e2eRedirectURI, p.Login)
	b.HC.Transport = forwardedFor(fmt.Sprintf("198.51.100.%d", browsers.Add(1)%250+1))
	return b
}

// browsers numbers the people's browsers.
var browsers atomic.Int32

// forwardedFor sends each request through the default transport with
// X-Forwarded-For naming its address.
type forwardedFor string

func (f forwardedFor) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", string(f))
	return http.DefaultTransport.RoundTrip(r)
}

// decideIn is decide in the browser b, which may already hold an approval
// session. decision "withdraw" presses Withdraw approval.
func (e *writeERP) decideIn(t *testing.T, b *signin.Browser, link, decision string) signin.Page {
	t.Helper()
	b.Decision = decision
	b.Avoid = func(action string) bool { return decision != "withdraw" && strings.HasSuffix(action, "/withdraw") }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The browser fills each form it meets (the page's sign-in, the ERP's
	// login and consent, the decision) until a page has none (or only
	// Withdraw approval): the decision's answer, or a refusal.
	_, err := b.Run(ctx, http.MethodGet, link, nil)
	if err == nil {
		t.Fatalf("the approval page sent the browser to the MCP client's redirect URI")
	}
	return b.LastPage()
}

// approve approves the action at link as p and checks the store says so.
func (e *writeERP) approve(t *testing.T, link string, p writePerson) {
	t.Helper()
	e.approveIn(t, e.browser(p), link, p)
}

// approveIn is approve in p's browser b, which may hold an approval
// session already (sign-ins are limited per source).
func (e *writeERP) approveIn(t *testing.T, b *signin.Browser, link string, p writePerson) {
	t.Helper()
	page := e.decideIn(t, b, link, "approve")
	if got := e.actionStatus(t, link); got != "approved" {
		t.Fatalf("after %s approved on the page, the action is %q; last page HTTP %d: %s", p.ERPUser, got, page.Status, pageText(page.Body))
	}
}

// noWrite runs f and fails when the ERP's sales orders changed meanwhile.
func (e *writeERP) noWrite(t *testing.T, what string, f func()) {
	t.Helper()
	before := e.Orders()
	f()
	if after := e.Orders(); after != before {
		t.Errorf("%s: the ERP has %d sales orders, %d before: a write happened", what, after, before)
	}
}

// oneWrite runs f and fails unless the ERP has exactly one more sales
// order afterwards.
func (e *writeERP) oneWrite(t *testing.T, what string, f func()) {
	t.Helper()
	before := e.Orders()
	f()
	if after := e.Orders(); after != before+1 {
		t.Errorf("%s: %d sales orders written, want exactly 1", what, after-before)
	}
}

// auditCount counts the site's admin_events of an action.
func (e *writeERP) auditCount(t *testing.T, action string) int {
	t.Helper()
	return queryInt(t, e.GW.DBURL, `SELECT count(*) FROM admin_events WHERE site_id = $1 AND action = $2`, e.Site.ID, action)
}

// usageCount counts the site's usage events of a stage of the approval.
func (e *writeERP) usageCount(t *testing.T, approval string) int {
	t.Helper()
	return queryInt(t, e.GW.DBURL, `SELECT count(*) FROM usage_events WHERE site_id = $1 AND approval = $2`, e.Site.ID, approval)
}
