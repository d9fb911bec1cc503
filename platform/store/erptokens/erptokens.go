// Package erptokens keeps the short-lived tokens that an ERP issues to a
// service connection's sign-in (connector.ServiceTokenStore) in Postgres,
// encrypted with the deployment keyring, so every replica shares them.
// These are the ERP's tokens. erpgate's own service tokens, the ones bots
// present at /service/mcp, are kept as hashes in platform/store/sites.
//
// Renewal is serialised twice: an in-process singleflight per (site, user)
// means one replica asks for one lease however many calls wait, and a
// lease per (site, user) (platform/store/leases) means one replica at a
// time renews, holding no database connection while the ERP answers. The
// ERP rotates refresh tokens on every use; two renewals racing with one
// refresh token would make the loser's token look dead, so the lease is
// load-bearing. Whoever takes the lease re-reads the row and renews only
// if it is still stale.
package erptokens

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/metrics"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/leases"
)

// Options tune a Store.
type Options struct {
	// Skew is how long before its expiry a token is renewed. Default 1 min.
	Skew time.Duration
	// RenewTimeout bounds one shared renewal, which runs detached from the
	// calls waiting for it. Default 30 s.
	RenewTimeout time.Duration
	// Logger reports tokens that could not be opened. Default: none.
	Logger *zap.Logger
	// Metrics, when set, counts renewals and their failures.
	Metrics *metrics.Metrics
}

// Store implements connector.ServiceTokenStore on Postgres.
type Store struct {
	pool *pgxpool.Pool
	keys *secrets.Keyring
	opts Options

	group singleflight.Group
	mu    sync.Mutex
	// mem caches fresh access tokens, so a call costs no database round
	// trip. Another replica's renewal does not invalidate it: the old
	// access token stays valid until it expires, and a token the ERP
	// refuses is dropped by Reject.
	mem map[string]connector.StoredToken
}

var _ connector.ServiceTokenStore = (*Store)(nil)

// New returns a store.
func New(pool *pgxpool.Pool, keys *secrets.Keyring, opts Options) *Store {
	if opts.Skew <= 0 {
		opts.Skew = time.Minute
	}
	if opts.RenewTimeout <= 0 {
		opts.RenewTimeout = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Store{pool: pool, keys: keys, opts: opts, mem: map[string]connector.StoredToken{}}
}

func memKey(site uuid.UUID, user string) string { return site.String() + "\x00" + user }

func (s *Store) fresh(t connector.StoredToken) bool {
	return t.Access.IsSet() && time.Until(t.ExpiresAt) > s.opts.Skew
}

// Token returns a fresh access token of user on site, renewing it under the
// lease when needed.
func (s *Store) Token(ctx context.Context, site uuid.UUID, user string, renew connector.RenewToken) (secrets.Secret, error) {
	key := memKey(site, user)
	s.mu.Lock()
	t := s.mem[key]
	s.mu.Unlock()
	if s.fresh(t) {
		return t.Access, nil
	}
	v, err, _ := s.group.Do(key, func() (any, error) {
		// Detached: one caller giving up must not fail the others waiting.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.RenewTimeout)
		defer cancel()
		return s.renewLocked(rctx, site, user, renew)
	})
	if err != nil {
		return "", err
	}
	t = v.(connector.StoredToken)
	s.mu.Lock()
	s.mem[key] = t
	s.mu.Unlock()
	return t.Access, nil
}

// renewLeaseKey names the lease on renewing user's service token.
func renewLeaseKey(user string) string { return "service_token:" + user }

// renewLocked renews the token under the lease on it, unless another
// replica renewed it while this one waited: one renewal at a time across
// replicas, and no database connection held while the ERP answers.
func (s *Store) renewLocked(ctx context.Context, site uuid.UUID, user string, renew connector.RenewToken) (connector.StoredToken, error) {
	lease, err := leases.Take(ctx, s.pool, site, renewLeaseKey(user))
	if err != nil {
		return connector.StoredToken{}, fmt.Errorf("erptokens: renew token of %q on site %s: %w", user, site, err)
	}
	current, err := s.read(ctx, s.pool, site, user)
	if err != nil {
		lease.Drop(ctx, s.pool)
		return connector.StoredToken{}, fmt.Errorf("erptokens: renew token of %q on site %s: %w", user, site, database.Classify(err))
	}
	if s.fresh(current) {
		lease.Drop(ctx, s.pool)
		return current, nil
	}
	tok, err := renew(ctx, current)
	if err != nil {
		// The renew error is the caller's.
		s.opts.Metrics.TokenRefresh("service", metrics.RefreshFailed)
		lease.Drop(ctx, s.pool)
		return connector.StoredToken{}, err
	}
	s.opts.Metrics.TokenRefresh("service", metrics.RefreshOK)
	next := connector.StoredToken{Access: tok.AccessToken, Refresh: tok.RefreshToken, ExpiresAt: expiry(time.Now(), tok)}
	if !next.Refresh.IsSet() {
		next.Refresh = current.Refresh
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lease.End(ctx, tx); err != nil {
			return err
		}
		return s.write(ctx, tx, site, user, next)
	})
	if err != nil {
		return connector.StoredToken{}, fmt.Errorf("erptokens: renew token of %q on site %s: %w", user, site, database.Classify(err))
	}
	return next, nil
}

