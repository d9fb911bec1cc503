package mcpengine

import (
	"container/list"
	"context"
	"errors"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// Admission bounds what a replica takes on, with two counts:
//
//   - Work: how many MCP requests it works on at once, so that under
//     overload the excess waits at the door, where a waiting request holds
//     little more than its connection, instead of deep in the call chain
//     (a request waiting there for the database pool or the CPU holds its
//     MCP session, its decoded arguments and a deep goroutine stack: about
//     three times the memory). A tool call gives its work slot back while it
//     waits on the ERP, so this bound applies to the work erpgate itself
//     does (CPU and database); calls coming back from the ERP are served
//     before new arrivals, so work in progress finishes first.
//   - Calls: how many requests it holds at once, waiting on the ERP
//     included. A call at the ERP holds an ERP connection, its goroutines
//     and, once answered, up to the response bound in memory; the limiter
//     bounds such calls per caller and per site, and this bounds them per
//     replica, however many sites are slow at once. A new request takes a
//     call slot, at the door, before it takes a work slot.
//
// Both are shared fairly between callers: one caller (Session.LimitKey: a
// service token, or a user of a site) holds at most its share
// (Options.CallerShare) of each, so that however many requests it sends,
// the rest of the replica stays free for everyone else. A site's owner
// makes as many callers as they like (service tokens, users of an ERP they
// control), so the callers of one site together hold at most the site's
// share (Options.SiteShare) too. A caller over its share of call slots, or
// of its site's, waits briefly at the door (callerWait) and is then
// refused; one over a share of work slots waits like any request.
//
// Shares alone let two sites fill a replica (two of 50 %). So the last
// tenth of the call slots (the reserve) is kept for sites that hold less
// than their part of the replica, the call slots divided by one more than
// the number of sites with requests at the door or inside (at least one
// slot; a replica of fewer than ten slots keeps none): a site arriving
// at a replica that others have filled still gets in, and a site already
// holding its part waits for a slot outside the reserve.
//
// Besides, large ERP answers (largeAnswer, 64 KiB, or more, such as big
// reports and long lists) are bounded in bytes: a call holds the sizes of
// all its large answers of the replica's answer budget until it ends.
// Each takes room before it is read when its length is announced, or
// before more than its first 64 KiB are read when it is not (then it
// holds room in steps as the answer grows: 256 KiB, then the response
// bound until the answer is read). A call never waits for room while it
// holds room: one that holds none waits (one that finds no room for its
// answer's next step gives back what it holds and waits holding none);
// one that holds room for other answers too (a tool that pages, a search
// over several doctypes) takes more at once or is refused, RATE_LIMITED
// when the room is not free, RESPONSE_TOO_LARGE when its answers hold all
// the room one call may. A caller, and a site, hold at most their share
// of that budget too. A call holds several times its answers (their
// parsed form, its reply) until its reply is written, so this is what
// keeps a replica's memory bounded when many large answers are held at
// once; the many small answers are not affected.

// defaultMaxActive is the bound when Options.MaxActive is 0: enough to keep
// every CPU and the database pool busy.
func defaultMaxActive() int { return max(16, 8*runtime.GOMAXPROCS(0)) }

// defaultMaxCalls is the bound when Options.MaxCalls is 0: at 20 ms per
// ERP answer, enough calls in flight to keep every CPU busy several times
// over.
func defaultMaxCalls() int { return max(256, 128*runtime.GOMAXPROCS(0)) }

// largeAnswer is the size from which an ERP answer counts against the
// replica's answer budget. A held call holds its answer several times over
// (the bytes, their parsed form, the reply they become) until its reply is
// written, so the memory rule (docs/deploy.md) counts six times this for
// each held call besides its 60 KiB: from 1 MiB, 256 held calls with
// answers just under it held far more than the rule allowed. 64 KiB is
// still far above an ordinary answer (the benchmark's 20-customer list is
// a few KB), which only compares its length with it. An answer of unknown
// length is charged in steps (outbound.PrefetchCharged): four times this
// once it is large, then the response bound; a call that finds no room for
// the bound (and holds none for other answers) waits holding none, and
// holds meanwhile the 256 KiB it read uncharged, within the six times this
// the rule counts for a held call.
const largeAnswer = 64 << 10

// defaultMaxAnswerBytes is the answer budget when Options.MaxAnswerBytes is
// 0.
const defaultMaxAnswerBytes = 64 << 20

// admission is a counting semaphore of work slots with two FIFO queues,
// one of call slots with one, and a weighted one of answer bytes.
type admission struct {
	mu       sync.Mutex
	free     int
	resumes  list.List // *admissionWaiter: calls back from the ERP
	arrivals list.List // *admissionWaiter: new requests
	// callsFree counts the free call slots; entries are the new requests
	// waiting for one, reserveEntries those that may take one of the
	// reserve (see enterAs), served first.
	callsFree      int
	entries        list.List // *admissionWaiter
	reserveEntries list.List // *admissionWaiter
	// calls is the number of call slots, reserve how many of the last
	// free ones only sites under their part may take (0 without site
	// shares).
	calls, reserve int
	// answers is the budget of large answers' bytes, answerBudget its
	// size.
	answers      *semaphore.Weighted
	answerBudget int64
	// answerWaits counts the calls waiting for room in the budget.
	answerWaits atomic.Int32
	// callers holds each caller to its share of the slots, sites each
	// site (all its callers together) to its share.
	callers, sites callerGates
}

type admissionWaiter struct{ granted chan struct{} }

// defaultCallerShare is the percentage of the call and work slots one
// caller may hold when Options.CallerShare is 0.
const defaultCallerShare = 25

// callerWait is the longest a caller over its share of call slots waits at
// the door before it is refused (at most the budget).
const callerWait = time.Second

// defaultSiteShare is the site's share when Options.SiteShare is 0: twice
// a caller's, at most the whole replica.
func defaultSiteShare(callerShare int) int { return min(100, 2*callerShare) }

func newAdmission(work, calls int, answerBytes int64) *admission {
	return newFairAdmission(work, calls, answerBytes, 100, 100)
}

// newFairAdmission is newAdmission with each caller held to share percent
// of the work and call slots and of the answer budget, and each site to
// siteShare percent of them (at least one of each).
func newFairAdmission(work, calls int, answerBytes int64, share, siteShare int) *admission {
	a := &admission{free: work, callsFree: calls, calls: calls, answers: semaphore.NewWeighted(answerBytes), answerBudget: answerBytes}
	a.callers.init(work, calls, answerBytes, share)
	a.sites.init(work, calls, answerBytes, siteShare)
	if a.sites.m != nil {
		a.reserve = calls / 10 // none with fewer than ten slots
	}
	return a
}

// init holds each key to share percent of the bounds; with 100 %, it holds
// none (its map stays nil).
func (g *callerGates) init(work, calls int, answerBytes int64, share int) {
	g.callsCap, g.workCap, g.answersCap = int64(calls), int64(work), answerBytes
	if share < 100 {
		g.m = map[string]*callerGate{}
		g.callsCap = int64(max(1, calls*share/100))
		g.workCap = int64(max(1, work*share/100))
		// At least one large answer: an answer larger than the share
		// still goes, alone.
		g.answersCap = max(largeAnswer, answerBytes*int64(share)/100)
	}
}

// callerGates holds each caller's (or each site's) share of the slots, for
// as long as it has a request at the door or inside; one with none takes
// no memory.
type callerGates struct {
	mu                sync.Mutex
	m                 map[string]*callerGate
	callsCap, workCap int64
	// answersCap is a caller's share of the answer budget, in bytes.
	answersCap int64
}

// callerGate is one caller's share: calls counts its call slots, work its
// work slots, answers its bytes of the answer budget. inside counts the
// replica's call slots a site's requests hold.
type callerGate struct {
	refs                 int
	calls, work, answers *semaphore.Weighted
	inside               atomic.Int32
}

// get returns key's gate and the number of keys with one.
func (g *callerGates) get(key string) (*callerGate, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.m[key]
	if c == nil {
		c = &callerGate{calls: semaphore.NewWeighted(g.callsCap), work: semaphore.NewWeighted(g.workCap), answers: semaphore.NewWeighted(g.answersCap)}
		g.m[key] = c
	}
	c.refs++
	return c, len(g.m)
}

func (g *callerGates) put(key string, c *callerGate) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.refs--; c.refs == 0 {
		delete(g.m, key)
	}
}

