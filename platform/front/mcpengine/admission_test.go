package mcpengine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

func TestAdmissionServesResumesBeforeArrivals(t *testing.T) {
	a := newAdmission(1, 1000, 1<<20)
	ctx := context.Background()
	if err := a.acquire(ctx, false); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 2)
	var wg sync.WaitGroup
	wait := func(name string, resume bool) {
		defer wg.Done()
		if err := a.acquire(ctx, resume); err != nil {
			t.Error(err)
			return
		}
		order <- name
		a.release()
	}
	wg.Add(1)
	go wait("arrival", false)
	waitQueued(t, a, 1)
	wg.Add(1)
	go wait("resume", true)
	waitQueued(t, a, 2)
	a.release()
	wg.Wait()
	if first := <-order; first != "resume" {
		t.Errorf("%s was served first; a call coming back from the ERP goes first", first)
	}
	if a.free != 1 {
		t.Errorf("%d free slots after everyone left, want 1", a.free)
	}
}

func TestAdmissionGivesUpWithItsContext(t *testing.T) {
	a := newAdmission(1, 1000, 1<<20)
	if err := a.acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- a.acquire(ctx, false) }()
	waitQueued(t, a, 1)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("acquire succeeded without a free slot")
	}
	a.release()
	if a.free != 1 || a.arrivals.Len() != 0 {
		t.Errorf("free %d, queued %d after a cancelled wait", a.free, a.arrivals.Len())
	}
}

func TestCallSlotIsGivenBackWhileAnyRequestIsUpstream(t *testing.T) {
	a := newAdmission(1, 1000, 1<<20)
	ctx := context.Background()
	if err := a.acquire(ctx, false); err != nil {
		t.Fatal(err)
	}
	s := &callSlot{adm: a, held: true}
	s.leave()
	s.leave() // two parallel upstream requests
	if a.free != 1 {
		t.Fatalf("slot not given back during the upstream requests")
	}
	if err := s.resume(ctx); err != nil || a.free != 1 {
		t.Fatalf("resumed while a request is still upstream: %v, free %d", err, a.free)
	}
	if err := s.resume(ctx); err != nil || a.free != 0 || !s.held {
		t.Fatalf("not resumed after the last request: %v, free %d", err, a.free)
	}
	s.done()
	s.done()
	if a.free != 1 {
		t.Errorf("free %d after done, want 1", a.free)
	}
}