// querier reads: a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ad binds a sealed token to its site, user and field.
func ad(site uuid.UUID, user, field string) []byte {
	return secrets.AdditionalData("service_connection_token", site.String(), user, field)
}

func hashOf(access secrets.Secret) []byte {
	h := sha256.Sum256([]byte(access.Reveal()))
	return h[:]
}

// read returns the stored token, or the zero token when there is none or it
// cannot be opened (its key was retired): the connector then signs in
// afresh, which is always possible for a service connection.
func (s *Store) read(ctx context.Context, q querier, site uuid.UUID, user string) (connector.StoredToken, error) {
	var (
		keyID           string
		access, refresh []byte
		t               connector.StoredToken
	)
	err := q.QueryRow(ctx, `SELECT key_id, access_ciphertext, refresh_ciphertext, expires_at
		FROM service_connection_tokens WHERE site_id = $1 AND erp_user = $2`, site, user).
		Scan(&keyID, &access, &refresh, &t.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return connector.StoredToken{}, nil
	}
	if err != nil {
		return connector.StoredToken{}, err
	}
	pt, err := s.keys.Open(keyID, access, ad(site, user, "access"))
	if err != nil {
		s.opts.Logger.Warn("a stored service token could not be opened; signing in afresh",
			zap.String("site_id", site.String()), zap.String("key_id", keyID), zap.Error(err))
		return connector.StoredToken{}, nil
	}
	t.Access = secrets.Secret(pt)
	if refresh != nil {
		if pt, err := s.keys.Open(keyID, refresh, ad(site, user, "refresh")); err == nil {
			t.Refresh = secrets.Secret(pt)
		}
	}
	return t, nil
}

func (s *Store) write(ctx context.Context, q pgx.Tx, site uuid.UUID, user string, t connector.StoredToken) error {
	keyID, access, err := s.keys.Seal([]byte(t.Access.Reveal()), ad(site, user, "access"))
	if err != nil {
		return err
	}
	var refresh []byte
	if t.Refresh.IsSet() {
		if _, refresh, err = s.keys.Seal([]byte(t.Refresh.Reveal()), ad(site, user, "refresh")); err != nil {
			return err
		}
	}
	_, err = q.Exec(ctx, `
		INSERT INTO service_connection_tokens (site_id, erp_user, key_id, access_ciphertext, access_hash, refresh_ciphertext, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (site_id, erp_user) DO UPDATE SET key_id = excluded.key_id, access_ciphertext = excluded.access_ciphertext,
			access_hash = excluded.access_hash, refresh_ciphertext = excluded.refresh_ciphertext,
			expires_at = excluded.expires_at, updated_at = now()`,
		site, user, keyID, access, hashOf(t.Access), refresh, t.ExpiresAt)
	return err
}

// Reject expires the stored token if it is still access, here and — for
// the next renewal — in Postgres. Other replicas drop their copy when the
// ERP refuses it to them.
func (s *Store) Reject(ctx context.Context, site uuid.UUID, user string, access secrets.Secret) error {
	key := memKey(site, user)
	s.mu.Lock()
	if s.mem[key].Access == access {
		delete(s.mem, key)
	}
	s.mu.Unlock()
	_, err := s.pool.Exec(ctx, `UPDATE service_connection_tokens SET expires_at = 'epoch', updated_at = now()
		WHERE site_id = $1 AND erp_user = $2 AND access_hash = $3`, site, user, hashOf(access))
	if err != nil {
		return fmt.Errorf("erptokens: reject token of %q on site %s: %w", user, site, database.Classify(err))
	}
	return nil
}

// expiry is when a token issued at now expires: its stated lifetime, or an
// hour (Acumatica's default) when the ERP stated none.
func expiry(now time.Time, t connector.UpstreamToken) time.Time {
	if t.ExpiresIn > 0 {
		return now.Add(t.ExpiresIn)
	}
	return now.Add(time.Hour)
}
