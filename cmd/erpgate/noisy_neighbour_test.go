package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// Sizes of the abuse in TestOneTenantCannotStallAnother.
const (
	noisyStreams = 1000
	noisyDrips   = 200
)

// raiseFileLimit raises the process's soft limit on open files to its hard
// limit, at most want: the test holds both ends of every connection.
func raiseFileLimit(t *testing.T, want uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= want {
		return
	}
	old := lim.Cur
	lim.Cur = min(want, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lim.Cur = old; _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
	if lim.Cur < want {
		t.Fatalf("open files limited to %d, the test needs %d", lim.Cur, want)
	}
}

// TestOneTenantCannotStallAnother: one tenant's service token holds 1,000
// standing GET streams and 200 request bodies sent a byte at a time on
// /service/mcp, all at once. Meanwhile another tenant's tools/call
// completes and is not refused; the GETs are answered 405 (429 past the
// caller's budget of requests other than tool calls), the slow bodies
// 408 (or 503 beyond the tenant's share of the replica); afterwards the
// gateway's goroutines and memory are back to where they were.
func TestOneTenantCannotStallAnother(t *testing.T) {
	raiseFileLimit(t, 4*(noisyStreams+noisyDrips)+1024)
	ctx := context.Background()
	// Two ERPs: a site's address is its own.
	sim, quietSim := frappetest.NewServer(frappetest.Options{}), frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	defer quietSim.Close()
	const bodyTimeout = 3 * time.Second
	gw := startGateway(t, "", map[string]string{
		// Short enough that a stalled call fails within the test.
		"ERPGATE_UPSTREAM_BUDGET":        "5s",
		"ERPGATE_HTTP_BODY_TIMEOUT":      bodyTimeout.String(),
		"ERPGATE_LIMIT_USER_CONCURRENCY": "100",
		"ERPGATE_LIMIT_USER_PER_MINUTE":  "10000",
		"ERPGATE_LIMIT_SITE_PER_MINUTE":  "10000",
	})
	noisy := gw.registerFrappe(t, "noisy", sim, userWithRole(t, sim, "service"))
	quiet := gw.registerFrappe(t, "quiet", quietSim, userWithRole(t, quietSim, "service"))
	transport := &http.Transport{MaxIdleConnsPerHost: 4}
	client := &http.Client{Transport: transport, Timeout: time.Minute}
	call := func() serviceOutcome {
		return callService(ctx, client, gw.URL, quiet.ServiceToken, "list_customers", map[string]any{"limit": 5})
	}
	// Warm both tenants' paths (token caches, pools), then take the
	// baselines.
	for _, token := range []string{noisy.ServiceToken, quiet.ServiceToken} {
		if o := callService(ctx, client, gw.URL, token, "list_customers", map[string]any{"limit": 5}); !o.ok() {
			t.Fatalf("warm-up call: %v", o)
		}
	}
	transport.CloseIdleConnections()
	baseline := goleak.IgnoreCurrent()
	heapBefore := liveHeap()

	u, _ := url.Parse(gw.URL)
	head := func(method string, extra string) string {
		return fmt.Sprintf("%s /service/mcp HTTP/1.1\r\nHost: %s\r\nX-Erpgate-Service-Token: %s\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n%s\r\n",
			method, u.Host, noisy.ServiceToken, extra)
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	dial := func(first string) net.Conn {
		c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		conns = append(conns, c)
		if _, err := c.Write([]byte(first)); err != nil {
			t.Fatalf("write: %v", err)
		}
		return c
	}
	streams := make([]net.Conn, 0, noisyStreams)
	for range noisyStreams {
		streams = append(streams, dial(head(http.MethodGet, "")))
	}
	// Each slow body announces 400 bytes and sends the first few; a byte
	// follows every 200 ms until the test stops it.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_customers","arguments":{}}}`
	drips := make([]net.Conn, 0, noisyDrips)
	for range noisyDrips {
		drips = append(drips, dial(head(http.MethodPost, "Content-Type: application/json\r\nContent-Length: 400\r\n")+body[:10]))
	}
	stopDrip := make(chan struct{})
	var dripping sync.WaitGroup
	dripping.Add(1)
	go func() {
		defer dripping.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for i := 10; ; i++ {
			select {
			case <-stopDrip:
				return
			case <-tick.C:
			}
			for _, c := range drips {
				_, _ = c.Write([]byte{body[i%len(body)]})
			}
		}
	}()

	// The other tenant, during the abuse (its calls spread over most of
	// the body timeout, while the slow bodies are held): every call
	// completes.
	var took []time.Duration
	for i := range 20 {
		if i > 0 {
			time.Sleep(bodyTimeout / 25)
		}
		start := time.Now()
		o := call()
		took = append(took, time.Since(start))
		if !o.ok() {
			t.Errorf("the other tenant's call during the abuse: %v", o)
		}
	}
	slices.Sort(took)
	t.Logf("the other tenant's 20 calls during the abuse: median %v, slowest %v", took[len(took)/2], took[len(took)-1])

	// Every GET was answered 405 at once, and every slow body was cut off
	// within the body timeout or refused beyond the tenant's share. The
	// answers are read all at once, within one generous bound; only the
	// status line and headers.
	statuses := map[string]int{}
	var mu sync.Mutex
	var reading sync.WaitGroup
	deadline := time.Now().Add(30 * time.Second)
	read := func(kind string, c net.Conn) {
		defer reading.Done()
		_ = c.SetReadDeadline(deadline)
		status := "no answer"
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			status = resp.Status
		}
		mu.Lock()
		statuses[kind+" "+status]++
		mu.Unlock()
	}
	for _, c := range streams {
		reading.Add(1)
		go read("GET", c)
	}
	for _, c := range drips {
		reading.Add(1)
		go read("slow POST", c)
	}
	reading.Wait()
	close(stopDrip)
	dripping.Wait()
	t.Logf("answers to the noisy tenant: %v", statuses)
	// Past the caller's budget of requests other than tool calls, GETs
	// are answered 429 (TestOneCallerCannotFloodRequestsOtherThanToolCalls).
	if get, over := statuses["GET 405 Method Not Allowed"], statuses["GET 429 Too Many Requests"]; get == 0 || get+over != noisyStreams {
		t.Errorf("GET streams: %v; want all %d answered 405, or 429 past the caller's budget", statuses, noisyStreams)
	}
	cut, refused := statuses["slow POST 408 Request Timeout"], statuses["slow POST 503 Service Unavailable"]
	if cut == 0 || cut+refused != noisyDrips {
		t.Errorf("slow bodies: %d cut off (408), %d refused (503), of %d; want all, some cut off", cut, refused, noisyDrips)
	}

	// Back to baseline once the noisy tenant's connections are closed.
	for _, c := range conns {
		_ = c.Close()
	}
	conns = nil
	transport.CloseIdleConnections()
	if o := call(); !o.ok() {
		t.Errorf("the other tenant's call after the abuse: %v", o)
	}
	transport.CloseIdleConnections()
	pooled := goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgconn/internal/bgreader.(*BGReader).bgRead")
	if err := goleak.Find(baseline, pooled); err != nil {
		t.Errorf("goroutines left after the abuse: %v", err)
	}
	after := liveHeap()
	t.Logf("live heap before the abuse %d KiB, after %d KiB", heapBefore>>10, after>>10)
	if after > heapBefore+4<<20 {
		t.Errorf("live heap grew from %d KiB to %d KiB and stayed", heapBefore>>10, after>>10)
	}
}

// TestOAuthMCPGetIsRefused: on the OAuth front door, a signed-in client's
// GET stream is answered 405 (and its connection closed) rather than held
// open; without a token it is still a 401 challenge.
func TestOAuthMCPGetIsRefused(t *testing.T) {
	sim, _, site := startFrappeOAuthGateway(t, nil)
	c := connectOAuth(t, site.MCPURL, frappeLogin(userWithRole(t, sim, "all-companies")))
	get := func(token string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, site.MCPURL, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		client := &http.Client{Timeout: 30 * time.Second}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp
	}
	if resp := get(c.source.current().AccessToken); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" || !resp.Close {
		t.Errorf("signed-in GET: %d, Allow %q, close %v; want 405, Allow \"POST\", closed", resp.StatusCode, resp.Header.Get("Allow"), resp.Close)
	}
	if resp := get(""); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("GET without a token: %d, WWW-Authenticate %q; want a 401 challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	// The client connected with its GET stream refused goes on with POST.
	mustSucceed(t, callTool(t, c.cs, "get_current_user", nil), "get_current_user")
}

// TestRequestHeadersAreBounded: a request's line and headers were read up
// to Go's default of 1 MiB, before any authentication, by anyone, on as
// many connections as they opened, each holding that much for up to the
// header timeout; a call let in held its megabyte for its whole life,
// where a replica's memory budget counts 60 KiB per call. Headers over
// the bound are refused with 431 once it is reached.
func TestRequestHeadersAreBounded(t *testing.T) {
	gw := startGateway(t, "", nil)
	u, _ := url.Parse(gw.URL)
	request := []byte("GET /healthz HTTP/1.1\r\nHost: " + u.Host + "\r\nX-Padding: " + strings.Repeat("x", 900<<10) + "\r\n\r\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 8
	for range n {
		c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		// The server may answer and close before it has read everything.
		_, _ = c.Write(request)
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("a request with 900 KiB of headers: %v %v", resp, err)
		}
		_ = c.Close()
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > n*(900<<10)/2 {
		t.Errorf("%d requests with 900 KiB of headers made the replica allocate %d KiB", n, grew>>10)
	}
	// Ordinary headers are read as before.
	resp, err := http.Get(gw.URL + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	_ = resp.Body.Close()
}

// TestServerTimeouts: a request's headers, its body and an idle
// connection each get the configured time and no more, on every route.
func TestServerTimeouts(t *testing.T) {
	gw := startGateway(t, "", map[string]string{
		"ERPGATE_HTTP_READ_HEADER_TIMEOUT": "1s",
		"ERPGATE_HTTP_BODY_TIMEOUT":        "1s",
		"ERPGATE_HTTP_IDLE_TIMEOUT":        "1s",
	})
	u, _ := url.Parse(gw.URL)
	open := func(first string) (net.Conn, *bufio.Reader) {
		c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if _, err := c.Write([]byte(first)); err != nil {
			t.Fatal(err)
		}
		// The server must act long before this bound.
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		return c, bufio.NewReader(c)
	}
	// closed reads what is left on the connection and reports whether the
	// server closed it (rather than the bound running out).
	closed := func(r *bufio.Reader) bool {
		_, err := r.WriteTo(io.Discard)
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}

	t.Run("headers", func(t *testing.T) {
		_, r := open("GET /healthz HTTP/1.1\r\nHost: " + u.Host + "\r\nX-Slow: ")
		if !closed(r) {
			t.Error("a request whose headers never end was not cut off")
		}
	})
	t.Run("body", func(t *testing.T) {
		// The admin API, not an MCP endpoint: the deadline is the server's.
		_, r := open("POST /api/v1/sites HTTP/1.1\r\nHost: " + u.Host + "\r\nAuthorization: Bearer " + gw.AdminToken +
			"\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"slug\":")
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("a body that never ends got no answer: %v", err)
		}
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("a body that never ends: %s, want a 4xx", resp.Status)
		}
		if !closed(r) {
			t.Error("the connection of a body that never ends was kept")
		}
	})
	t.Run("idle", func(t *testing.T) {
		_, r := open("GET /healthz HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n")
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("healthz: %v %v", resp, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if !closed(r) {
			t.Error("an idle connection was kept past the idle timeout")
		}
	})
}

// TestWaitAtTheDoorLeavesTheBodyItsTime: a request that waits at the door
// longer than the body timeout (the replica's one call slot is taken by a
// call at a slow ERP) still has the whole body timeout to send its body
// once it is let in.
func TestWaitAtTheDoorLeavesTheBodyItsTime(t *testing.T) {
	ctx := context.Background()
	slow, other := frappetest.NewServer(frappetest.Options{}), frappetest.NewServer(frappetest.Options{})
	defer slow.Close()
	defer other.Close()
	gw := startGateway(t, "", map[string]string{
		"ERPGATE_HTTP_BODY_TIMEOUT":   "1s",
		"ERPGATE_LIMIT_REPLICA_CALLS": "1",
		"ERPGATE_UPSTREAM_BUDGET":     "20s",
	})
	a := gw.registerFrappe(t, "slow", slow, userWithRole(t, slow, "service"))
	b := gw.registerFrappe(t, "other", other, userWithRole(t, other, "service"))
	client := &http.Client{Timeout: time.Minute}
	slow.SetFault(frappetest.Fault{PathPrefix: "/api/resource/Customer", Times: 1, Delay: 3 * time.Second})
	first := make(chan serviceOutcome, 1)
	go func() {
		first <- callService(ctx, client, gw.URL, a.ServiceToken, "list_customers", map[string]any{"limit": 5})
	}()
	// Once the slow call holds the one call slot, the other call waits at
	// the door for most of three seconds.
	waitFor(t, 10*time.Second, "the slow call to reach the ERP", func() bool { return slow.RequestCount("/api/resource/Customer") > 0 })
	// Its body is larger than what the server reads with the headers, so
	// most of it is read only once the call is let in.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_customers","arguments":{"limit":5}}` + strings.Repeat(" ", 256<<10) + `}`
	req, _ := http.NewRequest(http.MethodPost, gw.URL+"/service/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("X-Erpgate-Service-Token", b.ServiceToken)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(reply), `"structuredContent"`) || strings.Contains(string(reply), `"error"`) {
		t.Errorf("a call let in after waiting at the door: %s %.300s", resp.Status, reply)
	}
	t.Logf("the second call took %v, the body timeout is 1s", time.Since(start))
	if o := <-first; !o.ok() {
		t.Errorf("the slow call: %v", o)
	}
}

// TestOneSiteCannotTakeTheWholeReplica: a site's owner issues as many
// service tokens as they like, and each token is a caller with its own
// share of the replica. One site's five tokens each hold their share of
// requests with bodies that never finish (40 call slots, ten per caller),
// for longer than the call budget. Another site's call is still served
// rather than waiting at the door until its budget runs out (before each
// site had a share of the replica, the five tokens held all 40 slots and
// the other site's call got 503 "erpgate is busy").
func TestOneSiteCannotTakeTheWholeReplica(t *testing.T) {
	const callers, perCaller = 5, 10
	raiseFileLimit(t, 4*callers*perCaller+1024)
	ctx := context.Background()
	sim, quietSim := frappetest.NewServer(frappetest.Options{}), frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	defer quietSim.Close()
	gw := startGateway(t, "", map[string]string{
		"ERPGATE_LIMIT_REPLICA_CALLS":   "40",
		"ERPGATE_LIMIT_CALLER_SHARE":    "25",
		"ERPGATE_UPSTREAM_BUDGET":       "3s",
		"ERPGATE_HTTP_BODY_TIMEOUT":     "30s",
		"ERPGATE_LIMIT_USER_PER_MINUTE": "10000",
		"ERPGATE_LIMIT_SITE_PER_MINUTE": "10000",
	})
	noisy := gw.registerFrappe(t, "noisy", sim, userWithRole(t, sim, "service"))
	quiet := gw.registerFrappe(t, "quiet", quietSim, userWithRole(t, quietSim, "service"))
	tokens := []string{noisy.ServiceToken}
	for i := 1; i < callers; i++ {
		var created tokenResponse
		if err := gw.admin.do(ctx, http.MethodPost, "/sites/"+noisy.ID+"/service-tokens", map[string]any{"name": fmt.Sprintf("bot %d", i)}, &created); err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, created.Token)
	}
	client := &http.Client{Timeout: time.Minute}
	for _, token := range append([]string{quiet.ServiceToken}, tokens...) {
		if o := callService(ctx, client, gw.URL, token, "list_customers", map[string]any{"limit": 5}); !o.ok() {
			t.Fatalf("warm-up call: %v", o)
		}
	}

	// Each of the noisy site's tokens opens its share of requests whose
	// bodies stop after a few bytes.
	for _, token := range tokens {
		holdShare(t, gw, client, token, perCaller)
	}

	if o := callService(ctx, client, gw.URL, quiet.ServiceToken, "list_customers", map[string]any{"limit": 5}); !o.ok() {
		t.Errorf("the other site's call while one site's callers hold their shares: %v", o)
	}
}

// TestTwoSitesCannotTakeTheWholeReplica: two sites of one owner each hold
// their share of requests with bodies that never finish (two tokens of 10
// slots each, a site's share being 20 of 40). Another site's call is still
// served: the last tenth of the slots is kept for sites under their part
// of the replica. Before, the two sites held all 40 slots and the other
// site's call got 503 "erpgate is busy".
func TestTwoSitesCannotTakeTheWholeReplica(t *testing.T) {
	const perCaller = 10
	raiseFileLimit(t, 4*4*perCaller+1024)
	ctx := context.Background()
	gw := startGateway(t, "", map[string]string{
		"ERPGATE_LIMIT_REPLICA_CALLS":   "40",
		"ERPGATE_LIMIT_CALLER_SHARE":    "25",
		"ERPGATE_UPSTREAM_BUDGET":       "3s",
		"ERPGATE_HTTP_BODY_TIMEOUT":     "30s",
		"ERPGATE_LIMIT_USER_PER_MINUTE": "10000",
		"ERPGATE_LIMIT_SITE_PER_MINUTE": "10000",
	})
	client := &http.Client{Timeout: time.Minute}
	var noisy []string
	for _, slug := range []string{"noisy-a", "noisy-b"} {
		sim := frappetest.NewServer(frappetest.Options{})
		defer sim.Close()
		site := gw.registerFrappe(t, slug, sim, userWithRole(t, sim, "service"))
		var created tokenResponse
		if err := gw.admin.do(ctx, http.MethodPost, "/sites/"+site.ID+"/service-tokens", map[string]any{"name": "second bot"}, &created); err != nil {
			t.Fatal(err)
		}
		noisy = append(noisy, site.ServiceToken, created.Token)
	}
	quietSim := frappetest.NewServer(frappetest.Options{})
	defer quietSim.Close()
	quiet := gw.registerFrappe(t, "quiet", quietSim, userWithRole(t, quietSim, "service"))
	for _, token := range append([]string{quiet.ServiceToken}, noisy...) {
		if o := callService(ctx, client, gw.URL, token, "list_customers", map[string]any{"limit": 5}); !o.ok() {
			t.Fatalf("warm-up call: %v", o)
		}
	}
	for _, token := range noisy {
		holdShare(t, gw, client, token, perCaller)
	}
	if o := callService(ctx, client, gw.URL, quiet.ServiceToken, "list_customers", map[string]any{"limit": 5}); !o.ok() {
		t.Errorf("a third site's call while two sites hold their shares: %v", o)
	}
}

// TestOneSiteMayTakeTheReplicaWhenSetTo: a deployment that serves one
// site sets ERPGATE_LIMIT_SITE_SHARE to 100, and that site's callers may
// then hold the whole replica: three tokens each hold their share (30 of 40
// call slots, more than the default site share of 20) and a fourth
// token's call is still served.
func TestOneSiteMayTakeTheReplicaWhenSetTo(t *testing.T) {
	const callers, perCaller = 3, 10
	raiseFileLimit(t, 4*callers*perCaller+1024)
	ctx := context.Background()
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", map[string]string{
		"ERPGATE_LIMIT_REPLICA_CALLS":   "40",
		"ERPGATE_LIMIT_CALLER_SHARE":    "25",
		"ERPGATE_LIMIT_SITE_SHARE":      "100",
		"ERPGATE_UPSTREAM_BUDGET":       "3s",
		"ERPGATE_HTTP_BODY_TIMEOUT":     "30s",
		"ERPGATE_LIMIT_USER_PER_MINUTE": "10000",
		"ERPGATE_LIMIT_SITE_PER_MINUTE": "10000",
	})
	only := gw.registerFrappe(t, "only", sim, userWithRole(t, sim, "service"))
	tokens := []string{only.ServiceToken}
	for i := range callers {
		var created tokenResponse
		if err := gw.admin.do(ctx, http.MethodPost, "/sites/"+only.ID+"/service-tokens", map[string]any{"name": fmt.Sprintf("bot %d", i)}, &created); err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, created.Token)
	}
	client := &http.Client{Timeout: time.Minute}
	for _, token := range tokens {
		if o := callService(ctx, client, gw.URL, token, "list_customers", map[string]any{"limit": 5}); !o.ok() {
			t.Fatalf("warm-up call: %v", o)
		}
	}
	for _, token := range tokens[1:] {
		holdShare(t, gw, client, token, perCaller)
	}
	if o := callService(ctx, client, gw.URL, tokens[0], "list_customers", map[string]any{"limit": 5}); !o.ok() {
		t.Errorf("a fourth caller of the site while three hold 30 of 40 slots: %v", o)
	}
}

