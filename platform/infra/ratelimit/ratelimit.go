// Package ratelimit enforces erpgate's call limits in Postgres, so they hold
// across every replica: per caller (a service token or an ERP user) at most
// N calls in flight and M calls started per minute, and per site an
// instance-wide ceiling on both, so a busy deployment never trips the ERP's
// own licence throttle.
//
// The counts live in one row per (site, caller) and one per site, updated in
// place (migration 00007). Every call in flight holds a lease on its
// caller's row and its site's, and every call started is counted in the
// rows' current minute, so the limits are exact across replicas. What
// makes most calls free of any database round trip:
//
//   - Warm slots. When a caller's calls arrive back to back, its replica
//     keeps a finished call's lease for the caller's next call instead of
//     ending it, for up to Limits.Linger.
//   - Reservations. An acquisition also reserves a few more calls of the
//     current minute, for the caller and for the site, that the replica
//     then starts on warm slots without asking; when half of them are
//     used it reserves more in the background (topUp), so a steady caller
//     only meets the database again when the minute turns.
//
// A lease or reservation a replica holds but does not use still counts, so
// another replica may be refused because of it. Every refusal is announced
// (NOTIFY, see Reclaim): replicas give back what they hold idle for that
// caller or site, and the refused replica asks again a few times over some
// tens of milliseconds before answering RATE_LIMITED.
//
// Finished calls' leases and unused reservations are given back in batches
// off the reply path. A lease left by a crashed replica stops counting
// after the lease TTL.
package ratelimit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Limits are the numbers a Limiter enforces.
type Limits struct {
	UserConcurrency int
	UserPerMinute   int
	SiteConcurrency int
	SitePerMinute   int
	// LeaseTTL bounds how long a lease of a vanished replica blocks a slot.
	// It must exceed WarmFor plus the longest call.
	LeaseTTL time.Duration
	// Linger is how long a replica keeps a back-to-back caller's slot and
	// its reservations after its last call ended. Zero turns warm slots
	// and reservations off: every call then costs a round trip.
	Linger time.Duration
	// WarmFor is the age after which a lease is no longer reused.
	WarmFor time.Duration
	// Sites are sites' own ceilings, in place of SiteConcurrency and
	// SitePerMinute for them (SetSiteCeilings); not changed once in force.
	Sites map[uuid.UUID]SiteCeiling
}

// SiteCeiling is one site's own call ceilings, set by the operator for an
// ERP whose licence allows fewer calls than the deployment's ceiling (or
// more); a zero number leaves the deployment's in force for the site.
type SiteCeiling struct {
	Concurrency, PerMinute int
}

// of is lim for one site: with its own ceilings, where it has them.
func (lim *Limits) of(site uuid.UUID) Limits {
	out := *lim
	if c, ok := lim.Sites[site]; ok {
		if c.Concurrency > 0 {
			out.SiteConcurrency = c.Concurrency
		}
		if c.PerMinute > 0 {
			out.SitePerMinute = c.PerMinute
		}
	}
	return out
}

// refusalMemory bounds how long a refusal through the database answers
// the same caller's next calls on this replica without asking again (at
// most its retry-after), and every caller's of the site when the site's
// own limits refused it. A call of the site ending here forgets it, and so
// do new numbers and a purge of expired leases; a slot freed on another
// replica is seen within it.
const refusalMemory = time.Second

// refusalMemo is a remembered refusal: err until until.
type refusalMemo struct {
	err   error
	until time.Time
}

// retryAfterRefusal are the pauses before asking again after a refusal,
// while other replicas give back what they hold idle.
var retryAfterRefusal = []time.Duration{5 * time.Millisecond, 15 * time.Millisecond, 40 * time.Millisecond}

