package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// Seed 000: Acumatica's API limits are licence-tier based, and a small
// tier throttles at some 6 calls at once and 50 a minute. A site's own
// call ceilings, set by the operator, protect such an ERP without lowering
// every other tenant's ceiling. These tests run two replicas on one
// Postgres: the operator changes the site's ceiling through replica a's
// admin API; the calls go to replica b, which must apply it (within a
// second: by NOTIFY, or at its next 500 ms poll) from the settings it
// holds, with no other round trip per call than the limiter's one.

// ceilingRig is two replicas and two Frappe sites, each ERP behind a gauge
// that can hold its answers: "small" and "big".
type ceilingRig struct {
	a, b        *gateway
	small, big  devSite
	smallGauge  *inFlightGauge
	bigGauge    *inFlightGauge
	client      *http.Client
	smallID     uuid.UUID
	smallToken  string
	bigToken    string
	secondToken string // another service token of small
	// smallERP and bigERP are the simulators' addresses.
	smallERP, bigERP string
}

func newCeilingRig(t *testing.T) *ceilingRig {
	t.Helper()
	r := &ceilingRig{client: &http.Client{Timeout: time.Minute}}
	t.Cleanup(r.client.CloseIdleConnections)
	r.smallGauge = &inFlightGauge{next: frappetest.NewHandler(frappetest.Options{})}
	r.bigGauge = &inFlightGauge{next: frappetest.NewHandler(frappetest.Options{})}
	smallERP, bigERP := httptest.NewServer(r.smallGauge), httptest.NewServer(r.bigGauge)
	t.Cleanup(smallERP.Close)
	t.Cleanup(bigERP.Close)
	r.smallERP, r.bigERP = smallERP.URL, bigERP.URL
	r.a = startGateway(t, "", nil)
	r.b = startGateway(t, r.a.DBURL, map[string]string{"ERPGATE_ADMIN_TOKEN": r.a.AdminToken, "ERPGATE_ENCRYPTION_KEYS": r.a.Keys})
	r.small = r.a.registerFrappeAt(t, "small", smallERP.URL, r.smallGauge.next.(*frappetest.Simulator).User("service"))
	r.big = r.a.registerFrappeAt(t, "big", bigERP.URL, r.bigGauge.next.(*frappetest.Simulator).User("service"))
	r.smallID = uuid.MustParse(r.small.ID)
	r.smallToken, r.bigToken = r.small.ServiceToken, r.big.ServiceToken
	var created struct {
		Token string `json:"token"`
	}
	if err := r.a.admin.do(t.Context(), http.MethodPost, "/sites/small/service-tokens", map[string]any{"name": "second"}, &created); err != nil || created.Token == "" {
		t.Fatalf("a second token of small: %v", err)
	}
	r.secondToken = created.Token
	return r
}

// setOnA sets a setting of small through replica a's admin API and waits
// until replica b holds it in force, limiter included.
func (r *ceilingRig) setOnA(t *testing.T, name string, value int) {
	t.Helper()
	if err := r.a.admin.do(t.Context(), http.MethodPut, "/sites/small/settings/"+name, map[string]any{"value": value}, nil); err != nil {
		t.Fatalf("PUT /sites/small/settings/%s %d: %v", name, value, err)
	}
	start := time.Now()
	waitFor(t, 15*time.Second, "replica b holds small's "+name, func() bool {
		v, _, _ := r.b.App.live.Current().Effective(r.smallID, name)
		return v == value
	})
	// The snapshot is made current before it is handed to the limiter,
	// under the store's reload lock: a Load of its own waits for that.
	if err := r.b.App.live.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("small's %s = %d in force on replica b %v after the change on replica a", name, value, time.Since(start).Round(time.Millisecond))
}

func (r *ceilingRig) call(token string) serviceOutcome {
	return callService(context.Background(), r.client, r.b.URL, token, "list_customers", map[string]any{"limit": 3})
}