// holdShare opens n requests for a service token whose bodies stop after a
// few bytes, closed when the test ends, and waits until the token's next
// request is refused: its unfinished ones are then at the door or inside.
func holdShare(t *testing.T, gw *gateway, client *http.Client, token string, n int) {
	t.Helper()
	u, _ := url.Parse(gw.URL)
	for range n {
		c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		head := fmt.Sprintf("POST /service/mcp HTTP/1.1\r\nHost: %s\r\nX-Erpgate-Service-Token: %s\r\nAccept: application/json, text/event-stream\r\n"+
			"MCP-Protocol-Version: 2025-06-18\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"jsonrpc\"", u.Host, token)
		if _, err := c.Write([]byte(head)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "the token to be refused", func() bool {
		return callService(context.Background(), client, gw.URL, token, "list_customers", map[string]any{"limit": 5}).Status == http.StatusServiceUnavailable
	})
}

// TestReadinessIsNotALookupPerRequest: /readyz is on the public address
// and needs no authentication; it checked the database (two queries) on
// every request, so anyone could make the replica's pool, shared by every
// tenant, run as many queries as they could send requests. The check's
// outcome is now kept for a moment: 200 requests cost a few queries.
func TestReadinessIsNotALookupPerRequest(t *testing.T) {
	gw := startGateway(t, "", nil)
	before := gw.App.pool.Stat().AcquireCount()
	const n = 200
	for range n {
		resp, err := http.Get(gw.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/readyz: %s", resp.Status)
		}
	}
	if used := gw.App.pool.Stat().AcquireCount() - before; used > n/4 {
		t.Errorf("%d readiness checks took the database pool %d times", n, used)
	}
}
