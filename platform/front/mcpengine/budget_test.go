package mcpengine

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
)

// sendAs posts body as caller of site with the protocol version's headers
// (2026-07-28: the method in Mcp-Method too) and returns the status, the
// Retry-After header and the answer.
func sendAs(t *testing.T, endpoint, site, caller, version, method, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, version)
	if mcp.IsModernProtocol(version) {
		req.Header.Set(mcp.HeaderMethod, method)
	}
	if site != "" {
		req.Header.Set("X-Test-Site", site)
	}
	req.Header.Set("X-Test-Caller", caller)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, resp.Header.Get("Retry-After"), b.String()
}

// TestOneSitesCallersShareABudgetOfRequestsOtherThanToolCalls: the budget
// of requests other than tool calls was per caller only, so a site's
// owner, who makes as many callers as they like, had it as many times
// over. A site's callers now share one too, of the caller's budget times
// the site's share over the caller's (here 50 % over 25 %: ten, of five
// per caller): four callers of one site, each within its own budget, have
// ten of their twenty pings served and the rest answered 429 with
// Retry-After and a sentence naming the site; another site's caller, and
// the first site's tool calls, are untouched.
func TestOneSitesCallersShareABudgetOfRequestsOtherThanToolCalls(t *testing.T) {
	endpoint, _, _, _, _ := gatedEngineWith(t, Options{Budget: 5 * time.Second, CallerShare: 25, SiteShare: 50,
		CallerRequests: sourcelimit.Limit{Burst: 5, Every: time.Hour}})
	served, refused := 0, 0
	for i := range 5 {
		for c := range 4 {
			status, retryAfter, body := sendAs(t, endpoint, "greedy", fmt.Sprintf("token-%d", c), "2025-06-18", "ping", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
			switch {
			case status == http.StatusOK:
				served++
			case status == http.StatusTooManyRequests && retryAfter != "" && retryAfter != "0" && strings.Contains(body, "this site's callers") && strings.Contains(body, fmt.Sprintf(`"id":%d`, i)):
				refused++
			default:
				t.Errorf("ping %d of token-%d: %d, Retry-After %q, %s", i, c, status, retryAfter, body)
			}
		}
	}
	if served != 10 || refused != 10 {
		t.Errorf("four callers of one site, five pings each: %d served, %d refused; want 10 and 10", served, refused)
	}
	for i := range 5 {
		if status, _, body := sendAs(t, endpoint, "other", "other", "2025-06-18", "ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); status != http.StatusOK {
			t.Errorf("the other site's ping %d: %d %s", i, status, body)
		}
	}
	if status, _, body := postAsSite(t, endpoint, "greedy", "token-0", "quick"); status != http.StatusOK || !strings.Contains(body, `"done"`) {
		t.Errorf("a tool call of the greedy site: %d %s", status, body)
	}
}

// TestOneSiteMayHaveEveryCallersBudgetWhenSetTo: with a site share of
// 100 (a deployment serving one site) the site's callers have no budget
// together, only each its own.
func TestOneSiteMayHaveEveryCallersBudgetWhenSetTo(t *testing.T) {
	endpoint, _, _, _, _ := gatedEngineWith(t, Options{Budget: 5 * time.Second, CallerShare: 25, SiteShare: 100,
		CallerRequests: sourcelimit.Limit{Burst: 5, Every: time.Hour}})
	for i := range 5 {
		for c := range 4 {
			if status, _, body := sendAs(t, endpoint, "only", fmt.Sprintf("token-%d", c), "2025-06-18", "ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); status != http.StatusOK {
				t.Errorf("ping %d of token-%d: %d %s", i, c, status, body)
			}
		}
	}
}

// countingBody counts the bytes the server reads of a request body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// TestCallerOverItsBudgetIsRefusedBeforeItsBodyIsRead: a caller whose
// budget of requests other than tool calls was spent (here tools/list)
// still took a call slot, had its body read (up to a megabyte, for up to the body timeout)
// and took a work slot to parse it, before it was answered 429. A
// 2026-07-28 request names its method in Mcp-Method before its body: one
// naming a method other than tools/call is now refused at the door, its
// body unread, its connection closed. The same caller's tool calls are
// untouched; a request of an earlier protocol, whose method only its body
// names, is still read first (and refused).
func TestCallerOverItsBudgetIsRefusedBeforeItsBodyIsRead(t *testing.T) {
	_, _, _, _, e := gatedEngineWith(t, Options{Budget: 5 * time.Second, CallerShare: 25,
		CallerRequests: sourcelimit.Limit{Burst: 1, Every: time.Hour}})
	var read atomic.Int64
	site := connector.Site{ID: uuid.New(), Slug: "counted", Kind: "gatederp", BaseURL: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = countingBody{r.Body, &read}
		e.ServeMCP(w, r, Session{Site: site, Principal: connector.Principal{AuthType: "service_token"}, LimitKey: r.Header.Get("X-Test-Caller")})
	}))
	t.Cleanup(srv.Close)
	list := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + modernMeta + `}}`
	if status, _, body := sendAs(t, srv.URL, "", "chatty", mcp.ProtocolVersion20260728, "tools/list", list); status != http.StatusOK {
		t.Fatalf("the tools/list within the budget: %d %s", status, body)
	}
	read.Store(0)
	for i := range 3 {
		status, retryAfter, body := sendAs(t, srv.URL, "", "chatty", mcp.ProtocolVersion20260728, "tools/list", list)
		if status != http.StatusTooManyRequests || retryAfter == "" || retryAfter == "0" || !strings.Contains(body, `"code":-32600`) {
			t.Errorf("tools/list %d past the budget: %d, Retry-After %q, %s", i, status, retryAfter, body)
		}
	}
	if n := read.Load(); n != 0 {
		t.Errorf("%d bytes of the over-budget caller's requests were read; want none", n)
	}
	if free := e.admission.callsFree; free != e.admission.calls {
		t.Errorf("%d call slots of %d free after the refusals", free, e.admission.calls)
	}
	// Its tool calls have the call limits, not this budget.
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quick","arguments":{}}}`
	if status, _, body := sendAs(t, srv.URL, "", "chatty", "2025-06-18", "tools/call", call); status != http.StatusOK || !strings.Contains(body, `"done"`) {
		t.Errorf("the caller's tool call: %d %s", status, body)
	}
	// Before 2026-07-28 only the body names the method.
	if status, _, body := sendAs(t, srv.URL, "", "chatty", "2025-06-18", "ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); status != http.StatusTooManyRequests {
		t.Errorf("a 2025-06-18 ping past the budget: %d %s", status, body)
	}
}