// Limiter implements mcpengine.Limiter on Postgres.
type Limiter struct {
	pool *pgxpool.Pool
	// limits is in force; SetNumbers replaces it while calls run.
	limits atomic.Pointer[Limits]
	log    *zap.Logger

	mu      sync.Mutex
	callers map[callerID]*callerState
	sites   map[uuid.UUID]*siteState
	// refused remembers each caller's last refusal through the database
	// for a moment (refusalMemory), so that a refused caller that keeps
	// calling is refused here, not by four round trips and as many
	// announcements to every replica per call.
	// By site, then caller; refusedN counts them.
	refused  map[uuid.UUID]map[string]refusalMemo
	refusedN int
	// queue is what this replica has to give back: leases of finished
	// calls and unused reservations. The Janitor sends it as soon as
	// something is queued; what fails to send (database down) stays.
	queue   []giveBack
	closing bool
	// kick wakes the Janitor when something was queued.
	kick chan struct{}
	// flushing is held by a Flush from taking the queue until what failed
	// to send is queued again, so that a Flush (Drain's) never ends while
	// another one (the Janitor's, cancelled) still holds part of the queue.
	flushing sync.Mutex
	// topUpsRunning counts reservations asked for in the background; Drain
	// waits for them, so that nothing is granted after it gave back.
	topUpsRunning sync.WaitGroup

	// roundTrips counts acquisitions that asked the database; topUps
	// the reservations asked for ahead, off the calls' path.
	roundTrips, topUps atomic.Int64
}

type callerID struct {
	site   uuid.UUID
	caller string
}

type lease struct {
	id    uuid.UUID
	taken time.Time
}

// reservation is a number of calls counted in the database's minute
// [start, end) that this replica may still start without asking.
type reservation struct {
	left       int
	start, end time.Time
}

func (r reservation) usable(now time.Time) bool { return r.left > 0 && now.Before(r.end) }

// add merges calls granted in the minute starting at start.
func (r *reservation) add(granted int, start, end time.Time) {
	if granted <= 0 || start.Before(r.start) {
		return // nothing, or calls of a minute that is over
	}
	if !r.start.Equal(start) {
		// The old minute's leftovers are void: the rows counting them
		// have moved on to a new minute.
		*r = reservation{start: start, end: end}
	}
	r.left += granted
}

type callerState struct {
	idle    []lease // warm: held for the caller's next call
	busy    int
	budget  reservation
	lastEnd time.Time // when its last call ended
	// toppingUp is set while a top-up of budget is under way.
	toppingUp bool
}

type siteState struct {
	budget    reservation
	busy      int
	lastUse   time.Time
	toppingUp bool
}

// giveBack is one entry of erpgate_call_release.
type giveBack struct {
	site   uuid.UUID
	caller string // '' for the site's reservation
	lease  uuid.UUID
	leased bool
	// expires is when the entry no longer matters: the lease's TTL, or
	// the reservation's minute.
	expires time.Time
	unused  int
	window  time.Time
}

// New returns a limiter. Run Janitor in the background: it gives back what
// finished calls leave and purges idle rows.
func New(pool *pgxpool.Pool, limits Limits, log *zap.Logger) *Limiter {
	if limits.LeaseTTL <= 0 {
		limits.LeaseTTL = 2 * time.Minute
	}
	if limits.WarmFor <= 0 || limits.WarmFor > limits.LeaseTTL/2 {
		limits.WarmFor = limits.LeaseTTL / 4
	}
	if log == nil {
		log = zap.NewNop()
	}
	l := &Limiter{
		pool: pool, log: log,
		callers: map[callerID]*callerState{},
		sites:   map[uuid.UUID]*siteState{},
		refused: map[uuid.UUID]map[string]refusalMemo{},
		kick:    make(chan struct{}, 1),
	}
	l.limits.Store(&limits)
	return l
}

// SetNumbers puts new per-caller and per-site limits in force for the
// calls that start next (the operator's live settings); zero keeps a
// number. Reservations already held are used up under the old numbers.
func (l *Limiter) SetNumbers(userConcurrency, userPerMinute, siteConcurrency, sitePerMinute int) {
	next := *l.limits.Load()
	set := func(dst *int, v int) {
		if v > 0 {
			*dst = v
		}
	}
	set(&next.UserConcurrency, userConcurrency)
	set(&next.UserPerMinute, userPerMinute)
	set(&next.SiteConcurrency, siteConcurrency)
	set(&next.SitePerMinute, sitePerMinute)
	l.limits.Store(&next)
	l.mu.Lock()
	clear(l.refused)
	l.refusedN = 0
	l.mu.Unlock()
}

