package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/pgcluster"
)

// Phases of the Postgres outage, as the load workers see them.
const (
	phaseBefore     int32 = iota
	phaseStopping         // Stop has been called
	phaseDown             // Stop has returned: the server is down
	phaseRestarting       // Start has been called
	phaseUp               // Start has returned
)

// outageCall is one call of the load, with the phases at its start and end.
type outageCall struct {
	startPhase, endPhase int32
	out                  serviceOutcome
}

// TestPostgresOutageMidLoad stops the gateway's Postgres for five seconds
// while four callers keep calling, then starts it again. During the outage
// calls fail fast with a safe, retryable error (each call that began while
// the server was down also ended before it came back) and /readyz is red;
// afterwards the same process serves again, and nothing written before the
// outage is lost: sites, credentials, tokens and every usage event of a
// call that got an answer.
func TestPostgresOutageMidLoad(t *testing.T) {
	ctx := context.Background()
	scratch, err := pgcluster.NewScratchDir("erpgate-outage-")
	if err != nil {
		t.Fatal(err)
	}
	opts := pgcluster.Options{Dir: filepath.Join(scratch, "cluster"), Settings: pgcluster.EphemeralSettings()}
	cluster, err := pgcluster.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Remove(context.Background())
		_ = os.RemoveAll(scratch)
	})
	opts.Port = cluster.Port()
	dbURL := cluster.URL("postgres")

	// One simulator per site: a base URL belongs to one site.
	var sims []*frappetest.Server
	for range 3 {
		sim := frappetest.NewServer(frappetest.Options{})
		defer sim.Close()
		sims = append(sims, sim)
	}
	gw := startGateway(t, dbURL, map[string]string{
		"ERPGATE_LIMIT_USER_PER_MINUTE": "100000",
		"ERPGATE_LIMIT_SITE_PER_MINUTE": "100000",
	})
	bot := userWithRole(t, sims[0], "service")
	sites := []devSite{gw.registerFrappe(t, "acme", sims[0], bot), gw.registerFrappe(t, "beta", sims[1], bot)}

	var (
		phase   atomic.Int32
		mu      sync.Mutex
		calls   []outageCall
		stop    = make(chan struct{})
		workers sync.WaitGroup
	)
	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	for w := range 4 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := outageCall{startPhase: phase.Load()}
				c.out = callService(ctx, client, gw.URL, sites[w%2].ServiceToken, "list_customers", map[string]any{"limit": 5})
				c.endPhase = phase.Load()
				mu.Lock()
				calls = append(calls, c)
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		workers.Wait()
	}()
	count := func(match func(outageCall) bool) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range calls {
			if match(c) {
				n++
			}
		}
		return n
	}
	waitFor(t, 30*time.Second, "20 calls before the outage", func() bool {
		return count(func(c outageCall) bool { return c.out.ok() }) >= 20
	})
	// Written just before the outage: a third site and another token.
	late := gw.registerFrappe(t, "gamma", sims[2], bot)

	phase.Store(phaseStopping)
	if err := cluster.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stoppedAt := time.Now()
	phase.Store(phaseDown)
	waitFor(t, 20*time.Second, "/readyz red", func() bool {
		status, body := getStatus(t, gw.URL+"/readyz")
		return status == http.StatusServiceUnavailable && strings.Contains(body, "database unavailable")
	})
	// Hold the outage for five seconds, and until calls have shown that
	// they end while the server is still down.
	waitFor(t, 60*time.Second, "10 calls begun and ended during the outage", func() bool {
		return time.Since(stoppedAt) >= 5*time.Second &&
			count(func(c outageCall) bool { return c.startPhase == phaseDown && c.endPhase == phaseDown }) >= 10
	})
	phase.Store(phaseRestarting)
	if cluster, err = pgcluster.Start(ctx, opts); err != nil {
		t.Fatal(err)
	}
	phase.Store(phaseUp)
	waitFor(t, 60*time.Second, "a successful call after the restart", func() bool {
		return count(func(c outageCall) bool { return c.startPhase == phaseUp && c.out.ok() }) >= 5
	})
	close(stop)
	workers.Wait()
	if status, body := getStatus(t, gw.URL+"/readyz"); status != http.StatusOK {
		t.Errorf("/readyz after recovery: %d %s", status, body)
	}

	var answered []string // request ids of every call the engine answered
	for _, c := range calls {
		o := c.out
		if o.RequestID != "" {
			answered = append(answered, o.RequestID)
		}
		switch {
		case o.ok():
			if c.startPhase == phaseDown && c.endPhase == phaseDown {
				t.Errorf("a call succeeded while Postgres was down: %v", o)
			}
		case c.startPhase == phaseBefore && c.endPhase == phaseBefore, c.startPhase == phaseUp:
			// The database was up for the whole call; the only failure
			// allowed is the first calls after the restart, while the
			// pool re-connects (none are expected).
			if c.startPhase == phaseBefore || !safeOutageError(o) {
				t.Errorf("call failed with the database up (phases %d→%d): %v", c.startPhase, c.endPhase, o)
			}
		case !safeOutageError(o):
			t.Errorf("call during the outage (phases %d→%d) did not fail with a safe retryable error: %v", c.startPhase, c.endPhase, o)
		}
	}
	t.Logf("%d calls: %d succeeded, %d began and ended during the outage",
		len(calls), count(func(c outageCall) bool { return c.out.ok() }),
		count(func(c outageCall) bool { return c.startPhase == phaseDown && c.endPhase == phaseDown }))

	// The same process serves every site, including the one registered
	// just before the outage, with its stored (encrypted) credential.
	for _, s := range append(sites, late) {
		if o := callService(ctx, client, gw.URL, s.ServiceToken, "get_current_user", map[string]any{}); !o.ok() {
			t.Errorf("site %s after recovery: %v", s.Slug, o)
		}
	}
	var listed struct {
		Sites []struct {
			Slug string `json:"slug"`
		} `json:"sites"`
	}
	if err := gw.admin.do(ctx, http.MethodGet, "/sites", nil, &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed.Sites) != 3 {
		t.Errorf("sites after recovery: %+v", listed)
	}
	for _, s := range sites {
		if tokens, err := gw.admin.listTokens(ctx, s.ID); err != nil || len(tokens) != 1 {
			t.Errorf("service tokens of %s after recovery: %+v %v", s.Slug, tokens, err)
		}
	}
	// Every usage event buffered during the outage reaches the database.
	waitFor(t, 30*time.Second, "usage events flushed", func() bool { return gw.App.usage.Pending() == 0 })
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var missing int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM unnest($1::text[]) AS a(rid) WHERE NOT EXISTS (SELECT 1 FROM usage_events u WHERE u.request_id = a.rid)`, answered).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	if missing > 0 {
		t.Errorf("%d of %d answered calls have no stored usage event", missing, len(answered))
	}
}

// safeOutageError is how a call may fail while the database is down: 503
// with a JSON-RPC error saying so (the token could not be checked), or the
// retryable tool error of the limiter; neither reveals anything about the
// database.
func safeOutageError(o serviceOutcome) bool {
	if o.Err != nil || revealsInternals(o.Body) {
		return false
	}
	switch {
	case o.Status == http.StatusServiceUnavailable:
		return strings.Contains(o.Body, "database is unavailable")
	case o.Status == http.StatusOK:
		return o.Code == "UPSTREAM_UNAVAILABLE" && strings.Contains(o.Body, "retry")
	}
	return false
}

func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, resp.Body)
	return resp.StatusCode, b.String()
}
