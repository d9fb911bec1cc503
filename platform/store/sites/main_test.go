package sites_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// keySpec returns a fresh keyring entry "id:base64key".
func keySpec(t testing.TB, id string) string {
	t.Helper()
	spec, err := secrets.GenerateKeySpec(id)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func keyring(t testing.TB, spec string) *secrets.Keyring {
	t.Helper()
	k, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// newStore returns a store on a fresh migrated database, and the pool for
// looking at rows directly.
func newStore(t testing.TB) (*sites.Store, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.NewPool(t)
	return sites.NewStore(pool, keyring(t, keySpec(t, "k1"))), pool
}

// mustCreate registers a site with base URL https://<slug>.example.com.
func mustCreate(t testing.TB, s *sites.Store, slug string) sites.Site {
	t.Helper()
	site, err := s.CreateSite(t.Context(), sites.NewSite{
		Slug: slug, Kind: "frappe", DisplayName: "Site " + slug, BaseURL: "https://" + slug + ".example.com",
		Settings: json.RawMessage(`{"company":"Acme"}`),
	})
	if err != nil {
		t.Fatalf("create %s: %v", slug, err)
	}
	return site
}

// apiFields is a Frappe-like api_token credential.
func apiFields(key, secret string) map[string]secrets.Secret {
	return map[string]secrets.Secret{"api_key": secrets.Secret(key), "api_secret": secrets.Secret(secret)}
}

func mustPutAPI(t *testing.T, s *sites.Store, site sites.Site, key, secret string) sites.Connection {
	t.Helper()
	conn, err := s.PutConnection(t.Context(), site.ID, sites.ConnectionAPIToken, "bot@example.com", apiFields(key, secret))
	if err != nil {
		t.Fatalf("put connection: %v", err)
	}
	return conn
}

func count(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