// size is the number of callers with a request at the door or inside
// (0 with a share of 100 %).
func (g *callerGates) size() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.m)
}

// enter takes a call slot of key's share, waiting at most callerWait and
// not past deadline, and returns the number of keys with a gate too; a
// share of 100 % (a nil map) holds nobody and returns nil.
func (g *callerGates) enter(ctx context.Context, key string, deadline time.Time) (*callerGate, int, error) {
	if g.m == nil {
		return nil, 0, nil
	}
	c, n := g.get(key)
	if !c.calls.TryAcquire(1) {
		if d := time.Now().Add(callerWait); d.Before(deadline) {
			deadline = d
		}
		cctx, cancel := context.WithDeadline(ctx, deadline)
		err := c.calls.Acquire(cctx, 1)
		cancel()
		if err != nil {
			g.put(key, c)
			return nil, 0, err
		}
	}
	return c, n, nil
}

// errCallerShare is the refusal of a caller over its share of call slots,
// errSiteShare that of a caller whose site is over its share.
var (
	errCallerShare = errors.New("the caller holds its share of this replica's requests")
	errSiteShare   = errors.New("the site's callers hold its share of this replica's requests")
)

// enterAs takes, for caller key of site, a share of the call slots and
// then one of the site's share (waiting at most callerWait for each) and
// then a call slot, never waiting past deadline: the request's arrival
// plus the budget, which its wait for a work slot and its call share.
// The slot it returns holds no work slot yet (see work).
func (a *admission) enterAs(ctx context.Context, site, key string, deadline time.Time) (*callSlot, error) {
	s := &callSlot{adm: a}
	c, _, err := a.callers.enter(ctx, key, deadline)
	if err != nil {
		if ctx.Err() == nil {
			err = errCallerShare
		}
		return nil, err
	}
	s.key, s.caller = key, c
	// The caller's share first: a caller over it waits for its own room
	// and takes none of its site's meanwhile.
	sc, sites, err := a.sites.enter(ctx, site, deadline)
	if err != nil {
		s.done()
		if ctx.Err() == nil {
			err = errSiteShare
		}
		return nil, err
	}
	s.siteKey, s.site = site, sc
	// A site under its part of the replica may take the reserve.
	reserve := sc == nil || int(sc.inside.Load()) < max(1, a.calls/(sites+1))
	if !a.tryEnter(reserve) {
		ectx, cancel := context.WithDeadline(ctx, deadline)
		err := a.enter(ectx, reserve)
		cancel()
		if err != nil {
			s.done()
			return nil, err
		}
	}
	s.entered = true
	if sc != nil {
		sc.inside.Add(1)
	}
	return s, nil
}

