package mcpengine

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/redact"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/platform/store/usage"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// writeERP is a connector with write tools whose Handler runs are
// counted: the one figure that says whether the ERP was written.
type writeERP struct {
	fakeERP
	runs, previews *atomic.Int64
}

func (writeERP) Kind() string { return "writeerp" }

func (w writeERP) Tools() []connector.Tool {
	out := schema.Object(schema.Prop("value", schema.Any("")))
	in := schema.Object(schema.Prop("name", schema.String("")).Required(), schema.Prop("qty", schema.Integer("")))
	write := func(name string, effect connector.Effect, op string) connector.Tool {
		return connector.Tool{Name: name, Description: "Test write.", Input: in, Output: out, Effect: effect,
			Preview: func(ctx context.Context, c *connector.Call) (*connector.Preview, error) {
				w.previews.Add(1)
				var a struct {
					Name string      `json:"name"`
					Qty  json.Number `json:"qty"`
				}
				if err := c.Decode(&a); err != nil {
					return nil, err
				}
				p := &connector.Preview{Operation: op, DocType: "Thing", Summary: op + " the thing " + a.Name,
					Fields: []connector.PreviewField{{Name: "name", Label: "Name", After: a.Name}}}
				if a.Name == "Banked" {
					// Fields the redaction rules cover (TestWritePreviewIsRedacted).
					p.Fields = append(p.Fields, connector.PreviewField{Name: "bank_account", Label: "Bank account",
						Before: "12-3456-7890123-00", HasBefore: true, After: "12-3456-0000000-00"})
					p.Tables = []connector.PreviewTable{{Title: "Payees", Columns: []string{"Payee", "IBAN"},
						Rows: [][]string{{"Acme", "NZ89370400440532013000"}}}}
				}
				if a.Name == "Carded" {
					// Values of a sensitive shape under names no rule
					// covers (TestWritePreviewValuesAreRedactedByShape).
					p.Fields = append(p.Fields, connector.PreviewField{Name: "note", Label: "Note",
						Before: "Paid by card 4111 1111 1111 1111.", HasBefore: true, After: "Paid by card 4111 1111 1111 1111.\nRefund to GB82 WEST 1234 5698 7654 32."})
					p.Tables = []connector.PreviewTable{{Title: "Payments", Columns: []string{"Payer", "Reference"},
						Rows: [][]string{{"Acme", "5555-5555-5555-4444"}}}}
				}
				return p, nil
			},
			Handler: func(ctx context.Context, c *connector.Call) (any, error) {
				if c.Approved == nil {
					return nil, errors.New("a write ran without an approval")
				}
				w.runs.Add(1)
				// Long enough for racing retries to overlap.
				time.Sleep(20 * time.Millisecond)
				var a struct {
					Name string      `json:"name"`
					Qty  json.Number `json:"qty"`
				}
				if err := c.Decode(&a); err != nil {
					return nil, err
				}
				if a.Name == "Lost" {
					// The ERP made the change, but its answer never came
					// back: the outbound transport's timeout
					// (TestWriteWhoseAnswerIsLostIsNotToldAsFailed).
					return nil, toolerr.Wrap(toolerr.UpstreamTimeout, context.DeadlineExceeded, "the ERP at %s did not answer in time", c.Site.BaseURL.Host)
				}
				if a.Name == "Busy" && w.runs.Load() == 1 {
					// The ERP refused the first run before running it
					// (Acumatica's 409 on a form a long operation holds).
					return nil, toolerr.New(toolerr.RateLimited, "the ERP is busy with a long operation on the form; nothing was written").
						WithRetryAfter(5 * time.Second).SaidByERP("A long operation is running.").WroteNothing()
				}
				if a.Name == "Throttled" {
					// RATE_LIMITED with no word on what was written (a
					// large answer waiting for room after the ERP took the
					// write): today's behaviour, the approval is spent.
					return nil, toolerr.New(toolerr.RateLimited, "this replica was busy with other large ERP answers")
				}
				if a.Name == "Lost in the database" {
					// The ERP's database connection broke during the
					// save: Frappe's 502 names pymysql's OperationalError,
					// which the redaction of error text withholds.
					return nil, toolerr.New(toolerr.UpstreamUnavailable, "the ERP failed with HTTP 502 (pymysql.err.OperationalError); nothing was returned, which does not mean there are no records")
				}
				return map[string]any{"value": map[string]any{"made": a.Name, "by": c.Approved.By, "action": c.Approved.ID}}, nil
			}}
	}
	return []connector.Tool{
		{Name: "read_thing", Description: "Test read.", Input: schema.Object(), Output: out, Effect: connector.Read,
			Handler: func(ctx context.Context, c *connector.Call) (any, error) { return map[string]any{"value": "read"}, nil }},
		write("make_thing", connector.Write, "create"),
		write("drop_thing", connector.Destructive, "submit"),
	}
}

// clock is the approval store's clock in tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type writeFixture struct {
	pool   *pgxpool.Pool
	engine *Engine
	store  *approval.Store
	clock  *clock
	site   connector.Site
	sink   *sink
	runs   *atomic.Int64
	// previews counts Preview runs.
	previews *atomic.Int64
	// logs is what the engine logged, from debug up.
	logs *observer.ObservedLogs
}

const (
	publicBase = "https://gw.example"
	jane       = "jane@acme.test"
	boss       = "boss@acme.test"
)

func newWriteFixture(t *testing.T) *writeFixture {
	t.Helper()
	return newWriteFixtureWith(t, nil)
}

// newWriteFixtureWith is newWriteFixture with adjust, when not nil,
// changing the engine's options before it is made.
func newWriteFixtureWith(t *testing.T, adjust func(*Options)) *writeFixture {
	t.Helper()
	f := &writeFixture{sink: &sink{}, runs: &atomic.Int64{}, previews: &atomic.Int64{}}
	base, _ := url.Parse("https://erp.acme.test")
	f.site = connector.Site{ID: uuid.New(), Slug: "acme", Kind: "writeerp", BaseURL: base}
	reg := connector.NewRegistry()
	reg.MustRegister(writeERP{runs: f.runs, previews: f.previews})
	core, logs := observer.New(zap.DebugLevel)
	f.logs = logs
	opts := Options{Registry: reg, Outbound: outbound.NewFactory(outbound.DefaultOptions()), Usage: f.sink, Budget: 10 * time.Second, Logger: zap.New(core)}
	f.store, f.clock, f.pool = withApprovalsPool(t, &opts, f.site)
	if adjust != nil {
		adjust(&opts)
	}
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.engine = e
	f.setLive(SiteLive{WriteTools: []string{"make_thing", "drop_thing"}, ServiceWrites: true, ServiceWriteApprover: boss})
	return f
}

// withApprovals gives opts an approval store on a new database holding
// site, with a clock the test moves, a state key and the public base URL.
func withApprovals(t *testing.T, opts *Options, site connector.Site) (*approval.Store, *clock) {
	store, c, _ := withApprovalsPool(t, opts, site)
	return store, c
}

func withApprovalsPool(t *testing.T, opts *Options, site connector.Site) (*approval.Store, *clock, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.NewPool(t)
	if _, err := pool.Exec(t.Context(), `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, $2, $3, $4, $2)`,
		site.ID, site.Slug, site.Kind, site.BaseURL.String()); err != nil {
		t.Fatal(err)
	}
	store, c := approval.NewStore(pool, nil), &clock{t: time.Now()}
	store.SetNow(c.now)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	opts.Approvals, opts.StateKeys, opts.PublicBaseURL, opts.LinkKey = store, [][]byte{key}, publicBase+"/", testLinkKey
	return store, c, pool
}

// testLinkKey tags the tests' approval links.
var testLinkKey = []byte("approval link key of the tests..")

// linkedAction is the action an approval link names: it must be on the
// public base URL and carry a check value under testLinkKey.
func linkedAction(t *testing.T, link string) (uuid.UUID, error) {
	t.Helper()
	raw, found := strings.CutPrefix(link, publicBase+"/approve/")
	id, tagged, ok := approval.ParseLinkID(raw, [][]byte{testLinkKey})
	if !found || !ok || !tagged {
		return uuid.Nil, fmt.Errorf("%q is not a tagged approval link on %s", link, publicBase)
	}
	return id, nil
}

func (f *writeFixture) setLive(s SiteLive) {
	f.engine.SetLive(Live{Sites: map[uuid.UUID]SiteLive{f.site.ID: s}})
}

