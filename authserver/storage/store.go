package storage

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/handler/pkce"
	fositestorage "github.com/ory/fosite/storage"

	"github.com/erpgate/erpgate/platform/database"
	"github.com/erpgate/erpgate/platform/secrets"
)

// FositeStorage is everything fosite needs from persistence: exactly the
// interfaces of the handlers authserver composes (authorize code, refresh,
// revocation, introspection, PKCE), plus transactions so that a code
// exchange or a refresh-token rotation is atomic.
type FositeStorage interface {
	fosite.ClientManager
	oauth2.CoreStorage
	oauth2.TokenRevocationStorage
	pkce.PKCERequestStorage
	fositestorage.Transactional
}

var _ FositeStorage = (*Store)(nil)

// Store is the authorization server's Postgres storage. It holds no state
// of its own beyond configuration, so every replica can share one database.
type Store struct {
	pool *pgxpool.Pool
	keys *secrets.Keyring
	// clients resolves URL client ids (Client ID Metadata Documents).
	cimd ClientResolver
	// refreshGrace is how long a rotated refresh token still works, so two
	// concurrent refreshes with the same token both succeed.
	refreshGrace time.Duration
	now          func() time.Time
}

// ClientResolver turns a URL client id into a client by fetching its Client
// ID Metadata Document. It reports a failure as an error the authorization
// server can show as an OAuth error.
type ClientResolver interface {
	ResolveClient(ctx context.Context, clientID string) (fosite.Client, error)
}

// Options configure a Store.
type Options struct {
	// CIMD resolves URL client ids; nil means URL client ids are unknown.
	CIMD ClientResolver
	// RefreshGrace is how long a rotated refresh token keeps working for
	// concurrent refreshes; zero means not at all.
	RefreshGrace time.Duration
}

// New returns a store on pool that seals secrets with keys.
func New(pool *pgxpool.Pool, keys *secrets.Keyring, opts Options) *Store {
	return &Store{pool: pool, keys: keys, cimd: opts.CIMD, refreshGrace: opts.RefreshGrace, now: time.Now}
}

// SetClientResolver sets the resolver for URL client ids. The resolver
// itself reads the store's cache, so it is wired after New.
func (s *Store) SetClientResolver(r ClientResolver) { s.cimd = r }

// querier is what a pool and a transaction have in common.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type txKey struct{}

// db returns the transaction fosite opened in ctx, or the pool.
func (s *Store) db(ctx context.Context) querier {
	if tx, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return tx
	}
	return s.pool
}

// BeginTX starts a transaction that the store's methods called with the
// returned context join (fositestorage.Transactional).
func (s *Store) BeginTX(ctx context.Context) (context.Context, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return ctx, fmt.Errorf("storage: begin: %w", database.Classify(err))
	}
	return context.WithValue(ctx, txKey{}, tx), nil
}

// Commit commits the transaction in ctx.
func (s *Store) Commit(ctx context.Context) error {
	tx, ok := ctx.Value(txKey{}).(pgx.Tx)
	if !ok {
		return errors.New("storage: commit: no transaction in context")
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("storage: commit: %w", database.Classify(err))
	}
	return nil
}

// Rollback rolls back the transaction in ctx.
func (s *Store) Rollback(ctx context.Context) error {
	tx, ok := ctx.Value(txKey{}).(pgx.Tx)
	if !ok {
		return errors.New("storage: rollback: no transaction in context")
	}
	if err := tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return fmt.Errorf("storage: rollback: %w", database.Classify(err))
	}
	return nil
}

// hash is the SHA-256 under which a token signature, flow id or cookie is
// stored.
func hash(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

// notFound converts "no rows" to fosite.ErrNotFound and classifies the
// rest.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fosite.ErrNotFound
	}
	return database.Classify(err)
}