// TestSiteConcurrencyCeilingOfItsOwn: small's ceiling is 2 calls at once,
// big has the deployment's 10. With two of small's calls waiting on its
// ERP, a third (another token's: the ceiling is the site's, all its
// callers together) is refused RATE_LIMITED with a sentence saying so,
// while big's three calls at once are all served.
func TestSiteConcurrencyCeilingOfItsOwn(t *testing.T) {
	r := newCeilingRig(t)
	r.setOnA(t, "site_concurrency", 2)

	before := r.smallGauge.total.Load() // registering it verified the credential
	releaseSmall := r.smallGauge.holdRequests("/api/resource/Customer")
	defer releaseSmall()
	held := make(chan serviceOutcome, 2)
	for range 2 {
		go func() { held <- r.call(r.smallToken) }()
	}
	waitFor(t, 30*time.Second, "two of small's calls waiting on its ERP", func() bool { return r.smallGauge.now.Load() == 2 })

	third := r.call(r.secondToken)
	if third.Code != "RATE_LIMITED" || third.RetryAfter < 1 {
		t.Fatalf("small's third call at once: %v, want RATE_LIMITED with retry_after_seconds", third)
	}
	if want := "this ERP site already has 2 calls in flight, the most erpgate sends it at once"; !strings.Contains(third.Body, want) {
		t.Errorf("small's third call at once says %.400s, want %q", third.Body, want)
	}
	if revealsInternals(third.Body) {
		t.Errorf("the refusal reveals internals: %.400s", third.Body)
	}
	if n := r.smallGauge.total.Load() - before; n != 2 {
		t.Errorf("small's ERP was sent %d requests, want the two held", n)
	}

	// big, meanwhile: three calls at once (its token's own limit), all
	// reach its ERP and are served.
	releaseBig := r.bigGauge.holdRequests("/api/resource/Customer")
	defer releaseBig()
	bigDone := make(chan serviceOutcome, 3)
	for range 3 {
		go func() { bigDone <- r.call(r.bigToken) }()
	}
	waitFor(t, 30*time.Second, "three of big's calls waiting on its ERP", func() bool { return r.bigGauge.now.Load() == 3 })
	releaseBig()
	for range 3 {
		if o := <-bigDone; !o.ok() {
			t.Errorf("big's call alongside small's ceiling: %v", o)
		}
	}

	releaseSmall()
	for range 2 {
		if o := <-held; !o.ok() {
			t.Errorf("small's held call: %v", o)
		}
	}
	// Its calls ended: small is served again.
	if o := r.call(r.secondToken); !o.ok() {
		t.Errorf("small's call after its two ended: %v", o)
	}
}

// TestSitePerMinuteCeilingOfItsOwn: small may receive 3 calls a minute,
// big the deployment's 300: small's fourth call of the minute is refused
// RATE_LIMITED with a sentence saying so and a retry-after, while big's
// calls go on.
func TestSitePerMinuteCeilingOfItsOwn(t *testing.T) {
	r := newCeilingRig(t)
	r.setOnA(t, "site_per_minute", 3)
	awayFromTheMinuteTurn(t, r.a.DBURL)

	before := r.smallGauge.total.Load() // registering it verified the credential
	tokens := []string{r.smallToken, r.secondToken, r.smallToken}
	for i, token := range tokens {
		if o := r.call(token); !o.ok() {
			t.Fatalf("small's call %d of the minute: %v", i+1, o)
		}
	}
	fourth := r.call(r.secondToken)
	if fourth.Code != "RATE_LIMITED" || fourth.RetryAfter < 1 || fourth.RetryAfter > 60 {
		t.Fatalf("small's fourth call of the minute: %v, want RATE_LIMITED with retry_after_seconds up to the minute's end", fourth)
	}
	if want := "this ERP site received 3 calls this minute, the most erpgate sends it"; !strings.Contains(fourth.Body, want) {
		t.Errorf("small's fourth call says %.400s, want %q", fourth.Body, want)
	}
	if n := r.smallGauge.total.Load() - before; n != 3 {
		t.Errorf("small's ERP was sent %d requests, want 3", n)
	}
	for i := range 6 {
		if o := r.call(r.bigToken); !o.ok() {
			t.Errorf("big's call %d after small's ceiling: %v", i+1, o)
		}
	}
}