func (f *writeFixture) serve(t *testing.T, s Session) string {
	t.Helper()
	s.Site = f.site
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.engine.ServeMCP(w, r, s) }))
	t.Cleanup(srv.Close)
	return srv.URL
}

// person is the MCP endpoint as an OAuth caller, ERP user user.
func (f *writeFixture) person(t *testing.T, user string) string {
	return f.serve(t, Session{Principal: connector.Principal{AuthType: "oauth", Subject: user}, ClientID: "client-1", LimitKey: "user:" + user})
}

// service is the MCP endpoint as service token id.
func (f *writeFixture) service(t *testing.T, id string) string {
	return f.serve(t, Session{Principal: connector.Principal{AuthType: "service_token"}, ClientID: id, LimitKey: "service:" + id})
}

// connect opens an official SDK client session: version "" is the SDK's
// latest (2026-07-28); elicit, when set, declares URL elicitation and
// answers it.
func connect(t *testing.T, endpoint, version string, elicit func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error)) *sdk.ClientSession {
	t.Helper()
	var opts *sdk.ClientOptions
	if elicit != nil {
		opts = &sdk.ClientOptions{ElicitationHandler: elicit,
			Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}}}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts)
	var so *sdk.ClientSessionOptions
	if version != "" {
		so = &sdk.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// approvalOf is the action id in an APPROVAL_REQUIRED envelope, checked
// against its message and approval_url.
func approvalOf(t *testing.T, res *sdk.CallToolResult, m map[string]any) uuid.UUID {
	t.Helper()
	if !res.IsError || errCode(m) != "APPROVAL_REQUIRED" {
		t.Fatalf("want APPROVAL_REQUIRED, got isError=%v %v", res.IsError, m)
	}
	e := m["error"].(map[string]any)
	link, _ := e["approval_url"].(string)
	id, err := linkedAction(t, link)
	if err != nil {
		t.Fatalf("approval_url %q: %v", link, err)
	}
	msg, _ := e["message"].(string)
	if !strings.Contains(msg, link) || !strings.Contains(msg, "same arguments") {
		t.Fatalf("the message does not carry the link and the instruction: %q", msg)
	}
	return id
}

func (f *writeFixture) decide(t *testing.T, id uuid.UUID, user string, approve bool) {
	t.Helper()
	if _, err := f.store.Decide(t.Context(), f.site.ID, id, user, approve); err != nil {
		t.Fatalf("decide %s as %s: %v", id, user, err)
	}
}

func (f *writeFixture) stages() []string {
	var out []string
	for _, e := range f.sink.all() {
		if e.Method == "tools/call" {
			out = append(out, e.Approval)
		}
	}
	return out
}

func equalStrings(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// A client that declares no URL elicitation gets APPROVAL_REQUIRED; once
// the person approved, the retry with the same arguments writes once; a
// replay is refused with what was done; the next call proposes afresh.
func TestWriteApprovalByToolErrorRunsOnce(t *testing.T) {
	f := newWriteFixture(t)
	cs := connect(t, f.person(t, jane), "", nil)
	args := map[string]any{"name": "Widget", "qty": 2}

	res, m := call(t, cs, "make_thing", args)
	id := approvalOf(t, res, m)
	a, err := f.store.Get(t.Context(), f.site.ID, id)
	if err != nil || a.Approver != jane || a.Preview.Summary != "create the thing Widget" || a.ClientID != "client-1" {
		t.Fatalf("stored action: %+v %v", a, err)
	}
	// Asked again before the approval: the same action, no new preview.
	res, m = call(t, cs, "make_thing", args)
	if again := approvalOf(t, res, m); again != id || f.previews.Load() != 1 {
		t.Fatalf("second ask: %s (want %s), %d previews", again, id, f.previews.Load())
	}
	f.decide(t, id, jane, true)
	// The same arguments, written in another order: the same call.
	res, m = call(t, cs, "make_thing", map[string]any{"qty": 2, "name": "Widget"})
	v, _ := m["value"].(map[string]any)
	if res.IsError || v["made"] != "Widget" || v["by"] != jane || v["action"] != id.String() {
		t.Fatalf("the approved retry: isError=%v %v", res.IsError, m)
	}
	res, m = call(t, cs, "make_thing", args)
	if !res.IsError || errCode(m) != "APPROVAL_INVALID" || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "already used") {
		t.Fatalf("replay: %v", m)
	}
	if got, _ := f.store.Get(t.Context(), f.site.ID, id); got.Status != approval.Executed || !strings.Contains(string(got.Result), "Widget") {
		t.Fatalf("after the write: %+v", got)
	}
	res, m = call(t, cs, "make_thing", args)
	if fresh := approvalOf(t, res, m); fresh == id {
		t.Fatal("after the replay was told, the same call must propose afresh")
	}
	if n := f.runs.Load(); n != 1 {
		t.Fatalf("%d writes, want 1", n)
	}
	if got, want := f.stages(), []string{"proposed", "proposed", "executed", "refused", "proposed"}; !equalStrings(got, want) {
		t.Fatalf("usage stages %v, want %v", got, want)
	}
	for _, e := range f.sink.all() {
		if e.Method == "tools/call" && e.Approval == "executed" && (e.Outcome != usage.Success || e.ERPUser != jane) {
			t.Fatalf("executed event %+v", e)
		}
	}
	var audit []string
	rows, err := f.pool.Query(t.Context(), `SELECT action || ' ' || actor_kind || ' ' || outcome || ' ' || reason FROM admin_events WHERE site_id = $1 ORDER BY id`, f.site.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		audit = append(audit, strings.TrimSpace(line))
	}
	want := []string{"write_proposed mcp_client success", "write_approved erp_user success", "write_executed mcp_client success",
		"write_refused mcp_client refused already_used", "write_proposed mcp_client success"}
	if !equalStrings(audit, want) {
		t.Fatalf("audit %q, want %q", audit, want)
	}
}

// The attacker's view of the retry: other arguments, another person, a
// rejected or expired approval, an approval id the model made up.
func TestWriteApprovalIsBoundToCallerToolAndArguments(t *testing.T) {
	f := newWriteFixture(t)
	janeCS := connect(t, f.person(t, jane), "", nil)
	malloryCS := connect(t, f.person(t, "mallory@acme.test"), "", nil)
	args := map[string]any{"name": "Widget"}
	res, m := call(t, janeCS, "make_thing", args)
	id := approvalOf(t, res, m)
	f.decide(t, id, jane, true)

	// Another person's identical call is a proposal of their own.
	res, m = call(t, malloryCS, "make_thing", args)
	if other := approvalOf(t, res, m); other == id {
		t.Fatal("another person's call found jane's approval")
	}
	// Other arguments, another tool, a forged "approved" argument.
	for _, c := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"make_thing", map[string]any{"name": "Widget", "qty": 1000}, "APPROVAL_REQUIRED"},
		{"drop_thing", args, "APPROVAL_REQUIRED"},
		{"make_thing", map[string]any{"name": "Widget", "approved": true}, "INVALID_ARGUMENT"},
		{"make_thing", map[string]any{"name": "Widget", "approval_id": id.String()}, "INVALID_ARGUMENT"},
	} {
		res, m := call(t, janeCS, c.tool, c.args)
		if errCode(m) != c.code {
			t.Fatalf("%s %v: %v, want %s", c.tool, c.args, m, c.code)
		}
		if c.code == "APPROVAL_REQUIRED" && approvalOf(t, res, m) == id {
			t.Fatalf("%s %v used the approval of other arguments", c.tool, c.args)
		}
	}
	if n := f.runs.Load(); n != 0 {
		t.Fatalf("%d writes, want none", n)
	}
	// jane's own retry still works: nothing above used her approval.
	if res, m := call(t, janeCS, "make_thing", args); res.IsError {
		t.Fatalf("jane's retry: %v", m)
	}

	// Rejected: told once, no write, then proposed afresh.
	res, m = call(t, janeCS, "make_thing", map[string]any{"name": "Gadget"})
	rejected := approvalOf(t, res, m)
	f.decide(t, rejected, jane, false)
	if _, m = call(t, janeCS, "make_thing", map[string]any{"name": "Gadget"}); errCode(m) != "APPROVAL_REJECTED" {
		t.Fatalf("after a rejection: %v", m)
	}
	res, m = call(t, janeCS, "make_thing", map[string]any{"name": "Gadget"})
	if approvalOf(t, res, m) == rejected {
		t.Fatal("a rejected action was asked again")
	}

	// Expired: approved in time, retried too late.
	res, m = call(t, janeCS, "make_thing", map[string]any{"name": "Late"})
	late := approvalOf(t, res, m)
	f.decide(t, late, jane, true)
	f.clock.add(approval.TTL)
	if _, m = call(t, janeCS, "make_thing", map[string]any{"name": "Late"}); errCode(m) != "APPROVAL_EXPIRED" {
		t.Fatalf("after the expiry: %v", m)
	}
	if n := f.runs.Load(); n != 1 {
		t.Fatalf("%d writes, want only jane's approved one", n)
	}
}