// work takes a work slot for s, its caller's share and its site's first,
// waiting at most until deadline (the request's arrival plus the budget).
func (s *callSlot) work(ctx context.Context, deadline time.Time) error {
	if s.tryWork() {
		s.mu.Lock()
		s.held = true
		s.mu.Unlock()
		return nil
	}
	// Only a request that has to queue pays for a deadline.
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if err := s.takeWork(ctx, false); err != nil {
		return err
	}
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
	return nil
}

// acquireWithin waits, as a new arrival, for a call slot and then a work
// slot, for at most wait in all.
func (a *admission) acquireWithin(ctx context.Context, wait time.Duration) error {
	entered := a.tryEnter(true)
	if entered && a.tryAcquire() {
		return nil
	}
	// Only a request that has to queue pays for a deadline.
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if !entered {
		if err := a.enter(ctx, true); err != nil {
			return err
		}
	}
	if err := a.acquire(ctx, false); err != nil {
		a.exit()
		return err
	}
	return nil
}

// tryEnter takes a free call slot; one of the reserve only if reserve.
func (a *admission) tryEnter(reserve bool) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.callsFree > a.kept(reserve) {
		a.callsFree--
		return true
	}
	return false
}

// kept is how many free call slots a request may not take.
func (a *admission) kept(reserve bool) int {
	if reserve {
		return 0
	}
	return a.reserve
}

