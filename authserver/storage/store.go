package storage

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/handler/pkce"
	fositestorage "github.com/ory/fosite/storage"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
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
	// userChanged, when set, is told of every user whose access tokens or
	// ERP token this store deleted or replaced, once committed.
	userChanged func(siteID uuid.UUID, subject string)
}

// OnUserChange sets the function told, after commit, of each user on a
// site whose access tokens or ERP token changed through this store (the
// replica's own caches; the others learn of it by NOTIFY). Set it once,
// before the store is used.
func (s *Store) OnUserChange(fn func(siteID uuid.UUID, subject string)) { s.userChanged = fn }

type changedUser struct {
	site    uuid.UUID
	subject string
}

// usersChanged reports users to userChanged, at once or, inside a
// transaction fosite opened, when it commits.
func (s *Store) usersChanged(ctx context.Context, users ...changedUser) {
	if s.userChanged == nil {
		return
	}
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		st.changed = append(st.changed, users...)
		return
	}
	for _, u := range users {
		s.userChanged(u.site, u.subject)
	}
}

// execUsers runs a statement that returns the site_id and subject of
// the rows it changed, and reports those users.
func (s *Store) execUsers(ctx context.Context, q querier, sql string, args ...any) (int64, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	var (
		users []changedUser
		n     int64
	)
	for rows.Next() {
		var (
			site    *uuid.UUID
			subject string
		)
		if err := rows.Scan(&site, &subject); err != nil {
			rows.Close()
			return 0, err
		}
		n++
		if site != nil && !slices.Contains(users, changedUser{*site, subject}) {
			users = append(users, changedUser{*site, subject})
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	s.usersChanged(ctx, users...)
	return n, nil
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

// txState is a transaction fosite opened and the users it changed.
type txState struct {
	tx      pgx.Tx
	changed []changedUser
}

// db returns the transaction fosite opened in ctx, or the pool.
func (s *Store) db(ctx context.Context) querier {
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		return st.tx
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
	return context.WithValue(ctx, txKey{}, &txState{tx: tx}), nil
}

// Commit commits the transaction in ctx.
func (s *Store) Commit(ctx context.Context) error {
	st, ok := ctx.Value(txKey{}).(*txState)
	if !ok {
		return errors.New("storage: commit: no transaction in context")
	}
	if err := st.tx.Commit(ctx); err != nil {
		return fmt.Errorf("storage: commit: %w", database.Classify(err))
	}
	changed := st.changed
	st.changed = nil
	s.usersChanged(context.Background(), changed...)
	return nil
}

// Rollback rolls back the transaction in ctx.
func (s *Store) Rollback(ctx context.Context) error {
	st, ok := ctx.Value(txKey{}).(*txState)
	if !ok {
		return errors.New("storage: rollback: no transaction in context")
	}
	if err := st.tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
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
