package invalidate

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeSource is a Listener's subscriptions, driven by the test.
type fakeSource struct {
	mu       sync.Mutex
	healthy  bool
	site     []func(string)
	reset    []func()
	messages map[string][]func(string)
}

func (f *fakeSource) Healthy() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.healthy
}
func (f *fakeSource) OnSite(fn func(string)) { f.site = append(f.site, fn) }
func (f *fakeSource) OnReset(fn func())      { f.reset = append(f.reset, fn) }
func (f *fakeSource) OnMessage(prefix string, fn func(string)) {
	if f.messages == nil {
		f.messages = map[string][]func(string){}
	}
	f.messages[prefix] = append(f.messages[prefix], fn)
}
func (f *fakeSource) notify(payload string) {
	for prefix, fns := range f.messages {
		if rest, ok := cutPrefix(payload, prefix); ok {
			for _, fn := range fns {
				fn(rest)
			}
		}
	}
	if rest, ok := cutPrefix(payload, "site:"); ok {
		for _, fn := range f.site {
			fn(rest)
		}
	}
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}

// counter loads "v<n>" for the tags, counting loads.
type counter struct {
	n     int
	tags  Tags
	until time.Time
	err   error
	// during runs inside the load (an invalidation arriving meanwhile).
	during func()
}

func (c *counter) load(context.Context) (string, Tags, time.Time, error) {
	c.n++
	if c.during != nil {
		c.during()
	}
	if c.err != nil {
		return "", Tags{}, time.Time{}, c.err
	}
	return "v", c.tags, c.until, nil
}

func TestCacheDropsWhatEachNotificationNames(t *testing.T) {
	const site, other = "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"
	for _, tc := range []struct {
		name    string
		payload string
		dropped bool
	}{
		{"the user's site", "site:" + site, true},
		{"the user on the site", UserPrefix + site + ":alex@example.com", true},
		{"a subject with a colon", UserPrefix + site + ":a:b", false},
		{"another user on the site", UserPrefix + site + ":sam@example.com", false},
		{"the same user on another site", UserPrefix + other + ":alex@example.com", false},
		{"another site", "site:" + other, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{healthy: true}
			c := NewCache[string](src, time.Minute)
			l := &counter{tags: Tags{Site: site, Subject: "alex@example.com"}}
			get := func() {
				if v, err := c.Get(t.Context(), "k", l.load); err != nil || v != "v" {
					t.Fatalf("Get = %q, %v", v, err)
				}
			}
			get()
			get()
			if l.n != 1 {
				t.Fatalf("%d loads for two Gets, want 1", l.n)
			}
			src.notify(tc.payload)
			get()
			if want := map[bool]int{true: 2, false: 1}[tc.dropped]; l.n != want {
				t.Errorf("%d loads after %q, want %d", l.n, tc.payload, want)
			}
		})
	}
}

func TestCacheResetDropsEverythingAndUnhealthyBypasses(t *testing.T) {
	src := &fakeSource{healthy: true}
	c := NewCache[string](src, time.Minute)
	l := &counter{tags: Tags{Site: "s"}}
	for range 2 {
		if _, err := c.Get(t.Context(), "k", l.load); err != nil {
			t.Fatal(err)
		}
	}
	for _, fn := range src.reset {
		fn()
	}
	if c.Len() != 0 {
		t.Fatalf("%d entries after a reset", c.Len())
	}
	src.healthy = false
	for range 3 {
		if _, err := c.Get(t.Context(), "k", l.load); err != nil {
			t.Fatal(err)
		}
	}
	if l.n != 4 || c.Len() != 0 {
		t.Errorf("unhealthy: %d loads, %d entries; want every Get to load and nothing stored", l.n, c.Len())
	}
}