// enter waits for a call slot (one of the reserve only if reserve), or
// until ctx ends.
func (a *admission) enter(ctx context.Context, reserve bool) error {
	a.mu.Lock()
	if a.callsFree > a.kept(reserve) {
		a.callsFree--
		a.mu.Unlock()
		return nil
	}
	q := &a.entries
	if reserve {
		q = &a.reserveEntries
	}
	return a.wait(ctx, q, a.exit)
}

// exit gives a call slot back: to the first entry waiting that may take
// the reserve, else to the first other one if the slot is not one of the
// reserve.
func (a *admission) exit() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e := a.reserveEntries.Front(); e != nil {
		a.reserveEntries.Remove(e)
		close(e.Value.(*admissionWaiter).granted)
		return
	}
	if e := a.entries.Front(); e != nil && a.callsFree >= a.reserve {
		a.entries.Remove(e)
		close(e.Value.(*admissionWaiter).granted)
		return
	}
	a.callsFree++
}

func (a *admission) tryAcquire() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.free > 0 {
		a.free--
		return true
	}
	return false
}

// acquire waits for a slot, or until ctx ends. resume marks a call coming
// back from an upstream request; it goes ahead of new arrivals.
func (a *admission) acquire(ctx context.Context, resume bool) error {
	a.mu.Lock()
	// A free slot with nobody waiting (release hands slots to waiters
	// directly, so free > 0 means the queues are empty).
	if a.free > 0 {
		a.free--
		a.mu.Unlock()
		return nil
	}
	q := &a.arrivals
	if resume {
		q = &a.resumes
	}
	return a.wait(ctx, q, a.release)
}

// wait queues in q until a slot is handed over, or until ctx ends; a slot
// handed over just as ctx ended is passed on with giveBack. It is called
// with a.mu held and returns with it released.
func (a *admission) wait(ctx context.Context, q *list.List, giveBack func()) error {
	w := &admissionWaiter{granted: make(chan struct{})}
	el := q.PushBack(w)
	a.mu.Unlock()
	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	select {
	case <-w.granted:
		a.mu.Unlock()
		giveBack()
	default:
		q.Remove(el)
		a.mu.Unlock()
	}
	return ctx.Err()
}

// release gives a slot back, to the first waiting resume, else the first
// arrival.
func (a *admission) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, q := range []*list.List{&a.resumes, &a.arrivals} {
		if e := q.Front(); e != nil {
			q.Remove(e)
			close(e.Value.(*admissionWaiter).granted)
			return
		}
	}
	a.free++
}

// callSlot is one request's hold on a slot. A tool call may send upstream
// requests from several goroutines; the slot is given back while any of
// them waits on the ERP and taken again when the last one is answered.
type callSlot struct {
	adm *admission
	// key and caller are the caller's share, siteKey and site its site's
	// (nil in tests of the slots alone, and with a share of 100 %).
	key      string
	caller   *callerGate
	siteKey  string
	site     *callerGate
	mu       sync.Mutex
	upstream int // upstream requests under way
	held     bool
	entered  bool  // holds a call slot
	answer   int64 // bytes of the answer budget it holds
	// reading is the part of answer held by answers still being read,
	// which may give some back once read (fitAnswer).
	reading int64
	// mine is the part of answer taken from its caller's share, siteMine
	// the part taken from its site's.
	mine     int64
	siteMine int64
	answerMu sync.Mutex
	finished bool // done was called
	// replying marks a call whose work is done and whose reply is being
	// written (rest): it takes no work slot again.
	replying bool
}

