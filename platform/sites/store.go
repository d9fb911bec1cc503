package sites

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/secrets"
)

// Store reads and writes the site registry. It is safe for concurrent use
// and holds no state of its own, so any number of replicas can share one
// database.
type Store struct {
	pool *pgxpool.Pool
	keys *secrets.Keyring
}

// NewStore returns a store on pool that seals and opens credentials with
// keys.
func NewStore(pool *pgxpool.Pool, keys *secrets.Keyring) *Store {
	return &Store{pool: pool, keys: keys}
}