// personVia is the MCP endpoint as ERP user user through OAuth client
// client.
func (f *writeFixture) personVia(t *testing.T, user, client string) string {
	return f.serve(t, Session{Principal: connector.Principal{AuthType: "oauth", Subject: user}, ClientID: client, LimitKey: "user:" + user})
}

// An approval is bound to the AI client (OAuth client) that proposed the
// change: another client of the same person, on the same site, with the
// same arguments, neither uses it by retrying nor by presenting the first
// client's request state.
func TestWriteApprovalIsBoundToTheProposingClient(t *testing.T) {
	f := newWriteFixture(t)
	first := connect(t, f.personVia(t, jane, "client-1"), "", nil)
	other := connect(t, f.personVia(t, jane, "client-2"), "", nil)
	args := map[string]any{"name": "Widget"}
	res, m := call(t, first, "make_thing", args)
	id := approvalOf(t, res, m)
	f.decide(t, id, jane, true)

	// The other client's identical call is a proposal of its own.
	res, m = call(t, other, "make_thing", args)
	if !res.IsError || errCode(m) != "APPROVAL_REQUIRED" || approvalOf(t, res, m) == id {
		t.Fatalf("another client of jane's used the approval given to client-1: %v", m)
	}
	if n := f.runs.Load(); n != 0 {
		t.Fatalf("%d writes through another client, want none", n)
	}
	if got, _ := f.store.Get(t.Context(), f.site.ID, id); got.Status != approval.Approved {
		t.Fatalf("client-1's action is %s after the other client's call", got.Status)
	}

	// 2026-07-28: client-1's request state presented by client-2.
	meta := `"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + mcp.ProtocolVersion20260728 + `","` +
		mcp.MetaKeyClientCapabilities + `":{"elicitation":{"url":{}}}}`
	callWith := func(endpoint, extra string) map[string]any {
		t.Helper()
		resp, body := postModern(t, endpoint, "tools/call", `{"name":"make_thing","arguments":{"name":"Gadget"}`+extra+`,`+meta+`}`,
			map[string]string{mcp.HeaderName: "make_thing"})
		return decodeReply(t, resp, body)
	}
	firstURL, otherURL := f.personVia(t, jane, "client-1"), f.personVia(t, jane, "client-2")
	r, _ := callWith(firstURL, "")["result"].(map[string]any)
	state, _ := r["requestState"].(string)
	in, _ := r["inputRequests"].(map[string]any)["approval"].(map[string]any)
	gadget, _ := uuid.Parse(in["params"].(map[string]any)["elicitationId"].(string))
	f.decide(t, gadget, jane, true)
	withState := `,"inputResponses":{"approval":{"action":"accept"}},"requestState":"` + state + `"`
	reply := callWith(otherURL, withState)
	if errCode(structured(reply)) != "APPROVAL_INVALID" {
		t.Fatalf("client-2 with client-1's request state: %v", reply)
	}
	if msg, _ := structured(reply)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "another AI client") {
		t.Fatalf("the refusal does not say the approval belongs to another client: %q", msg)
	}
	if n := f.runs.Load(); n != 0 {
		t.Fatalf("%d writes through another client, want none", n)
	}

	// The proposing client's own retries still write, once each.
	if res, m := call(t, first, "make_thing", args); res.IsError {
		t.Fatalf("client-1's retry: %v", m)
	}
	if m := callWith(firstURL, withState); errCode(structured(m)) != "" {
		t.Fatalf("client-1's resumed request: %v", m)
	}
	if n := f.runs.Load(); n != 2 {
		t.Fatalf("%d writes, want client-1's two", n)
	}
}

// An approval its approver withdrew before the retry: the retry is told
// the approval was withdrawn and nothing was written, once; the same call
// then proposes afresh. The same through a 2026-07-28 request state.
func TestWriteWithdrawnApprovalWritesNothing(t *testing.T) {
	f := newWriteFixture(t)
	cs := connect(t, f.person(t, jane), "", nil)
	args := map[string]any{"name": "Widget"}
	res, m := call(t, cs, "make_thing", args)
	id := approvalOf(t, res, m)
	f.decide(t, id, jane, true)
	if _, err := f.store.Withdraw(t.Context(), f.site.ID, id, jane); err != nil {
		t.Fatal(err)
	}
	res, m = call(t, cs, "make_thing", args)
	text := res.Content[0].(*sdk.TextContent).Text
	if !res.IsError || errCode(m) != "APPROVAL_REJECTED" || !strings.Contains(text, jane+" withdrew the approval") || !strings.Contains(text, "nothing was written") {
		t.Fatalf("the retry after the withdrawal: %s", text)
	}
	res, m = call(t, cs, "make_thing", args)
	if fresh := approvalOf(t, res, m); fresh == id {
		t.Fatal("after the withdrawal was told, the same call must propose afresh")
	}

	meta := `"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + mcp.ProtocolVersion20260728 + `","` +
		mcp.MetaKeyClientCapabilities + `":{"elicitation":{"url":{}}}}`
	endpoint := f.person(t, jane)
	callWith := func(extra string) map[string]any {
		t.Helper()
		resp, body := postModern(t, endpoint, "tools/call", `{"name":"make_thing","arguments":{"name":"Gadget"}`+extra+`,`+meta+`}`,
			map[string]string{mcp.HeaderName: "make_thing"})
		return decodeReply(t, resp, body)
	}
	r, _ := callWith("")["result"].(map[string]any)
	state, _ := r["requestState"].(string)
	in, _ := r["inputRequests"].(map[string]any)["approval"].(map[string]any)
	gadget, _ := uuid.Parse(in["params"].(map[string]any)["elicitationId"].(string))
	f.decide(t, gadget, jane, true)
	if _, err := f.store.Withdraw(t.Context(), f.site.ID, gadget, jane); err != nil {
		t.Fatal(err)
	}
	reply := structured(callWith(`,"inputResponses":{"approval":{"action":"accept"}},"requestState":"` + state + `"`))
	if msg, _ := reply["error"].(map[string]any)["message"].(string); errCode(reply) != "APPROVAL_REJECTED" || !strings.Contains(msg, "withdrew the approval") {
		t.Fatalf("the resumed request after the withdrawal: %v", reply)
	}
	// A service token's write, withdrawn by the approver the site named.
	svc := connect(t, f.service(t, "tok-1"), "", nil)
	res, m = call(t, svc, "make_thing", map[string]any{"name": "Bot"})
	bot := approvalOf(t, res, m)
	f.decide(t, bot, boss, true)
	if _, err := f.store.Withdraw(t.Context(), f.site.ID, bot, jane); !errors.Is(err, approval.ErrWrongUser) {
		t.Fatalf("someone other than the approver withdrew: %v", err)
	}
	if _, err := f.store.Withdraw(t.Context(), f.site.ID, bot, boss); err != nil {
		t.Fatal(err)
	}
	if res, m = call(t, svc, "make_thing", map[string]any{"name": "Bot"}); errCode(m) != "APPROVAL_REJECTED" ||
		!strings.Contains(res.Content[0].(*sdk.TextContent).Text, boss+" withdrew the approval") {
		t.Fatalf("the service token's retry after the withdrawal: %v", m)
	}
	if n := f.runs.Load(); n != 0 {
		t.Fatalf("%d writes, want none", n)
	}
	if got, want := f.stages(), []string{"proposed", "refused", "proposed", "proposed", "refused", "proposed", "refused"}; !equalStrings(got, want) {
		t.Fatalf("usage stages %v, want %v", got, want)
	}
}