// leave gives the slot back before an upstream request.
func (s *callSlot) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.upstream++
	if s.held {
		s.held = false
		s.giveWork()
	}
}

// tryWork takes a work slot, and its caller's and site's shares of it,
// if all three are free at once.
func (s *callSlot) tryWork() bool {
	if s.caller != nil && !s.caller.work.TryAcquire(1) {
		return false
	}
	if s.site != nil && !s.site.work.TryAcquire(1) {
		s.giveShares(true, false)
		return false
	}
	if !s.adm.tryAcquire() {
		s.giveShares(true, true)
		return false
	}
	return true
}

// takeWork waits for the caller's share of work slots, then its site's,
// and then for a work slot; resume marks a call coming back from the ERP.
func (s *callSlot) takeWork(ctx context.Context, resume bool) error {
	if s.caller != nil {
		if err := s.caller.work.Acquire(ctx, 1); err != nil {
			return err
		}
	}
	if s.site != nil {
		if err := s.site.work.Acquire(ctx, 1); err != nil {
			s.giveShares(true, false)
			return err
		}
	}
	if err := s.adm.acquire(ctx, resume); err != nil {
		s.giveShares(true, true)
		return err
	}
	return nil
}

// giveShares gives the caller's share of a work slot back, and the
// site's.
func (s *callSlot) giveShares(caller, site bool) {
	if caller && s.caller != nil {
		s.caller.work.Release(1)
	}
	if site && s.site != nil {
		s.site.work.Release(1)
	}
}

// giveWork gives a work slot and the caller's and site's shares of it
// back.
func (s *callSlot) giveWork() {
	s.adm.release()
	s.giveShares(true, true)
}

// resume takes a slot again after an upstream request, unless another one
// of the call's requests is still under way.
func (s *callSlot) resume(ctx context.Context) error {
	s.mu.Lock()
	s.upstream--
	if s.upstream > 0 || s.held || s.replying {
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	if err := s.takeWork(ctx, true); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held || s.upstream > 0 || s.finished || s.replying {
		// Another request of the call came back first, or a new one left,
		// or the call has ended or is being answered (a handler's stray
		// request).
		s.giveWork()
		return nil
	}
	s.held = true
	return nil
}

// rest gives the work slot back for good once the request's work is done
// and its reply is about to be written: a client that takes its reply in
// slowly (or not at all) holds its call slot, and with it the reply's
// bytes, until the write deadline, never one of the few work slots.
func (s *callSlot) rest() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replying = true
	if s.held {
		s.held = false
		s.giveWork()
	}
}

// done gives the slots back for good.
func (s *callSlot) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		s.held = false
		s.giveWork()
	}
	if s.entered {
		s.entered = false
		if s.site != nil {
			s.site.inside.Add(-1)
		}
		s.adm.exit()
	}
	if s.mine > 0 {
		s.caller.answers.Release(s.mine)
		s.mine = 0
	}
	if s.siteMine > 0 {
		s.site.answers.Release(s.siteMine)
		s.siteMine = 0
	}
	if s.caller != nil && !s.finished {
		s.caller.calls.Release(1)
		s.adm.callers.put(s.key, s.caller)
	}
	if s.site != nil && !s.finished {
		s.site.calls.Release(1)
		s.adm.sites.put(s.siteKey, s.site)
	}
	if s.answer > 0 {
		s.adm.answers.Release(s.answer)
		s.answer = 0
	}
	s.finished = true
}

// takeAnswer reads resp's body now (outbound.PrefetchCharged). A large
// answer takes room in the replica's answer budget before it is read when
// its length is announced. When it is not (chunked, HTTP/2 without a
// length, gzip), it takes room in steps as it is read: for four times
// largeAnswer before more than its first largeAnswer bytes are read, and
// for the most an answer may be before more than that; it gives back what
// it did not need once read. Each large answer of a call takes its own
// room, and the call holds the sum of its answers' until it ends (see
// growRoom): a call that holds no room waits for it, one that holds room
// (its earlier answers', a tool that pages or searches several doctypes)
// takes more without waiting or is refused, since waiting while holding
// room could deadlock two calls. Small answers take none.
func (s *callSlot) takeAnswer(ctx context.Context, resp *http.Response) error {
	var took room
	var refused error
	n, _ := outbound.PrefetchCharged(resp, largeAnswer, func(most int64) error {
		// most is a running total for this answer.
		took, refused = s.growRoom(ctx, took, most)
		return refused
	})
	s.fitAnswer(took, int64(n))
	return refused
}

