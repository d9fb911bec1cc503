package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/freeport"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestTwoProcessesShareLimitsAndInvalidations runs two erpgate processes
// (the real binary, built once per test run) on one Postgres and checks the
// guarantees that must hold across replicas: the per-caller limits, and
// that a credential rotated or a token revoked through one replica takes
// effect on the other without a restart. (Refresh serialisation across two
// processes is TestOAuthTwoReplicasRefreshOnce.)
func TestTwoProcessesShareLimitsAndInvalidations(t *testing.T) {
	bin, err := sharedErpgateBinary()
	if err != nil {
		t.Fatal(err)
	}
	sim := frappetest.NewHandler(frappetest.Options{})
	// Every upstream request takes 150 ms, so that concurrent calls
	// overlap at the ERP.
	gauge := &inFlightGauge{next: sim, delay: 150 * time.Millisecond}
	upstream := httptest.NewServer(gauge)
	defer upstream.Close()
	addrA := freeport.Loopback(t)
	dbURL := pgtest.NewDatabase(t)
	env, adminToken := replicaEnv(t, addrA, dbURL, map[string]string{"ERPGATE_LOG_LEVEL": "warn"})
	a := startReplica(t, bin, addrA, env)
	b := startReplica(t, bin, freeport.Loopback(t), env)
	gw := &gateway{URL: a.URL, admin: &adminClient{base: a.URL, token: adminToken}}
	site := gw.registerFrappeAt(t, "acme", upstream.URL, sim.User("service"))
	ctx := context.Background()
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	defer client.CloseIdleConnections()

	t.Run("limits", func(t *testing.T) {
		// 200 calls from one caller through both replicas at once, with the
		// default limits (3 in flight, 40 a minute per caller).
		const calls = 200
		gauge.peak.Store(0)
		start := make(chan struct{})
		outcomes := make([]serviceOutcome, calls)
		var wg sync.WaitGroup
		for i := range calls {
			replica := a.URL
			if i%2 == 1 {
				replica = b.URL
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				outcomes[i] = callService(ctx, client, replica, site.ServiceToken, "get_current_user", map[string]any{})
			}()
		}
		close(start)
		wg.Wait()
		var ok, limited int
		for _, o := range outcomes {
			switch {
			case o.ok():
				ok++
			case o.Status == http.StatusOK && o.Code == "RATE_LIMITED" && o.RetryAfter >= 1:
				limited++
			default:
				t.Errorf("neither a result nor RATE_LIMITED with retry-after: %v", o)
			}
		}
		if peak := gauge.peak.Load(); peak > 3 {
			t.Errorf("%d requests of one caller in flight at the ERP at once; the limit is 3", peak)
		}
		if ok == 0 || limited == 0 {
			t.Errorf("%d succeeded and %d were limited; want both", ok, limited)
		}
		t.Logf("%d calls: %d succeeded, %d RATE_LIMITED, at most %d in flight upstream", calls, ok, limited, gauge.peak.Load())
	})

	t.Run("per-minute limit with warm slots and reservations", func(t *testing.T) {
		// One caller's calls, back to back and alternating between the
		// replicas: each keeps the caller's slot warm and reserves calls
		// of the minute ahead, so a replica is refused while the other
		// holds reservations it has not used; it announces the refusal,
		// the other gives them back, and it asks again. The limit (40 a
		// minute) must be exact: the first 40 calls succeed, the rest do
		// not. If the database's minute turns meanwhile, once more with
		// another token.
		db, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close(ctx)
		minute := func() time.Time {
			var m time.Time
			if err := db.QueryRow(ctx, `SELECT date_trunc('minute', now())`).Scan(&m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		for attempt := 0; attempt < 2; attempt++ {
			token, err := gw.admin.serviceToken(ctx, site.ID, "")
			if err != nil {
				t.Fatal(err)
			}
			start := minute()
			var ok []int
			firstRefused := -1
			for i := range 45 {
				replica := a.URL
				if i%2 == 1 {
					replica = b.URL
				}
				o := callService(ctx, client, replica, token, "get_current_user", map[string]any{})
				switch {
				case o.ok():
					ok = append(ok, i)
				case o.Status == http.StatusOK && o.Code == "RATE_LIMITED" && o.RetryAfter >= 1:
					if firstRefused < 0 {
						firstRefused = i
					}
				default:
					t.Fatalf("call %d: neither a result nor RATE_LIMITED with retry-after: %v", i, o)
				}
			}
			if !minute().Equal(start) {
				continue
			}
			if len(ok) != 40 || firstRefused != 40 {
				t.Errorf("%d of 45 calls succeeded, the first refused was #%d; want 40 and #40", len(ok), firstRefused)
			}
			return
		}
	})

	token, err := gw.admin.serviceToken(ctx, site.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	currentUser := func(replica string) (serviceOutcome, string) {
		o := callService(ctx, client, replica, token, "get_current_user", map[string]any{})
		var answer struct {
			Result struct {
				StructuredContent struct {
					User string `json:"user"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		if o.ok() {
			_ = json.Unmarshal([]byte(jsonRPCMessage(o.Body)), &answer)
		}
		return o, answer.Result.StructuredContent.User
	}

	t.Run("credential rotation", func(t *testing.T) {
		bot, other := sim.User("service"), sim.User("all-companies")
		if o, user := currentUser(b.URL); user != bot.Email {
			t.Fatalf("before the rotation replica B calls as %q: %v", user, o)
		}
		if err := gw.admin.do(ctx, http.MethodPut, "/sites/"+site.ID+"/connections/api_token",
			map[string]any{"credentials": map[string]string{"api_key": other.APIKey, "api_secret": other.APISecret}}, nil); err != nil {
			t.Fatal(err)
		}
		// Replica B cached the old credential; the change travels through
		// Postgres. Wait for it without asserting how fast (the benchmark
		// measures that).
		waitFor(t, 20*time.Second, "replica B to use the new credential", func() bool {
			_, user := currentUser(b.URL)
			return user == other.Email
		})
	})

	t.Run("revocation", func(t *testing.T) {
		if o, _ := currentUser(b.URL); !o.ok() {
			t.Fatalf("replica B before the revocation: %v", o)
		}
		tokens, err := gw.admin.listTokens(ctx, site.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range tokens {
			if tk.Prefix != "" && strings.HasPrefix(token, tk.Prefix) {
				if err := gw.admin.do(ctx, http.MethodDelete, "/sites/"+site.ID+"/service-tokens/"+tk.ID, nil, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		waitFor(t, 20*time.Second, "replica B to refuse the revoked token", func() bool {
			o, _ := currentUser(b.URL)
			return o.Status == http.StatusUnauthorized
		})
		if o, _ := currentUser(a.URL); o.Status != http.StatusUnauthorized {
			t.Errorf("replica A accepts the revoked token: %v", o)
		}
		if o := callService(ctx, client, b.URL, site.ServiceToken, "get_current_user", map[string]any{}); !o.ok() {
			t.Errorf("the site's other token stopped working: %v", o)
		}
	})

	t.Run("nothing held after shutdown", func(t *testing.T) {
		// Each replica gives back its finished calls' leases, the slots it
		// kept warm and its unused reservations when it stops.
		for _, r := range []*replica{a, b} {
			r.stop(t)
		}
		db, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close(ctx)
		var leases int
		if err := db.QueryRow(ctx, `SELECT coalesce(sum(cardinality(leases)), 0) FROM call_limits`).Scan(&leases); err != nil {
			t.Fatal(err)
		}
		if leases != 0 {
			t.Errorf("%d leases left in call_limits after both replicas stopped", leases)
		}
	})
}

// jsonRPCMessage returns the JSON-RPC message of an answer body, which may
// be a one-event SSE stream.
func jsonRPCMessage(body string) string {
	if strings.HasPrefix(strings.TrimSpace(body), "{") {
		return body
	}
	msg := body
	for line := range strings.SplitSeq(body, "\n") {
		if data, ok := strings.CutPrefix(line, "data:"); ok {
			msg = strings.TrimSpace(data)
		}
	}
	return msg
}