func TestAdmissionBoundsCallsHeld(t *testing.T) {
	a := newAdmission(2, 1, 1<<20)
	ctx := context.Background()
	if err := a.acquireWithin(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	first := &callSlot{adm: a, held: true, entered: true}
	first.leave() // waiting on the ERP: its work slot is free, its call slot is not
	done := make(chan error, 1)
	go func() { done <- a.acquireWithin(ctx, time.Minute) }()
	waitEntering(t, a, 1)
	if a.free != 2 {
		t.Fatalf("free work slots %d while the second request waits for a call slot, want 2", a.free)
	}
	if err := first.resume(ctx); err != nil {
		t.Fatal(err)
	}
	first.done()
	if err := <-done; err != nil {
		t.Fatalf("the second request was not let in when the first ended: %v", err)
	}
	second := &callSlot{adm: a, held: true, entered: true}
	second.done()
	second.done()
	if a.free != 2 || a.callsFree != 1 || a.entering() != 0 {
		t.Errorf("after both: free %d, calls free %d, entering %d; want 2, 1, 0", a.free, a.callsFree, a.entering())
	}

	// A request that cannot enter within its wait gives up and leaves the
	// counts as they were.
	if err := a.acquireWithin(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := a.acquireWithin(ctx, 20*time.Millisecond); err == nil {
		t.Fatal("a second request entered a replica holding its one call")
	}
	(&callSlot{adm: a, held: true, entered: true}).done()
	if a.free != 2 || a.callsFree != 1 || a.entering() != 0 {
		t.Errorf("after a request gave up: free %d, calls free %d, entering %d; want 2, 1, 0", a.free, a.callsFree, a.entering())
	}
}

// entering is the number of requests waiting for a call slot, read with
// a.mu held or when nothing else runs.
func (a *admission) entering() int { return a.entries.Len() + a.reserveEntries.Len() }

// TestTwoSitesLeaveTheReserveToAThird: with shares alone, two sites of
// 50 % each filled the replica and a third site's request waited at the
// door until it was refused. The last tenth of the call slots is kept for
// sites under their part of the replica: the second site stops one slot
// short, the third site gets that slot, and a slot given back goes to a
// third site's request before the second site's.
func TestTwoSitesLeaveTheReserveToAThird(t *testing.T) {
	a := newFairAdmission(10, 10, 1<<20, 25, 50) // 2 slots a caller, 5 a site, a reserve of 1
	ctx := context.Background()
	enter := func(site, caller string, wait time.Duration) (*callSlot, error) {
		return a.enterAs(ctx, site, site+"/"+caller, time.Now().Add(wait))
	}
	var held []*callSlot
	for _, c := range []struct{ site, caller string }{{"a", "1"}, {"a", "1"}, {"a", "2"}, {"a", "2"}, {"a", "3"}, {"b", "1"}, {"b", "1"}, {"b", "2"}, {"b", "2"}} {
		s, err := enter(c.site, c.caller, time.Second)
		if err != nil {
			t.Fatalf("site %s caller %s: %v", c.site, c.caller, err)
		}
		held = append(held, s)
	}
	if _, err := enter("b", "3", 20*time.Millisecond); err == nil {
		t.Fatal("the second site took the replica's last call slot")
	}
	third, err := enter("c", "1", 20*time.Millisecond)
	if err != nil {
		t.Fatalf("a third site's request while two sites hold 9 of 10 call slots: %v", err)
	}

	// Both wait for a slot: the second site's request first.
	got := make(chan string, 2)
	var waiters sync.WaitGroup // their done, before the counts are read
	waiters.Add(2)
	go func() {
		defer waiters.Done()
		if s, err := enter("b", "3", time.Minute); err == nil {
			got <- "b"
			s.done()
		}
	}()
	waitEntering(t, a, 1)
	go func() {
		defer waiters.Done()
		if s, err := enter("c", "2", time.Minute); err == nil {
			got <- "c"
			s.done()
		}
	}()
	waitEntering(t, a, 2)
	held[0].done()
	if first := <-got; first != "c" {
		t.Errorf("the slot given back went to site %s, want the third site's request", first)
	}
	third.done()
	if second := <-got; second != "b" {
		t.Errorf("then %s, want the second site's", second)
	}
	for _, s := range held[1:] {
		s.done()
	}
	waiters.Wait()
	if a.callsFree != 10 || a.entering() != 0 || a.sites.size() != 0 {
		t.Errorf("after all: calls free %d, entering %d, sites %d; want 10, 0, 0", a.callsFree, a.entering(), a.sites.size())
	}
}

// TestFewCallSlotsKeepNoReserve: a replica with fewer than ten call slots
// keeps none of them for sites under their part, and a site alone always
// has a part of at least one slot: with one slot, a site's request is let
// in (with a reserve of one slot and a part of half a slot, none ever
// was).
func TestFewCallSlotsKeepNoReserve(t *testing.T) {
	for _, calls := range []int{1, 2, 9} {
		a := newFairAdmission(4, calls, 1<<20, 25, 50)
		s, err := a.enterAs(context.Background(), "site", "caller", time.Now().Add(20*time.Millisecond))
		if err != nil {
			t.Fatalf("%d call slots, all free: a site's first request was refused: %v", calls, err)
		}
		s.done()
	}
}

// waitEntering waits until n requests wait for a call slot.
func waitEntering(t *testing.T, a *admission, n int) {
	t.Helper()
	waitCount(t, a, "waiting to enter", n, func() int { return a.entering() })
}

// waitQueued waits until n requests wait for a work slot.
func waitQueued(t *testing.T, a *admission, n int) {
	t.Helper()
	waitCount(t, a, "waiting", n, func() int { return a.arrivals.Len() + a.resumes.Len() })
}

func waitCount(t *testing.T, a *admission, what string, n int, count func() int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		a.mu.Lock()
		q := count()
		a.mu.Unlock()
		if q == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s, want %d", q, what, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// gatedERP has tools that block until the test lets them go: "hold" in
// erpgate's own work, "fetch" on the ERP.
type gatedERP struct {
	hold chan struct{}
}

func (gatedERP) Kind() string                                                   { return "gatederp" }
func (gatedERP) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) { return raw, nil }
func (gatedERP) APICredentialFields() []connector.CredentialField               { return nil }
func (gatedERP) APIAuthorizer(connector.Site, map[string]secrets.Secret) (connector.Authorizer, error) {
	return nil, nil
}
func (gatedERP) VerifyAPICredential(context.Context, connector.Site, *http.Client) (string, error) {
	return "bot", nil
}

func (g gatedERP) Tools() []connector.Tool {
	tool := func(name string, h connector.Handler) connector.Tool {
		return connector.Tool{Name: name, Description: "Test tool.", Input: schema.Object(),
			Output: schema.Object(schema.Prop("value", schema.Any(""))), Effect: connector.Read, Handler: h}
	}
	return []connector.Tool{
		tool("quick", func(context.Context, *connector.Call) (any, error) {
			return map[string]any{"value": "done"}, nil
		}),
		// hold ignores its budget: erpgate's own work that takes long.
		tool("hold", func(context.Context, *connector.Call) (any, error) {
			<-g.hold
			return map[string]any{"value": "held"}, nil
		}),
		// huge and stream fetch answers longer than the response bound,
		// announced and not.
		tool("huge", func(ctx context.Context, c *connector.Call) (any, error) {
			return fetchLength(ctx, c, "/huge")
		}),
		tool("stream", func(ctx context.Context, c *connector.Call) (any, error) {
			return fetchLength(ctx, c, "/stream")
		}),
		// bigstream fetches a large answer of unknown length, then holds
		// like hold.
		tool("bigstream", func(ctx context.Context, c *connector.Call) (any, error) {
			v, err := fetchLength(ctx, c, "/chunked")
			if err != nil {
				return nil, err
			}
			bigstreamHeld.Add(1)
			<-g.hold
			return v, nil
		}),
		// mediumstream fetches a medium answer of unknown length, then
		// holds like hold.
		tool("mediumstream", func(ctx context.Context, c *connector.Call) (any, error) {
			v, err := fetchLength(ctx, c, "/medium")
			if err != nil {
				return nil, err
			}
			mediumstreamHeld.Add(1)
			<-g.hold
			return v, nil
		}),
		// brokenstream fetches an answer of unknown length whose
		// connection breaks after 2 MiB; bigpanic panics once it has read
		// a large answer of unknown length.
		tool("brokenstream", func(ctx context.Context, c *connector.Call) (any, error) {
			return fetchLength(ctx, c, "/broken")
		}),
		tool("bigpanic", func(ctx context.Context, c *connector.Call) (any, error) {
			_, _ = fetchLength(ctx, c, "/chunked")
			panic("a connector's bug")
		}),
		// pages fetches a 100 KiB answer and then three of 1.5 MiB, as
		// a tool that pages through a list does, keeps them all and
		// holds like hold.
		tool("pages", func(ctx context.Context, c *connector.Call) (any, error) {
			total := 0
			for _, path := range []string{"/page", "/big", "/big", "/big"} {
				n, err := fetchLength(ctx, c, path)
				if err != nil {
					return nil, err
				}
				total += n.(map[string]any)["value"].(int)
			}
			pagesHeld.Store(int64(total))
			<-g.hold
			return map[string]any{"value": total}, nil
		}),
		// big fetches a large answer, then holds like hold.
		tool("big", func(ctx context.Context, c *connector.Call) (any, error) {
			v, err := fetchLength(ctx, c, "/big")
			if err != nil {
				return nil, err
			}
			<-g.hold
			return v, nil
		}),
		// large is erpgate's own work with a reply of some 7 MiB, more
		// than a connection's buffers take in.
		tool("large", func(context.Context, *connector.Call) (any, error) {
			defer largeReplies.Add(1)
			return map[string]any{"value": strings.Repeat("x", largeReply)}, nil
		}),
		// deadline answers the deadline of the context it was called
		// with, in nanoseconds since 1970, or "none".
		tool("deadline", func(ctx context.Context, c *connector.Call) (any, error) {
			dl, ok := ctx.Deadline()
			if !ok {
				return map[string]any{"value": "none"}, nil
			}
			return map[string]any{"value": fmt.Sprintf("deadline %d", dl.UnixNano())}, nil
		}),
		tool("fetch", func(ctx context.Context, c *connector.Call) (any, error) {
			v, err := fetchJSON(ctx, c, "/wait")
			if err != nil {
				return nil, err
			}
			return map[string]any{"value": v}, nil
		}),
	}
}

// largeReply is the size of the large tool's value (its reply has it
// twice), and largeReplies counts the large tool's answers.
const largeReply = 7 << 19 // 3.5 MiB

var largeReplies atomic.Int32

// bigAnswer is the size of the upstream's large answer (/big).
const bigAnswer = 3 << 19 // 1.5 MiB

// chunkedAnswer is the size of the upstream's large answer of unknown
// length (/chunked), and bigstreamHeld counts the bigstream calls that
// have read it and hold.
const chunkedAnswer = 6 << 20

var bigstreamHeld atomic.Int32

// mediumAnswer is the size of the upstream's medium answer of unknown
// length (/medium): large, far under the response bound, as a gzip JSON
// list of a few hundred rows is once unpacked. mediumstreamHeld counts the
// mediumstream calls that have read it and hold.
const mediumAnswer = 200_000

var mediumstreamHeld atomic.Int32

// pageAnswer is the size of /page, a large answer (64 KiB or more) but a
// small one; pagesHeld is the bytes of answers a pages call holds.
const pageAnswer = 100 << 10

var pagesHeld atomic.Int64

// megabyteOfX is what /chunked writes, one for all its answers.
var megabyteOfX = []byte(strings.Repeat("x", 1<<20))

// releaseOnce returns a function that lets the held calls go, and makes
// sure they go when the test ends, failed or not (the servers' cleanup
// waits for them).
func releaseOnce(t *testing.T, hold chan struct{}) func() {
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release)
	return release
}

// fetchLength fetches path and returns the length of its body.
func fetchLength(ctx context.Context, c *connector.Call, path string) (any, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.Site.URL(path, nil), nil)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := outbound.ReadBody(resp)
	if err != nil {
		return nil, err
	}
	return map[string]any{"value": len(body)}, nil
}

