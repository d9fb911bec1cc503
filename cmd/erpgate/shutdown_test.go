package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// startShutdownFixture starts a gateway whose usage events only shutdown
// writes (the flush interval is a minute) and a Frappe site behind a gauge
// that can hold the ERP's answers, and makes three warm-up calls, whose
// request ids it returns.
func startShutdownFixture(t *testing.T) (*inFlightGauge, *gateway, devSite, *http.Client, []string) {
	t.Helper()
	gauge := &inFlightGauge{next: frappetest.NewHandler(frappetest.Options{})}
	upstream := httptest.NewServer(gauge)
	t.Cleanup(upstream.Close)
	gw := startGateway(t, "", map[string]string{
		"ERPGATE_USAGE_FLUSH_INTERVAL": "1m",
		"ERPGATE_USAGE_BATCH_SIZE":     "10000",
	})
	site := gw.registerFrappeAt(t, "acme", upstream.URL, gauge.next.(*frappetest.Simulator).User("service"))
	client := &http.Client{Timeout: time.Minute}
	t.Cleanup(client.CloseIdleConnections)
	var ids []string
	for range 3 {
		o := callService(t.Context(), client, gw.URL, site.ServiceToken, "get_current_user", map[string]any{})
		if !o.ok() {
			t.Fatalf("warm-up call: %v", o)
		}
		ids = append(ids, o.RequestID)
	}
	return gauge, gw, site, client, ids
}

// TestGracefulShutdownUnderLoad shuts a replica down while three calls wait
// on the ERP. The calls complete with their results; requests arriving
// after shutdown began are refused with 503 (or find the listener closed),
// /readyz is red; and the usage events buffered in memory (the flush
// interval is a minute, so only shutdown writes them) are all stored.
func TestGracefulShutdownUnderLoad(t *testing.T) {
	ctx := context.Background()
	gauge, gw, site, client, ids := startShutdownFixture(t)

	release := gauge.holdRequests("/api/resource/Customer")
	defer release()
	const inFlight = 3 // the default per-caller concurrency limit
	outcomes := make(chan serviceOutcome, inFlight)
	for range inFlight {
		go func() {
			outcomes <- callService(ctx, client, gw.URL, site.ServiceToken, "list_customers", map[string]any{"limit": 3})
		}()
	}
	waitFor(t, 30*time.Second, "three calls waiting on the ERP", func() bool { return gauge.now.Load() == inFlight })

	shutdownDone := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		shutdownDone <- gw.App.Shutdown(sctx)
	}()
	waitFor(t, 10*time.Second, "shutdown begun", gw.App.draining.Load)

	// New requests: through the replica's handler they meet the drain
	// guard; over the network they find the listener closed or get the
	// same 503.
	for _, path := range []string{"/service/mcp", "/readyz", "/api/v1/sites"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if path == "/readyz" {
			req = httptest.NewRequest(http.MethodGet, path, nil)
		}
		gw.App.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
			t.Errorf("%s during shutdown: %d %s", path, rec.Code, rec.Body)
		}
	}
	fresh := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	o := callService(ctx, fresh, gw.URL, site.ServiceToken, "get_current_user", map[string]any{})
	if o.Err == nil && o.Status != http.StatusServiceUnavailable {
		t.Errorf("a new call during shutdown was served: %v", o)
	}

	select {
	case err := <-shutdownDone:
		t.Fatalf("shutdown returned while calls were in flight: %v", err)
	default:
	}
	release()
	for range inFlight {
		o := <-outcomes
		if !o.ok() {
			t.Errorf("in-flight call did not complete: %v", o)
		}
		ids = append(ids, o.RequestID)
	}
	if err := <-shutdownDone; err != nil {
		t.Fatalf("shutdown: %v", err)
	}

	conn, err := pgx.Connect(ctx, gw.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var stored int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM usage_events WHERE request_id = ANY($1)`, ids).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != len(ids) {
		t.Errorf("%d of %d usage events stored at shutdown", stored, len(ids))
	}
}

// TestShutdownPastItsTimeoutStillStoresUsage: a call still waiting on the
// ERP when ERPGATE_SHUTDOWN_TIMEOUT runs out (the default timeout, 30 s, is
// below the default call budget, 50 s) must not cost the usage events of
// the calls that did finish: Postgres is up, and they are only buffered.
// The flush interval is a minute, so only shutdown writes them.
func TestShutdownPastItsTimeoutStillStoresUsage(t *testing.T) {
	ctx := context.Background()
	gauge, gw, site, client, ids := startShutdownFixture(t)

	release := gauge.holdRequests("/api/resource/Customer")
	defer release()
	outcome := make(chan serviceOutcome, 1)
	go func() {
		outcome <- callService(ctx, client, gw.URL, site.ServiceToken, "list_customers", map[string]any{"limit": 3})
	}()
	waitFor(t, 30*time.Second, "a call waiting on the ERP", func() bool { return gauge.now.Load() == 1 })

	// The held call outlasts the shutdown's time.
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	err := gw.App.Shutdown(sctx)
	cancel()
	t.Logf("shutdown with a call in flight past its timeout: %v", err)
	release()
	<-outcome

	conn, err := pgx.Connect(ctx, gw.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var stored int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM usage_events WHERE request_id = ANY($1)`, ids).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != len(ids) {
		t.Errorf("%d of the %d finished calls' usage events stored at shutdown", stored, len(ids))
	}
	// Nor must the leases the replica held stay taken, on every other
	// replica, until they expire.
	var leases int
	if err := conn.QueryRow(ctx, `SELECT coalesce(sum(cardinality(leases)), 0) FROM call_limits`).Scan(&leases); err != nil {
		t.Fatal(err)
	}
	if leases != 0 {
		t.Errorf("%d call leases left behind by the stopped replica", leases)
	}
}