func TestCacheDoesNotStoreALookupOvertakenByAnInvalidation(t *testing.T) {
	src := &fakeSource{healthy: true}
	c := NewCache[string](src, time.Minute)
	l := &counter{tags: Tags{Site: "s", Subject: "u"}}
	// The row is read, then changed on another replica, whose notification
	// arrives before the value is stored: it found nothing to drop.
	l.during = func() { src.notify(UserPrefix + "s:u") }
	if v, err := c.Get(t.Context(), "k", l.load); err != nil || v != "v" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if c.Len() != 0 {
		t.Fatal("a lookup overtaken by an invalidation was stored")
	}
	l.during = nil
	_, _ = c.Get(t.Context(), "k", l.load)
	_, _ = c.Get(t.Context(), "k", l.load)
	if l.n != 2 {
		t.Errorf("%d loads, want 2", l.n)
	}
}

func TestCacheKeepsAValueUntilItsOwnEndAndNeverAnError(t *testing.T) {
	src := &fakeSource{healthy: true}
	c := NewCache[string](src, time.Minute)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	l := &counter{until: now.Add(10 * time.Second)}
	_, _ = c.Get(t.Context(), "k", l.load)
	now = now.Add(9 * time.Second)
	_, _ = c.Get(t.Context(), "k", l.load)
	if l.n != 1 {
		t.Fatalf("%d loads before the value's end, want 1", l.n)
	}
	now = now.Add(time.Second)
	_, _ = c.Get(t.Context(), "k", l.load)
	if l.n != 2 {
		t.Fatalf("%d loads at the value's end, want 2", l.n)
	}
	// Without an end of its own, a value lasts the TTL.
	l.until = time.Time{}
	now = now.Add(time.Hour)
	_, _ = c.Get(t.Context(), "k", l.load)
	now = now.Add(59 * time.Second)
	_, _ = c.Get(t.Context(), "k", l.load)
	now = now.Add(time.Second)
	_, _ = c.Get(t.Context(), "k", l.load)
	if l.n != 4 {
		t.Fatalf("%d loads over one TTL and its end, want 4", l.n)
	}
	l.err = errors.New("down")
	now = now.Add(time.Hour)
	for range 2 {
		if _, err := c.Get(t.Context(), "k", l.load); !errors.Is(err, l.err) {
			t.Fatalf("Get = %v, want the load's error", err)
		}
	}
	if l.n != 6 {
		t.Errorf("%d loads, want an error never to be kept", l.n)
	}
}

// TestCacheLoadOutlivesTheCallerThatStartedIt: a caller that gives up
// gets its own error, and the load it started goes on for the others.
func TestCacheLoadOutlivesTheCallerThatStartedIt(t *testing.T) {
	c := NewCache[string](&fakeSource{healthy: true}, time.Minute)
	release := make(chan struct{})
	started := make(chan struct{})
	load := func(ctx context.Context) (string, Tags, time.Time, error) {
		close(started)
		<-release
		return "v", Tags{}, time.Time{}, ctx.Err()
	}
	first, cancel := context.WithCancel(t.Context())
	firstErr := make(chan error, 1)
	go func() {
		_, err := c.Get(first, "k", load)
		firstErr <- err
	}()
	<-started
	second := make(chan error, 1)
	go func() {
		v, err := c.Get(t.Context(), "k", func(context.Context) (string, Tags, time.Time, error) {
			return "", Tags{}, time.Time{}, errors.New("a second load ran")
		})
		if err == nil && v != "v" {
			err = errors.New("got " + v)
		}
		second <- err
	}()
	cancel()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that gave up got %v", err)
	}
	close(release)
	if err := <-second; err != nil {
		t.Fatalf("the caller sharing the load: %v", err)
	}
}

// TestCacheRefreshAheadKeepsAValueOnATransientFailure: with RefreshAhead,
// a value used after half its TTL is served at once and reloaded behind
// the call; a reload failing for a passing reason keeps the value, one the
// drop function names removes it.
func TestCacheRefreshAheadKeepsAValueOnATransientFailure(t *testing.T) {
	gone := errors.New("gone")
	c := NewCache[string](&fakeSource{healthy: true}, time.Minute)
	c.RefreshAhead(func(err error) bool { return errors.Is(err, gone) })
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	c.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	loads := make(chan error, 4)
	load := func(context.Context) (string, Tags, time.Time, error) {
		if err := <-loads; err != nil {
			return "", Tags{}, time.Time{}, err
		}
		return "v", Tags{}, time.Time{}, nil
	}
	loads <- nil
	if v, err := c.Get(t.Context(), "k", load); err != nil || v != "v" {
		t.Fatalf("first Get: %q %v", v, err)
	}
	advance(31 * time.Second)
	loads <- errors.New("the database is restarting")
	if v, err := c.Get(t.Context(), "k", load); err != nil || v != "v" {
		t.Fatalf("past half the TTL: %q %v, want the value at once", v, err)
	}
	waitFor(t, "the first reload", func() bool { return len(loads) == 0 && !c.isRefreshing("k") })
	if c.Len() != 1 {
		t.Fatal("a transient reload failure dropped the value")
	}
	loads <- gone
	if _, err := c.Get(t.Context(), "k", load); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the value dropped", func() bool { return c.Len() == 0 })
}