// SetSiteCeilings puts sites' own ceilings in force for the calls that
// start next (the operator's live settings), replacing those in force:
// a site not in ceilings has the deployment's. It gives back what this
// replica reserved ahead of a site whose ceilings changed, so that the new
// ones hold from its next call on, not once that reservation is used up.
func (l *Limiter) SetSiteCeilings(ceilings map[uuid.UUID]SiteCeiling) {
	next := *l.limits.Load()
	old := next.Sites
	next.Sites = make(map[uuid.UUID]SiteCeiling, len(ceilings))
	for site, c := range ceilings {
		if c.Concurrency > 0 || c.PerMinute > 0 {
			next.Sites[site] = c
		}
	}
	l.limits.Store(&next)
	l.mu.Lock()
	changed := false
	for site, ss := range l.sites {
		if old[site] != next.Sites[site] {
			l.giveBackSiteLocked(site, ss)
			changed = true
		}
	}
	clear(l.refused)
	l.refusedN = 0
	l.mu.Unlock()
	if changed {
		l.wake()
	}
}

// cur is the limits in force.
func (l *Limiter) cur() *Limits { return l.limits.Load() }

// liveFloor is the smallest lease id still live at now: the UUID whose
// first 48 bits are the millisecond now - ttl and whose other bits are
// zero. Lease ids are UUIDv7 (their first 48 bits are the millisecond they
// were taken) and Postgres compares UUIDs byte by byte, so a lease has
// expired when its id is below the floor. Replicas' clocks must agree to
// well within the TTL (the call budget plus a margin).
func liveFloor(now time.Time, ttl time.Duration) uuid.UUID {
	var u uuid.UUID
	ms := uint64(now.Add(-ttl).UnixMilli())
	for i := 0; i < 6; i++ {
		u[i] = byte(ms >> (8 * (5 - i)))
	}
	return u
}

// Acquire takes a slot for one call of callerKey on siteID, or fails with
// RATE_LIMITED and a retry-after.
//
// A warm slot with a reservation left costs nothing; otherwise it is one
// round trip (erpgate_call_acquire), and after a refusal up to three more
// within some 60 ms. A caller refused that way is refused without asking
// for a moment after (refusalMemory).
func (l *Limiter) Acquire(ctx context.Context, siteID, callerKey string) (func(), error) {
	site, err := uuid.Parse(siteID)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: site id: %w", err)
	}
	id := callerID{site, callerKey}
	start := time.Now()
	if release, ok := l.warm(id, start); ok {
		return release, nil
	}
	if refused := l.remembered(id, start); refused != nil {
		return nil, refused
	}
	for attempt := 0; ; attempt++ {
		release, refused, err := l.ask(ctx, id, start)
		if err != nil || refused == nil {
			return release, err
		}
		if attempt == len(retryAfterRefusal) {
			key := id.caller
			if refused.site {
				// The site's own limits: all its callers alike.
				key = siteWide
			}
			l.remember(id.site, key, refused.err)
			return nil, refused.err
		}
		// The refusal was announced: other replicas give back what they
		// hold idle for this caller or site. Ask again shortly.
		select {
		case <-ctx.Done():
			return nil, refused.err
		case <-time.After(retryAfterRefusal[attempt]):
		}
	}
}

// remembered is id's refusal, or its site's, if it was refused through
// the database less than refusalMemory (and its retry-after) ago.
func (l *Limiter) remembered(id callerID, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	callers := l.refused[id.site]
	if callers == nil {
		return nil
	}
	key := id.caller
	m, ok := callers[key]
	if !ok {
		key = siteWide
		if m, ok = callers[key]; !ok {
			return nil
		}
	}
	if !now.Before(m.until) {
		l.forget(id.site, key)
		return nil
	}
	return m.err
}

// siteWide is the key in Limiter.refused of a refusal by the site's own
// limits, which holds for every caller of the site (no caller key is
// empty).
const siteWide = ""

// forget drops the remembered refusal of caller on site. l.mu is held.
func (l *Limiter) forget(site uuid.UUID, caller string) {
	callers := l.refused[site]
	if _, ok := callers[caller]; !ok {
		return
	}
	delete(callers, caller)
	l.refusedN--
	if len(callers) == 0 {
		delete(l.refused, site)
	}
}

