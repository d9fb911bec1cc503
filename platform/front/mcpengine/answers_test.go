package mcpengine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// TestAnswersOfUnknownLengthStayWithinTheAnswerBudget: twelve calls whose
// ERP answers come without a length (chunked, 6 MiB each) in a replica
// whose answer budget is 8 MiB. One call holds its answer's room; the
// others wait for room, each holding at most the first step's bytes it
// read (four times largeAnswer) before it found no room for the next, so
// the replica holds at most the budget and four times largeAnswer a call.
// Before, each answer of unknown length was read whole before it was
// counted: the eleven waiting calls held 66 MiB.
func TestAnswersOfUnknownLengthStayWithinTheAnswerBudget(t *testing.T) {
	const calls, budget = 12, 8 << 20
	endpoint, hold, _, _, e := gatedEngineWith(t, Options{Budget: time.Minute, MaxActive: 4, MaxCalls: 64, CallerShare: 100, MaxAnswerBytes: budget})
	release := releaseOnce(t, hold)
	bigstreamHeld.Store(0)
	before := liveHeap()
	replies := make(chan string, calls)
	for range calls {
		go func() {
			_, body := postToolCall(t, endpoint, "bigstream")
			replies <- body
		}()
	}
	// One call has read its answer and holds in its handler; the others
	// wait for room in the answer budget.
	waitCount(t, e.admission, "holding a large answer", 1, func() int { return int(bigstreamHeld.Load()) })
	waitAnswerWaits(t, e.admission, calls-1)
	held := int64(liveHeap()) - int64(before)
	t.Logf("live heap grew by %.1f MiB with %d calls of answers of unknown length", float64(held)/(1<<20), calls)
	if bound := int64(budget + calls*4*largeAnswer); held > bound {
		t.Errorf("the replica holds %.1f MiB of answers at once, over its answer budget of %d MiB and %d KiB for each of its %d calls",
			float64(held)/(1<<20), budget>>20, 4*largeAnswer>>10, calls)
	}
	release()
	for range calls {
		select {
		case body := <-replies:
			if !strings.Contains(body, fmt.Sprint(chunkedAnswer)) {
				t.Errorf("a call of an answer of unknown length: %.300s", body)
			}
		case <-time.After(30 * time.Second): // turns a hang into a failure
			t.Fatal("a call of an answer of unknown length never ended")
		}
	}
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestAnswerRoomOfUnknownLengthComesBack: the room an answer of unknown
// length takes while it is read comes back to the replica, the caller
// and the site however its call ends: its answer over the response bound,
// its connection broken, its handler panicking, its wait for room running
// out of time, or its client gone while it waits.
func TestAnswerRoomOfUnknownLengthComesBack(t *testing.T) {
	const budget = 8 << 20
	endpoint, _, _, _, e := gatedEngineWith(t, Options{Budget: 2 * time.Second, MaxActive: 4, CallerShare: 50, SiteShare: 75, MaxAnswerBytes: budget})
	a := e.admission
	whole := func(after string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !a.answers.TryAcquire(budget); {
			if time.Now().After(deadline) { // turns a leak into a failure
				t.Fatalf("after %s, the answer budget did not all come back", after)
			}
			time.Sleep(time.Millisecond)
		}
		a.answers.Release(budget)
		waitCount(t, a, "callers with a share", 0, a.callers.size)
		waitCount(t, a, "sites with a share", 0, a.sites.size)
	}
	for _, tc := range []struct{ tool, code string }{
		{"stream", "RESPONSE_TOO_LARGE"},
		{"brokenstream", "UPSTREAM_UNAVAILABLE"},
		{"bigpanic", "INTERNAL"},
	} {
		if status, body := postToolCall(t, endpoint, tc.tool); status != http.StatusOK || !strings.Contains(body, tc.code) {
			t.Fatalf("%s: %d %.300s, want %s", tc.tool, status, body, tc.code)
		}
		whole("a call of " + tc.tool)
	}

	// With the budget taken, a call waits for room until its time runs
	// out, or until its client goes.
	if !a.answers.TryAcquire(budget) {
		t.Fatal("the answer budget is taken")
	}
	if status, body := postToolCall(t, endpoint, "stream"); status != http.StatusOK || !strings.Contains(body, "RATE_LIMITED") {
		t.Fatalf("waiting for room past the call's time: %d %.300s", status, body)
	}
	ctx, cancel := context.WithCancel(t.Context())
	gone := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bigstream","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		gone <- err
	}()
	waitAnswerWaits(t, a, 1)
	cancel()
	if err := <-gone; err == nil {
		t.Fatal("the client that went got a reply")
	}
	waitAnswerWaits(t, a, 0)
	a.answers.Release(budget)
	whole("a call whose client went while it waited for room")
}

