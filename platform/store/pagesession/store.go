// Package pagesession keeps, in Postgres, the sessions of erpgate's own
// pages (the site owner's page, the approval page) that were signed out.
// Those sessions are signed cookies that every replica verifies without
// asking anyone; signing out records the cookie's hash here, and a
// session is checked against it, so that a copy of an ended session's
// cookie is refused by every replica.
package pagesession

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// Store records and checks ended sessions.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a store on pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

func hashCookie(cookie string) []byte {
	sum := sha256.Sum256([]byte("erpgate page session\x00" + cookie))
	return sum[:]
}

// End records that the session of cookie has ended. expires is when the
// cookie stops working anyway; the record is kept until then. Ending an
// ended session does nothing.
func (s *Store) End(ctx context.Context, cookie string, expires time.Time) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO ended_page_sessions (cookie_hash, expires_at) VALUES ($1, $2)
		ON CONFLICT (cookie_hash) DO UPDATE SET expires_at = greatest(ended_page_sessions.expires_at, EXCLUDED.expires_at)`,
		hashCookie(cookie), expires)
	return database.Classify(err)
}

// Ended reports whether the session of cookie was ended.
func (s *Store) Ended(ctx context.Context, cookie string) (bool, error) {
	var ended bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ended_page_sessions WHERE cookie_hash = $1)`, hashCookie(cookie)).Scan(&ended)
	return ended, database.Classify(err)
}

// Purge deletes the records of sessions that expired over an hour ago:
// their cookies no longer verify (the hour allows for a replica's clock
// behind the database's). It returns how many it deleted.
func (s *Store) Purge(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM ended_page_sessions WHERE expires_at < now() - interval '1 hour'`)
	if err != nil {
		return 0, database.Classify(err)
	}
	return tag.RowsAffected(), nil
}