// holdAnswer takes room for an answer of n bytes, read at once.
func (s *callSlot) holdAnswer(ctx context.Context, n int64) error {
	took, err := s.takeRoom(ctx, n)
	s.fitAnswer(took, n)
	return err
}

// room is bytes of the answer budget: the replica's, and the parts of it
// taken from the caller's share (mine) and the site's (siteMine).
type room struct{ answer, mine, siteMine int64 }

func (r room) plus(o room) room {
	return room{r.answer + o.answer, r.mine + o.mine, r.siteMine + o.siteMine}
}

func (r room) minus(o room) room {
	return room{r.answer - o.answer, r.mine - o.mine, r.siteMine - o.siteMine}
}

// takeRoom takes room for n bytes for a new large answer of the call and
// returns what it took (see growRoom).
func (s *callSlot) takeRoom(ctx context.Context, n int64) (room, error) {
	return s.growRoom(ctx, room{}, n)
}

// errAnswersTooLarge is the refusal of a large answer of a call that holds
// all the answer room one call may; errAnswerRoomBusy that of one whose
// room is not free at once.
var (
	errAnswersTooLarge = errors.New("the call's large answers hold all the answer room it may")
	errAnswerRoomBusy  = errors.New("no answer room free for the call's later large answer")
)

// growRoom takes room for n bytes in all for one large answer of the call
// that holds took for it so far (none for a new answer), and returns what
// the answer holds then. The call holds the sum of its answers' room, at
// most the whole budget, and of its caller's and site's shares at most
// the share (one answer larger still goes, alone).
//
// A call never waits for room while it holds room (two calls doing so
// could deadlock). So when the call holds no room but this answer's, the
// answer takes the difference at once if there is room, and if not gives
// back all it holds and waits, holding none, for room for n. When the
// call holds room for other answers too (a tool that pages, a search over
// several doctypes), the answer takes the difference at once or is
// refused: RATE_LIMITED, as a wait whose time runs out, when the room is
// not free (or the call holds all it may only because answers still being
// read, which may give some back, hold it), RESPONSE_TOO_LARGE when the
// call holds all the room it may. A call that has ended takes none.
func (s *callSlot) growRoom(ctx context.Context, took room, n int64) (room, error) {
	// One acquisition per call at a time: a large answer of the same call
	// sent in parallel waits for this one's, then goes on.
	s.answerMu.Lock()
	defer s.answerMu.Unlock()
	n = min(n, s.adm.answerBudget)
	s.mu.Lock()
	held, reading := room{s.answer, s.mine, s.siteMine}, s.reading
	s.mu.Unlock()
	if n <= took.answer {
		return took, nil
	}
	if others := held.minus(took); others.answer > 0 {
		return s.addRoomNow(took, held, reading-took.answer, n)
	}
	mine, siteMine := s.shares(n)
	want := room{n, max(mine, took.mine), max(siteMine, took.siteMine)}
	if took.answer > 0 {
		if more := want.minus(took); s.tryRoom(more) {
			if s.addRoom(more) {
				return want, nil
			}
			s.giveRoom(more)
			return took, nil
		}
		// Give back all the call holds, and wait holding none.
		if !s.takeBack(took) {
			return took, nil // the call has ended: done gave it back
		}
		took = room{}
	}
	if err := s.waitRoom(ctx, want); err != nil {
		return took, err
	}
	if !s.addRoom(want) {
		// The call ended meanwhile (a handler's stray request): give the
		// room back at once.
		s.giveRoom(want)
		return room{}, nil
	}
	return want, nil
}