// TestAnswerOfUnknownLengthKeepsTheRoomItNeeds: an answer of unknown
// length takes room for the response bound while it is read, and then
// gives back to the replica, its caller and its site what it did not
// need; more room than it took is never given back.
func TestAnswerOfUnknownLengthKeepsTheRoomItNeeds(t *testing.T) {
	const budget = 64 << 20 // a caller's share 16 MiB, a site's 32
	a := newFairAdmission(16, 256, budget, 25, 50)
	ctx := context.Background()
	s, err := a.enterAs(ctx, "site-a", "user:site-a:u1", time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer s.done()
	took, err := s.takeRoom(ctx, 8<<20)
	if took.answer != 8<<20 || err != nil {
		t.Fatalf("room for the response bound: %v, %v", took, err)
	}
	s.fitAnswer(took, 3<<20)
	for _, free := range []struct {
		what string
		sem  interface {
			TryAcquire(int64) bool
			Release(int64)
		}
		n int64
	}{
		{"the replica", a.answers, budget - 3<<20},
		{"the caller", s.caller.answers, 16<<20 - 3<<20},
		{"the site", s.site.answers, 32<<20 - 3<<20},
	} {
		if !free.sem.TryAcquire(free.n) {
			t.Errorf("%s did not get back the room the answer did not need", free.what)
			continue
		}
		free.sem.Release(free.n)
		if free.sem.TryAcquire(free.n + 1) {
			t.Errorf("%s got back more room than the answer did not need", free.what)
			free.sem.Release(free.n + 1)
		}
	}
	s.done()
	if !a.answers.TryAcquire(budget) {
		t.Fatal("the answer budget did not all come back")
	}
	a.answers.Release(budget)
}

// TestMediumAnswersOfUnknownLengthHoldOnlyWhatTheyNeed: eight calls whose
// ERP answers come without a length (chunked, 200 KB each, as a gzip
// answer does once unpacked) in a replica whose answer budget is 4 MiB.
// The eight need 1.6 MB in all, so all eight hold their answers at once
// and none waits for room; once read, each holds its answer's size.
// Before, each such answer took room for the response bound (8 MiB,
// capped to the budget) after its first 64 KiB: one call held its answer
// and the seven others waited for room.
func TestMediumAnswersOfUnknownLengthHoldOnlyWhatTheyNeed(t *testing.T) {
	const calls, budget = 8, 4 << 20
	endpoint, hold, _, _, e := gatedEngineWith(t, Options{Budget: time.Minute, MaxActive: calls, MaxCalls: 64, CallerShare: 100, MaxAnswerBytes: budget})
	a := e.admission
	release := releaseOnce(t, hold)
	mediumstreamHeld.Store(0)
	replies := make(chan string, calls)
	for range calls {
		go func() {
			_, body := postToolCall(t, endpoint, "mediumstream")
			replies <- body
		}()
	}
	// Every call either holds its answer, in its handler with a work slot,
	// or waits for room.
	waitCount(t, a, "calls holding their answer or waiting for room", calls, func() int {
		return int(mediumstreamHeld.Load()) + int(a.answerWaits.Load())
	})
	if held, waits := mediumstreamHeld.Load(), a.answerWaits.Load(); held != calls || waits != 0 {
		t.Errorf("%d calls hold their answer of %d bytes and %d wait for room in a budget of %d MiB; want all %d holding",
			held, mediumAnswer, waits, budget>>20, calls)
	}
	// What they hold of the budget is their answers' bytes.
	if mediumstreamHeld.Load() == calls {
		free := int64(budget - calls*mediumAnswer)
		if !a.answers.TryAcquire(free) {
			t.Errorf("the calls hold more of the budget than their answers' %d bytes", calls*mediumAnswer)
		} else {
			if a.answers.TryAcquire(1) {
				t.Errorf("the calls hold less of the budget than their answers' %d bytes", calls*mediumAnswer)
				a.answers.Release(1)
			}
			a.answers.Release(free)
		}
	}
	release()
	for range calls {
		select {
		case body := <-replies:
			if !strings.Contains(body, fmt.Sprint(mediumAnswer)) {
				t.Errorf("a call of a medium answer of unknown length: %.300s", body)
			}
		case <-time.After(30 * time.Second): // turns a hang into a failure
			t.Fatal("a call of a medium answer of unknown length never ended")
		}
	}
}

// TestGrowingAnswerRoomNeverWaitsHoldingRoom: two calls each hold half the
// answer budget for answers of unknown length still being read, and both
// outgrow it. Neither waits for more while it holds room, which would
// deadlock them: the first gives its half back and waits holding none,
// the second then does too, and the first gets the whole budget. The
// second, its time out while it waits, holds nothing, and the whole
// budget comes back once the first ends.
func TestGrowingAnswerRoomNeverWaitsHoldingRoom(t *testing.T) {
	const budget = 1 << 20
	a := newFairAdmission(4, 4, budget, 50, 100)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // turns a deadlock into a failure
	defer cancel()
	first, err := a.enterAs(ctx, "site", "service:first", time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer first.done()
	second, err := a.enterAs(ctx, "site", "service:second", time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer second.done()
	took := map[*callSlot]room{}
	for _, s := range []*callSlot{first, second} {
		r, err := s.takeRoom(ctx, budget/2)
		if r.answer != budget/2 || err != nil {
			t.Fatalf("half the budget: %v, %v", r, err)
		}
		took[s] = r
	}
	answer := func(s *callSlot) int64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.answer
	}
	firstGrew := make(chan error, 1)
	go func() { // capped to the budget
		_, err := first.growRoom(ctx, took[first], 2*budget)
		firstGrew <- err
	}()
	waitAnswerWaits(t, a, 1)
	if n := answer(first); n != 0 {
		t.Fatalf("the first call waits for more room holding %d bytes of it", n)
	}
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	secondGrew := make(chan error, 1)
	go func() {
		_, err := second.growRoom(sctx, took[second], budget)
		secondGrew <- err
	}()
	if err := <-firstGrew; err != nil || answer(first) != budget {
		t.Fatalf("the first call's room once the second gave its half back: %v, %d bytes", err, answer(first))
	}
	waitAnswerWaits(t, a, 1)
	if n := answer(second); n != 0 {
		t.Fatalf("the second call waits for more room holding %d bytes of it", n)
	}
	scancel()
	if err := <-secondGrew; err == nil || !strings.Contains(err.Error(), "large ERP answers") {
		t.Fatalf("the second call's wait, its time out: %v", err)
	}
	first.done()
	if !a.answers.TryAcquire(budget) {
		t.Fatal("the answer budget did not all come back")
	}
	a.answers.Release(budget)
	for _, c := range []*callerGate{first.caller, second.caller} {
		if !c.answers.TryAcquire(budget / 2) {
			t.Fatal("a caller's share of the answer budget did not all come back")
		}
		c.answers.Release(budget / 2)
	}
}

// TestEachLargeAnswerOfACallIsCharged: a call that reads several large
// ERP answers (a tool paging through a list, a search over several
// doctypes) and keeps them holds the room of each of them in the answer
// budget, not only of its first. Before, only the first was charged: a
// call whose first answer was 100 KiB held 4.6 MiB of answers (and could
// hold any number of answers up to the response bound each) against 100
// KiB of the budget, so other calls' large answers were let in beside it.
func TestEachLargeAnswerOfACallIsCharged(t *testing.T) {
	const budget = 8 << 20
	endpoint, hold, _, _, e := gatedEngineWith(t, Options{Budget: time.Minute, MaxActive: 4, CallerShare: 100, MaxAnswerBytes: budget})
	release := releaseOnce(t, hold)
	pagesHeld.Store(0)
	reply := make(chan string, 1)
	go func() {
		_, body := postToolCall(t, endpoint, "pages")
		reply <- body
	}()
	waitCount(t, e.admission, "bytes held by the pages call", 1, func() int {
		if pagesHeld.Load() > 0 {
			return 1
		}
		return 0
	})
	held := pagesHeld.Load()
	free := int64(0)
	for step := int64(budget); step > 0; step /= 2 {
		for e.admission.answers.TryAcquire(step) {
			free += step
		}
	}
	e.admission.answers.Release(free)
	charged := int64(budget) - free
	t.Logf("the call holds %d bytes of ERP answers, charged %d", held, charged)
	if charged < held {
		t.Errorf("a call holding %.1f MiB of large ERP answers is charged %.1f MiB of the answer budget",
			float64(held)/(1<<20), float64(charged)/(1<<20))
	}
	release()
	select {
	case body := <-reply:
		if !strings.Contains(body, fmt.Sprint(held)) {
			t.Errorf("the pages call: %.300s", body)
		}
	case <-time.After(20 * time.Second): // turns a hang into a failure
		t.Fatal("the pages call never ended")
	}
	for deadline := time.Now().Add(10 * time.Second); !e.admission.answers.TryAcquire(budget); {
		if time.Now().After(deadline) { // turns a leak into a failure
			t.Fatal("the answer budget did not all come back")
		}
		time.Sleep(time.Millisecond)
	}
	e.admission.answers.Release(budget)
}

// TestLaterAnswerOfUnknownLengthGrowsWithoutWaiting: a call that keeps an
// earlier large answer (1 MiB of a 4 MiB budget) reads another of unknown
// length. Its steps (256 KiB, then the response bound) count against the
// budget too: with 512 KiB free, the first step fits and the second is
// refused at once, as busy, without waiting while the call holds room,
// and the answer's room comes back; with the budget free, the answer holds
// its 1 MiB beside the earlier one. Before, only the call's first answer
// was charged: the second was read whole and held uncharged.
func TestLaterAnswerOfUnknownLengthGrowsWithoutWaiting(t *testing.T) {
	const budget = 4 << 20
	a := newAdmission(4, 4, budget)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // turns a wait into a failure
	defer cancel()
	s := &callSlot{adm: a, held: true, entered: true}
	defer s.done()
	if err := s.holdAnswer(ctx, 1<<20); err != nil {
		t.Fatal(err)
	}
	unknownLength := func() *http.Response {
		return &http.Response{ContentLength: -1, Body: io.NopCloser(bytes.NewReader(make([]byte, 1<<20)))}
	}
	others := int64(budget - 1<<20 - 1<<19)
	if !a.answers.TryAcquire(others) {
		t.Fatal("the rest of the budget is not free")
	}
	err := s.takeAnswer(ctx, unknownLength())
	if err == nil || toolerr.Classify(err).Code != toolerr.RateLimited || ctx.Err() != nil {
		t.Errorf("a later answer of unknown length with 512 KiB free: %v (waited: %v)", err, ctx.Err())
	}
	if s.answer != 1<<20 {
		t.Errorf("the call holds %d bytes of the budget after its refused answer, want the earlier answer's 1 MiB", s.answer)
	}
	a.answers.Release(others)
	if err := s.takeAnswer(ctx, unknownLength()); err != nil {
		t.Fatalf("a later answer of unknown length with the budget free: %v", err)
	}
	if s.answer != 2<<20 {
		t.Errorf("the call holds %d bytes of the budget, want its two answers' 2 MiB", s.answer)
	}
	s.done()
	if !a.answers.TryAcquire(budget) {
		t.Fatal("the answer budget did not all come back")
	}
	a.answers.Release(budget)
}
