package mcpengine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
)

// postAs calls tool as caller and returns the status, the Retry-After
// header and the body.
func postAs(t *testing.T, endpoint, caller, tool string) (status int, retryAfter, body string) {
	t.Helper()
	return postAsSite(t, endpoint, "", caller, tool)
}

// rawRequest opens a connection to endpoint and sends head (request line
// and headers, without the blank line's end) and the first part of a body.
func rawRequest(t *testing.T, endpoint, method string, header map[string]string, body string) net.Conn {
	t.Helper()
	u, _ := url.Parse(endpoint)
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, u.RequestURI(), u.Host)
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	if _, err := conn.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	return conn
}

// readStatus reads the response head from conn, within a generous bound.
func readStatus(t *testing.T, conn net.Conn) *http.Response {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	return resp
}

// TestGETStreamHoldsNoSlot: a GET on the MCP endpoint (the standing SSE
// stream clients open) is answered 405 at once, its connection closed, and
// holds no slot, so with
// a single work slot and a single call slot another request is served
// while the GET's connection stays open.
func TestGETStreamHoldsNoSlot(t *testing.T) {
	endpoint, _, _, _, _ := gatedEngine(t, 300*time.Millisecond, 1, 1)
	for _, c := range []struct{ version, allow string }{
		{"2025-06-18", "POST"},
		{mcp.ProtocolVersion20260728, "POST"},
	} {
		conn := rawRequest(t, endpoint, http.MethodGet, map[string]string{
			"Accept": "text/event-stream", "MCP-Protocol-Version": c.version, "X-Test-Caller": "streamer",
		}, "")
		if status, _, body := postAs(t, endpoint, "other", "quick"); status != http.StatusOK || !strings.Contains(body, `"done"`) {
			t.Fatalf("%s: a call while a GET stream is open: %d %s", c.version, status, body)
		}
		resp := readStatus(t, conn)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != c.allow || !resp.Close {
			t.Errorf("%s: GET answered %d, Allow %q, close %v; want 405, Allow %q, closed", c.version, resp.StatusCode, resp.Header.Get("Allow"), resp.Close, c.allow)
		}
	}
}