// remember keeps the refusal of caller (siteWide: of every caller) on
// site for refusalMemory, at most its retry-after.
func (l *Limiter) remember(site uuid.UUID, caller string, refused error) {
	d := refusalMemory
	var te *toolerr.Error
	if errors.As(refused, &te) && te.RetryAfter > 0 {
		d = min(d, te.RetryAfter)
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refusedN >= maxRefusals {
		// Callers refused at once beyond it are asked for as before.
		for site, callers := range l.refused {
			for caller, m := range callers {
				if !now.Before(m.until) {
					l.forget(site, caller)
				}
			}
		}
		if l.refusedN >= maxRefusals {
			return
		}
	}
	callers := l.refused[site]
	if callers == nil {
		callers = map[string]refusalMemo{}
		l.refused[site] = callers
	}
	if _, ok := callers[caller]; !ok {
		l.refusedN++
	}
	callers[caller] = refusalMemo{err: refused, until: now.Add(d)}
}

// maxRefusals bounds the refusals a replica remembers at once.
const maxRefusals = 10_000

// warm starts the call on a warm slot with a reservation left, if there
// is one.
func (l *Limiter) warm(id callerID, now time.Time) (func(), bool) {
	if l.cur().Linger <= 0 {
		return nil, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	cs, ss := l.callers[id], l.sites[id.site]
	if cs == nil || ss == nil || len(cs.idle) == 0 || !cs.budget.usable(now) || !ss.budget.usable(now) {
		return nil, false
	}
	le := cs.idle[len(cs.idle)-1]
	if now.Sub(le.taken) >= l.cur().WarmFor {
		return nil, false // too old to reuse; ask ends it
	}
	cs.idle = cs.idle[:len(cs.idle)-1]
	cs.budget.left--
	ss.budget.left--
	cs.busy++
	ss.busy++
	ss.lastUse = now
	// Reserve more before the reservations run out, so that the caller's
	// next calls need no round trip either. The site's reservation is
	// spent by all its callers, so it runs low at other times than this
	// caller's: when either is due, the other comes along if it is within
	// a reservation of being due, and the two then stay in step, one
	// round trip per top-up instead of two.
	var userExtra, siteExtra int
	lim := l.cur().of(id.site)
	userChunk, siteChunk := reserveChunk(lim.UserPerMinute), reserveChunk(lim.SitePerMinute)
	userFree := userChunk > 0 && !cs.toppingUp
	siteFree := siteChunk > 0 && !ss.toppingUp
	if userFree && cs.budget.left <= userChunk/2 || siteFree && ss.budget.left <= siteChunk/2 {
		if userFree && cs.budget.left <= userChunk {
			userExtra = userChunk
		}
		if siteFree && ss.budget.left <= siteChunk {
			siteExtra = siteChunk
		}
	}
	if (userExtra > 0 || siteExtra > 0) && !l.closing {
		cs.toppingUp = cs.toppingUp || userExtra > 0
		ss.toppingUp = ss.toppingUp || siteExtra > 0
		l.topUpsRunning.Add(1)
		go l.topUp(id, userExtra, siteExtra)
	}
	return l.releaser(id, le, now), true
}

// topUp reserves more calls of the current minute for a caller and its
// site (erpgate_call_reserve, migration 00008), off the path of any call.
func (l *Limiter) topUp(id callerID, userExtra, siteExtra int) {
	defer l.topUpsRunning.Done()
	l.topUps.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var start, end time.Time
	var userGranted, siteGranted int
	lim := l.cur().of(id.site)
	err := l.pool.QueryRow(ctx, `SELECT * FROM erpgate_call_reserve($1, $2, $3, $4, $5, $6)`,
		pgUUID(id.site), id.caller, lim.UserPerMinute, lim.SitePerMinute, userExtra, siteExtra,
	).Scan(&start, &end, &userGranted, &siteGranted)
	l.mu.Lock()
	defer l.mu.Unlock()
	cs, ss := l.callers[id], l.sites[id.site]
	if userExtra > 0 && cs != nil {
		cs.toppingUp = false
	}
	if siteExtra > 0 && ss != nil {
		ss.toppingUp = false
	}
	if err != nil {
		if ctx.Err() == nil {
			l.log.Debug("reserving calls ahead failed", zap.Error(err))
		}
		return
	}
	// Calls granted to a state that is gone (given back meanwhile) are
	// given back too.
	if cs != nil {
		cs.budget.add(userGranted, start, end)
	} else if userGranted > 0 {
		l.queue = append(l.queue, giveBack{site: id.site, caller: id.caller, unused: userGranted, window: start, expires: end})
	}
	siteGranted = l.siteGrantLocked(id.site, lim, siteGranted, start, end)
	if ss != nil {
		ss.budget.add(siteGranted, start, end)
	} else if siteGranted > 0 {
		l.queue = append(l.queue, giveBack{site: id.site, unused: siteGranted, window: start, expires: end})
	}
}

// limitRefusal is a limit's refusal of a call: err, RATE_LIMITED, and whether
// the site's own limits refused it (site).
type limitRefusal struct {
	err  *toolerr.Error
	site bool
}

// ask acquires through the database. refused is the refusal when a limit
// refused the call.
func (l *Limiter) ask(ctx context.Context, id callerID, now time.Time) (release func(), refused *limitRefusal, err error) {
	le := lease{taken: now}
	// The numbers asked with are the ones a refusal is told by.
	lim := l.cur().of(id.site)
	if le.id, err = uuid.NewV7(); err != nil {
		return nil, nil, fmt.Errorf("ratelimit: lease id: %w", err)
	}
	// Leases of this caller this replica no longer needs (warm ones, and
	// finished calls' not yet given back) are ended in the same round
	// trip, so they do not count against this call.
	l.mu.Lock()
	cs := l.callers[id]
	if cs == nil {
		cs = &callerState{}
		l.callers[id] = cs
	}
	ss := l.sites[id.site]
	if ss == nil {
		ss = &siteState{}
		l.sites[id.site] = ss
	}
	var ended []giveBack
	for _, w := range cs.idle {
		ended = append(ended, giveBack{site: id.site, caller: id.caller, lease: w.id, leased: true, expires: w.taken.Add(l.cur().LeaseTTL)})
	}
	cs.idle = nil
	l.queue = slices.DeleteFunc(l.queue, func(g giveBack) bool {
		if g.leased && g.site == id.site && g.caller == id.caller {
			ended = append(ended, g)
			return true
		}
		return false
	})
	// Reserve ahead only for a caller whose calls come back to back: only
	// its calls can run on a warm slot and use the reservations; anyone
	// else's would be given back unused a moment later.
	var userExtra, siteExtra int
	if backToBack := !cs.lastEnd.IsZero() && now.Sub(cs.lastEnd) < l.cur().Linger; backToBack {
		if !cs.budget.usable(now) {
			userExtra = reserveChunk(lim.UserPerMinute)
		}
		if !ss.budget.usable(now) {
			siteExtra = reserveChunk(lim.SitePerMinute)
		}
	}
	l.mu.Unlock()
	endedIDs := make([]pgtype.UUID, len(ended))
	for i, g := range ended {
		endedIDs[i] = pgUUID(g.lease)
	}

	l.roundTrips.Add(1)
	var admitted bool
	var userInFlight, siteInFlight, userCalls, siteCalls, userGranted, siteGranted int
	var windowStart, windowEnd time.Time
	err = l.pool.QueryRow(ctx, `SELECT * FROM erpgate_call_acquire($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		pgUUID(id.site), id.caller, pgUUID(le.id), endedIDs,
		lim.UserConcurrency, lim.SiteConcurrency, lim.UserPerMinute, lim.SitePerMinute,
		userExtra, siteExtra,
	).Scan(&admitted, &userInFlight, &siteInFlight, &userCalls, &siteCalls, &windowStart, &windowEnd, &userGranted, &siteGranted)

	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.queue = append(l.queue, ended...) // not ended: give them back later
		return nil, nil, toolerr.Wrap(toolerr.UpstreamUnavailable, fmt.Errorf("ratelimit: acquire: %w", err),
			"erpgate could not check its call limits (its database is unavailable); retry shortly")
	}
	if !admitted {
		return nil, refusal(lim, userInFlight, siteInFlight, userCalls, siteCalls, windowEnd), nil
	}
	// The states may have been dropped (Reclaim, expiry) meanwhile.
	if cs = l.callers[id]; cs == nil {
		cs = &callerState{}
		l.callers[id] = cs
	}
	if ss = l.sites[id.site]; ss == nil {
		ss = &siteState{}
		l.sites[id.site] = ss
	}
	cs.budget.add(userGranted, windowStart, windowEnd)
	ss.budget.add(l.siteGrantLocked(id.site, lim, siteGranted, windowStart, windowEnd), windowStart, windowEnd)
	cs.busy++
	ss.busy++
	ss.lastUse = now
	return l.releaser(id, le, now), nil, nil
}

// siteGrantLocked is granted, the calls of site's minute [start, end)
// reserved under lim, when lim's per-minute number for the site is still
// in force; otherwise it queues them to be given back and is 0. The
// operator may change a site's ceilings while a reservation is asked for:
// SetSiteCeilings gave back what the site held then, and one answered
// after it must not outlive it under the old number. l.mu is held.
func (l *Limiter) siteGrantLocked(site uuid.UUID, lim Limits, granted int, start, end time.Time) int {
	if granted <= 0 || l.cur().of(site).SitePerMinute == lim.SitePerMinute {
		return granted
	}
	l.queue = append(l.queue, giveBack{site: site, unused: granted, window: start, expires: end})
	l.wake()
	return 0
}

// reserveChunk is how many extra calls of a minute an acquisition
// reserves: an eighth of the limit, at most 64.
func reserveChunk(perMinute int) int {
	return min(perMinute/8, 64)
}

func refusal(lim Limits, userInFlight, siteInFlight, userCalls, siteCalls int, windowEnd time.Time) *limitRefusal {
	switch wait := time.Until(windowEnd); {
	case siteInFlight >= lim.SiteConcurrency:
		return &limitRefusal{limited(time.Second, "this ERP site already has %d %s in flight, the most erpgate sends it at once; retry shortly", siteInFlight, calls(siteInFlight)), true}
	case siteCalls >= lim.SitePerMinute:
		return &limitRefusal{limited(wait, "this ERP site received %d %s this minute, the most erpgate sends it", siteCalls, calls(siteCalls)), true}
	case userInFlight >= lim.UserConcurrency:
		return &limitRefusal{limited(time.Second, "this caller already has %d calls in flight, the most allowed at once; wait for one to finish", userInFlight), false}
	default:
		return &limitRefusal{limited(wait, "this caller made %d calls this minute, the most allowed", userCalls), false}
	}
}

// calls is "call" or "calls", after n: a site's own ceiling may be 1.
func calls(n int) string {
	if n == 1 {
		return "call"
	}
	return "calls"
}

// releaser returns the function that ends a call started at start on
// lease le. It keeps the lease warm when the caller's calls come back to
// back (this one started within Linger of the previous one's end).
func (l *Limiter) releaser(id callerID, le lease, start time.Time) func() {
	var once sync.Once
	return func() {
		once.Do(func() { l.end(id, le, start) })
	}
}

func (l *Limiter) end(id callerID, le lease, start time.Time) {
	now := time.Now()
	l.mu.Lock()
	// A slot of the site is free now: its callers' refusals no longer
	// hold.
	if callers, ok := l.refused[id.site]; ok {
		l.refusedN -= len(callers)
		delete(l.refused, id.site)
	}
	cs := l.callers[id]
	if cs == nil { // dropped by Reclaim while the call ran
		cs = &callerState{}
		l.callers[id] = cs
	}
	cs.busy = max(cs.busy-1, 0)
	if ss := l.sites[id.site]; ss != nil {
		ss.busy = max(ss.busy-1, 0)
	}
	backToBack := !cs.lastEnd.IsZero() && start.Sub(cs.lastEnd) < l.cur().Linger
	cs.lastEnd = now
	if l.cur().Linger > 0 && !l.closing && backToBack && now.Sub(le.taken) < l.cur().WarmFor {
		cs.idle = append(cs.idle, le)
		l.mu.Unlock()
		return
	}
	l.queue = append(l.queue, giveBack{site: id.site, caller: id.caller, lease: le.id, leased: true, expires: le.taken.Add(l.cur().LeaseTTL)})
	l.mu.Unlock()
	l.wake()
}

func (l *Limiter) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Reclaim gives back what this replica holds but does not use for a
// caller on a site (callerKey "" means everything it holds on the site):
// warm slots and reservations. Wire it to the "limits:" notifications of
// erpgate_call_acquire's refusals.
func (l *Limiter) Reclaim(siteID, callerKey string) {
	site, err := uuid.Parse(siteID)
	if err != nil {
		return
	}
	l.mu.Lock()
	for id, cs := range l.callers {
		if id.site == site && (callerKey == "" || id.caller == callerKey) {
			l.giveBackLocked(id, cs)
		}
	}
	if ss := l.sites[site]; ss != nil && callerKey == "" {
		l.giveBackSiteLocked(site, ss)
	}
	l.mu.Unlock()
	l.wake()
}

// giveBackLocked queues a caller's warm slots and unused reservation.
func (l *Limiter) giveBackLocked(id callerID, cs *callerState) {
	for _, w := range cs.idle {
		l.queue = append(l.queue, giveBack{site: id.site, caller: id.caller, lease: w.id, leased: true, expires: w.taken.Add(l.cur().LeaseTTL)})
	}
	cs.idle = nil
	if cs.budget.left > 0 {
		l.queue = append(l.queue, giveBack{site: id.site, caller: id.caller, unused: cs.budget.left, window: cs.budget.start, expires: cs.budget.end})
	}
	cs.budget = reservation{}
}

func (l *Limiter) giveBackSiteLocked(site uuid.UUID, ss *siteState) {
	if ss.budget.left > 0 {
		l.queue = append(l.queue, giveBack{site: site, unused: ss.budget.left, window: ss.budget.start, expires: ss.budget.end})
	}
	ss.budget = reservation{}
}

// expireIdle gives back what callers and sites idle for Linger hold, and
// warm leases too old to reuse.
func (l *Limiter) expireIdle(now time.Time) {
	l.mu.Lock()
	queued := len(l.queue)
	for id, cs := range l.callers {
		if cs.busy == 0 && now.Sub(cs.lastEnd) >= l.cur().Linger {
			l.giveBackLocked(id, cs)
			delete(l.callers, id)
			continue
		}
		cs.idle = slices.DeleteFunc(cs.idle, func(w lease) bool {
			if now.Sub(w.taken) < l.cur().WarmFor {
				return false
			}
			l.queue = append(l.queue, giveBack{site: id.site, caller: id.caller, lease: w.id, leased: true, expires: w.taken.Add(l.cur().LeaseTTL)})
			return true
		})
	}
	for site, ss := range l.sites {
		if ss.busy == 0 && now.Sub(ss.lastUse) >= l.cur().Linger {
			l.giveBackSiteLocked(site, ss)
			delete(l.sites, site)
		}
	}
	more := len(l.queue) > queued
	l.mu.Unlock()
	if more {
		l.wake()
	}
}

// Flush gives back everything queued, in one round trip.
func (l *Limiter) Flush(ctx context.Context) error {
	l.flushing.Lock()
	defer l.flushing.Unlock()
	now := time.Now()
	l.mu.Lock()
	batch := slices.DeleteFunc(l.queue, func(g giveBack) bool { return !now.Before(g.expires) })
	l.queue = nil
	l.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	// Rows must be locked in key order (migration 00007).
	slices.SortFunc(batch, func(a, b giveBack) int {
		if c := bytes.Compare(a.site[:], b.site[:]); c != 0 {
			return c
		}
		return strings.Compare(a.caller, b.caller)
	})
	sites := make([]pgtype.UUID, len(batch))
	callers := make([]string, len(batch))
	leases := make([]pgtype.UUID, len(batch))
	unused := make([]int32, len(batch))
	windows := make([]pgtype.Timestamptz, len(batch))
	for i, g := range batch {
		sites[i] = pgUUID(g.site)
		callers[i] = g.caller
		if g.leased {
			leases[i] = pgUUID(g.lease)
		}
		unused[i] = int32(g.unused)
		windows[i] = pgtype.Timestamptz{Time: g.window, Valid: !g.window.IsZero()}
	}
	if _, err := l.pool.Exec(ctx, `SELECT erpgate_call_release($1, $2, $3, $4, $5)`, sites, callers, leases, unused, windows); err != nil {
		l.mu.Lock()
		l.queue = append(l.queue, batch...)
		l.mu.Unlock()
		return fmt.Errorf("ratelimit: give back %d leases and reservations: %w", len(batch), err)
	}
	return nil
}

// Drain gives back everything this replica holds, warm slots and
// reservations included, and keeps nothing warm from now on. Call it when
// the replica stops, after in-flight calls ended and before closing the
// pool.
func (l *Limiter) Drain(ctx context.Context) error {
	l.mu.Lock()
	l.closing = true // no new top-ups
	l.mu.Unlock()
	waited := make(chan struct{})
	go func() { l.topUpsRunning.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
		return ctx.Err()
	}
	l.mu.Lock()
	for id, cs := range l.callers {
		l.giveBackLocked(id, cs)
	}
	for site, ss := range l.sites {
		l.giveBackSiteLocked(site, ss)
	}
	l.mu.Unlock()
	return l.Flush(ctx)
}

// pgUUID passes a UUID to pgx in binary form (a uuid.UUID is a
// driver.Valuer, which pgx would format as text and parse again).
func pgUUID(u uuid.UUID) pgtype.UUID { return pgtype.UUID{Bytes: u, Valid: true} }

func limited(wait time.Duration, format string, args ...any) *toolerr.Error {
	if wait < time.Second {
		wait = time.Second
	}
	return toolerr.New(toolerr.RateLimited, format, args...).WithRetryAfter(wait)
}

// Janitor gives back what finished calls leave as soon as it is queued
// (retrying every second while that fails), gives back what idle callers
// hold after Linger, and every interval removes leases older than the
// lease TTL (a crashed replica's) and deletes the rows of callers idle for
// two minutes, until ctx ends. Its maintenance statements skip rows that
// are locked rather than wait for them, so they never deadlock with calls.
func (l *Limiter) Janitor(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	retry := time.NewTicker(time.Second)
	defer retry.Stop()
	var linger <-chan time.Time
	if l.cur().Linger > 0 {
		lt := time.NewTicker(l.cur().Linger / 2)
		defer lt.Stop()
		linger = lt.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.kick:
			l.bounded(ctx, l.Flush)
		case <-retry.C:
			l.bounded(ctx, l.Flush)
		case now := <-linger:
			l.expireIdle(now)
		case now := <-t.C:
			// Also here, so that without warm slots (no linger ticker)
			// the per-caller states of finished calls are dropped too.
			l.expireIdle(now)
			err := l.bounded(ctx, func(ctx context.Context) error { return l.purge(ctx, now) })
			if err != nil && ctx.Err() == nil {
				l.log.Warn("purging call limit rows failed", zap.Error(err))
			}
		}
	}
}

// janitorBound bounds each statement the janitor runs. It is what frees
// the janitor from a pooled connection gone silent (a partition dropped
// the flow without a reset), on which a statement would wait for as long
// as the kernel takes to give up, a quarter of an hour, while the leases
// it gives back stay taken on every replica.
const janitorBound = 5 * time.Second

// bounded runs fn within janitorBound of ctx.
func (l *Limiter) bounded(ctx context.Context, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, janitorBound)
	defer cancel()
	return fn(ctx)
}

// purge removes leases taken before now - the lease TTL and deletes rows
// with no lease and no call for two minutes.
func (l *Limiter) purge(ctx context.Context, now time.Time) error {
	if _, err := l.pool.Exec(ctx, `
		UPDATE call_limits c
		   SET leases = ARRAY(SELECT x FROM unnest(c.leases) x WHERE x >= $1)
		  FROM (SELECT site_id, caller_key FROM call_limits
		         WHERE EXISTS (SELECT 1 FROM unnest(leases) x WHERE x < $1)
		           FOR UPDATE SKIP LOCKED) stale
		 WHERE c.site_id = stale.site_id AND c.caller_key = stale.caller_key`,
		pgUUID(liveFloor(now, l.cur().LeaseTTL))); err != nil {
		return fmt.Errorf("ratelimit: remove expired leases: %w", err)
	}
	// Slots of expired leases are free now: no refusal holds.
	l.mu.Lock()
	clear(l.refused)
	l.refusedN = 0
	l.mu.Unlock()
	if _, err := l.pool.Exec(ctx, `
		DELETE FROM call_limits c
		 USING (SELECT site_id, caller_key FROM call_limits
		         WHERE window_start < $1::timestamptz - interval '2 minutes' AND cardinality(leases) = 0
		           FOR UPDATE SKIP LOCKED) idle
		 WHERE c.site_id = idle.site_id AND c.caller_key = idle.caller_key`, now); err != nil {
		return fmt.Errorf("ratelimit: delete idle rows: %w", err)
	}
	return nil
}

// NotifyPrefix starts the payload of the notifications erpgate_call_acquire
// sends on the channel erpgate_invalidate when it refuses a call:
// "limits:<site id>:<caller key>".
const NotifyPrefix = "limits:"

// ReclaimMessage handles the rest of such a payload, "<site id>:<caller
// key>", by calling Reclaim.
func (l *Limiter) ReclaimMessage(rest string) {
	site, caller, ok := strings.Cut(rest, ":")
	if ok {
		l.Reclaim(site, caller)
	}
}
