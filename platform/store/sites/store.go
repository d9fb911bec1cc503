package sites

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// Store reads and writes the site registry. It is safe for concurrent use
// and holds no state of its own, so any number of replicas can share one
// database.
type Store struct {
	pool *pgxpool.Pool
	keys *secrets.Keyring
	// tokenChecks are the keys of service tokens' check values, one per
	// key of the ring, primary first (see IssuedServiceToken).
	tokenChecks [][]byte
	// cursorKeys tag the cursors of the pages of a site's tokens, one per
	// key of the ring, primary first (see ListServiceTokensPage).
	cursorKeys [][]byte
	// changed, if set, is told about every committed change to a site, its
	// connections or tokens made through this store. Other replicas learn
	// of changes through Postgres notifications; this hook makes the
	// replica that made the change forget its cached copies before the
	// change is acknowledged, so a revoked token fails at once.
	changed func(siteID uuid.UUID)
	// maxActiveTokens bounds a site's active service tokens; below 1:
	// DefaultMaxActiveServiceTokens.
	maxActiveTokens int
}

// NewStore returns a store on pool that seals and opens credentials with
// keys.
func NewStore(pool *pgxpool.Pool, keys *secrets.Keyring) *Store {
	s := &Store{pool: pool, keys: keys}
	if keys != nil {
		s.tokenChecks = keys.DeriveKeys(serviceTokenCheckUse)
		s.cursorKeys = keys.DeriveKeys(serviceTokenCursorUse)
	}
	return s
}

// OnChange sets the function told about committed changes. Set it once,
// before the store is used.
func (s *Store) OnChange(fn func(siteID uuid.UUID)) { s.changed = fn }

func (s *Store) notifyChanged(siteID uuid.UUID) {
	if s.changed != nil {
		s.changed(siteID)
	}
}
