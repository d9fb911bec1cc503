// Package pagesession keeps, in Postgres, the sessions of erpgate's own
// pages (the site owner's page, the approval page) that were signed out.
// Those sessions are signed cookies that every replica verifies without
// asking anyone; signing out records the cookie's hash here, and a
// session is checked against it, so that a copy of an ended session's
// cookie is refused by every replica. Signing out everywhere records a
// person (a page, a site's session scope and an ERP user) with a mark:
// their sessions that began with a lower mark are refused too.
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

// hashPerson is the key of a person's sessions: person names the page,
// the site's session scope and the ERP user (pagekit.UserSession makes it).
func hashPerson(person string) []byte {
	sum := sha256.Sum256([]byte("erpgate page session person\x00" + person))
	return sum[:]
}

// Mark returns the mark of a session that begins now: above the mark of
// every EndEverywhere so far, below that of every one to come.
func (s *Store) Mark(ctx context.Context) (int64, error) {
	var mark int64
	err := s.pool.QueryRow(ctx, `SELECT nextval('page_session_marks')`).Scan(&mark)
	return mark, database.Classify(err)
}

// EndEverywhere ends every session of person that began before it: those
// whose mark is below the one it takes. expires is when the last of them
// would expire anyway; the record is kept until then.
func (s *Store) EndEverywhere(ctx context.Context, person string, expires time.Time) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO page_sessions_ended_everywhere (person_hash, below_mark, expires_at)
		VALUES ($1, nextval('page_session_marks'), $2)
		ON CONFLICT (person_hash) DO UPDATE SET
			below_mark = greatest(page_sessions_ended_everywhere.below_mark, EXCLUDED.below_mark),
			expires_at = greatest(page_sessions_ended_everywhere.expires_at, EXCLUDED.expires_at)`,
		hashPerson(person), expires)
	return database.Classify(err)
}

// Ended reports whether the session of cookie was ended: by itself, or as
// one of person's that began (with mark) before they signed out
// everywhere. One statement, two lookups by primary key.
func (s *Store) Ended(ctx context.Context, cookie, person string, mark int64) (bool, error) {
	var ended bool
	err := s.pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM ended_page_sessions WHERE cookie_hash = $1)
		    OR EXISTS (SELECT 1 FROM page_sessions_ended_everywhere WHERE person_hash = $2 AND below_mark > $3)`,
		hashCookie(cookie), hashPerson(person), mark).Scan(&ended)
	return ended, database.Classify(err)
}

// Purge deletes the records of sessions, and of people's sessions ended
// everywhere, that expired over an hour ago: their cookies no longer
// verify (the hour allows for a replica's clock behind the database's).
// It returns how many it deleted.
func (s *Store) Purge(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `
		WITH sessions AS (DELETE FROM ended_page_sessions WHERE expires_at < now() - interval '1 hour' RETURNING 1),
		     people AS (DELETE FROM page_sessions_ended_everywhere WHERE expires_at < now() - interval '1 hour' RETURNING 1)
		SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM people)`).Scan(&n)
	return n, database.Classify(err)
}