// TestCallerOverItsRefusedCallsBudgetIsRefusedBeforeItsBodyIsRead: a
// caller that had spent its budget of refused tool calls (here by calls
// the limits refused) still took a call slot, had each tool call's body
// read and took a work slot to parse it, before it was answered 429. A
// 2026-07-28 tool call names its method in Mcp-Method: it is now checked
// against the budget at the door, its body unread, its connection closed.
func TestCallerOverItsRefusedCallsBudgetIsRefusedBeforeItsBodyIsRead(t *testing.T) {
	_, _, _, _, e := gatedEngineWith(t, Options{Budget: 5 * time.Second, CallerShare: 25, Limiter: refusingLimiter{},
		CallerRequests: sourcelimit.Limit{Burst: 1, Every: time.Hour}})
	var read atomic.Int64
	site := connector.Site{ID: uuid.New(), Slug: "counted", Kind: "gatederp", BaseURL: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = countingBody{r.Body, &read}
		e.ServeMCP(w, r, Session{Site: site, Principal: connector.Principal{AuthType: "service_token"}, LimitKey: r.Header.Get("X-Test-Caller")})
	}))
	t.Cleanup(srv.Close)
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"quick","arguments":{},` + modernMeta + `}}`
	send := func() (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(call))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
		req.Header.Set(mcp.HeaderMethod, string(mcp.MethodToolsCall))
		req.Header.Set(mcp.HeaderName, "quick")
		req.Header.Set("X-Test-Caller", "limited")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
		return resp.StatusCode, resp.Header.Get("Retry-After"), b.String()
	}
	if status, _, body := send(); status != http.StatusOK || !strings.Contains(body, "RATE_LIMITED") {
		t.Fatalf("the first call over the limits: %d %s; want RATE_LIMITED as a result", status, body)
	}
	read.Store(0)
	for i := range 3 {
		status, retryAfter, body := send()
		if status != http.StatusTooManyRequests || retryAfter == "" || retryAfter == "0" || !strings.Contains(body, `"code":-32600`) {
			t.Errorf("tool call %d past the budget: %d, Retry-After %q, %s", i, status, retryAfter, body)
		}
	}
	if n := read.Load(); n != 0 {
		t.Errorf("%d bytes of the over-budget caller's tool calls were read; want none", n)
	}
	if free := e.admission.callsFree; free != e.admission.calls {
		t.Errorf("%d call slots of %d free after the refusals", free, e.admission.calls)
	}
}

// TestAnMcpMethodThatLiesEscapesNoBudget: a 2026-07-28 request is charged
// or checked at the door by its Mcp-Method header, before its body says
// what it is. A header that names another method than the body (which
// mcp-go then refuses), or none, must not let the request past the
// budget its body's method has: each kind of lie, sent twice by a caller
// with a budget of one, is refused 429 the second time, and a caller
// that named ping for a tool call has it charged to its refused calls.
func TestAnMcpMethodThatLiesEscapesNoBudget(t *testing.T) {
	_, _, _, _, e := gatedEngineWith(t, Options{Budget: 5 * time.Second, CallerShare: 25,
		CallerRequests: sourcelimit.Limit{Burst: 1, Every: time.Hour}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A site of its own for each caller, so that the site's budget
		// (twice the caller's) is not what refuses.
		caller := r.Header.Get("X-Test-Caller")
		site := connector.Site{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(caller)), Slug: caller, Kind: "gatederp", BaseURL: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}}
		e.ServeMCP(w, r, Session{Site: site, Principal: connector.Principal{AuthType: "service_token"}, LimitKey: caller})
	}))
	t.Cleanup(srv.Close)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{` + modernMeta + `}}`
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quick","arguments":{},` + modernMeta + `}}`
	for _, c := range []struct{ caller, header, body string }{
		{"ping-as-call", "tools/call", ping},
		{"ping-unnamed", "", ping},
		{"call-as-ping", "ping", call},
		{"call-unnamed", "", call},
	} {
		var statuses []int
		for range 2 {
			req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
			if c.header != "" {
				req.Header.Set(mcp.HeaderMethod, c.header)
			}
			req.Header.Set("X-Test-Caller", c.caller)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses = append(statuses, resp.StatusCode)
		}
		t.Logf("%s: %v", c.caller, statuses)
		if statuses[0] == http.StatusTooManyRequests || statuses[1] != http.StatusTooManyRequests {
			t.Errorf("%s (Mcp-Method %q) twice with a budget of one: %v; want the first answered, the second 429", c.caller, c.header, statuses)
		}
	}
	// The tool call that named ping was refused (mcp-go's header
	// mismatch) and charged to the caller's refused calls: its honest
	// call is refused too.
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(call))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, string(mcp.MethodToolsCall))
	req.Header.Set(mcp.HeaderName, "quick")
	req.Header.Set("X-Test-Caller", "call-as-ping")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a tool call after one that named ping: %d; want 429 (its refused calls' budget spent)", resp.StatusCode)
	}
}
