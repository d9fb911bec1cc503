package sites_test

import (
	"sync"
	"testing"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// TestConcurrentCredentialWithTokenWritesBothSucceed: the registration's
// last step saves the API credential and issues its token in one
// transaction. Two of them at once on one site (a double submit, two
// replicas) must each be stored in turn: neither may fail because the
// other holds the site's row.
func TestConcurrentCredentialWithTokenWritesBothSucceed(t *testing.T) {
	url := pgtest.NewDatabase(t)
	keys := keyring(t, keySpec(t, "k1"))
	var replicas [2]*sites.Store
	for i := range replicas {
		pool, err := database.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		replicas[i] = sites.NewStore(pool, keys)
	}
	acme := mustCreate(t, replicas[0], "acme")
	const rounds = 8
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		start := make(chan struct{})
		for i := range replicas {
			wg.Go(func() {
				<-start
				_, _, _, errs[i] = replicas[i].PutVerifiedAPIConnectionWithTokenBy(t.Context(), sites.ByOwner, acme.ID, acme.BaseURL,
					"bot@acme", apiFields("key", "secret"), "registration", 30)
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: write %d of 2 at once failed: %v", round+1, i+1, err)
			}
		}
	}
	list, err := replicas[0].ListServiceTokens(t.Context(), acme.ID)
	if err != nil || len(list) != 2*rounds {
		t.Fatalf("acme holds %d tokens (%v), want %d", len(list), err, 2*rounds)
	}
}