func (c *Cache[V]) isRefreshing(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refreshing[key]
}

// TestCacheLookupAfterAnInvalidationDoesNotJoinALoadBegunBeforeIt: a
// request with a token whose grant is revoked on this replica while
// another request's lookup of it is under way must not be handed that
// lookup's value: it reads the grant afresh. The request that began
// before the revocation may still get the older value.
func TestCacheLookupAfterAnInvalidationDoesNotJoinALoadBegunBeforeIt(t *testing.T) {
	errRevoked := errors.New("the token was revoked")
	for _, tc := range []struct {
		name       string
		down       bool
		invalidate func(*fakeSource, *Cache[string])
	}{
		{"the user dropped by the replica revoking", false, func(_ *fakeSource, c *Cache[string]) { c.DropUser("s", "u") }},
		// Nothing is cached, and lookups share no load.
		{"the same with the listener down", true, func(_ *fakeSource, c *Cache[string]) { c.DropUser("s", "u") }},
		{"the user's notification", false, func(src *fakeSource, _ *Cache[string]) { src.notify(UserPrefix + "s:u") }},
		{"the site's notification", false, func(src *fakeSource, _ *Cache[string]) { src.notify("site:s") }},
		{"a reset", false, func(src *fakeSource, _ *Cache[string]) {
			for _, fn := range src.reset {
				fn()
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{healthy: !tc.down}
			c := NewCache[string](src, time.Minute)
			joined := make(chan struct{}, 2)
			c.onJoin = func() { joined <- struct{}{} }
			tags := Tags{Site: "s", Subject: "u"}
			started, release := make(chan struct{}), make(chan struct{})
			before := func(context.Context) (string, Tags, time.Time, error) {
				close(started)
				<-release
				return "grant", tags, time.Time{}, nil
			}
			after := func(context.Context) (string, Tags, time.Time, error) {
				return "", Tags{}, time.Time{}, errRevoked
			}
			first := make(chan string, 1)
			go func() {
				v, err := c.Get(t.Context(), "k", before)
				if err != nil {
					v = err.Error()
				}
				first <- v
			}()
			<-started
			<-joined
			tc.invalidate(src, c)
			second := make(chan error, 1)
			go func() {
				v, err := c.Get(t.Context(), "k", after)
				if err == nil {
					err = errors.New("got " + v)
				}
				second <- err
			}()
			<-joined // the second lookup has begun its load or joined one
			close(release)
			if err := <-second; !errors.Is(err, errRevoked) {
				t.Errorf("a lookup begun after the invalidation: %v, want it to load afresh (%v)", err, errRevoked)
			}
			if v := <-first; v != "grant" {
				t.Errorf("the lookup begun before the invalidation: %q, want the value of its load", v)
			}
			if c.Len() != 0 {
				t.Error("a lookup overtaken by an invalidation was stored")
			}
		})
	}
}

// TestCacheLookupAfterAnInvalidationDoesNotJoinARefreshBegunBeforeIt: the
// same for a background reload (RefreshAhead) under way when the value is
// dropped.
func TestCacheLookupAfterAnInvalidationDoesNotJoinARefreshBegunBeforeIt(t *testing.T) {
	errRevoked := errors.New("the token was revoked")
	c := NewCache[string](&fakeSource{healthy: true}, time.Minute)
	c.RefreshAhead(func(err error) bool { return errors.Is(err, errRevoked) })
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	c.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	joined := make(chan struct{}, 2)
	c.onJoin = func() { joined <- struct{}{} }
	tags := Tags{Site: "s", Subject: "u"}
	if _, err := c.Get(t.Context(), "k", func(context.Context) (string, Tags, time.Time, error) {
		return "grant", tags, time.Time{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	<-joined
	mu.Lock()
	now = now.Add(31 * time.Second)
	mu.Unlock()
	started, release := make(chan struct{}), make(chan struct{})
	reload := func(context.Context) (string, Tags, time.Time, error) {
		close(started)
		<-release
		return "grant", tags, time.Time{}, nil
	}
	if v, err := c.Get(t.Context(), "k", reload); err != nil || v != "grant" {
		t.Fatalf("past half the TTL: %q %v, want the value at once", v, err)
	}
	<-started // the reload has read the grant
	c.DropUser("s", "u")
	second := make(chan error, 1)
	go func() {
		v, err := c.Get(t.Context(), "k", func(context.Context) (string, Tags, time.Time, error) {
			return "", Tags{}, time.Time{}, errRevoked
		})
		if err == nil {
			err = errors.New("got " + v)
		}
		second <- err
	}()
	<-joined
	close(release)
	if err := <-second; !errors.Is(err, errRevoked) {
		t.Errorf("a lookup begun after the invalidation: %v, want it to load afresh (%v)", err, errRevoked)
	}
	waitFor(t, "the reload", func() bool { return !c.isRefreshing("k") })
	if c.Len() != 0 {
		t.Error("a reload overtaken by an invalidation was stored")
	}
}

// TestCacheStoredValueAllocatesNothing: a Get answered from the cache is
// on every call's path.
func TestCacheStoredValueAllocatesNothing(t *testing.T) {
	c := NewCache[string](&fakeSource{healthy: true}, time.Minute)
	l := &counter{}
	load := l.load
	ctx := context.Background()
	if _, err := c.Get(ctx, "k", load); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = c.Get(ctx, "k", load) }); n != 0 {
		t.Errorf("a stored value: %v allocations a Get, want none", n)
	}
}

// TestCacheLookupWhileTheListenerIsDownDoesNotJoinALoadBegunBeforeIt: with
// the listener down, this replica is told of no change made on another
// one (a token revoked there), so nothing separates a Get begun after the
// change from a load begun before it. Joining that load, the Get would be
// answered with what the row was before the change, for as long as the
// load takes (up to loadTimeout, on the slow database that often comes
// with a lost listener): well past the second in which a revocation must
// reach every replica. Each Get loads for itself while the listener is
// down.
func TestCacheLookupWhileTheListenerIsDownDoesNotJoinALoadBegunBeforeIt(t *testing.T) {
	errRevoked := errors.New("the token was revoked")
	c := NewCache[string](&fakeSource{healthy: false}, time.Minute)
	joined := make(chan struct{}, 2)
	c.onJoin = func() { joined <- struct{}{} }
	started, release := make(chan struct{}), make(chan struct{})
	before := func(context.Context) (string, Tags, time.Time, error) {
		close(started)
		<-release
		return "grant", Tags{Site: "s"}, time.Time{}, nil
	}
	after := func(context.Context) (string, Tags, time.Time, error) {
		return "", Tags{}, time.Time{}, errRevoked
	}
	first := make(chan string, 1)
	go func() {
		v, err := c.Get(t.Context(), "k", before)
		if err != nil {
			v = err.Error()
		}
		first <- v
	}()
	<-started
	<-joined
	// The token is revoked on another replica now; no notification can
	// reach this one.
	second := make(chan error, 1)
	go func() {
		v, err := c.Get(t.Context(), "k", after)
		if err == nil {
			err = errors.New("got " + v)
		}
		second <- err
	}()
	<-joined // the second lookup has begun its load or joined one
	close(release)
	if err := <-second; !errors.Is(err, errRevoked) {
		t.Errorf("a lookup begun after the change, listener down: %v, want it to load afresh (%v)", err, errRevoked)
	}
	if v := <-first; v != "grant" {
		t.Errorf("the lookup begun before the change: %q, want the value of its load", v)
	}
}