// addRoomNow is growRoom for a call that holds room for other answers
// than this one's (took): it holds held in all, othersReading of it for
// other answers still being read. It grows the answer's room towards n
// within what the call may hold, without waiting.
func (s *callSlot) addRoomNow(took, held room, othersReading, n int64) (room, error) {
	var more room
	var full, f bool
	more.answer, full = growth(n-took.answer, s.adm.answerBudget-held.answer)
	if s.caller != nil {
		more.mine, f = growth(n-took.mine, s.adm.callers.answersCap-held.mine)
		full = full || f
	}
	if s.site != nil {
		more.siteMine, f = growth(n-took.siteMine, s.adm.sites.answersCap-held.siteMine)
		full = full || f
	}
	switch {
	case full && othersReading > 0:
		return took, answerRoomBusy()
	case full:
		return took, toolerr.Wrap(toolerr.ResponseTooLarge, errAnswersTooLarge,
			"the ERP's answers to this call are together more than this replica holds for one call; ask for fewer rows or a narrower range")
	case !s.tryRoom(more):
		return took, answerRoomBusy()
	case !s.addRoom(more):
		s.giveRoom(more)
		return took, nil
	}
	return took.plus(more), nil
}

// growth is how much of need bytes more a bound with left bytes left
// grants, and whether it has none left for them.
func growth(need, left int64) (int64, bool) {
	switch {
	case need <= 0:
		return 0, false
	case left <= 0:
		return 0, true
	}
	return min(need, left), false
}

// shares is the part of n bytes of the answer budget taken from the
// caller's share, and from the site's.
func (s *callSlot) shares(n int64) (mine, siteMine int64) {
	if s.caller != nil {
		mine = min(n, s.adm.callers.answersCap)
	}
	if s.site != nil {
		siteMine = min(n, s.adm.sites.answersCap)
	}
	return mine, siteMine
}

// waitRoom waits for r: r.answer bytes of the replica's answer budget,
// r.mine of the caller's share and r.siteMine of the site's, taking all
// or none of them.
func (s *callSlot) waitRoom(ctx context.Context, r room) error {
	s.adm.answerWaits.Add(1)
	defer s.adm.answerWaits.Add(-1)
	if r.mine > 0 {
		// The caller's share first, then its site's, so that a caller
		// over one waits for its own room and takes none of the
		// replica's meanwhile.
		if err := s.caller.answers.Acquire(ctx, r.mine); err != nil {
			return answerRoomRefused(err)
		}
	}
	if r.siteMine > 0 {
		if err := s.site.answers.Acquire(ctx, r.siteMine); err != nil {
			s.giveRoom(room{mine: r.mine})
			return answerRoomRefused(err)
		}
	}
	if err := s.adm.answers.Acquire(ctx, r.answer); err != nil {
		s.giveRoom(room{mine: r.mine, siteMine: r.siteMine})
		return answerRoomRefused(err)
	}
	return nil
}

// tryRoom takes r if all of it is free now, else none.
func (s *callSlot) tryRoom(r room) bool {
	if r.mine > 0 && !s.caller.answers.TryAcquire(r.mine) {
		return false
	}
	if r.siteMine > 0 && !s.site.answers.TryAcquire(r.siteMine) {
		s.giveRoom(room{mine: r.mine})
		return false
	}
	if r.answer > 0 && !s.adm.answers.TryAcquire(r.answer) {
		s.giveRoom(room{mine: r.mine, siteMine: r.siteMine})
		return false
	}
	return true
}

// giveRoom gives r back to the replica, the caller and the site; the call
// does not hold it.
func (s *callSlot) giveRoom(r room) {
	if r.mine > 0 {
		s.caller.answers.Release(r.mine)
	}
	if r.siteMine > 0 {
		s.site.answers.Release(r.siteMine)
	}
	if r.answer > 0 {
		s.adm.answers.Release(r.answer)
	}
}