// Two (here six) retries racing after one approval make one write; the
// others are told the approval was used (or, arriving after one was told,
// are asked to approve afresh).
func TestWriteRacingRetriesWriteOnce(t *testing.T) {
	f := newWriteFixture(t)
	endpoint := f.person(t, jane)
	cs := connect(t, endpoint, "", nil)
	args := map[string]any{"name": "Widget"}
	res, m := call(t, cs, "make_thing", args)
	f.decide(t, approvalOf(t, res, m), jane, true)

	const n = 6
	sessions := make([]*sdk.ClientSession, n)
	for i := range sessions {
		sessions[i] = connect(t, endpoint, "", nil)
	}
	var (
		wg          sync.WaitGroup
		start       = make(chan struct{})
		ok, refused atomic.Int64
	)
	for _, s := range sessions {
		wg.Go(func() {
			<-start
			res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "make_thing", Arguments: args})
			if err != nil {
				t.Errorf("call: %v", err)
				return
			}
			var m map[string]any
			_ = json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &m)
			switch {
			case !res.IsError:
				ok.Add(1)
			case errCode(m) == "APPROVAL_INVALID" || errCode(m) == "APPROVAL_REQUIRED":
				// Used by another call; or, once one was told so, a
				// proposal afresh: never a second write.
				refused.Add(1)
			default:
				t.Errorf("racing retry: %v", m)
			}
		})
	}
	close(start)
	wg.Wait()
	if ok.Load() != 1 || refused.Load() != n-1 || f.runs.Load() != 1 {
		t.Fatalf("%d succeeded, %d refused, %d writes; want 1, %d, 1", ok.Load(), refused.Load(), f.runs.Load(), n-1)
	}
}

// Service tokens write only when the site allows it, each write approved
// by the named ERP user; writes are off unless enabled tool by tool.
func TestWritePolicy(t *testing.T) {
	f := newWriteFixture(t)
	svc := connect(t, f.service(t, "tok-1"), "", nil)
	res, m := call(t, svc, "make_thing", map[string]any{"name": "Bot"})
	id := approvalOf(t, res, m)
	if _, err := f.store.Decide(t.Context(), f.site.ID, id, jane, true); !errors.Is(err, approval.ErrWrongUser) {
		t.Fatalf("another ERP user approved a service write: %v", err)
	}
	f.decide(t, id, boss, true)
	if res, m = call(t, svc, "make_thing", map[string]any{"name": "Bot"}); res.IsError {
		t.Fatalf("approved service write: %v", m)
	}
	// Another token does not share the first one's approvals.
	other := connect(t, f.service(t, "tok-2"), "", nil)
	res, m = call(t, other, "make_thing", map[string]any{"name": "Bot"})
	approvalOf(t, res, m)

	for name, s := range map[string]SiteLive{
		"service writes off": {WriteTools: []string{"make_thing", "drop_thing"}, ServiceWriteApprover: boss},
		"no approver":        {WriteTools: []string{"make_thing", "drop_thing"}, ServiceWrites: true},
	} {
		f.setLive(s)
		res, m := call(t, svc, "make_thing", map[string]any{"name": "Refused"})
		text := res.Content[0].(*sdk.TextContent).Text
		if errCode(m) != "PERMISSION_DENIED" || !strings.Contains(text, "service_writes") {
			t.Fatalf("%s: %v", name, m)
		}
	}

	// Only make_thing enabled: drop_thing is neither listed nor callable.
	f.setLive(SiteLive{WriteTools: []string{"make_thing"}})
	person := connect(t, f.person(t, jane), "", nil)
	listed := map[string]*sdk.Tool{}
	list, err := person.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		listed[tl.Name] = tl
	}
	if listed["drop_thing"] != nil || listed["make_thing"] == nil || listed["make_thing"].Annotations.ReadOnlyHint {
		t.Fatalf("listed: %v", list.Tools)
	}
	previews := f.previews.Load()
	if _, m := call(t, person, "drop_thing", map[string]any{"name": "X"}); errCode(m) != "PERMISSION_DENIED" {
		t.Fatalf("a tool not in write_tools: %v", m)
	}
	// No settings at all: writes are off.
	f.engine.SetLive(Live{})
	list, _ = person.ListTools(context.Background(), nil)
	for _, tl := range list.Tools {
		if tl.Name != "read_thing" {
			t.Fatalf("with no settings, %s is listed", tl.Name)
		}
	}
	if _, m := call(t, person, "make_thing", map[string]any{"name": "X"}); errCode(m) != "PERMISSION_DENIED" {
		t.Fatalf("writes off by default: %v", m)
	}
	if f.previews.Load() != previews || f.runs.Load() != 1 {
		t.Fatalf("a refused tool ran: %d previews (want %d), %d writes", f.previews.Load(), previews, f.runs.Load())
	}
}

// A client before 2026-07-28 that declared URL elicitation at initialize
// gets -32042, on both the direct path and mcp-go's; the retry after the
// approval writes once.
func TestWriteURLElicitationRequiredBeforeModern(t *testing.T) {
	f := newWriteFixture(t)
	endpoint := f.person(t, jane)
	cs := connect(t, endpoint, "2025-11-25", func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "accept"}, nil
	})
	args := map[string]any{"name": "Widget"}
	_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "make_thing", Arguments: args})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeURLElicitationRequired {
		t.Fatalf("want -32042, got %v", err)
	}
	var data struct {
		Elicitations []struct {
			Mode, URL, ElicitationID, Message string
		}
	}
	if err := json.Unmarshal(rpcErr.Data, &data); err != nil || len(data.Elicitations) != 1 {
		t.Fatalf("data %s: %v", rpcErr.Data, err)
	}
	el := data.Elicitations[0]
	id, err := linkedAction(t, el.URL)
	if el.Mode != "url" || err != nil || id.String() != el.ElicitationID {
		t.Fatalf("elicitation %+v", el)
	}
	f.decide(t, id, jane, true)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "make_thing", Arguments: args})
	if err != nil || res.IsError || f.runs.Load() != 1 {
		t.Fatalf("approved retry: %v %v, %d writes", res, err, f.runs.Load())
	}

	// By hand: initialize issues the capability session id; a call with
	// it, through mcp-go's transport (a _meta makes it go there), gets
	// -32042 too; a forged or missing one gets the tool error.
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"x","version":"1"},"capabilities":{"elicitation":{"url":{}}}}}`
	resp, _ := rawPost(t, endpoint, "", init)
	session := resp.Header.Get(HeaderSessionID)
	if session == "" {
		t.Fatal("initialize issued no session id")
	}
	viaMCPGo := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"make_thing","arguments":{"name":"Other"},"_meta":{"progressToken":5}}}`
	direct := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"make_thing","arguments":{"name":"Other"}}}`
	for _, body := range []string{viaMCPGo, direct} {
		_, m := rawPost(t, endpoint, session, body)
		if e, _ := m["error"].(map[string]any); e == nil || e["code"] != json.Number("-32042") {
			t.Fatalf("with the session id: %v", m)
		}
	}
	// A request state on this protocol reaches the tool's chain too
	// (through mcp-go's HandleMessage), and a forged one is refused.
	forged := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"make_thing","arguments":{"name":"Other"},"requestState":"forged"}}`
	if _, m := rawPost(t, endpoint, session, forged); errCode(structured(m)) != "APPROVAL_INVALID" {
		t.Fatalf("a forged request state: %v", m)
	}
	tampered := []byte(session)
	tampered[len(tampered)/2] ^= 1
	for _, s := range []string{"", "mcp-session-" + uuid.NewString(), string(tampered)} {
		_, m := rawPost(t, endpoint, s, direct)
		if errCode(structured(m)) != "APPROVAL_REQUIRED" {
			t.Fatalf("session id %q: %v", s, m)
		}
	}
	// A client cannot end the session (TestAClientCannotEndItsSession).
	req, _ := http.NewRequest(http.MethodDelete, endpoint, nil)
	req.Header.Set(HeaderSessionID, session)
	req.Header.Set(mcp.HeaderProtocolVersion, "2025-11-25")
	dresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = dresp.Body.Close()
	if dresp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("DELETE: %d", dresp.StatusCode)
	}
	if n := f.runs.Load(); n != 1 {
		t.Fatalf("%d writes, want 1", n)
	}
}

// rawPost sends one message of protocol 2025-11-25 with session id s.
func rawPost(t *testing.T, endpoint, s, body string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, "2025-11-25")
	if s != "" {
		req.Header.Set(HeaderSessionID, s)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, decodeReply(t, resp, data)
}