// gatedEngine serves gatedERP with maxActive work slots, maxCalls call
// slots (0: the default) and an answer budget of two megabytes.
func gatedEngine(t *testing.T, budget time.Duration, maxActive, maxCalls int) (endpoint string, hold, upstreamGo chan struct{}, upstreamSeen chan struct{}, e *Engine) {
	t.Helper()
	// One caller: its share is the whole replica.
	return gatedEngineWith(t, Options{Budget: budget, MaxActive: maxActive, MaxCalls: maxCalls, CallerShare: 100})
}

// gatedEngineWith is gatedEngine with more of the engine's options (the
// registry, outbound and usage are set here, and the answer budget unless
// opts has one). Each request's caller is its X-Test-Caller header.
func gatedEngineWith(t *testing.T, opts Options) (endpoint string, hold, upstreamGo chan struct{}, upstreamSeen chan struct{}, e *Engine) {
	t.Helper()
	hold, upstreamGo, upstreamSeen = make(chan struct{}), make(chan struct{}), make(chan struct{}, 8)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			// Streamed without a length, past the response bound.
			chunk := []byte(strings.Repeat("x", 1<<20))
			for range 9 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			return
		}
		if r.URL.Path == "/chunked" {
			// A large answer without a length (chunked), under the
			// response bound. Its handler holds no copy of its own.
			for range chunkedAnswer >> 20 {
				if _, err := w.Write(megabyteOfX); err != nil {
					return
				}
			}
			return
		}
		if r.URL.Path == "/medium" {
			// A medium answer without a length (chunked).
			_, _ = w.Write(megabyteOfX[:mediumAnswer])
			return
		}
		if r.URL.Path == "/broken" {
			// Chunked, and the connection breaks after 2 MiB.
			for range 2 {
				if _, err := w.Write(megabyteOfX); err != nil {
					return
				}
			}
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		if r.URL.Path == "/huge" {
			// Announced longer than the response bound: never read.
			w.Header().Set("Content-Length", fmt.Sprint(9<<20))
			w.WriteHeader(http.StatusOK)
			return
		}
		if r.URL.Path == "/page" {
			w.Header().Set("Content-Length", fmt.Sprint(pageAnswer))
			_, _ = w.Write(megabyteOfX[:pageAnswer])
			return
		}
		if r.URL.Path == "/big" {
			// A large answer, its length announced (without the header,
			// net/http would send it chunked).
			body := `{"rows":"` + strings.Repeat("x", bigAnswer) + `"}`
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			_, _ = io.WriteString(w, body)
			return
		}
		upstreamSeen <- struct{}{}
		select {
		case <-upstreamGo:
		case <-r.Context().Done():
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(upstream.Close)
	reg := connector.NewRegistry()
	reg.MustRegister(gatedERP{hold: hold})
	var err error
	opts.Registry, opts.Outbound, opts.Usage = reg, outbound.NewFactory(outbound.DefaultOptions()), &sink{}
	if opts.MaxAnswerBytes == 0 {
		opts.MaxAnswerBytes = 2 << 20
	}
	e, err = New(opts)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(upstream.URL)
	// The site is "gated", or the one its X-Test-Site header names.
	var mu sync.Mutex
	sites := map[string]connector.Site{}
	siteOf := func(slug string) connector.Site {
		mu.Lock()
		defer mu.Unlock()
		site, ok := sites[slug]
		if !ok {
			site = connector.Site{ID: uuid.New(), Slug: slug, Kind: "gatederp", BaseURL: base}
			sites[slug] = site
		}
		return site
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slug := r.Header.Get("X-Test-Site")
		if slug == "" {
			slug = "gated"
		}
		e.ServeMCP(w, r, Session{Site: siteOf(slug), Principal: connector.Principal{AuthType: "service_token"}, LimitKey: r.Header.Get("X-Test-Caller")})
	}))
	t.Cleanup(srv.Close)
	return srv.URL, hold, upstreamGo, upstreamSeen, e
}

