package mcpengine

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/erpgate/erpgate/platform/store/approval"
)

// callResult is the status and body of a call sent from a goroutine.
type callResult struct {
	status int
	body   string
}

// sendCall posts a tools/call of tool as caller, with the protocol
// version's headers and params' extra members (such as a _meta), and
// sends what came back on out. It may run outside the test's goroutine.
func sendCall(t *testing.T, endpoint, caller, version, tool, extra string, out chan<- callResult) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}` + extra + `}}`
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, version)
	if mcp.IsModernProtocol(version) {
		req.Header.Set(mcp.HeaderMethod, string(mcp.MethodToolsCall))
		req.Header.Set(mcp.HeaderName, tool)
	}
	req.Header.Set("X-Test-Caller", caller)
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Error(err)
		out <- callResult{}
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out <- callResult{resp.StatusCode, string(b)}
}

// deadlineLimiter is a Limiter that lets every call in and keeps the
// deadline of the context each caller's last Acquire had (the zero time
// for none).
type deadlineLimiter struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func (l *deadlineLimiter) Acquire(ctx context.Context, _, caller string) (func(), error) {
	dl, _ := ctx.Deadline()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen[caller] = dl
	return func() {}, nil
}

func (l *deadlineLimiter) deadline(caller string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[caller]
}

var deadlineAnswer = regexp.MustCompile(`deadline (\d+)`)

// TestACallsDeadlineCountsFromItsArrival: a request waited for a work
// slot for up to the budget, and only then did its call get a budget of
// its own, so a call that waited had up to twice the budget (three times,
// with the wait at the door), past every client's and load balancer's
// timeout. One clock now runs from the request's arrival: a call that
// waited for a work slot gives the call limits (the Limiter) and the
// connector a deadline no later than its arrival plus the budget, on the
// direct path and through mcp-go's transport, before 2026-07-28 and on
// it. arrivedBy is a time the call had surely arrived by (it waits for
// a work slot then), so the deadline can be no later than arrivedBy plus
// the budget; before, it was the moment the call got its slot, after
// arrivedBy, plus the budget.
func TestACallsDeadlineCountsFromItsArrival(t *testing.T) {
	const budget = 20 * time.Second
	progress := strings.Replace(modernMeta, `"_meta":{`, `"_meta":{"progressToken":"p1",`, 1)
	for _, c := range []struct{ name, version, extra string }{
		{"2025-06-18, direct", "2025-06-18", ""},
		{"2025-06-18, mcp-go's transport", "2025-06-18", `,"_meta":{"progressToken":"p1"}`},
		{"2026-07-28, direct", mcp.ProtocolVersion20260728, "," + modernMeta},
		{"2026-07-28, mcp-go's transport", mcp.ProtocolVersion20260728, "," + progress},
	} {
		t.Run(c.name, func(t *testing.T) {
			limiter := &deadlineLimiter{seen: map[string]time.Time{}}
			endpoint, hold, _, _, e := gatedEngineWith(t, Options{Budget: budget, MaxActive: 1, CallerShare: 100, Limiter: limiter})
			release := releaseOnce(t, hold)
			holder := make(chan callResult, 1)
			go sendCall(t, endpoint, "holder", "2025-06-18", "hold", "", holder)
			waitCount(t, e.admission, "work slots free", 0, func() int { return e.admission.free })
			queued := make(chan callResult, 1)
			go sendCall(t, endpoint, "queued", c.version, "deadline", c.extra, queued)
			waitQueued(t, e.admission, 1)
			arrivedBy := time.Now()
			release()
			r := <-queued
			m := deadlineAnswer.FindStringSubmatch(r.body)
			if r.status != http.StatusOK || m == nil {
				t.Fatalf("the queued call: %d %s; want its deadline", r.status, r.body)
			}
			ns, _ := strconv.ParseInt(m[1], 10, 64)
			latest := arrivedBy.Add(budget)
			if seen := time.Unix(0, ns); seen.After(latest) {
				t.Errorf("the connector's deadline is %s after the call's arrival plus the budget", seen.Sub(latest))
			}
			if seen := limiter.deadline("queued"); seen.IsZero() {
				t.Error("the call limits were taken without a deadline")
			} else if seen.After(latest) {
				t.Errorf("the call limits' deadline is %s after the call's arrival plus the budget", seen.Sub(latest))
			}
			<-holder
		})
	}
}

// TestACallWhoseTimeRanOutWaitingNeverReachesTheERP: the door's wait, the
// wait for a work slot and the call each had a budget of their own. A
// call let in at the door after half the budget, that then waited for a
// work slot until past its arrival plus the budget, was still sent to
// the ERP with a whole budget of its own, long after the client, or a
// load balancer, had given up on it. Now a call whose time runs out while
// it waits gets the busy error, saying it waited for a free slot, and the
// ERP never sees it.
//
// One work slot and two call slots: a call holding the work slot in
// erpgate's own work, a request whose body has not arrived holding the
// other call slot, and the call waiting at the door. The slow request
// goes away after half the budget (the call is let in, and waits for the
// work slot), and the work slot is given back once the budget has passed
// since the call had surely arrived.
func TestACallWhoseTimeRanOutWaitingNeverReachesTheERP(t *testing.T) {
	const budget = 2 * time.Second
	endpoint, hold, upstreamGo, upstreamSeen, e := gatedEngineWith(t, Options{Budget: budget, MaxActive: 1, MaxCalls: 2, CallerShare: 100, BodyTimeout: time.Minute})
	release := releaseOnce(t, hold)
	holder := make(chan callResult, 1)
	go sendCall(t, endpoint, "holder", "2025-06-18", "hold", "", holder)
	waitCount(t, e.admission, "work slots free", 0, func() int { return e.admission.free })
	slow := rawRequest(t, endpoint, http.MethodPost, map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2025-06-18", "Content-Length": "500", "X-Test-Caller": "slow",
	}, `{"jsonrpc":"2.0",`)
	waitCount(t, e.admission, "call slots free", 0, func() int { return e.admission.callsFree })
	queued := make(chan callResult, 1)
	go sendCall(t, endpoint, "queued", "2025-06-18", "fetch", "", queued)
	waitEntering(t, e.admission, 1)
	arrivedBy := time.Now()
	time.Sleep(time.Until(arrivedBy.Add(budget / 2)))
	_ = slow.Close()
	time.Sleep(time.Until(arrivedBy.Add(budget)))
	release()
	var r callResult
	select {
	case <-upstreamSeen:
		t.Error("the ERP got the request of a call whose time ran out while it waited for a work slot")
		close(upstreamGo)
		r = <-queued
	case r = <-queued:
	}
	if !strings.Contains(r.body, "waited for a free slot") {
		t.Errorf("the call whose time ran out while it waited: %d %s; want the busy error saying it waited for a free slot", r.status, r.body)
	}
	select {
	case <-upstreamSeen:
		t.Error("the ERP got the request of a call whose time ran out while it waited for a work slot")
	default:
	}
	<-holder
}

// sendLate sends a 2025-06-18 tools/call of tool with args as caller
// whose body comes only once the budget has passed since the request had
// surely arrived (it holds a call slot, reading its body, by then), and
// returns the status and the body of the answer.
func sendLate(t *testing.T, endpoint string, e *Engine, caller, tool, args string) (int, string) {
	t.Helper()
	return sendAfter(t, endpoint, e, caller, tool, args, e.opts.Budget)
}

// sendAfter sends a tools/call whose body comes delay after its request
// arrived (sendLate's, for any delay).
func sendAfter(t *testing.T, endpoint string, e *Engine, caller, tool, args string, delay time.Duration) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	conn := rawRequest(t, endpoint, http.MethodPost, map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2025-06-18", "Content-Length": strconv.Itoa(len(body)), "X-Test-Caller": caller,
	}, "")
	waitCount(t, e.admission, "call slots free", e.admission.calls-1, func() int { return e.admission.callsFree })
	arrivedBy := time.Now()
	time.Sleep(time.Until(arrivedBy.Add(delay)))
	if _, err := conn.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	resp := readStatus(t, conn)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestACallWhoseTimeRanOutBeforeItStartedIsNotSent: a call whose time
// ran out before it started (here its body came after its arrival plus
// the budget; a call let in just as its wait for a work slot ran out is
// another) still got a whole budget of its own, and went to the ERP.
// Now it is refused as busy (RATE_LIMITED, retryable), with a sentence
// saying it waited for a free slot and nothing was sent to the ERP, and
// the ERP never sees it.
func TestACallWhoseTimeRanOutBeforeItStartedIsNotSent(t *testing.T) {
	endpoint, _, _, upstreamSeen, e := gatedEngineWith(t, Options{Budget: 300 * time.Millisecond, CallerShare: 100, BodyTimeout: time.Minute})
	status, body := sendLate(t, endpoint, e, "late", "fetch", "{}")
	if status != http.StatusOK || !strings.Contains(body, `RATE_LIMITED`) || !strings.Contains(body, "waited for a free slot") ||
		!strings.Contains(body, "nothing was sent to the ERP") || !strings.Contains(body, `"retryable":true`) {
		t.Errorf("the call whose time ran out before it started: %d %s; want RATE_LIMITED saying it waited for a free slot", status, body)
	}
	select {
	case <-upstreamSeen:
		t.Error("the ERP got the request of a call whose time ran out before it started")
	default:
	}
}

// TestAWriteWhoseTimeRanOutBeforeItStartedProposesNothing: the same for
// a write tool's call: no preview is made (it reads the ERP), nothing is
// proposed, and the call is refused as busy.
func TestAWriteWhoseTimeRanOutBeforeItStartedProposesNothing(t *testing.T) {
	f := newWriteFixtureWith(t, func(o *Options) { o.Budget, o.BodyTimeout = 300*time.Millisecond, time.Minute })
	status, body := sendLate(t, f.service(t, "bot"), f.engine, "service:bot", "make_thing", `{"name":"Widget","qty":2}`)
	if status != http.StatusOK || !strings.Contains(body, `RATE_LIMITED`) || !strings.Contains(body, "nothing was sent to the ERP") {
		t.Errorf("the write whose time ran out before it started: %d %s; want RATE_LIMITED", status, body)
	}
	if n := f.previews.Load(); n != 0 {
		t.Errorf("%d previews made of a write whose time ran out before it started; want none", n)
	}
	var proposed int
	if err := f.pool.QueryRow(t.Context(), `SELECT count(*) FROM pending_actions`).Scan(&proposed); err != nil {
		t.Fatal(err)
	}
	if proposed != 0 {
		t.Errorf("%d actions proposed for a write whose time ran out before it started; want none", proposed)
	}
}

// lateLimiter lets every call in, but answers only once the context's
// deadline has passed: a limits database whose "yes" came back as the
// request's time ran out.
type lateLimiter struct{ late atomic.Bool }

func (l *lateLimiter) Acquire(ctx context.Context, _, _ string) (func(), error) {
	if l.late.Load() {
		<-ctx.Done()
	}
	return func() {}, nil
}

// TestACallWhoseTimeRanOutInItsLimitsIsRefusedAsBusy: the call limits
// (the Limiter's Acquire) wait within the request's deadline, and a call
// whose limits were granted only as that deadline passed went on with no
// time left: a read was told the ERP "did not answer in time" (nothing
// had been sent to it), an approved write failed on the approval store
// with erpgate's internal error. Both are the busy refusal of a call whose
// time ran out while it waited (RATE_LIMITED, nothing sent to the ERP),
// and the approval still holds.
func TestACallWhoseTimeRanOutInItsLimitsIsRefusedAsBusy(t *testing.T) {
	t.Run("read", func(t *testing.T) {
		limiter := &lateLimiter{}
		limiter.late.Store(true)
		endpoint, _, _, upstreamSeen, _ := gatedEngineWith(t, Options{Budget: 300 * time.Millisecond, CallerShare: 100, Limiter: limiter})
		out := make(chan callResult, 1)
		sendCall(t, endpoint, "late", "2025-06-18", "fetch", "", out)
		r := <-out
		if !strings.Contains(r.body, `RATE_LIMITED`) || !strings.Contains(r.body, "waited for a free slot") || !strings.Contains(r.body, "nothing was sent to the ERP") {
			t.Errorf("the read whose limits came as its time ran out: %d %s; want RATE_LIMITED saying it waited", r.status, r.body)
		}
		select {
		case <-upstreamSeen:
			t.Error("the ERP got the request of a call whose time ran out in its limits")
		default:
		}
	})
	t.Run("approved write", func(t *testing.T) {
		limiter := &lateLimiter{}
		f := newWriteFixtureWith(t, func(o *Options) { o.Budget, o.Limiter = 300*time.Millisecond, limiter })
		cs := connect(t, f.person(t, jane), "", nil)
		args := map[string]any{"name": "Widget"}
		res, m := call(t, cs, "make_thing", args)
		id := approvalOf(t, res, m)
		f.decide(t, id, jane, true)
		limiter.late.Store(true)
		res, m = call(t, cs, "make_thing", args)
		e, _ := m["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if !res.IsError || errCode(m) != "RATE_LIMITED" || !strings.Contains(msg, "waited for a free slot") {
			t.Errorf("the approved write whose limits came as its time ran out: %v; want RATE_LIMITED saying it waited", m)
		}
		if a, err := f.store.Get(t.Context(), f.site.ID, id); err != nil || a.Status != approval.Approved {
			t.Errorf("the approval after it: %s %v, want still approved", a.Status, err)
		}
		limiter.late.Store(false)
		if res, m = call(t, cs, "make_thing", args); res.IsError || f.runs.Load() != 1 {
			t.Errorf("the same call once the limits answer in time: %v, %d runs; want the approved change made once", m, f.runs.Load())
		}
	})
}

// TestAWriteLeftWithTooLittleTimeIsRefusedAsBusy: a write that starts
// with less than half its budget left (its body came late here; a wait at
// the door or for a work slot is another way) would have the ERP save it
// after erpgate had given up on the answer, an outcome not known that
// spends the approval. It is refused as busy before anything of it is
// done; with its whole budget the same write is proposed.
func TestAWriteLeftWithTooLittleTimeIsRefusedAsBusy(t *testing.T) {
	const budget = 2 * time.Second
	f := newWriteFixtureWith(t, func(o *Options) { o.Budget, o.BodyTimeout = budget, time.Minute })
	endpoint := f.service(t, "bot")
	status, body := sendAfter(t, endpoint, f.engine, "service:bot", "make_thing", `{"name":"Widget","qty":2}`, budget*6/10)
	if status != http.StatusOK || !strings.Contains(body, `RATE_LIMITED`) || !strings.Contains(body, "too little of its time") {
		t.Errorf("the write left with 40 %% of its budget: %d %s; want RATE_LIMITED saying too little time was left", status, body)
	}
	if n := f.previews.Load(); n != 0 {
		t.Errorf("%d previews made of a write left with too little time; want none", n)
	}
	status, body = sendAfter(t, endpoint, f.engine, "service:bot", "make_thing", `{"name":"Widget","qty":2}`, 0)
	if status != http.StatusOK || strings.Contains(body, `RATE_LIMITED`) || f.previews.Load() != 1 {
		t.Errorf("the same write with its whole budget: %d %s, %d previews; want it proposed", status, body, f.previews.Load())
	}
}