// structured is a reply's structuredContent.
func structured(m map[string]any) map[string]any {
	res, _ := m["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	return sc
}

func decodeReply(t *testing.T, resp *http.Response, data []byte) map[string]any {
	t.Helper()
	msgs := sseMessages(t, resp, data)
	if len(msgs) == 0 {
		t.Fatalf("no reply: %s", data)
	}
	// Numbers as written: re-decode the last message.
	raw, _ := json.Marshal(msgs[len(msgs)-1])
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	_ = dec.Decode(&m)
	return m
}

// A 2026-07-28 client that declares URL elicitation gets input_required;
// the SDK shows the page (here: the person approves in the store) and
// resumes the request, which writes once. A declined elicitation writes
// nothing.
func TestWriteMultiRoundTrip(t *testing.T) {
	f := newWriteFixture(t)
	endpoint := f.person(t, jane)
	var asked []string
	cs := connect(t, endpoint, "", func(ctx context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		asked = append(asked, r.Params.URL)
		id, err := linkedAction(t, r.Params.URL)
		if err != nil || r.Params.Mode != "url" || r.Params.ElicitationID != id.String() {
			return nil, errors.New("not an approval elicitation")
		}
		f.decide(t, id, jane, true)
		return &sdk.ElicitResult{Action: "accept"}, nil
	})
	res, m := call(t, cs, "make_thing", map[string]any{"name": "Widget"})
	if v, _ := m["value"].(map[string]any); res.IsError || v["made"] != "Widget" || len(asked) != 1 {
		t.Fatalf("resumed: isError=%v %v, asked %v", res.IsError, m, asked)
	}
	if n := f.runs.Load(); n != 1 {
		t.Fatalf("%d writes, want 1", n)
	}

	declining := connect(t, endpoint, "", func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "decline"}, nil
	})
	if _, m := call(t, declining, "make_thing", map[string]any{"name": "Declined"}); errCode(m) != "APPROVAL_REJECTED" {
		t.Fatalf("declined: %v", m)
	}
	if n := f.runs.Load(); n != 1 {
		t.Fatalf("%d writes after a decline, want 1", n)
	}
}