func postToolCall(t *testing.T, endpoint, tool string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// fetchWaitingOnERP starts a call of "fetch" and returns once it waits on
// the ERP; its reply's body arrives on the channel.
func fetchWaitingOnERP(t *testing.T, endpoint string, upstreamSeen chan struct{}) <-chan string {
	first := make(chan string, 1)
	go func() {
		_, body := postToolCall(t, endpoint, "fetch")
		first <- body
	}()
	<-upstreamSeen
	return first
}

// TestCallWaitingOnTheERPLeavesItsSlot: with one slot, a call waiting on
// the ERP does not stop another call from being served.
func TestCallWaitingOnTheERPLeavesItsSlot(t *testing.T) {
	endpoint, _, upstreamGo, upstreamSeen, _ := gatedEngine(t, 30*time.Second, 1, 0)
	first := fetchWaitingOnERP(t, endpoint, upstreamSeen)
	if status, body := postToolCall(t, endpoint, "quick"); status != http.StatusOK || !strings.Contains(body, `"done"`) {
		t.Fatalf("second call while the first waits on the ERP: %d %s", status, body)
	}
	close(upstreamGo)
	if body := <-first; !strings.Contains(body, `"ok":true`) {
		t.Errorf("first call: %s", body)
	}
}

// TestBusyReplicaRefusesWith503: with its one slot held by erpgate's own
// work for longer than the budget, a new request is refused with 503 and
// Retry-After rather than queued without end.
func TestBusyReplicaRefusesWith503(t *testing.T) {
	endpoint, hold, _, _, _ := gatedEngine(t, 300*time.Millisecond, 1, 0)
	release := releaseOnce(t, hold)
	first := make(chan int, 1)
	go func() {
		status, _ := postToolCall(t, endpoint, "hold")
		first <- status
	}()
	// The held call has the slot once its handler runs; until then the
	// probe below may get it instead, so retry until it is refused.
	for deadline := time.Now().Add(10 * time.Second); ; {
		status, body := postToolCall(t, endpoint, "quick")
		if status == http.StatusServiceUnavailable {
			if !strings.Contains(body, "busy") {
				t.Errorf("503 body: %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never refused: %d %s", status, body)
		}
	}
	release()
	if status := <-first; status != http.StatusOK {
		t.Errorf("held call: %d", status)
	}
}

// TestCallsWaitingOnTheERPCountTowardsTheReplicasBound: with one call
// slot, a call waiting on the ERP keeps a new request at the door (before
// its body is read) until it is answered; then the new request is served.
func TestCallsWaitingOnTheERPCountTowardsTheReplicasBound(t *testing.T) {
	endpoint, _, upstreamGo, upstreamSeen, e := gatedEngine(t, 30*time.Second, 1, 1)
	first := fetchWaitingOnERP(t, endpoint, upstreamSeen)
	second := make(chan string, 1)
	go func() {
		status, body := postToolCall(t, endpoint, "quick")
		second <- fmt.Sprint(status, " ", body)
	}()
	waitEntering(t, e.admission, 1)
	select {
	case got := <-second:
		t.Fatalf("served while the replica's one call waits on the ERP: %s", got)
	default:
	}
	close(upstreamGo)
	if body := <-first; !strings.Contains(body, `"ok":true`) {
		t.Errorf("first call: %s", body)
	}
	select {
	case got := <-second:
		if !strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"done"`) {
			t.Errorf("second call: %s", got)
		}
	case <-time.After(20 * time.Second): // turns a hang into a failure
		t.Fatal("the second call was never let in")
	}
}

// TestLargeAnswersWaitForRoom: with room for one 1.5 MiB answer, a second
// call's large answer waits (before it is read, or before more than its
// first 64 KiB are when its length is not announced) until the first
// call ends, and gets RATE_LIMITED with a retry-after if the call's time
// runs out first; small answers never wait.
func TestLargeAnswersWaitForRoom(t *testing.T) {
	endpoint, hold, upstreamGo, _, e := gatedEngine(t, time.Second, 4, 0)
	release := releaseOnce(t, hold)
	close(upstreamGo) // "fetch" answers at once
	first := make(chan string, 1)
	go func() {
		_, body := postToolCall(t, endpoint, "big")
		first <- body
	}()
	// The first call holds its answer's room while it holds in its
	// handler; wait until the room is taken.
	for deadline := time.Now().Add(10 * time.Second); e.admission.answers.TryAcquire(1 << 20); {
		e.admission.answers.Release(1 << 20)
		if time.Now().After(deadline) {
			t.Fatal("the first call never took room for its answer")
		}
		time.Sleep(time.Millisecond)
	}
	// A small answer does not wait.
	if status, body := postToolCall(t, endpoint, "fetch"); status != http.StatusOK || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("a small answer while the room is taken: %d %s", status, body)
	}
	// An answer announced longer than the response bound takes no room:
	// the outbound transport refuses it before the call sees it.
	if status, body := postToolCall(t, endpoint, "huge"); status != http.StatusOK || !strings.Contains(body, "RESPONSE_TOO_LARGE") {
		t.Fatalf("an answer over the response bound while the room is taken: %d %s", status, body)
	}
	// A second large answer waits, and its call's time runs out; one of
	// unknown length too, once its first 64 KiB are read: erpgate cannot
	// tell it is over the response bound before it has room to read it.
	for _, tool := range []string{"big", "stream"} {
		status, body := postToolCall(t, endpoint, tool)
		if status != http.StatusOK || !strings.Contains(body, "RATE_LIMITED") || !strings.Contains(body, "retry_after_seconds") || !strings.Contains(body, "large ERP answers") {
			t.Fatalf("a second large answer (%s) while the room is taken: %d %s", tool, status, body)
		}
	}
	// Once the first call ends, a large answer gets room again.
	second := make(chan string, 1)
	go func() {
		_, body := postToolCall(t, endpoint, "big")
		second <- body
	}()
	waitAnswerWaits(t, e.admission, 1)
	release()
	for _, ch := range []chan string{first, second} {
		select {
		case body := <-ch:
			if !strings.Contains(body, fmt.Sprint(bigAnswer+len(`{"rows":""}`))) {
				t.Errorf("large answer call: %s", body)
			}
		case <-time.After(20 * time.Second): // turns a hang into a failure
			t.Fatal("a large answer call never ended")
		}
	}
}

func waitAnswerWaits(t *testing.T, a *admission, n int) {
	t.Helper()
	waitCount(t, a, "waiting for answer room", n, func() int { return int(a.answerWaits.Load()) })
}

func TestAnswerRoomPerCall(t *testing.T) {
	a := newAdmission(4, 4, 2<<20)
	ctx := context.Background()
	first := &callSlot{adm: a, held: true, entered: true}
	if err := first.holdAnswer(ctx, 3<<20); err != nil { // larger than the budget: capped, goes alone
		t.Fatal(err)
	}
	if first.answer != 2<<20 {
		t.Fatalf("held %d, want the whole budget", first.answer)
	}
	// A call that holds all the room it may is refused another large
	// answer, as too large, at once: it does not wait for more room.
	if err := first.holdAnswer(ctx, 1<<20); toolerr.Classify(err).Code != toolerr.ResponseTooLarge || first.answer != 2<<20 {
		t.Fatalf("second answer of the same call: %v, held %d", err, first.answer)
	}
	other := &callSlot{adm: a, held: true, entered: true}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	err := other.holdAnswer(short, 1<<20)
	if te := toolerr.Classify(err); te.Code != toolerr.RateLimited || te.RetryAfter <= 0 {
		t.Fatalf("waiting past the call's time: %v", err)
	}
	first.done()
	if !a.answers.TryAcquire(2 << 20) {
		t.Fatal("done did not give the room back")
	}
	a.answers.Release(2 << 20)
	// A later large answer of a call grows its room when it is free, and
	// is refused at once, as busy, when it is not.
	growing := &callSlot{adm: a, held: true, entered: true}
	if err := growing.holdAnswer(ctx, 1<<19); err != nil {
		t.Fatal(err)
	}
	if err := growing.holdAnswer(ctx, 1<<19); err != nil || growing.answer != 1<<20 {
		t.Fatalf("a later answer with room free: %v, held %d", err, growing.answer)
	}
	if !a.answers.TryAcquire(1 << 20) {
		t.Fatal("the rest of the budget is not free")
	}
	err = growing.holdAnswer(ctx, 1<<19)
	if te := toolerr.Classify(err); te.Code != toolerr.RateLimited || te.RetryAfter <= 0 || growing.answer != 1<<20 {
		t.Fatalf("a later answer with no room free: %v, held %d", err, growing.answer)
	}
	// Refused at once: the words say so, not that the call's time ran out.
	if msg := toolerr.Classify(err).Message; strings.Contains(msg, "time ran out") || !strings.Contains(msg, "another large ERP answer") {
		t.Errorf("a later answer refused at once is told %q", msg)
	}
	a.answers.Release(1 << 20)
	growing.done()
	if !a.answers.TryAcquire(2 << 20) {
		t.Fatal("done did not give the grown room back")
	}
	a.answers.Release(2 << 20)
	// A call whose room is all taken by an answer of unknown length still
	// being read (room for the most it may be) is refused another as
	// busy, not as too large: the first may give room back once read.
	reading := &callSlot{adm: a, held: true, entered: true}
	took, err := reading.takeRoom(ctx, 8<<20)
	if err != nil || took.answer != 2<<20 {
		t.Fatalf("an answer of unknown length: %v, took %d", err, took.answer)
	}
	if te := toolerr.Classify(reading.holdAnswer(ctx, 1<<19)); te.Code != toolerr.RateLimited {
		t.Fatalf("a later answer while the first is read: %v", te)
	}
	reading.fitAnswer(took, 1<<19)
	if err := reading.holdAnswer(ctx, 1<<19); err != nil || reading.answer != 1<<20 {
		t.Fatalf("a later answer once the first is read: %v, held %d", err, reading.answer)
	}
	reading.done()
	if !a.answers.TryAcquire(2 << 20) {
		t.Fatal("done did not give the room back")
	}
	a.answers.Release(2 << 20)
	// Room taken after the call ended (a stray request) is given back.
	late := &callSlot{adm: a}
	late.done()
	if err := late.holdAnswer(ctx, 1<<20); err != nil {
		t.Fatal(err)
	}
	if !a.answers.TryAcquire(2 << 20) {
		t.Fatal("room taken after the call ended was kept")
	}
}

func (gatedERP) SiteRules() connector.SiteRules { return connector.SiteRules{} }

// TestOneCallerHoldsItsShareOfTheAnswerBudget: a caller whose calls each
// hold a large answer (eight of 8 MiB, the response bound, in a budget of
// 64 MiB) takes at most its share of the budget; the others wait for its
// room, not for everyone's. Another caller's large answer then gets room
// at once. Before the share, the first caller's eight answers held the
// whole budget, and the other's waited until its time ran out.
func TestOneCallerHoldsItsShareOfTheAnswerBudget(t *testing.T) {
	const budget, answer = 64 << 20, 8 << 20
	a := newFairAdmission(16, 256, budget, 25, 50)
	ctx := context.Background()
	var held []*callSlot
	defer func() {
		for _, s := range held {
			s.done()
		}
	}()
	granted := 0
	for range 8 {
		s, err := a.enterAs(ctx, "site-a", "user:site-a:u1", time.Now().Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, s)
		// A call whose time ran out gives up its wait; as the hog's
		// calls, these have 50 ms.
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err = s.holdAnswer(cctx, answer)
		cancel()
		if err == nil {
			granted++
		} else if !strings.Contains(err.Error(), "large ERP answers") {
			t.Fatalf("a call over the caller's share: %v", err)
		}
	}
	if granted != 2 {
		t.Errorf("the caller holds %d answers of 8 MiB at once, want 2 (its 25 %% of 64 MiB)", granted)
	}
	other, err := a.enterAs(ctx, "site-b", "service:site-b", time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	held = append(held, other)
	octx, cancel := context.WithTimeout(ctx, 10*time.Second) // turns a wait into a failure
	defer cancel()
	if err := other.holdAnswer(octx, 2<<20); err != nil {
		t.Fatalf("another caller's large answer while the first holds what it can: %v", err)
	}
	// What the refused calls held comes back: the replica's whole budget
	// once every call is done.
	for _, s := range held {
		s.done()
	}
	held = nil
	if !a.answers.TryAcquire(budget) {
		t.Fatal("the answer budget did not all come back")
	}
	a.answers.Release(budget)
}

// TestOneSiteHoldsItsShareOfTheAnswerBudget: a site's four callers, each
// holding its own share of the answer budget (two answers of 8 MiB), hold
// together at most the site's share (half of 64 MiB); another site's large
// answer then gets room at once. Without the site's share, the four
// callers held the whole budget and the other site's answer waited until
// its time ran out.
func TestOneSiteHoldsItsShareOfTheAnswerBudget(t *testing.T) {
	const budget, answer = 64 << 20, 8 << 20
	a := newFairAdmission(16, 256, budget, 25, 50)
	ctx := context.Background()
	var held []*callSlot
	defer func() {
		for _, s := range held {
			s.done()
		}
	}()
	granted := 0
	for i := range 8 {
		s, err := a.enterAs(ctx, "site-a", fmt.Sprintf("service:token-%d", i%4), time.Now().Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, s)
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err = s.holdAnswer(cctx, answer)
		cancel()
		if err == nil {
			granted++
		} else if !strings.Contains(err.Error(), "large ERP answers") {
			t.Fatalf("a call over the site's share: %v", err)
		}
	}
	if granted != 4 {
		t.Errorf("the site's callers hold %d answers of 8 MiB at once, want 4 (its 50 %% of 64 MiB)", granted)
	}
	other, err := a.enterAs(ctx, "site-b", "service:site-b", time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	held = append(held, other)
	octx, cancel := context.WithTimeout(ctx, 10*time.Second) // turns a wait into a failure
	defer cancel()
	if err := other.holdAnswer(octx, answer); err != nil {
		t.Fatalf("another site's large answer while the first site holds what it can: %v", err)
	}
	for _, s := range held {
		s.done()
	}
	held = nil
	if !a.answers.TryAcquire(budget) {
		t.Fatal("the answer budget did not all come back")
	}
	a.answers.Release(budget)
	if n := a.sites.size(); n != 0 {
		t.Errorf("%d sites still hold a share once every call is done", n)
	}
}