// TestSlowBodyHoldsNoWorkSlot: a request whose body is still arriving
// holds no work slot (another request is served meanwhile), and is cut
// off with 408 once its body takes longer than BodyTimeout.
func TestSlowBodyHoldsNoWorkSlot(t *testing.T) {
	endpoint, _, _, _, _ := gatedEngineWith(t, Options{Budget: 300 * time.Millisecond, MaxActive: 1, BodyTimeout: time.Second})
	conn := rawRequest(t, endpoint, http.MethodPost, map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2025-06-18", "Content-Length": "500", "X-Test-Caller": "dripper",
	}, `{"jsonrpc":"2.0",`)
	// The other caller's call may come before the slow request is at the
	// door; it must be served either way.
	for range 3 {
		if status, _, body := postAs(t, endpoint, "other", "quick"); status != http.StatusOK || !strings.Contains(body, `"done"`) {
			t.Fatalf("a call while another request's body arrives slowly: %d %s", status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp := readStatus(t, conn)
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("slow body answered %d, want 408", resp.StatusCode)
	}
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	if !strings.Contains(b.String(), "too slowly") {
		t.Errorf("408 body: %s", b.String())
	}
}

// TestOneCallerHoldsOnlyItsShare: a caller holds at most its share of the
// replica's call slots and work slots; beyond it, it gets 503 with
// Retry-After, and another caller is served.
func TestOneCallerHoldsOnlyItsShare(t *testing.T) {
	t.Run("call slots", func(t *testing.T) {
		// Four call slots (and eight work slots), half for each caller: of
		// the greedy caller's four calls two are let in and two refused,
		// and the other caller's call is served.
		endpoint, hold, _, _, e := gatedEngineWith(t, Options{Budget: time.Second, MaxActive: 8, MaxCalls: 4, CallerShare: 50})
		release := releaseOnce(t, hold)
		done := make(chan int, 4)
		for range 4 {
			go func() {
				status, retry, _ := postAs(t, endpoint, "greedy", "hold")
				if status == http.StatusServiceUnavailable && retry == "" {
					t.Error("503 without Retry-After")
				}
				done <- status
			}()
		}
		inside, refused := 0, 0
		for deadline := time.Now().Add(20 * time.Second); inside+refused < 4; {
			e.admission.mu.Lock()
			inside = 8 - e.admission.free
			e.admission.mu.Unlock()
			select {
			case status := <-done:
				if status != http.StatusServiceUnavailable {
					t.Errorf("the greedy caller's call ended with %d while its calls hold; want 503", status)
				}
				refused++
			case <-time.After(time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("the greedy caller's calls: %d let in, %d refused", inside, refused)
			}
		}
		if status, _, body := postAs(t, endpoint, "other", "quick"); status != http.StatusOK || !strings.Contains(body, `"done"`) {
			t.Errorf("the other caller's call while the greedy caller holds %d calls: %d %s", inside, status, body)
		}
		if inside != 2 || refused != 2 {
			t.Errorf("the greedy caller had %d calls let in and %d refused; want 2 and 2", inside, refused)
		}
		release()
		for range inside {
			if status := <-done; status != http.StatusOK {
				t.Errorf("the greedy caller's held call: %d", status)
			}
		}
		// A caller with nothing at the door or inside takes no memory.
		waitCount(t, e.admission, "callers with a share", 0, e.admission.callers.size)
	})
	t.Run("work slots", func(t *testing.T) {
		// Two work slots, half for each caller: the greedy caller's first
		// call working in erpgate takes one; its second waits and is
		// refused when the budget runs out, and the other caller's call is
		// served.
		endpoint, hold, _, _, e := gatedEngineWith(t, Options{Budget: 500 * time.Millisecond, MaxActive: 2, CallerShare: 50})
		release := releaseOnce(t, hold)
		first, second := make(chan int, 1), make(chan int, 1)
		go func() {
			status, _, _ := postAs(t, endpoint, "greedy", "hold")
			first <- status
		}()
		waitCount(t, e.admission, "work slots free", 1, func() int { return e.admission.free })
		go func() {
			status, retry, _ := postAs(t, endpoint, "greedy", "hold")
			if status == http.StatusServiceUnavailable && retry == "" {
				t.Error("503 without Retry-After")
			}
			second <- status
		}()
		// Either the second call takes the last work slot (the attack) or
		// it is refused.
		secondStatus := 0
		for deadline := time.Now().Add(20 * time.Second); secondStatus == 0; {
			e.admission.mu.Lock()
			free := e.admission.free
			e.admission.mu.Unlock()
			if free == 0 {
				break
			}
			select {
			case secondStatus = <-second:
			case <-time.After(time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatal("the greedy caller's second call neither started nor ended")
			}
		}
		if secondStatus != http.StatusServiceUnavailable {
			t.Errorf("the greedy caller's second call: %d (0: took the last work slot); want 503", secondStatus)
		}
		if status, _, body := postAs(t, endpoint, "other", "quick"); status != http.StatusOK || !strings.Contains(body, `"done"`) {
			t.Errorf("the other caller's call: %d %s", status, body)
		}
		release()
		if status := <-first; status != http.StatusOK {
			t.Errorf("the greedy caller's held call: %d", status)
		}
		if secondStatus == 0 {
			<-second
		}
		waitCount(t, e.admission, "callers with a share", 0, e.admission.callers.size)
	})
}

// TestRefusalBeforeTheBodyIsNotHeldByIt: a caller over its share whose
// body arrives slowly gets its 503 at once, and its connection is closed,
// instead of the server reading the rest of the body first.
func TestRefusalBeforeTheBodyIsNotHeldByIt(t *testing.T) {
	endpoint, hold, _, _, e := gatedEngineWith(t, Options{Budget: 300 * time.Millisecond, MaxActive: 4, MaxCalls: 2, CallerShare: 50})
	release := releaseOnce(t, hold)
	first := make(chan int, 1)
	go func() {
		status, _, _ := postAs(t, endpoint, "greedy", "hold")
		first <- status
	}()
	waitCount(t, e.admission, "work slots free", 3, func() int { return e.admission.free })
	conn := rawRequest(t, endpoint, http.MethodPost, map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2025-06-18", "Content-Length": "500", "X-Test-Caller": "greedy",
	}, `{"jsonrpc":"2.0",`)
	resp := readStatus(t, conn)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !resp.Close {
		t.Errorf("over its share with a slow body: %d, Retry-After %q, close %v; want 503 with Retry-After, closed", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close)
	}
	release()
	if status := <-first; status != http.StatusOK {
		t.Errorf("the held call: %d", status)
	}
}

// TestOneSiteHoldsOnlyItsShare: a site's owner makes as many callers as
// they like; together they hold at most the site's share of the replica's
// call slots (beyond it: 503 with Retry-After), and another site's call is
// served. Eight call slots, two per caller and four per site: of the
// greedy site's four callers' eight held calls, four are let in and four
// refused.
func TestOneSiteHoldsOnlyItsShare(t *testing.T) {
	endpoint, hold, _, _, e := gatedEngineWith(t, Options{Budget: time.Second, MaxActive: 16, MaxCalls: 8, CallerShare: 25, SiteShare: 50})
	release := releaseOnce(t, hold)
	done := make(chan int, 8)
	for i := range 8 {
		go func() {
			status, retry, body := postAsSite(t, endpoint, "greedy", fmt.Sprintf("token-%d", i%4), "hold")
			if status == http.StatusServiceUnavailable && (retry == "" || !strings.Contains(body, "this site's callers")) {
				t.Errorf("503 without Retry-After or the site's reason: %s", body)
			}
			done <- status
		}()
	}
	inside, refused := 0, 0
	for deadline := time.Now().Add(20 * time.Second); inside+refused < 8; {
		e.admission.mu.Lock()
		inside = 16 - e.admission.free
		e.admission.mu.Unlock()
		select {
		case status := <-done:
			if status != http.StatusServiceUnavailable {
				t.Errorf("a greedy site's call ended with %d while its calls hold; want 503", status)
			}
			refused++
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the greedy site's calls: %d let in, %d refused", inside, refused)
		}
	}
	if status, _, body := postAsSite(t, endpoint, "other", "other", "quick"); status != http.StatusOK || !strings.Contains(body, `"done"`) {
		t.Errorf("the other site's call while the greedy site holds %d calls: %d %s", inside, status, body)
	}
	if inside != 4 || refused != 4 {
		t.Errorf("the greedy site had %d calls let in and %d refused; want 4 and 4", inside, refused)
	}
	release()
	for range inside {
		if status := <-done; status != http.StatusOK {
			t.Errorf("the greedy site's held call: %d", status)
		}
	}
	waitCount(t, e.admission, "sites with a share", 0, e.admission.sites.size)
}

// postAsSite is postAs on the site named site ("": the engine's first).
func postAsSite(t *testing.T, endpoint, site, caller, tool string) (status int, retryAfter, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if site != "" {
		req.Header.Set("X-Test-Site", site)
	}
	req.Header.Set("X-Test-Caller", caller)
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, resp.Header.Get("Retry-After"), b.String()
}

// TestOtherMethodsAreNotAllowed: the endpoint takes POST only (GET and
// DELETE it refuses too), so any other method is answered 405 with the
// method it allows and a JSON-RPC error, as GET is, never 404 or 200, and
// without a slot.
func TestOtherMethodsAreNotAllowed(t *testing.T) {
	f := newFixture(t, false)
	for _, method := range []string{http.MethodPut, http.MethodPatch, http.MethodOptions, http.MethodHead} {
		for _, c := range []struct{ version, allow string }{
			{"2025-06-18", "POST"},
			{mcp.ProtocolVersion20260728, "POST"},
		} {
			req, _ := http.NewRequest(method, f.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(mcp.HeaderProtocolVersion, c.version)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != c.allow {
				t.Errorf("%s (%s): %d, Allow %q; want 405, Allow %q", method, c.version, resp.StatusCode, resp.Header.Get("Allow"), c.allow)
			}
		}
	}
}

// TestRequestsOtherThanToolCallsHaveAPerCallerBudget: a caller's requests
// other than tool calls (here a budget of five) are served while its
// budget lasts, then answered 429 with Retry-After and a JSON-RPC error
// carrying the request's id, and make no usage event; another caller's
// budget and the first caller's tool calls are untouched.
func TestRequestsOtherThanToolCallsHaveAPerCallerBudget(t *testing.T) {
	endpoint, _, _, _, e := gatedEngineWith(t, Options{Budget: 5 * time.Second, CallerShare: 100,
		CallerRequests: sourcelimit.Limit{Burst: 5, Every: time.Hour}})
	send := func(caller, method, body string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(method, endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
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
	ping := func(id int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id) }
	served := 0
	for i := range 5 {
		if status, _, body := send("chatty", http.MethodPost, ping(i)); status == http.StatusOK {
			served++
		} else {
			t.Errorf("ping %d within the budget: %d %s", i, status, body)
		}
	}
	for i, req := range []struct{ method, body string }{
		{http.MethodPost, ping(42)},
		{http.MethodPost, `{"jsonrpc":"2.0","id":43,"method":"tools/list"}`},
		{http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{http.MethodGet, ""},
		{http.MethodDelete, ""},
	} {
		status, retryAfter, body := send("chatty", req.method, req.body)
		if status != http.StatusTooManyRequests || retryAfter == "" || retryAfter == "0" || !strings.Contains(body, `"code":-32600`) {
			t.Errorf("request %d past the budget (%s %s): %d, Retry-After %q, %s", i, req.method, req.body, status, retryAfter, body)
		}
		if i == 0 && !strings.Contains(body, `"id":42`) {
			t.Errorf("the refused ping's answer does not carry its id: %s", body)
		}
	}
	for i := range 5 {
		if status, _, body := send("other", http.MethodPost, ping(i)); status != http.StatusOK {
			t.Errorf("the other caller's ping %d: %d %s", i, status, body)
		}
	}
	if status, _, body := postAs(t, endpoint, "chatty", "quick"); status != http.StatusOK || !strings.Contains(body, `"done"`) {
		t.Errorf("the chatty caller's tool call: %d %s", status, body)
	}
	pings := 0
	for _, ev := range e.opts.Usage.(*sink).all() {
		if ev.Method == "ping" || ev.Method == "tools/list" {
			pings++
		}
	}
	if want := served + 5; pings != want {
		t.Errorf("%d usage events of pings and lists, want the %d served", pings, want)
	}
}

// countingLimiter admits every call and counts them.
type countingLimiter struct{ n atomic.Int64 }

func (l *countingLimiter) Acquire(context.Context, string, string) (func(), error) {
	l.n.Add(1)
	return func() {}, nil
}

// refusingLimiter refuses every call: "limited" with RATE_LIMITED, as a
// caller over its limits (per minute or in flight) is refused, any other
// caller with another failure (the limits could not be read).
type refusingLimiter struct{}

func (refusingLimiter) Acquire(_ context.Context, _ string, caller string) (func(), error) {
	if caller == "limited" {
		return nil, toolerr.New(toolerr.RateLimited, "too many calls").WithRetryAfter(30 * time.Second)
	}
	return nil, toolerr.New(toolerr.UpstreamUnavailable, "the limits could not be read")
}

// TestToolCallsRefusedByTheLimitsAreChargedToTheBudget: a caller the
// limits refused (RATE_LIMITED) and that kept calling had every call
// read, checked and answered in full, each making a usage event, as fast
// as it liked. Those refusals are charged to the caller's budget of
// refused calls: its first ones are tool results with RATE_LIMITED and a
// retry-after, then it is answered 429 with Retry-After and makes no
// usage event. A call the limits fail for another reason is not the
// caller's doing and is not charged.
func TestToolCallsRefusedByTheLimitsAreChargedToTheBudget(t *testing.T) {
	endpoint, _, _, _, e := gatedEngineWith(t, Options{Budget: 5 * time.Second, CallerShare: 100, Limiter: refusingLimiter{},
		CallerRequests: sourcelimit.Limit{Burst: 5, Every: time.Hour}})
	statuses := map[int]int{}
	for range 20 {
		status, retryAfter, body := postAs(t, endpoint, "limited", "quick")
		statuses[status]++
		switch status {
		case http.StatusOK:
			if !strings.Contains(body, "RATE_LIMITED") || !strings.Contains(body, "retry_after_seconds") {
				t.Errorf("a refusal by the limits: %s; want RATE_LIMITED with retry_after_seconds", body)
			}
		case http.StatusTooManyRequests:
			if retryAfter == "" || !strings.Contains(body, `"code":-32600`) {
				t.Errorf("refusal: Retry-After %q, %s", retryAfter, body)
			}
		default:
			t.Errorf("a call over the limits: %d %s", status, body)
		}
	}
	t.Logf("20 calls over the limits: %v", statuses)
	if statuses[http.StatusOK] == 0 || statuses[http.StatusTooManyRequests] < 14 {
		t.Errorf("20 calls over the limits from one caller: %v; want its budget of 5 (and one) answered RATE_LIMITED, the rest refused 429", statuses)
	}
	if n := len(e.opts.Usage.(*sink).all()); n > 6 {
		t.Errorf("%d usage events for the calls over the limits; want at most the budget's", n)
	}
	for range 10 {
		if status, _, body := postAs(t, endpoint, "unlucky", "quick"); status != http.StatusOK || !strings.Contains(body, "UPSTREAM_UNAVAILABLE") {
			t.Fatalf("a call whose limits could not be read: %d %s; want UPSTREAM_UNAVAILABLE, never charged", status, body)
		}
	}
}

// TestToolCallsRefusedBeforeTheLimitsHaveAPerCallerBudget: a tool call
// refused before it reaches the per-caller limits (an unknown tool, here;
// invalid arguments, a tool the site does not offer) counted against no
// limit: a caller could send them as fast as it liked, each answered and
// each making a usage event. Past the caller's budget (here five) they
// are answered 429 with Retry-After; another caller's calls are
// untouched.
func TestToolCallsRefusedBeforeTheLimitsHaveAPerCallerBudget(t *testing.T) {
	limiter := &countingLimiter{}
	endpoint, _, _, _, e := gatedEngineWith(t, Options{Budget: 5 * time.Second, CallerShare: 100, Limiter: limiter,
		CallerRequests: sourcelimit.Limit{Burst: 5, Every: time.Hour}})
	statuses := map[int]int{}
	for range 20 {
		status, retryAfter, body := postAs(t, endpoint, "sloppy", "no_such_tool")
		statuses[status]++
		if status == http.StatusTooManyRequests && (retryAfter == "" || !strings.Contains(body, `"code":-32600`)) {
			t.Errorf("refusal: Retry-After %q, %s", retryAfter, body)
		}
	}
	t.Logf("20 calls of an unknown tool: %v", statuses)
	if statuses[http.StatusTooManyRequests] < 14 {
		t.Errorf("20 calls of an unknown tool from one caller: %v; want all but its budget of 5 (and one) refused", statuses)
	}
	if n := len(e.opts.Usage.(*sink).all()); n > 6 {
		t.Errorf("%d usage events for the unknown tool's calls; want at most the budget's", n)
	}
	if status, _, body := postAs(t, endpoint, "careful", "quick"); status != http.StatusOK || !strings.Contains(body, `"done"`) {
		t.Errorf("another caller's call: %d %s", status, body)
	}
	if n := limiter.n.Load(); n != 1 {
		t.Errorf("the limiter was asked %d times; want once, for the other caller's call", n)
	}
}

// dialNonReader opens a connection to host that takes in next to nothing
// of what it is sent (a receive buffer of 4 KiB), closed when the test
// ends.
func dialNonReader(t *testing.T, host string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) }); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// dialSlowReader opens a connection to endpoint that takes in next to
// nothing of what it is sent (a client that does not read its answers),
// and sends a call of tool as caller of site on it.
func dialSlowReader(t *testing.T, endpoint, site, caller, tool, meta string) net.Conn {
	t.Helper()
	u, _ := url.Parse(endpoint)
	conn := dialNonReader(t, u.Host)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}` + meta + `}}`
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"MCP-Protocol-Version: 2025-06-18\r\nX-Test-Site: %s\r\nX-Test-Caller: %s\r\nContent-Length: %d\r\n\r\n%s",
		u.RequestURI(), u.Host, site, caller, len(body), body)
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestSlowReaderHoldsNoWorkSlot: a caller whose client does not read its
// answers holds no work slot while its reply waits to be taken in. With
// two work slots, callers of two sites that each leave a large reply
// unread do not stall a third site's caller; and an unread reply holds
// its call slot only until the reply timeout (BodyTimeout).
func TestSlowReaderHoldsNoWorkSlot(t *testing.T) {
	// A plain call is answered by the engine, one with _meta by mcp-go's
	// transport.
	for _, c := range []struct{ name, meta string }{{"plain", ""}, {"meta", `,"_meta":{"progressToken":7}`}} {
		t.Run(c.name, func(t *testing.T) {
			// Unread replies with a timeout far beyond the test: only
			// giving the work slot back lets the others in.
			endpoint, _, _, _, e := gatedEngineWith(t, Options{Budget: time.Second, MaxActive: 2, CallerShare: 50, BodyTimeout: time.Hour})
			readers := unreadLargeReplies(t, endpoint, c.meta)
			// The large calls' work is done and their replies are being
			// written (mcp-go marshals its reply after the handler returns,
			// so the handler's end alone does not say so).
			waitCount(t, e.admission, "work slots free", 2, func() int { return e.admission.free })
			served := 0
			for range 3 {
				if status, _, body := postAsSite(t, endpoint, "victim", "victim", "quick"); status == http.StatusOK && strings.Contains(body, `"done"`) {
					served++
				}
			}
			if served != 3 {
				t.Errorf("another site's caller was served %d of 3 times while two callers left their replies unread", served)
			}
			for _, r := range readers {
				_ = r.Close()
			}

			// With a timeout of a second, the unread replies give their
			// call slots back.
			endpoint, _, _, _, e = gatedEngineWith(t, Options{Budget: time.Second, MaxActive: 2, CallerShare: 50, BodyTimeout: time.Second})
			unreadLargeReplies(t, endpoint, c.meta)
			waitCount(t, e.admission, "call slots free", e.admission.calls, func() int { return e.admission.callsFree })
		})
	}
}

// unreadLargeReplies has callers of two sites each call the large tool on
// a connection that does not read its answer, and waits until both calls
// have made their answers.
func unreadLargeReplies(t *testing.T, endpoint, meta string) []net.Conn {
	t.Helper()
	before := largeReplies.Load()
	var conns []net.Conn
	for _, site := range []string{"reader-1", "reader-2"} {
		conns = append(conns, dialSlowReader(t, endpoint, site, site, "large", meta))
	}
	for deadline := time.Now().Add(20 * time.Second); largeReplies.Load() < before+2; {
		if time.Now().After(deadline) {
			t.Fatal("the large calls did not end")
		}
		time.Sleep(time.Millisecond)
	}
	return conns
}

// TestBusyRefusalAfterTheBodyCarriesTheRequestsID: a request refused with
// 503 for want of a work slot, after its body was read, gets its own id
// back with the error ("It MUST be the same as the value of the id member
// in the Request Object", JSON-RPC 2.0, 5. Response object); before, it
// got null, as a request refused before its body is read must.
func TestBusyRefusalAfterTheBodyCarriesTheRequestsID(t *testing.T) {
	// One work slot, room at the door for more.
	endpoint, hold, _, _, e := gatedEngine(t, 300*time.Millisecond, 1, 8)
	release := releaseOnce(t, hold)
	first := make(chan int, 1)
	go func() {
		status, _ := postToolCall(t, endpoint, "hold")
		first <- status
	}()
	waitCount(t, e.admission, "work slots free", 0, func() int { return e.admission.free })
	for _, c := range []struct{ body, id string }{
		{`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"quick","arguments":{}}}`, `42`},
		{`{"jsonrpc":"2.0","id":"p","method":"ping"}`, `"p"`},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, `9007199254740993`},
		{`{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`, `null`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `null`},
		// An id over the bound (256 bytes as sent) is not carried back.
		{`{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 300) + `","method":"ping"}`, `null`},
	} {
		resp, body := postMCP(t, endpoint, c.body, map[string]string{mcp.HeaderProtocolVersion: "2025-06-18"})
		var r struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &r)
		if resp.StatusCode != http.StatusServiceUnavailable || r.Error == nil || string(r.ID) != c.id {
			t.Errorf("%s while the one work slot is held: %d %s, want 503 with id %s", c.body, resp.StatusCode, body, c.id)
		}
	}
	release()
	if status := <-first; status != http.StatusOK {
		t.Errorf("held call: %d", status)
	}
}