// The request state of 2026-07-28 cannot be forged, tampered with, moved
// to another caller or other arguments, replayed, or used after expiry.
func TestWriteRequestStateAttacks(t *testing.T) {
	f := newWriteFixture(t)
	janeURL, malloryURL := f.person(t, jane), f.person(t, "mallory@acme.test")
	meta := `"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + mcp.ProtocolVersion20260728 + `","` +
		mcp.MetaKeyClientCapabilities + `":{"elicitation":{"url":{}}}}`
	callWith := func(endpoint, args, extra string) map[string]any {
		t.Helper()
		resp, body := postModern(t, endpoint, "tools/call", `{"name":"make_thing","arguments":`+args+extra+`,`+meta+`}`,
			map[string]string{mcp.HeaderName: "make_thing"})
		return decodeReply(t, resp, body)
	}
	codeOf := func(m map[string]any) string { return errCode(structured(m)) }
	widget := `{"name":"Widget"}`
	first := callWith(janeURL, widget, "")
	res, _ := first["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	inputs, _ := res["inputRequests"].(map[string]any)
	if res["resultType"] != "input_required" || state == "" || inputs["approval"] == nil {
		t.Fatalf("first call: %v", first)
	}
	accept := `,"inputResponses":{"approval":{"action":"accept"}}`
	withState := func(s string) string { return accept + `,"requestState":"` + s + `"` }
	tampered := []byte(state)
	tampered[len(tampered)/2] ^= 1

	for name, c := range map[string]struct {
		endpoint, args, extra, code string
	}{
		"forged":           {janeURL, widget, withState("forged"), "APPROVAL_INVALID"},
		"tampered":         {janeURL, widget, withState(string(tampered)), "APPROVAL_INVALID"},
		"another person":   {malloryURL, widget, withState(state), "APPROVAL_INVALID"},
		"other arguments":  {janeURL, `{"name":"Widget","qty":9}`, withState(state), "APPROVAL_INVALID"},
		"not yet approved": {janeURL, widget, withState(state), ""},
	} {
		m := callWith(c.endpoint, c.args, c.extra)
		if got := codeOf(m); got != c.code {
			t.Fatalf("%s: %v, want %q", name, m, c.code)
		}
		if c.code == "" {
			// Still proposed: asked again, with the same action.
			r, _ := m["result"].(map[string]any)
			if r["resultType"] != "input_required" {
				t.Fatalf("%s: %v", name, m)
			}
		}
	}
	if n := f.runs.Load(); n != 0 {
		t.Fatalf("%d writes before the approval", n)
	}
	var id uuid.UUID
	if in, _ := inputs["approval"].(map[string]any); in != nil {
		p, _ := in["params"].(map[string]any)
		id, _ = uuid.Parse(p["elicitationId"].(string))
	}
	f.decide(t, id, jane, true)
	if m := callWith(janeURL, widget, withState(state)); codeOf(m) != "" {
		t.Fatalf("approved: %v", m)
	}
	if m := callWith(janeURL, widget, withState(state)); codeOf(m) != "APPROVAL_INVALID" {
		t.Fatalf("replayed state: %v", m)
	}
	// Expiry: a new proposal, approved, its state used too late.
	second := callWith(janeURL, `{"name":"Late"}`, "")
	r2, _ := second["result"].(map[string]any)
	state2, _ := r2["requestState"].(string)
	in2, _ := r2["inputRequests"].(map[string]any)["approval"].(map[string]any)
	id2, _ := uuid.Parse(in2["params"].(map[string]any)["elicitationId"].(string))
	f.decide(t, id2, jane, true)
	f.clock.add(approval.TTL)
	if m := callWith(janeURL, `{"name":"Late"}`, withState(state2)); codeOf(m) != "APPROVAL_EXPIRED" {
		t.Fatalf("expired state: %v", m)
	}
	if n := f.runs.Load(); n != 1 {
		t.Fatalf("%d writes, want 1", n)
	}
}

// TestWritePreviewIsRedacted: a preview passes through the site's
// redaction rules before it is stored and shown, as a result does: the
// values of fields (and table columns) the rules cover never reach
// pending_actions or the approval page.
func TestWritePreviewIsRedacted(t *testing.T) {
	f := newWriteFixture(t)
	cs := connect(t, f.person(t, jane), "", nil)
	res, m := call(t, cs, "make_thing", map[string]any{"name": "Banked"})
	a, err := f.store.Get(t.Context(), f.site.ID, approvalOf(t, res, m))
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Preview.Fields[0]; got.After != "Banked" {
		t.Fatalf("a field no rule covers was changed: %+v", got)
	}
	if got := a.Preview.Fields[1]; got.Before != redact.Placeholder || got.After != redact.Placeholder || !got.HasBefore {
		t.Fatalf("bank_account stored as %+v", got)
	}
	if row := a.Preview.Tables[0].Rows[0]; row[0] != "Acme" || row[1] != redact.Placeholder {
		t.Fatalf("the IBAN column stored as %v", row)
	}
	var raw string
	if err := f.pool.QueryRow(t.Context(), `SELECT preview::text FROM pending_actions WHERE id = $1`, a.ID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"7890123", "0000000", "NZ89370400440532013000"} {
		if strings.Contains(raw, secret) {
			t.Fatalf("pending_actions holds %s: %s", secret, raw)
		}
	}
}

// An approved write whose answer from the ERP is lost (a timeout, a broken
// connection, an answer that cannot be read) may have been made: it is
// never told as a failure to retry, neither when it happens nor to a
// replay, since proposing it afresh would make it twice.
//
// An answer naming a database error (its text withheld by the redaction of
// error text) is told so too: before, the whole message was withheld,
// the warning with it, and the model was told only of a database error.
func TestWriteWhoseAnswerIsLostIsNotToldAsFailed(t *testing.T) {
	for name, code := range map[string]string{"Lost": "UPSTREAM_TIMEOUT", "Lost in the database": "UPSTREAM_UNAVAILABLE"} {
		t.Run(name, func(t *testing.T) { writeWhoseAnswerIsLost(t, name, code) })
	}
}

func writeWhoseAnswerIsLost(t *testing.T, name, code string) {
	f := newWriteFixture(t)
	cs := connect(t, f.person(t, jane), "", nil)
	args := map[string]any{"name": name}
	res, m := call(t, cs, "make_thing", args)
	id := approvalOf(t, res, m)
	f.decide(t, id, jane, true)

	res, m = call(t, cs, "make_thing", args)
	e, _ := m["error"].(map[string]any)
	text := res.Content[0].(*sdk.TextContent).Text
	if !res.IsError || errCode(m) != code || e["retryable"] != false || !strings.Contains(text, "Check the ERP") {
		t.Fatalf("the write whose answer was lost: %s", text)
	}
	res, m = call(t, cs, "make_thing", args)
	text = res.Content[0].(*sdk.TextContent).Text
	if errCode(m) != "APPROVAL_INVALID" || !strings.Contains(text, "Check the ERP") || strings.Contains(text, "propose it afresh") {
		t.Fatalf("the replay: %s", text)
	}
	a, err := f.store.Get(t.Context(), f.site.ID, id)
	if err != nil || !a.OutcomeUnknown() {
		t.Fatalf("stored action %+v %v: want its outcome unknown", a, err)
	}
	if n := f.runs.Load(); n != 1 {
		t.Fatalf("%d writes, want 1", n)
	}
}

// The site's owner names another approver of service-token writes: the
// one they replaced can no longer approve what a token proposed before,
// and the token's call is proposed afresh, to the new approver.
func TestWriteServiceApproverReplacedApprovesNothing(t *testing.T) {
	f := newWriteFixture(t)
	svc := connect(t, f.service(t, "tok-1"), "", nil)
	args := map[string]any{"name": "Bot"}
	res, m := call(t, svc, "make_thing", args)
	id := approvalOf(t, res, m)

	const successor = "successor@acme.test"
	f.setLive(SiteLive{WriteTools: []string{"make_thing", "drop_thing"}, ServiceWrites: true, ServiceWriteApprover: successor})
	// The former approver still holds the link (and a session on the
	// page), and approves after being replaced.
	if _, err := f.store.Decide(t.Context(), f.site.ID, id, boss, true); err != nil {
		t.Fatal(err)
	}
	res, m = call(t, svc, "make_thing", args)
	if n := f.runs.Load(); n != 0 {
		t.Fatalf("the replaced approver's approval made %d writes: %v", n, m)
	}
	fresh := approvalOf(t, res, m)
	a, err := f.store.Get(t.Context(), f.site.ID, fresh)
	if fresh == id || err != nil || a.Approver != successor {
		t.Fatalf("after the approver changed: action %s (was %s), approver %q %v", fresh, id, a.Approver, err)
	}
	f.decide(t, fresh, successor, true)
	if res, m = call(t, svc, "make_thing", args); res.IsError || f.runs.Load() != 1 {
		t.Fatalf("the new approver's approval: %v, %d writes", m, f.runs.Load())
	}
}

// A preview's values pass through the value rules a result's do: a card
// number or an IBAN in a note, or as a cell of a column no rule names, is
// never stored in pending_actions nor shown.
func TestWritePreviewValuesAreRedactedByShape(t *testing.T) {
	f := newWriteFixture(t)
	cs := connect(t, f.person(t, jane), "", nil)
	res, m := call(t, cs, "make_thing", map[string]any{"name": "Carded"})
	id := approvalOf(t, res, m)
	var raw string
	if err := f.pool.QueryRow(t.Context(), `SELECT preview::text FROM pending_actions WHERE id = $1`, id).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"4111 1111 1111 1111", "GB82 WEST", "5555-5555-5555-4444"} {
		if strings.Contains(raw, secret) {
			t.Errorf("pending_actions holds %s: %s", secret, raw)
		}
	}
	a, err := f.store.Get(t.Context(), f.site.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Preview.Fields[1]; !strings.HasPrefix(got.Before, "Paid by card ") || !strings.Contains(got.After, redact.Placeholder) {
		t.Errorf("the note stored as %+v", got)
	}
	if row := a.Preview.Tables[0].Rows[0]; row[0] != "Acme" || row[1] != redact.Placeholder {
		t.Errorf("the payments row stored as %v", row)
	}
}

// The mark of an unknown outcome keeps its cause: a write cancelled by
// its client is still recorded as cancelled.
func TestUnknownOutcomeKeepsItsCause(t *testing.T) {
	err := toolerr.Wrap(toolerr.UpstreamTimeout, unknownOutcome{context.Canceled}, "lost")
	var u unknownOutcome
	if !errors.Is(err, context.Canceled) || !errors.As(err, &u) {
		t.Fatalf("%v: cause or mark lost", err)
	}
}

// A service token is offered the read-only catalogue unless the site lets
// service tokens write (service_writes with an approver): a write tool it
// may never call is not listed to it, though the same site lists it to
// people.
func TestServiceCatalogueIsReadOnlyUnlessServiceWritesAreOn(t *testing.T) {
	f := newWriteFixture(t)
	svc := connect(t, f.service(t, "tok-1"), "", nil)
	person := connect(t, f.person(t, jane), "", nil)
	names := func(cs *sdk.ClientSession) string {
		t.Helper()
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range list.Tools {
			out = append(out, tl.Name)
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	writes := []string{"make_thing", "drop_thing"}
	for name, s := range map[string]SiteLive{
		"service writes off": {WriteTools: writes, ServiceWriteApprover: boss},
		"no approver":        {WriteTools: writes, ServiceWrites: true},
	} {
		f.setLive(s)
		if got := names(svc); got != "read_thing" {
			t.Errorf("%s: the service token is offered %s, want only read_thing", name, got)
		}
		if got := names(person); got != "drop_thing,make_thing,read_thing" {
			t.Errorf("%s: a person is offered %s", name, got)
		}
		res, m := call(t, svc, "make_thing", map[string]any{"name": "Refused"})
		if text := res.Content[0].(*sdk.TextContent).Text; errCode(m) != "PERMISSION_DENIED" || !strings.Contains(text, "service_writes") {
			t.Errorf("%s: calling a write anyway: %v", name, m)
		}
	}
	f.setLive(SiteLive{WriteTools: writes, ServiceWrites: true, ServiceWriteApprover: boss})
	if got := names(svc); got != "drop_thing,make_thing,read_thing" {
		t.Errorf("with service writes on, the service token is offered %s", got)
	}
	if f.previews.Load() != 0 || f.runs.Load() != 0 {
		t.Fatalf("a refused write ran: %d previews, %d writes", f.previews.Load(), f.runs.Load())
	}
}

// TestApprovalRequiredResultMatchesTheOutputSchema: the APPROVAL_REQUIRED
// error result, which carries the approval page's address, validates
// against the output schema tools/list advertises for the tool (clients
// such as the TypeScript SDK check structuredContent against it, errors
// included, and fail the call when it does not).
func TestApprovalRequiredResultMatchesTheOutputSchema(t *testing.T) {
	f := newWriteFixture(t)
	cs := connect(t, f.person(t, jane), "", nil)
	res, m := call(t, cs, "make_thing", map[string]any{"name": "Widget", "qty": 2})
	approvalOf(t, res, m)
	checkAdvertisedOutput(t, cs, "make_thing", res)
}

// checkAdvertisedOutput validates a result's structuredContent against the
// output schema tools/list advertises for tool (JSON Schema 2020-12, the
// full validator), and checks that the text block is the same JSON.
func checkAdvertisedOutput(t *testing.T, cs *sdk.ClientSession, tool string, res *sdk.CallToolResult) {
	t.Helper()
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var advertised any
	for _, tl := range list.Tools {
		if tl.Name == tool {
			advertised = tl.OutputSchema
		}
	}
	if advertised == nil {
		t.Fatalf("%s: no output schema advertised", tool)
	}
	raw, err := json.Marshal(advertised)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.CompileJSON(raw, "erpgate:///out.json")
	if err != nil {
		t.Fatalf("%s: the advertised output schema does not compile: %v", tool, err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s: text block is not JSON: %v", tool, err)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s: the result does not match the advertised output schema: %v\n%s", tool, err, text)
	}
	structured, _ := json.Marshal(res.StructuredContent)
	var a, b any
	_ = json.Unmarshal(structured, &a)
	_ = json.Unmarshal([]byte(text), &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: text and structuredContent differ:\n%s\n%s", tool, text, structured)
	}
}

// TestModernRequestsGetNoSessionID: protocol 2026-07-28 has no sessions
// (a modern message never carries or mints a session id) and no
// initialize; an initialize sent in that era is refused, and its reply
// carries no capability session id. One sent before 2026-07-28 gets one.
func TestModernRequestsGetNoSessionID(t *testing.T) {
	f := newWriteFixture(t)
	u := f.person(t, jane)
	modern := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"x","version":"1"},` + modernMeta + `}}`
	for name, headers := range map[string]map[string]string{
		"header and _meta": {mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: "initialize"},
		"_meta only":       {},
	} {
		resp, body := postMCP(t, u, modern, headers)
		if resp.StatusCode == http.StatusOK || resp.Header.Get(HeaderSessionID) != "" {
			t.Errorf("%s: %d, session id %q: %s", name, resp.StatusCode, resp.Header.Get(HeaderSessionID), body)
		}
	}
	legacy := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	if resp, body := postMCP(t, u, legacy, nil); resp.StatusCode != http.StatusOK || resp.Header.Get(HeaderSessionID) == "" {
		t.Errorf("2025-06-18 initialize: %d, no session id: %s", resp.StatusCode, body)
	}
}

// A request state sealed before approvals were bound to their client
// (without "c") still resumes its own client's approved write: the action
// row has always kept the proposing client, and the claim checks it. Held
// by another client of the same person, it writes nothing.
func TestWriteRequestStateWithoutClientStillResumes(t *testing.T) {
	f := newWriteFixture(t)
	meta := `"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + mcp.ProtocolVersion20260728 + `","` +
		mcp.MetaKeyClientCapabilities + `":{"elicitation":{"url":{}}}}`
	callWith := func(endpoint, extra string) map[string]any {
		t.Helper()
		resp, body := postModern(t, endpoint, "tools/call", `{"name":"make_thing","arguments":{"name":"Gadget"}`+extra+`,`+meta+`}`,
			map[string]string{mcp.HeaderName: "make_thing"})
		return decodeReply(t, resp, body)
	}
	firstURL, otherURL := f.personVia(t, jane, "client-1"), f.personVia(t, jane, "client-2")
	r, _ := callWith(firstURL, "")["result"].(map[string]any)
	state, _ := r["requestState"].(string)
	in, _ := r["inputRequests"].(map[string]any)["approval"].(map[string]any)
	gadget, _ := uuid.Parse(in["params"].(map[string]any)["elicitationId"].(string))
	f.decide(t, gadget, jane, true)

	// The state as it was sealed before: the same, without the client.
	var st approvalState
	if !f.engine.states.open(state, &st) || st.Client != "client-1" {
		t.Fatalf("the issued state: %+v", st)
	}
	st.Client = ""
	old, err := f.engine.states.seal(st)
	if err != nil {
		t.Fatal(err)
	}
	withState := `,"inputResponses":{"approval":{"action":"accept"}},"requestState":"` + old + `"`
	if reply := structured(callWith(otherURL, withState)); errCode(reply) != "APPROVAL_INVALID" {
		t.Fatalf("client-2 with client-1's state of the old format: %v", reply)
	}
	if n := f.runs.Load(); n != 0 {
		t.Fatalf("%d writes through another client, want none", n)
	}
	if reply := structured(callWith(firstURL, withState)); errCode(reply) != "" {
		t.Fatalf("client-1's resumed request with a state of the old format: %v", reply)
	}
	if n := f.runs.Load(); n != 1 {
		t.Fatalf("%d writes, want client-1's one", n)
	}
}

