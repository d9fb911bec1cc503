package sites_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// Attacker's test: a site's owner (or a script with the admin token)
// issues far more service tokens than any site uses, from two replicas at
// once. Each active token is a row, an entry in every replica's token
// cache and a caller with budgets of its own at the MCP doors; before,
// every one of them was issued. Now a site holds at most 100 active tokens
// (the default bound), however the issues race: the count is taken under
// the site's row lock, so a second replica waits for the first's insert.
// Revoked and expired tokens do not count.
func TestActiveServiceTokensPerSiteAreBoundedAcrossReplicas(t *testing.T) {
	const bound, tries = 100, 160
	url := pgtest.NewDatabase(t)
	var (
		replicas [2]*sites.Store
		pools    [2]*pgxpool.Pool
	)
	keys := keyring(t, keySpec(t, "k1"))
	for i := range replicas {
		pool, err := database.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		pools[i], replicas[i] = pool, sites.NewStore(pool, keys)
	}
	s := replicas[0]
	acme := mustCreate(t, s, "acme")
	mustPutAPI(t, s, acme, "key", "secret")
	other := mustCreate(t, s, "other")
	mustPutAPI(t, s, other, "key", "secret")

	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		issued, refused int
		unexpected      []error
	)
	start := make(chan struct{})
	for i := range tries {
		wg.Go(func() {
			<-start
			_, _, err := replicas[i%2].IssueServiceTokenWithLifetime(t.Context(), acme.ID, "bot", 30)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				issued++
			case errors.Is(err, sites.ErrTooManyServiceTokens):
				refused++
			default:
				unexpected = append(unexpected, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(unexpected) > 0 {
		t.Fatalf("issues failed otherwise: %v", unexpected[0])
	}
	if issued != bound || refused != tries-bound {
		t.Fatalf("%d of %d concurrent issues succeeded and %d were refused for the bound; want %d and %d", issued, tries, refused, bound, tries-bound)
	}
	list, err := s.ListServiceTokens(t.Context(), acme.ID)
	if err != nil || len(list) != bound {
		t.Fatalf("acme holds %d tokens (%v), want %d", len(list), err, bound)
	}

	// The refusal says how many the site has, for the pages' sentence.
	_, _, err = s.IssueServiceToken(t.Context(), acme.ID, "one more")
	var full *sites.TooManyServiceTokensError
	if !errors.As(err, &full) || full.Active != bound {
		t.Fatalf("issue past the bound = %v, want a TooManyServiceTokensError with %d active", err, bound)
	}
	// Another site has its own bound.
	if _, _, err := s.IssueServiceToken(t.Context(), other.ID, "bot"); err != nil {
		t.Fatalf("another site's issue = %v", err)
	}

	// A revoked token frees its place.
	if err := s.RevokeServiceToken(t.Context(), acme.ID, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IssueServiceToken(t.Context(), acme.ID, "after a revocation"); err != nil {
		t.Fatalf("issue after a revocation = %v", err)
	}
	if _, _, err := s.IssueServiceToken(t.Context(), acme.ID, "past it again"); !errors.Is(err, sites.ErrTooManyServiceTokens) {
		t.Fatalf("issue past the bound again = %v", err)
	}
	// So does an expired one: move one token's life into the past.
	if _, err := pools[1].Exec(t.Context(), `UPDATE service_tokens SET created_at = now() - interval '31 days', expires_at = now() - interval '1 day'
		WHERE id = $1`, list[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IssueServiceToken(t.Context(), acme.ID, "after an expiry"); err != nil {
		t.Fatalf("issue after an expiry = %v", err)
	}
}