// addRoom adds r, taken for an answer still being read, to the room the
// call holds, and reports whether it did: a call that has ended holds
// none.
func (s *callSlot) addRoom(r room) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return false
	}
	s.answer += r.answer
	s.mine += r.mine
	s.siteMine += r.siteMine
	s.reading += r.answer
	return true
}

// takeBack gives back r, room the call holds for an answer still being
// read, and reports whether it did: a call that has ended holds none.
func (s *callSlot) takeBack(r room) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return false
	}
	s.answer -= r.answer
	s.mine -= r.mine
	s.siteMine -= r.siteMine
	s.reading -= r.answer
	s.giveRoom(r)
	return true
}

// fitAnswer gives back the room one large answer took (took) beyond the n
// bytes read of it, and counts the answer as read: an answer of unknown
// length took room for the most it might be, and a refused one keeps
// none.
func (s *callSlot) fitAnswer(took room, n int64) {
	if took.answer == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return // done gave it all back
	}
	s.reading -= took.answer
	back := room{took.answer - min(n, took.answer), took.mine - min(n, took.mine), took.siteMine - min(n, took.siteMine)}
	s.answer -= back.answer
	s.mine -= back.mine
	s.siteMine -= back.siteMine
	s.giveRoom(back)
}

// answerRoomBusy is the error of a call's later large answer refused at
// once, since a call that holds room never waits for more.
func answerRoomBusy() error {
	return toolerr.Wrap(toolerr.RateLimited, errAnswerRoomBusy,
		"this replica had no room free at once for another large ERP answer of this call, while other large answers fill it; retry shortly, or ask for fewer rows or a narrower range").
		WithRetryAfter(time.Second)
}

// answerRoomRefused is the error of a call whose time ran out while its
// large answer waited for room.
func answerRoomRefused(err error) error {
	return toolerr.Wrap(toolerr.RateLimited, err,
		"this replica was busy with other large ERP answers until the call's time ran out; retry shortly, or ask for fewer rows or a narrower range").
		WithRetryAfter(time.Second)
}

// slotTransport gives the call's slot back while a request is with the
// ERP, and while its answer is read: the body is read (bounded, and cut by
// the budget) before the call waits for a slot to continue, so that a
// waiting call holds the answer's bytes, not an ERP connection with its
// goroutines and buffers.
//
// It also measures the call's time with the ERP (requestState.erpBegin and
// erpEnd): from sending the request to having read the answer; the wait
// for a slot afterwards, and what the tool does with the answer, are
// erpgate's time. A large answer that waits for room in the answer budget
// (before it is read, or after its first 64 KiB when its length is not
// announced) counts that wait too; it is rare, and the answer is at the
// ERP's end of the connection meanwhile.
type slotTransport struct {
	next http.RoundTripper
	slot *callSlot
	st   *requestState
	// writes: the call is a write tool's, whose requests other than reads
	// may change the ERP.
	writes bool
}

func (t *slotTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.slot.leave()
	t.st.erpBegin(time.Now())
	resp, err := t.next.RoundTrip(req)
	if err == nil {
		if aerr := t.slot.takeAnswer(req.Context(), resp); aerr != nil {
			_ = resp.Body.Close()
			resp, err = nil, aerr
			if t.writes && req.Method != http.MethodGet && req.Method != http.MethodHead {
				// The ERP has answered a write's request, and may have made
				// the change: not "busy, retry" (RATE_LIMITED), which would
				// invite making it twice, but an answer lost, which the
				// engine tells as an outcome not known.
				err = toolerr.Wrap(toolerr.UpstreamUnavailable, aerr,
					"the ERP answered the change, but this replica had no room for its large answer (other large ERP answers filled it), so the answer was not read")
			}
		}
	}
	// The answer has been read (or the request failed): the time with the
	// ERP ends here, before the wait for a slot and the tool's own work.
	t.st.erpEnd(time.Now())
	if rerr := t.slot.resume(req.Context()); rerr != nil && err == nil {
		// The budget ran out while waiting to continue.
		_ = resp.Body.Close()
		return nil, rerr
	}
	return resp, err
}