// The ask tells the person and the model how long they have in words, not
// in Go's duration notation ("10m0s"): by tool error, and by the URL
// elicitation a client shows the person.
func TestWriteAskSaysTheTimeLeftInWords(t *testing.T) {
	f := newWriteFixture(t)
	res, m := call(t, connect(t, f.person(t, jane), "", nil), "make_thing", map[string]any{"name": "Widget"})
	approvalOf(t, res, m)
	text := res.Content[0].(*sdk.TextContent).Text
	if !strings.Contains(text, "(within 10 minutes)") || strings.Contains(text, "m0s") {
		t.Fatalf("the tool error does not say the time left in words: %s", text)
	}
	cs := connect(t, f.person(t, jane), "2025-11-25", func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "accept"}, nil
	})
	_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "make_thing", Arguments: map[string]any{"name": "Other"}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeURLElicitationRequired {
		t.Fatalf("want -32042, got %v", err)
	}
	var data struct{ Elicitations []struct{ Message string } }
	if err := json.Unmarshal(rpcErr.Data, &data); err != nil || len(data.Elicitations) != 1 {
		t.Fatalf("data %s: %v", rpcErr.Data, err)
	}
	if msg := data.Elicitations[0].Message; !strings.Contains(msg, "(within 10 minutes)") || strings.Contains(msg, "m0s") {
		t.Fatalf("the elicitation does not say the time left in words: %s", msg)
	}
}

// TestWriteWithANulInItsArgumentsIsRefused: a NUL character (JSON's
// \u0000, which a client may send in any text) cannot be shown on the
// approval page as what it is (Postgres stores it as U+FFFD, and some
// systems end a text at it), so the person would approve one value and
// the ERP get another. A write holding one is refused before anything is
// proposed, naming the field; a backslash followed by "u0000" is text,
// and proposed as usual.
func TestWriteWithANulInItsArgumentsIsRefused(t *testing.T) {
	f := newWriteFixture(t)
	cs := connect(t, f.person(t, jane), "", nil)
	res, m := call(t, cs, "make_thing", map[string]any{"name": "Wid\x00get"})
	if errCode(m) != "INVALID_ARGUMENT" {
		t.Fatalf("a NUL: isError=%v %v", res.IsError, m)
	}
	if msg := m["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "name") || !strings.Contains(msg, "U+0000") {
		t.Errorf("the refusal does not name the field and the character: %s", msg)
	}
	var n int
	if err := f.pool.QueryRow(t.Context(), `SELECT count(*) FROM pending_actions`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d actions stored (%v), want none", n, err)
	}
	if n := f.runs.Load(); n != 0 {
		t.Fatalf("%d writes, want none", n)
	}
	res, m = call(t, cs, "make_thing", map[string]any{"name": `Wid\u0000get`})
	if errCode(m) != "APPROVAL_REQUIRED" {
		t.Fatalf("a backslash and u0000 as text: isError=%v %v", res.IsError, m)
	}
}