// overLimits refuses every call RATE_LIMITED, as a site over its own
// ceiling refuses each of its callers.
type overLimits struct{}

func (overLimits) Acquire(context.Context, string, string) (func(), error) {
	return nil, toolerr.New(toolerr.RateLimited, "too many calls on this site").WithRetryAfter(30 * time.Second)
}

// TestOneSitesCallersShareABudgetOfRefusedToolCalls: the budget of
// refused tool calls was per caller only, and a site's owner makes as
// many service tokens as they like: twenty tokens of one site, each
// looping on calls its limits refused, had 100 of 200 answered in full
// (each a usage event), twenty times one caller's budget of five. A
// site's callers now share a budget too (twice a caller's here, as for
// requests other than tool calls): once it is spent, a caller charged
// for a refused call is held until the site's budget has room again, so
// that past it each token gets at most one more answer. Another site's
// caller, and a caller of the same site that was never refused, are
// served.
func TestOneSitesCallersShareABudgetOfRefusedToolCalls(t *testing.T) {
	endpoint, _, _, _, e := gatedEngineWith(t, Options{Budget: 5 * time.Second, CallerShare: 25, SiteShare: 50, Limiter: overLimits{},
		CallerRequests: sourcelimit.Limit{Burst: 5, Every: time.Hour}})
	const callers, calls, siteBudget = 20, 10, 10
	answered := 0
	for c := range callers {
		for range calls {
			status, retryAfter, body := postAsSite(t, endpoint, "greedy", fmt.Sprint("token-", c), "quick")
			switch {
			case status == http.StatusOK && strings.Contains(body, "RATE_LIMITED"):
				answered++
			case status == http.StatusTooManyRequests && retryAfter != "" && retryAfter != "0":
			default:
				t.Fatalf("a call of token-%d: %d, Retry-After %q, %s", c, status, retryAfter, body)
			}
		}
	}
	t.Logf("%d callers of one site, %d calls each over the limits: %d answered in full", callers, calls, answered)
	if answered > siteBudget+callers {
		t.Errorf("%d calls over the limits answered in full; want at most the site's budget of %d and one for each of its %d callers", answered, siteBudget, callers)
	}
	if n := len(e.opts.Usage.(*sink).all()); n != answered {
		t.Errorf("%d usage events, want one for each of the %d answered", n, answered)
	}
	// The limits refuse everyone here: served means answered in full,
	// RATE_LIMITED, rather than 429 at the door.
	if status, _, body := postAsSite(t, endpoint, "greedy", "careful", "quick"); status != http.StatusOK || !strings.Contains(body, "RATE_LIMITED") {
		t.Errorf("a caller of the same site never refused before: %d %s", status, body)
	}
	if status, _, body := postAsSite(t, endpoint, "other", "other", "quick"); status != http.StatusOK || !strings.Contains(body, "RATE_LIMITED") {
		t.Errorf("another site's caller: %d %s", status, body)
	}
}

