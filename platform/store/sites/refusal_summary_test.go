package sites_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/store/sites"
)

// TestRefusalSummaryHoldsUnderConcurrentRefusals: refusals counted at
// once from many connections (replicas) add to one row a minute per
// action and kind, and none is lost.
func TestRefusalSummaryHoldsUnderConcurrentRefusals(t *testing.T) {
	store, pool := newStore(t)
	const refusals = 60
	from := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, refusals)
	for n := range refusals {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := []string{"wrong_token", "source_limit"}[n%2]
			errs <- store.RecordRefusalSummary(context.Background(), sites.Event{ActorKind: "operator", Actor: "console_sign_in",
				Action: "console_sign_in", Reason: "invalid_request: " + code}, code)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	minutes := int(time.Now().UTC().Truncate(time.Minute).Sub(from.UTC().Truncate(time.Minute))/time.Minute) + 1
	var rows, counted int
	if err := pool.QueryRow(context.Background(), `SELECT count(*), coalesce(sum(repeats), 0) FROM admin_events WHERE action = 'console_sign_in'`).Scan(&rows, &counted); err != nil {
		t.Fatal(err)
	}
	if rows > 2*minutes || counted != refusals {
		t.Errorf("%d concurrent refusals made %d rows counting %d; want at most %d rows counting every one", refusals, rows, counted, 2*minutes)
	}
}