// TestWriteWithARepeatedArgumentIsRefused: arguments naming one member
// twice could be read two ways, so they have no approval, also when a
// number in them is written with an exponent (which the engine rewrites
// in plain decimals: the rewrite must not pick one of the two).
func TestWriteWithARepeatedArgumentIsRefused(t *testing.T) {
	f := newWriteFixture(t)
	endpoint := f.person(t, jane)
	for _, args := range []string{`{"name":"Widget","name":"Gadget"}`, `{"name":"Widget","name":"Gadget","qty":1e1}`, `{"name":"Widget","name":"Gadget","qty":null}`} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"make_thing","arguments":` + args + `}}`
		_, m := rawPost(t, endpoint, "", body)
		if got := errCode(structured(m)); got != "INVALID_ARGUMENT" {
			t.Errorf("%s: %s, want INVALID_ARGUMENT: %v", args, got, m)
		}
	}
	if n := f.previews.Load(); n != 0 {
		t.Errorf("%d previews of arguments that can be read two ways", n)
	}
}

// TestWriteOfAValueThePageWouldHideIsRefused: the redaction rules hide a
// card number or an IBAN in any text, and a field the site redacts, on
// the approval page too. A write whose own arguments hold one would be
// approved blind: the person reads "Refund to [REDACTED]" while the ERP
// gets the model's account number. Such a call is refused before
// anything is proposed, naming the argument, never its value.
func TestWriteOfAValueThePageWouldHideIsRefused(t *testing.T) {
	f := newWriteFixture(t)
	cs := connect(t, f.person(t, jane), "", nil)
	for _, c := range []struct {
		args map[string]any
		arg  string
	}{
		{map[string]any{"name": "Refund to GB82 WEST 1234 5698 7654 32"}, "name"},
		{map[string]any{"name": "Card 4111 1111 1111 1111"}, "name"},
		{map[string]any{"name": "Widget", "qty": 4111111111111111}, "qty"},
	} {
		res, m := call(t, cs, "make_thing", c.args)
		if errCode(m) != "INVALID_ARGUMENT" {
			t.Errorf("%v: isError=%v %v, want INVALID_ARGUMENT", c.args, res.IsError, m)
			continue
		}
		msg := m["error"].(map[string]any)["message"].(string)
		if !strings.Contains(msg, c.arg) || !strings.Contains(msg, "approval page") {
			t.Errorf("%v: the refusal does not name the argument and why: %s", c.args, msg)
		}
		for _, secret := range []string{"GB82", "4111"} {
			if strings.Contains(msg, secret) {
				t.Errorf("the refusal quotes the value: %s", msg)
			}
		}
	}
	// A field the site's rules name is hidden whole.
	f.setLive(SiteLive{WriteTools: []string{"make_thing"}, Redaction: redact.Rules{Add: []string{"Qty"}}})
	if res, m := call(t, cs, "make_thing", map[string]any{"name": "Widget", "qty": 7}); errCode(m) != "INVALID_ARGUMENT" {
		t.Errorf("a qty the site redacts: isError=%v %v, want INVALID_ARGUMENT", res.IsError, m)
	}
	var n int
	if err := f.pool.QueryRow(t.Context(), `SELECT count(*) FROM pending_actions`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d actions stored (%v), want none", n, err)
	}
	if n := f.previews.Load(); n != 0 {
		t.Errorf("%d previews of arguments the page would hide", n)
	}
	// Text no rule hides is proposed as ever.
	f.setLive(SiteLive{WriteTools: []string{"make_thing"}})
	if res, m := call(t, cs, "make_thing", map[string]any{"name": "Refund to account 12", "qty": 7}); errCode(m) != "APPROVAL_REQUIRED" {
		t.Errorf("plain text: isError=%v %v, want APPROVAL_REQUIRED", res.IsError, m)
	}
}

// switchLimiter refuses every call while refuse is set.
type switchLimiter struct{ refuse atomic.Bool }

func (l *switchLimiter) Acquire(context.Context, string, string) (func(), error) {
	if l.refuse.Load() {
		return nil, toolerr.New(toolerr.RateLimited, "too many calls").WithRetryAfter(time.Second)
	}
	return func() {}, nil
}

// An approved write whose run the ERP refused before running it
// (NothingWritten) keeps its approval, expiry unchanged: the same call
// runs it again, once, with no second approval, and then it is spent. One
// the engine's limiter refuses never reaches the claim. A failure that
// does not say it wrote nothing spends the approval, as before.
func TestWriteThatWroteNothingKeepsItsApproval(t *testing.T) {
	f := newWriteFixture(t)
	limiter := &switchLimiter{}
	f.engine.opts.Limiter = limiter
	cs := connect(t, f.person(t, jane), "", nil)
	args := map[string]any{"name": "Busy"}
	res, m := call(t, cs, "make_thing", args)
	id := approvalOf(t, res, m)
	f.decide(t, id, jane, true)
	approved, _ := f.store.Get(t.Context(), f.site.ID, id)

	limiter.refuse.Store(true)
	res, m = call(t, cs, "make_thing", args)
	if !res.IsError || errCode(m) != "RATE_LIMITED" || f.runs.Load() != 0 {
		t.Fatalf("the retry the limiter refused: %v, %d runs", m, f.runs.Load())
	}
	limiter.refuse.Store(false)

	f.clock.add(time.Minute)
	res, m = call(t, cs, "make_thing", args)
	e, _ := m["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if !res.IsError || errCode(m) != "RATE_LIMITED" || e["retryable"] != true || e["retry_after_seconds"] == nil ||
		!strings.Contains(msg, "nothing was written") || !strings.Contains(msg, "approval still holds") {
		t.Fatalf("the run the ERP refused: %v", m)
	}
	a, err := f.store.Get(t.Context(), f.site.ID, id)
	if err != nil || a.Status != approval.Approved || !a.ExpiresAt.Equal(approved.ExpiresAt) || a.ERPSaid != "A long operation is running." {
		t.Fatalf("after a run that wrote nothing: %+v %v; want approved until %s", a, err, approved.ExpiresAt)
	}
	res, m = call(t, cs, "make_thing", args)
	if v, _ := m["value"].(map[string]any); res.IsError || v["made"] != "Busy" || v["action"] != id.String() {
		t.Fatalf("the same call again: %v", m)
	}
	if n := f.runs.Load(); n != 2 {
		t.Fatalf("%d runs, want 2 (one refused, one made)", n)
	}
	res, m = call(t, cs, "make_thing", args)
	if errCode(m) != "APPROVAL_INVALID" || f.runs.Load() != 2 {
		t.Fatalf("the replay after the write: %v", m)
	}
	if got, want := f.stages(), []string{"proposed", "", "failed", "executed", "refused"}; !equalStrings(got, want) {
		t.Fatalf("usage stages %q, want %q", got, want)
	}

	other := map[string]any{"name": "Throttled"}
	res, m = call(t, cs, "make_thing", other)
	tid := approvalOf(t, res, m)
	f.decide(t, tid, jane, true)
	if res, m = call(t, cs, "make_thing", other); errCode(m) != "RATE_LIMITED" || strings.Contains(fmt.Sprint(m), "still holds") {
		t.Fatalf("the run that failed without saying nothing was written: %v", m)
	}
	if a, _ := f.store.Get(t.Context(), f.site.ID, tid); a.Status != approval.Failed {
		t.Fatalf("after a failure not known to have written nothing: %s, want failed", a.Status)
	}
}

// bigWriteERP's write tool POSTs to its site and answers with the ERP's
// answer: a large one (1.5 MiB, its length announced), which waits for
// room in the replica's answer budget.
type bigWriteERP struct {
	fakeERP
	writes *atomic.Int64
}

func (bigWriteERP) Kind() string { return "bigwriteerp" }

func (b bigWriteERP) Tools() []connector.Tool {
	return []connector.Tool{{Name: "make_big", Description: "Test write.", Effect: connector.Write,
		Input: schema.Object(schema.Prop("name", schema.String("")).Required()), Output: schema.Object(schema.Prop("value", schema.Any(""))),
		Preview: func(ctx context.Context, c *connector.Call) (*connector.Preview, error) {
			return &connector.Preview{Operation: "create", DocType: "Thing", Summary: "create a big thing"}, nil
		},
		Handler: func(ctx context.Context, c *connector.Call) (any, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.Site.BaseURL.String()+"/make", strings.NewReader(`{}`))
			resp, err := c.HTTP.Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			n, _ := io.Copy(io.Discard, resp.Body)
			return map[string]any{"value": n}, nil
		}}}
}

// An approved write whose large answer waits for room in the replica's
// answer budget until the call's time runs out: the ERP made the change,
// so the caller and every replay must be told its outcome is not known
// (check the ERP), never a retryable "busy" that invites proposing it
// again and making it twice.
func TestWriteWhoseLargeAnswerFoundNoRoomIsNotToldAsBusy(t *testing.T) {
	writes := &atomic.Int64{}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			writes.Add(1)
		}
		_, _ = w.Write([]byte(`{"rows":"` + strings.Repeat("x", 3<<19) + `"}`))
	}))
	t.Cleanup(upstream.Close)
	base, _ := url.Parse(upstream.URL)
	site := connector.Site{ID: uuid.New(), Slug: "big", Kind: "bigwriteerp", BaseURL: base}
	reg := connector.NewRegistry()
	reg.MustRegister(bigWriteERP{writes: writes})
	opts := Options{Registry: reg, Outbound: outbound.NewFactory(outbound.DefaultOptions()), Usage: &sink{}, Budget: time.Second,
		MaxAnswerBytes: 2 << 20, CallerShare: 100}
	store, _, _ := withApprovalsPool(t, &opts, site)
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e.SetLive(Live{Sites: map[uuid.UUID]SiteLive{site.ID: {WriteTools: []string{"make_big"}}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.ServeMCP(w, r, Session{Site: site, Principal: connector.Principal{AuthType: "oauth", Subject: jane}, ClientID: "client-1", LimitKey: "user:" + jane})
	}))
	t.Cleanup(srv.Close)
	cs := connect(t, srv.URL, "", nil)
	args := map[string]any{"name": "Big"}
	res, m := call(t, cs, "make_big", args)
	id := approvalOf(t, res, m)
	if _, err := store.Decide(t.Context(), site.ID, id, jane, true); err != nil {
		t.Fatal(err)
	}
	// Other calls' large answers hold the whole answer budget.
	if !e.admission.answers.TryAcquire(e.admission.answerBudget) {
		t.Fatal("the answer budget is taken already")
	}
	defer e.admission.answers.Release(e.admission.answerBudget)

	res, m = call(t, cs, "make_big", args)
	if writes.Load() != 1 {
		t.Fatalf("%d writes reached the ERP, want 1", writes.Load())
	}
	errBody, _ := m["error"].(map[string]any)
	text := res.Content[0].(*sdk.TextContent).Text
	if !res.IsError || errBody["retryable"] != false || !strings.Contains(text, "not known") {
		t.Errorf("the write the ERP made, its answer refused room: %s; want an outcome not known, not retryable", text)
	}
	res, m = call(t, cs, "make_big", args)
	text = res.Content[0].(*sdk.TextContent).Text
	if errCode(m) != "APPROVAL_INVALID" || !strings.Contains(text, "not known") || strings.Contains(text, "propose it afresh") {
		t.Errorf("the replay: %s", text)
	}
}