// TestACallerHeldForItsSitesRefusedCallsIsHeldBrieflyAndToldWhy: once a
// site's budget of refused tool calls was spent, each further refusal put
// it further in debt, and the caller refused was held for all of it (up
// to an hour): here thirty tokens' single refused calls (half a second
// each) held a careful caller of the same site, refused once, for some
// fifteen seconds, its valid calls too, with a 429 saying that it had
// sent more refused calls than one caller may, which it had not. The
// site's budget now goes no deeper in debt than it takes to fill (here
// ten refusals, one each half second: 5 s), so a caller is held at most
// that (and one of its own refills, 1 s), and the 429 says that the
// site's callers together had too many refused.
func TestACallerHeldForItsSitesRefusedCallsIsHeldBrieflyAndToldWhy(t *testing.T) {
	endpoint, _, _, _, _ := gatedEngineWith(t, Options{Budget: 5 * time.Second, CallerShare: 25, SiteShare: 50, Limiter: overLimits{},
		CallerRequests: sourcelimit.Limit{Burst: 5, Every: time.Second}})
	const siteBudget, tokens = 10, 40
	for c := range tokens {
		status, _, body := postAsSite(t, endpoint, "busy", fmt.Sprint("token-", c), "quick")
		if c < siteBudget && (status != http.StatusOK || !strings.Contains(body, "RATE_LIMITED")) {
			t.Fatalf("token-%d's call within the site's budget: %d %s", c, status, body)
		}
	}
	if status, _, body := postAsSite(t, endpoint, "busy", "careful", "quick"); status != http.StatusOK || !strings.Contains(body, "RATE_LIMITED") {
		t.Fatalf("the careful caller's first call: %d %s; want RATE_LIMITED as a result", status, body)
	}
	status, retryAfter, body := postAsSite(t, endpoint, "busy", "careful", "quick")
	if status != http.StatusTooManyRequests {
		t.Fatalf("the careful caller's call once held: %d %s; want 429", status, body)
	}
	secs, err := strconv.Atoi(retryAfter)
	if err != nil || secs < 1 || secs > 6 {
		t.Errorf("the careful caller, refused once, is held: Retry-After %q; want 1 to 6 seconds (the site's budget fills in 5 s, the caller's own refill is 1 s)", retryAfter)
	}
	if !strings.Contains(body, "this site's callers together") || strings.Contains(body, "this caller sent more") {
		t.Errorf("the careful caller's 429: %s; want it to say that the site's callers together had too many calls refused", body)
	}
	if status, _, body := postAsSite(t, endpoint, "other", "other", "quick"); status != http.StatusOK || !strings.Contains(body, "RATE_LIMITED") {
		t.Errorf("another site's caller: %d %s", status, body)
	}
}
