// Package invalidate tells every replica when cached site data changed.
// Triggers in Postgres (migration 00005) send a notification on the channel
// erpgate_invalidate with the payload "site:<id>" whenever a site, its
// connections, credentials or service tokens change; a Listener on each
// replica receives them and calls its subscribers.
//
// While the listening connection is down a replica cannot know what changed,
// so the Listener reports itself unhealthy and calls every reset function:
// caches must then be dropped and bypassed until it is healthy again. A
// connection can also die silently (a NAT or load balancer forgets an idle
// flow, the network splits): nothing arrives and no error either. So when
// the connection has been quiet for QuietBeforeCheck, the listener asks
// Postgres for an answer within CheckTimeout, and treats no answer as a
// lost connection. A dead connection is noticed within their sum, 0.75 s,
// inside the 1 s in which a revocation must reach every replica.
package invalidate

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Channel is the notification channel the triggers use.
const Channel = "erpgate_invalidate"

// The silence check (see the package comment). Checking costs Postgres an
// empty query four times a second per replica while no change arrives.
const (
	QuietBeforeCheck = 250 * time.Millisecond
	CheckTimeout     = 500 * time.Millisecond
)

// Listener receives invalidations for one replica.
type Listener struct {
	url string
	log *zap.Logger

	mu      sync.RWMutex
	onSite  []func(siteID string)
	onReset []func()
	// handlers are other messages on the channel, by payload prefix.
	handlers map[string][]func(rest string)
	healthy  atomic.Bool
}

// NewListener returns a listener for the database at url. Call Run.
func NewListener(url string, log *zap.Logger) *Listener {
	if log == nil {
		log = zap.NewNop()
	}
	return &Listener{url: url, log: log}
}

// OnSite registers fn to be called with the id of every changed site.
func (l *Listener) OnSite(fn func(siteID string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onSite = append(l.onSite, fn)
}

// OnMessage registers fn to be called with the rest of every payload that
// starts with prefix (other than "site:"), such as the limiter's
// "limits:<site id>:<caller>" refusals.
func (l *Listener) OnMessage(prefix string, fn func(rest string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.handlers == nil {
		l.handlers = map[string][]func(string){}
	}
	l.handlers[prefix] = append(l.handlers[prefix], fn)
}

// OnReset registers fn to be called whenever notifications may have been
// missed (the connection was lost or is being re-established).
func (l *Listener) OnReset(fn func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onReset = append(l.onReset, fn)
}

// Healthy reports whether notifications are being received. Caches must
// not serve entries while it is false.
func (l *Listener) Healthy() bool { return l.healthy.Load() }

// Run listens until ctx ends, reconnecting with backoff after failures.
func (l *Listener) Run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listenOnce(ctx)
		if l.healthy.Load() { // it had listened: this is a new failure
			backoff = 100 * time.Millisecond
		}
		l.setHealthy(false)
		if ctx.Err() != nil {
			return
		}
		l.log.Warn("invalidation listener disconnected; caches are bypassed until it reconnects", zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (l *Listener) listenOnce(ctx context.Context) error {
	// The URL is the pool's: parsed as one, its pool_* settings are not
	// sent to the server, which would refuse them.
	cfg, err := pgxpool.ParseConfig(l.url)
	if err != nil {
		return err
	}
	connectCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgx.ConnectConfig(connectCtx, cfg.ConnConfig)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		// Bounded: the connection may be the silent one.
		closeCtx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	// Anything cached before LISTEN took effect may be stale.
	l.setHealthy(true)
	for {
		waitCtx, cancel := context.WithTimeout(ctx, QuietBeforeCheck)
		n, err := conn.WaitForNotification(waitCtx)
		cancel()
		if err != nil {
			if ctx.Err() != nil || !pgconn.Timeout(err) {
				return err
			}
			// Quiet for a while: the connection must show that it still
			// carries bytes. A notification that arrives meanwhile is
			// kept by pgx for the next wait.
			pingCtx, cancel := context.WithTimeout(ctx, CheckTimeout)
			err = conn.Ping(pingCtx)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				return fmt.Errorf("the listening connection did not answer a check within %v: %w", CheckTimeout, err)
			}
			continue
		}
		l.deliver(n.Payload)
	}
}

// deliver calls the subscribers of one notification's payload.
func (l *Listener) deliver(payload string) {
	if id, ok := strings.CutPrefix(payload, "site:"); ok {
		l.mu.RLock()
		subs := l.onSite
		l.mu.RUnlock()
		for _, fn := range subs {
			fn(id)
		}
		return
	}
	prefix, rest, ok := strings.Cut(payload, ":")
	if !ok {
		return
	}
	l.mu.RLock()
	subs := l.handlers[prefix+":"]
	l.mu.RUnlock()
	for _, fn := range subs {
		fn(rest)
	}
}

// setHealthy records the state; any transition resets the caches, because
// changes may have happened while nobody was listening.
func (l *Listener) setHealthy(v bool) {
	if l.healthy.Swap(v) == v && v {
		return
	}
	l.mu.RLock()
	resets := l.onReset
	l.mu.RUnlock()
	for _, fn := range resets {
		fn()
	}
}
